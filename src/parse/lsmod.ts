/**
 * `lsmod` (kmod): header `Module                  Size  Used by`, then `<name> <size> <count> [<users,>]`.
 * Often grepped (`lsmod | grep nvidia`): no header, and only lines containing the pattern. The pattern is
 * kept when the command line was pasted, so a rule can tell what the listing could have shown.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const LsmodModuleSchema = z.object({
  name: z.string(),
  size: z.number().int(),
  usedCount: z.number().int().optional(),
  usedBy: z.array(z.string()),
});
export type LsmodModule = z.infer<typeof LsmodModuleSchema>;

export const LsmodFactsSchema = z.object({
  modules: z.array(LsmodModuleSchema),
  /** The `Module Size Used by` header was present: a full listing. */
  full: z.boolean().optional(),
  /** `lsmod | grep <pattern>`: the pattern as typed (quotes removed), with its grep flags. */
  grep: z.object({ pattern: z.string(), flags: z.string().optional() }).optional(),
});
export type LsmodFacts = z.infer<typeof LsmodFactsSchema>;

const ROW_RE = /^\s*([A-Za-z0-9_]+)\s+(\d+)\s+(-?\d+)(?:\s+(\S+))?\s*$/;

export function parseLsmodGrep(line: string): { pattern: string; flags?: string } | undefined {
  const m = /\blsmod\b\s*\|\s*(?:e|f)?grep\s+(.*)$/.exec(line);
  if (!m || m[1] === undefined) return undefined;
  const args = m[1].match(/'[^']*'|"[^"]*"|\S+/g) ?? [];
  let flags = '';
  let pattern: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '|' || a === ';' || a === '&&') break;
    if (a === '-e' && args[i + 1] !== undefined) {
      pattern = (args[i + 1] ?? '').replace(/^['"]|['"]$/g, '');
      i++;
      continue;
    }
    if (/^-[A-Za-z]+$/.test(a)) {
      flags += a.slice(1);
      continue;
    }
    if (pattern === undefined) pattern = a.replace(/^['"]|['"]$/g, '');
  }
  if (/egrep/.test(line.slice(line.indexOf('|')))) flags += 'E';
  return pattern === undefined ? undefined : compact({ pattern, flags: flags || undefined });
}

export function parseLsmod(text: string): LsmodFacts {
  return guard(
    () => {
      const modules: LsmodModule[] = [];
      let full = false;
      let grep: LsmodFacts['grep'];
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        if (/^Module\s+Size\s+Used by$/.test(t)) {
          full = true;
          continue;
        }
        const g = parseLsmodGrep(t);
        if (g) {
          grep ??= g;
          continue;
        }
        const m = ROW_RE.exec(line);
        if (!m || m[1] === undefined) continue;
        const size = toInt(m[2]);
        if (size === undefined) continue;
        const usedBy = (m[4] ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '' && s !== '-' && /^[A-Za-z0-9_[\]]+$/.test(s));
        modules.push(compact({ name: m[1], size, usedCount: toInt(m[3]), usedBy }));
      }
      return validate(LsmodFactsSchema, compact({ modules, full: full ? true : undefined, grep }));
    },
    () => ({ modules: [] }),
  );
}
