/**
 * `dkms status`: old dkms `nvidia, 460.91.03, 5.11.0-36-generic, x86_64: installed`; dkms ≥ 3
 * `nvidia/535.104.05, 6.2.0-26-generic, x86_64: installed` (kernel/arch absent for `added`), optionally
 * followed by a note `(original_module exists)` / `(WARNING! Diff between built and installed module!)`.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const DkmsModuleSchema = z.object({
  name: z.string(),
  version: z.string(),
  kernel: z.string().optional(),
  arch: z.string().optional(),
  /** `installed`, `built`, `added`, `broken`, … */
  status: z.string(),
  note: z.string().optional(),
});
export type DkmsModule = z.infer<typeof DkmsModuleSchema>;

export const DkmsStatusFactsSchema = z.object({
  modules: z.array(DkmsModuleSchema),
  warnings: z.array(z.string()).optional(),
});
export type DkmsStatusFacts = z.infer<typeof DkmsStatusFactsSchema>;

const NEW_RE = /^([\w.+-]+)\/([^,\s:]+)(?:,\s*([^,\s:]+))?(?:,\s*([^,\s:]+))?:\s*([A-Za-z-]+)(?:\s+(.*))?$/;
const OLD_RE = /^([\w.+-]+),\s*([^,\s:]+)(?:,\s*([^,\s:]+))?(?:,\s*([^,\s:]+))?:\s*([A-Za-z-]+)(?:\s+(.*))?$/;

export function parseDkmsStatus(text: string): DkmsStatusFacts {
  return guard(
    () => {
      const modules: DkmsModule[] = [];
      const warnings: string[] = [];
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        if (/^(?:Warning|Error)\b/i.test(t)) {
          warnings.push(t);
          continue;
        }
        const m = NEW_RE.exec(t) ?? OLD_RE.exec(t);
        if (!m || m[1] === undefined || m[2] === undefined || m[5] === undefined) continue;
        if (!/^(installed|built|added|broken|installed-weak)$/i.test(m[5])) continue;
        modules.push(
          compact({
            name: m[1],
            version: m[2],
            kernel: m[3],
            arch: m[4],
            status: m[5],
            note: m[6]?.trim() || undefined,
          }),
        );
      }
      return validate(DkmsStatusFactsSchema, compact({ modules, warnings: warnings.length ? warnings : undefined }));
    },
    () => ({ modules: [] }),
  );
}
