/**
 * `nvcc --version` / `nvcc -V`:
 *   `nvcc: NVIDIA (R) Cuda compiler driver` / `Copyright (c) 2005-2024 NVIDIA Corporation` /
 *   `Built on Thu_Mar_28_02:18:24_PDT_2024` / `Cuda compilation tools, release 12.4, V12.4.131` /
 *   `Build cuda_12.4.r12.4/compiler.34097967_0` (CUDA ≥ 11; 10.x prints four lines).
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

export const NvccFactsSchema = z.object({
  /** `12.4` (the `release` of `Cuda compilation tools`). */
  cudaVersion: z.string().optional(),
  /** `12.4.131` (the `V…` build version). */
  cudaBuildVersion: z.string().optional(),
  builtOn: z.string().optional(),
  build: z.string().optional(),
  notInstalled: z.boolean().optional(),
});
export type NvccFacts = z.infer<typeof NvccFactsSchema>;

export function parseNvcc(text: string): NvccFacts {
  return guard(
    () => {
      const facts: NvccFacts = {};
      for (const line of logLines(text)) {
        const rel = /Cuda compilation tools,\s*release\s+(\d+\.\d+)(?:,\s*V(\d[\w.]*))?/.exec(line);
        if (rel && facts.cudaVersion === undefined) {
          facts.cudaVersion = rel[1];
          if (rel[2]) facts.cudaBuildVersion = rel[2];
          continue;
        }
        const built = /^\s*Built on\s+(\S+)/.exec(line);
        if (built && facts.builtOn === undefined) {
          facts.builtOn = built[1];
          continue;
        }
        const build = /^\s*Build\s+(cuda_\S+)/.exec(line);
        if (build && facts.build === undefined) {
          facts.build = build[1];
          continue;
        }
        if (/nvcc: (?:command )?not found|Command 'nvcc' not found/.test(line)) facts.notInstalled = true;
      }
      return validate(NvccFactsSchema, compact(facts));
    },
    () => ({}),
  );
}
