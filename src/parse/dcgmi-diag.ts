/**
 * `dcgmi diag -r 1|2|3|4`: a `| Diagnostic | Result |` table, 78 characters wide, with section rows
 * (`|-----  Deployment  ----…|`, `+-----  Hardware  ----…+`). DCGM 3.x: capitalised tests (`GPU Memory`), results
 * `Pass`, `Fail`, `Skip - All`, `Warn`; an `Error` / `Warning` row follows a failing test, its text hard-wrapped
 * mid-word over continuation rows (joined by plain concatenation). DCGM 4.x: lowercase plugins (`software`,
 * `memory`, `pcie`, …) with one `GPUn: Pass` sub-row per GPU. Metadata rows give the DCGM and driver versions.
 * A second identical table (a doubled paste) adds no rows.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

const Result = z.enum(['Pass', 'Fail', 'Skip', 'Warn']);

export const DcgmiDiagResultSchema = z.object({
  test: z.string(),
  result: Result,
  /** As printed (`Skip - All`, `Fail - GPU: 0`). */
  raw: z.string().optional(),
  section: z.string().optional(),
  /** DCGM 4 per-GPU sub-rows. */
  gpus: z.array(z.object({ gpu: z.number().int(), result: Result })).optional(),
  /** The `Error` / `Warning` text, continuation rows joined. */
  message: z.string().optional(),
  line: z.number().int(),
});
export type DcgmiDiagResult = z.infer<typeof DcgmiDiagResultSchema>;

export const DcgmiDiagFactsSchema = z.object({
  results: z.array(DcgmiDiagResultSchema),
  dcgmVersion: z.string().optional(),
  driverVersion: z.string().optional(),
  deviceIds: z.array(z.string()).optional(),
  errors: z.array(z.string()),
});
export type DcgmiDiagFacts = z.infer<typeof DcgmiDiagFactsSchema>;

function toResult(s: string): z.infer<typeof Result> | undefined {
  const m = /^(Pass|Fail|Skip|Warn)(?:ed|ing)?\b/i.exec(s.trim());
  if (!m?.[1]) return undefined;
  const r = m[1].toLowerCase();
  return r === 'pass' ? 'Pass' : r === 'fail' ? 'Fail' : r === 'skip' ? 'Skip' : 'Warn';
}

export function parseDcgmiDiag(text: string): DcgmiDiagFacts {
  return guard(
    () => {
      const facts: DcgmiDiagFacts = { results: [], errors: [] };
      let section: string | undefined;
      let last: DcgmiDiagResult | undefined;
      let msgTarget: DcgmiDiagResult | undefined;
      const seen = new Set<string>();
      // Raw chunks of each Error/Warning text (cell content minus its one leading pad space), joined at the end.
      // `removed`: characters of a label (`Error: `) taken off the chunk's start, so its text is that much narrower.
      const chunks = new Map<DcgmiDiagResult, Array<{ c: string; removed: number }>>();
      const addChunk = (r: DcgmiDiagResult, c: string, removed = 0): void => {
        const list = chunks.get(r) ?? [];
        if (list.length < 400) list.push({ c, removed });
        chunks.set(r, list);
      };
      let duplicate = false;
      const lines = logLines(text);
      for (let i = 0; i < lines.length; i++) {
        const t = (lines[i] ?? '').trim();
        if (t === '') continue;
        const sec = /^[|+]-+\s+([A-Za-z][\w ]*?)\s+-+[|+]/.exec(t);
        if (sec?.[1]) {
          section = sec[1];
          continue;
        }
        if (/^[|+][-=+]+[|+]?$/.test(t)) continue;
        if (/^\|\s*Diagnostic\s*\|\s*Result\s*\|/.test(t)) {
          // A repeated table (a doubled paste, or a second run) adds rows only for tests not yet seen.
          duplicate = facts.results.length > 0;
          section = undefined;
          last = undefined;
          msgTarget = undefined;
          continue;
        }
        if (!t.startsWith('|')) {
          if (/\bError\b|failed|Unable to/i.test(t) && !/^Successfully/.test(t) && facts.errors.length < 20)
            facts.errors.push(t);
          continue;
        }
        const cells = t.split('|');
        if (cells.length < 3) continue;
        const name = (cells[1] ?? '').trim();
        const value = cells.slice(2, -1).join('|');
        const valueT = value.trim();
        if (name === 'DCGM Version') facts.dcgmVersion = valueT;
        else if (name === 'Driver Version Detected') facts.driverVersion = valueT;
        else if (name === 'GPU Device IDs Detected') facts.deviceIds = valueT.split(/\s*,\s*/).filter((x) => x !== '');
        if (
          /^(?:DCGM Version|Driver Version Detected|GPU Device IDs Detected|Number of CPUs Detected|CPU Device IDs Detected)$/.test(
            name,
          )
        )
          continue;
        if (name === 'Error' || name === 'Warning' || name === 'Info') {
          msgTarget = last;
          if (msgTarget && !duplicate) {
            if ((chunks.get(msgTarget) ?? []).length > 0) addChunk(msgTarget, '\u0000');
            addChunk(msgTarget, value.replace(/^ /, ''));
          }
          continue;
        }
        if (name === '') {
          const sub = /^\s*GPU\s*(\d+)\s*:\s*(\S.*)$/.exec(valueT);
          if (sub && last) {
            const r = toResult(sub[2] ?? '');
            if (r && !duplicate) (last.gpus ??= []).push({ gpu: Number(sub[1]), result: r });
            msgTarget = undefined;
            continue;
          }
          // DCGM 4 puts `Error: …` / `Warning: …` in a sub-row under the test.
          const sm = /^\s*(?:GPU\s*\d+\s*:\s*)?(?:Error|Warning|Info)\s*:\s*(.*)$/.exec(valueT);
          if (sm && last && !duplicate) {
            msgTarget = last;
            if ((chunks.get(msgTarget) ?? []).length > 0) addChunk(msgTarget, '\u0000');
            const body = value.replace(/^ /, '');
            const rest = body.replace(/^\s*(?:GPU\s*\d+\s*:\s*)?(?:Error|Warning|Info)\s*:\s*/, '');
            addChunk(msgTarget, rest, body.length - rest.length);
            continue;
          }
          // A wrapped continuation of the Error/Warning text: DCGM cuts mid-word, so concatenate as is.
          if (msgTarget && !duplicate) addChunk(msgTarget, value.replace(/^ /, ''));
          continue;
        }
        const r = toResult(valueT);
        if (!r) continue;
        msgTarget = undefined;
        if (duplicate && seen.has(name)) {
          last = undefined;
          continue;
        }
        seen.add(name);
        last = compact({ test: name, result: r, raw: valueT !== r ? valueT : undefined, section, line: i + 1 });
        facts.results.push(last);
      }
      // DCGM wraps at a fixed width mid-word: every chunk but the last fills the width exactly, so a chunk is
      // the cell text cut to the widest chunk (keeping a space that fell at the wrap), then concatenated.
      for (const [r, list] of chunks) {
        const width = Math.max(...list.map((x) => x.removed + x.c.trimEnd().length));
        const parts = list.map(({ c, removed }) => {
          if (c === '\u0000') return ' ';
          const w = width - removed;
          return c.length > w ? c.slice(0, w) : c.trimEnd();
        });
        r.message = parts.join('').replace(/\s+/g, ' ').trim();
      }
      return validate(DcgmiDiagFactsSchema, compact(facts));
    },
    () => ({ results: [], errors: [] }),
  );
}
