/**
 * `/etc/os-release` (os-release(5): shell-compatible KEY=value lines, values optionally quoted) and
 * `uname -r` kernel release strings. `inventory.os` runs `cat /etc/os-release; uname -r`, so the
 * os-release parser also picks up a kernel release line when one follows.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, toInt, validate } from './common.js';

export const KernelReleaseSchema = z.object({
  /** As printed, e.g. `5.15.0-126-generic`. */
  release: z.string(),
  major: z.number().int(),
  minor: z.number().int(),
  patch: z.number().int().optional(),
  /** Ubuntu ABI number: the `126` of `5.15.0-126-generic`. */
  abi: z.number().int().optional(),
  /**
   * Ubuntu kernel flavour: the suffix after the ABI (`generic`, `lowlatency`, `nvidia`, `oem`,
   * `azure`, …). An HWE kernel is still flavour `generic`; HWE is a matter of version (jammy GA is
   * 5.15, its HWE kernel 6.8), which the caller judges against the OS release.
   */
  flavour: z.string().optional(),
  /** Everything after `major.minor[.patch]` without the leading `-`, for non-Ubuntu kernels. */
  localVersion: z.string().optional(),
});
export type KernelRelease = z.infer<typeof KernelReleaseSchema>;

export const OsReleaseFactsSchema = z.object({
  id: z.string().optional(),
  /** Kept as a string: `22.04` and `22.4` are different releases. */
  versionId: z.string().optional(),
  versionMajor: z.number().int().optional(),
  versionMinor: z.number().int().optional(),
  versionCodename: z.string().optional(),
  prettyName: z.string().optional(),
  name: z.string().optional(),
  version: z.string().optional(),
  idLike: z.array(z.string()).optional(),
  ubuntuCodename: z.string().optional(),
  /** A `uname -r` line found after the os-release lines. */
  kernel: KernelReleaseSchema.optional(),
  /** Every KEY=value pair read, unquoted. */
  fields: z.record(z.string(), z.string()),
});
export type OsReleaseFacts = z.infer<typeof OsReleaseFactsSchema>;

// A kernel release: digits.digits[.digits] then an optional local version without spaces.
const KERNEL_RE = /^(\d+)\.(\d+)(?:\.(\d+))?((?:[-+.~_][0-9A-Za-z.+~_-]*)?)$/;

/** Parses `uname -r` output (the first line that looks like a kernel release). */
export function parseKernelRelease(text: string): KernelRelease | undefined {
  return guard(
    () => {
      for (const raw of cleanLines(text, { commands: ['uname'] })) {
        const k = kernelFromLine(raw.trim());
        if (k) return validate(KernelReleaseSchema, k);
      }
      return undefined;
    },
    () => undefined,
  );
}

function kernelFromLine(line: string): KernelRelease | undefined {
  const m = KERNEL_RE.exec(line);
  if (!m) return undefined;
  const major = toInt(m[1]);
  const minor = toInt(m[2]);
  if (major === undefined || minor === undefined) return undefined;
  const rest = m[4] ?? '';
  // Ubuntu: `-<abi>-<flavour>` (flavour may itself contain dashes: `-1015-nvidia-lowlatency`).
  const ubuntu = /^-(\d+)-([a-z][a-z0-9-]*)$/.exec(rest);
  const abiOnly = /^-(\d+)(?:[.-]|$)/.exec(rest);
  return compact({
    release: line,
    major,
    minor,
    patch: toInt(m[3]),
    abi: ubuntu ? toInt(ubuntu[1]) : abiOnly ? toInt(abiOnly[1]) : undefined,
    flavour: ubuntu ? ubuntu[2] : undefined,
    localVersion: rest !== '' ? rest.replace(/^[-+.~_]/, '') : undefined,
  });
}

/** Unquotes an os-release value the way a POSIX shell would read it. */
function unquote(raw: string): string {
  const v = raw.trim();
  if (v.startsWith('"')) {
    let out = '';
    for (let i = 1; i < v.length; i++) {
      const c = v[i];
      if (c === '\\' && i + 1 < v.length && '"\\$`'.includes(v[i + 1] ?? '')) {
        out += v[i + 1];
        i++;
      } else if (c === '"') {
        return out;
      } else {
        out += c;
      }
    }
    return out; // unterminated (truncated): keep what is there
  }
  if (v.startsWith("'")) {
    const end = v.indexOf("'", 1);
    return end < 0 ? v.slice(1) : v.slice(1, end);
  }
  // Unquoted: a trailing ` # comment` is not part of the value.
  return v.replace(/\s+#.*$/, '');
}

/** Parses `/etc/os-release` (and an optional `uname -r` line after it). */
export function parseOsRelease(text: string): OsReleaseFacts {
  return guard(
    () => {
      const fields: Record<string, string> = {};
      let kernel: KernelRelease | undefined;
      for (const raw of cleanLines(text, { commands: ['cat', 'uname'] })) {
        const line = raw.trim();
        const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
        if (m && m[1] !== undefined && m[2] !== undefined) {
          if (!(m[1] in fields)) fields[m[1]] = unquote(m[2]);
          continue;
        }
        // Require three numeric parts here so a stray `22.04` line is not taken for a kernel.
        if (!kernel && /^\d+\.\d+\.\d+/.test(line)) kernel = kernelFromLine(line);
      }
      const versionId = fields['VERSION_ID'];
      const vm = versionId !== undefined ? /^(\d+)(?:\.(\d+))?/.exec(versionId) : null;
      const idLike = fields['ID_LIKE']?.split(/\s+/).filter((s) => s !== '');
      return validate(
        OsReleaseFactsSchema,
        compact({
          id: fields['ID'],
          versionId,
          versionMajor: vm ? toInt(vm[1]) : undefined,
          versionMinor: vm ? toInt(vm[2]) : undefined,
          versionCodename: fields['VERSION_CODENAME'],
          prettyName: fields['PRETTY_NAME'],
          name: fields['NAME'],
          version: fields['VERSION'],
          idLike: idLike && idLike.length > 0 ? idLike : undefined,
          ubuntuCodename: fields['UBUNTU_CODENAME'],
          kernel,
          fields,
        }),
      );
    },
    () => ({ fields: {} }),
  );
}
