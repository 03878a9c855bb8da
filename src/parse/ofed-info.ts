/**
 * `ofed_info -s` / `-n` / plain `ofed_info` (first line).
 *
 * - MLNX_OFED: `-s` → `MLNX_OFED_LINUX-5.4-3.1.0.0:`; plain → `MLNX_OFED_LINUX-5.2-1.0.4.0 (OFED-5.2-1.0.4):`.
 *   Build parts vary (`5.4-3.6.8` has three).
 * - DOCA-OFED (DOCA host packages, and NVIDIA network-operator driver containers) ships the same
 *   script, which reports the OFED tree it was built from: `OFED-internal-24.07-0.6.1:`.
 * - `-n` prints only the version (`5.4-3.1.0.0`): the flavour is not stated and is left out.
 * - Inbox rdma-core has no ofed_info: `bash: ofed_info: command not found` (or Ubuntu's
 *   `Command 'ofed_info' not found`).
 */
import { z } from 'zod';
import { cleanLines, compact, guard, validate } from './common.js';

export const OfedInfoFactsSchema = z.object({
  /** `5.4-3.1.0.0`, `24.07-0.6.1`. */
  version: z.string().optional(),
  flavor: z.enum(['MLNX_OFED', 'DOCA']).optional(),
  /** The release part before the first dash (`5.4`, `24.07`, `23.10`). */
  release: z.string().optional(),
  /** The build part after it (`3.1.0.0`, `0.6.1`). */
  build: z.string().optional(),
  /** The line the version was read from. */
  raw: z.string().optional(),
  /** ofed_info is absent: the host runs the distribution's (inbox) RDMA stack. */
  notInstalled: z.boolean().optional(),
});
export type OfedInfoFacts = z.infer<typeof OfedInfoFactsSchema>;

const VERSION = '(\\d+\\.\\d+-[0-9][0-9A-Za-z.]*(?:-[0-9A-Za-z.]+)*?)';
// `-s` ends the name with `:`, plain ofed_info with ` (OFED-…):`; without either the line was cut.
const MLNX = new RegExp(`\\bMLNX_OFED_LINUX-${VERSION}(?=:|\\s*\\()`);
const DOCA_INTERNAL = new RegExp(`\\bOFED-internal-${VERSION}(?=:|\\s*\\()`);
const DOCA_NAMED = new RegExp(`\\bDOCA[-_ ]?(?:OFED|HOST)?[-_ ]?v?${VERSION}(?=[:\\s(]|$)`, 'i');
// `ofed_info -n` alone on its line.
const BARE = new RegExp(`^${VERSION}$`);
const NOT_FOUND =
  /ofed_info:\s*(?:command )?not found|Command 'ofed_info' not found|ofed_info: No such file or directory/;

function split(version: string): { release?: string; build?: string } {
  const i = version.indexOf('-');
  return i < 0 ? { release: version } : { release: version.slice(0, i), build: version.slice(i + 1) };
}

export function parseOfedInfo(text: string): OfedInfoFacts {
  return guard(
    () => {
      let bare: { version: string; raw: string } | undefined;
      let notInstalled = false;
      for (const line of cleanLines(text, { commands: ['ofed_info'] })) {
        const t = line.trim();
        if (t === '') continue;
        const named: Array<[RegExp, 'MLNX_OFED' | 'DOCA']> = [
          [MLNX, 'MLNX_OFED'],
          [DOCA_INTERNAL, 'DOCA'],
          [DOCA_NAMED, 'DOCA'],
        ];
        for (const [re, flavor] of named) {
          const m = re.exec(t);
          if (m && m[1] !== undefined) {
            const version = m[1].replace(/[.:]+$/, '');
            return validate(OfedInfoFactsSchema, compact({ version, flavor, ...split(version), raw: t }));
          }
        }
        if (!bare && BARE.test(t)) bare = { version: t, raw: t };
        if (NOT_FOUND.test(t)) notInstalled = true;
      }
      if (bare)
        return validate(OfedInfoFactsSchema, compact({ version: bare.version, ...split(bare.version), raw: bare.raw }));
      return notInstalled ? { notInstalled: true } : {};
    },
    () => ({}),
  );
}
