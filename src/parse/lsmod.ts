/**
 * `lsmod` (kmod): header `Module                  Size  Used by`, then `<name> <size> <count> [<users,>]`.
 * Often grepped (`lsmod | grep nvidia`): no header, and only lines containing the pattern. The pattern is
 * kept when the command line was pasted, so a rule can tell what the listing could have shown.
 */
import { z } from 'zod';
import { compact, guard, isTranscriptPrompt, toInt, validate } from './common.js';
import { textLines } from './rdma-util.js';

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
  /**
   * `lsmod | grep <pattern>`: the pattern as typed (quotes removed), with its grep flags. `empty`: the pasted
   * command line is followed by the next prompt (or the end) with no line between: grep printed nothing, so
   * no loaded module matches the pattern.
   */
  grep: z.object({ pattern: z.string(), flags: z.string().optional(), empty: z.boolean().optional() }).optional(),
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

/** grep flags under which a grep prints no matching lines whatever matched (quiet, counts, file names). */
const NO_LINES_FLAGS = /[qclLv]/;

/** `lsmod | grep …` typed at a prompt or as the line's command (not inside an `if`, a pipeline's middle, …). */
function isTypedGrep(line: string): boolean {
  return isTranscriptPrompt(line) || /^\s*(?:sudo\s+)?lsmod\s*\|/.test(line);
}

export function parseLsmod(text: string): LsmodFacts {
  return guard(
    () => {
      const modules: LsmodModule[] = [];
      let full = false;
      let grep: LsmodFacts['grep'];
      // The first grep's output: lines counted until the next prompt (any line, so a cut row counts too);
      // undefined once that output ended.
      let grepRows: number | undefined;
      const endGrepOutput = (): void => {
        if (grep && grepRows === 0 && !NO_LINES_FLAGS.test(grep.flags ?? '')) grep.empty = true;
        grepRows = undefined;
      };
      // Raw lines, prompts kept: the pasted command line says what the listing could have shown.
      for (const line of textLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        if (/^Module\s+Size\s+Used by$/.test(t)) {
          full = true;
          continue;
        }
        const g = parseLsmodGrep(t);
        if (g) {
          endGrepOutput();
          if (!grep && isTypedGrep(t)) {
            grep = g;
            grepRows = 0;
          } else grep ??= g;
          continue;
        }
        if (isTranscriptPrompt(t)) {
          endGrepOutput();
          continue;
        }
        if (grepRows !== undefined) grepRows++;
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
      endGrepOutput();
      return validate(LsmodFactsSchema, compact({ modules, full: full ? true : undefined, grep }));
    },
    () => ({ modules: [] }),
  );
}
