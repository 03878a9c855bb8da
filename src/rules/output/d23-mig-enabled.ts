/**
 * D23 MIG enabled on a GPU meant for vLLM tensor parallelism — medium (docs/RULES.md §3). nvidia-smi `MIG M.` =
 * `Enabled` or a `MIG devices:` table; nvidia-smi -q `MIG Mode` → `Current : Enabled`; CSV `mig.mode.current` =
 * Enabled. The L20 reports `N/A`.
 */
import type { Finding } from '../types.js';

export interface D23Hit {
  line?: number;
  text: string;
  gpu?: string | number;
}

export function d23MigEnabled(hits: readonly D23Hit[]): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const gpus = [...new Set(hits.map((h) => h.gpu).filter((g) => g !== undefined))];
  const target = gpus.length === 1 ? String(gpus[0]) : '<n>';
  return {
    rule: 'D23',
    severity: 'medium',
    title: `MIG enabled${gpus.length > 0 ? ` on GPU ${gpus.join(', ')}` : ''}`,
    evidence: hits
      .slice(0, 4)
      .map((h) => (h.line !== undefined ? `line ${h.line}: ${h.text}` : h.text))
      .join('\n'),
    fix:
      'CUDA exposes one MIG instance per process, so vLLM tensor parallelism cannot span instances. ' +
      `Next: stop the GPU's processes, \`nvidia-smi -i ${target} -mig 0\`, then reset the GPU (\`nvidia-smi -r -i ${target}\`) or reboot.`,
    ...(first.line !== undefined ? { line: first.line } : {}),
  };
}
