/**
 * `dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' pkg…` and its stderr.
 *
 * `${db:Status-Abbrev}` is three characters: desired action (`u`nknown, `i`nstall, `h`old,
 * `r`emove, `p`urge), package status (`n`ot-installed, `c`onfig-files, `H`alf-installed,
 * `U`npacked, `F`ailed-config, triggers-`W`aiting, `t`riggers-pending, `i`nstalled) and an error
 * flag (`R` reinst-required, else a space) — so a healthy line reads `ii  name version` (two spaces).
 * A package dpkg has never heard of is reported on stderr:
 * `dpkg-query: no packages found matching <name>`.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, validate } from './common.js';

export const DpkgPackageSchema = z.object({
  name: z.string(),
  /** Architecture qualifier when printed (`${binary:Package}` → `libfoo:amd64`). */
  arch: z.string().optional(),
  /** Empty for packages known but not installed (`un`, `rc`). */
  version: z.string().optional(),
  /** `ii`, `rc`, `un`, `hi`, `iU`, `iFR`, … (trailing space removed). */
  status: z.string().optional(),
  /** Unpacked and configured (status `i`, or trigger processing pending — still usable). */
  installed: z.boolean(),
  /** Desired state `h`: held at its version. */
  held: z.boolean().optional(),
  /** dpkg reported no package of this name at all. */
  notFound: z.boolean().optional(),
});
export type DpkgPackage = z.infer<typeof DpkgPackageSchema>;

export const DpkgQueryFactsSchema = z.object({ packages: z.array(DpkgPackageSchema) });
export type DpkgQueryFacts = z.infer<typeof DpkgQueryFactsSchema>;

const LINE_RE = /^([uihrp])([ncHUFWti])(R?)\s+([a-z0-9][a-z0-9+.-]*)(?::([a-z0-9-]+))?(?:\s+(\S+))?\s*$/;

export function parseDpkgQuery(text: string): DpkgQueryFacts {
  return guard(
    () => {
      const packages: DpkgPackage[] = [];
      const lines = cleanLines(text, { commands: ['dpkg-query', 'dpkg'] });
      const lastIdx = lines.map((l) => l.trim() !== '').lastIndexOf(true);
      lines.forEach((line, idx) => {
        const nf = /dpkg-query: no packages found matching (\S+)/.exec(line);
        if (nf && nf[1] !== undefined) {
          packages.push({ name: nf[1], installed: false, notFound: true });
          return;
        }
        const ni = /dpkg-query: package '([^']+)' is not installed/.exec(line);
        if (ni && ni[1] !== undefined) {
          packages.push({ name: ni[1], installed: false, notFound: true });
          return;
        }
        const m = LINE_RE.exec(line);
        if (!m || m[4] === undefined) return;
        const status = `${m[1]}${m[2]}${m[3] ?? ''}`;
        // On a cut last line, an installed package without a version lost its version: skip it
        // rather than report a version-less install.
        if (idx === lastIdx && m[6] === undefined && m[2] === 'i') return;
        packages.push(
          compact({
            name: m[4],
            arch: m[5],
            // `<none>` is how dpkg -l spells "no version"; treat it as absent if a caller mixes formats.
            version: m[6] === '<none>' ? undefined : m[6],
            status,
            installed: m[2] === 'i' || m[2] === 'W' || m[2] === 't',
            held: m[1] === 'h' ? true : undefined,
          }),
        );
      });
      return validate(DpkgQueryFactsSchema, { packages });
    },
    () => ({ packages: [] }),
  );
}
