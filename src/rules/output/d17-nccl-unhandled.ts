/**
 * D17 NCCL unhandled system or CUDA error during init — blocker (docs/RULES.md §3). Read by vllm-log and nccl-log.
 * `NCCL error: unhandled system error …`, `NCCL Error 2: unhandled system error`, `unhandled cuda error`,
 * `remote process exited or there was a network error`. When the text holds the underlying WARN rule (D01, D04,
 * D05, D06), that rule fires too and this finding points to it.
 */
import type { LogHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d17NcclUnhandled(
  hits: readonly LogHit[],
  related: readonly string[] = [],
  texts: readonly string[] = [],
): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const cuda = hits.some((h) => /unhandled cuda error/i.test(h.text));
  const system = hits.some((h) => /unhandled system error|remote process exited/i.test(h.text));
  const shown = new Set<string>();
  const lines: string[] = [];
  for (const h of hits) {
    const key = h.text.replace(/^.*?(NCCL [Ee]rror|unhandled|remote process)/, '$1').replace(/\d+/g, '#');
    if (shown.has(key)) continue;
    shown.add(key);
    lines.push(`line ${h.line}: ${h.text}`);
    if (lines.length >= 4) break;
  }
  const joined = texts.join('\n');
  const hints: string[] = [];
  if (/ibv_reg_mr failed with error Cannot allocate memory/i.test(joined))
    hints.push('memlock: `ibv_reg_mr … Cannot allocate memory` (R35)');
  if (/Error while creating shared memory segment/i.test(joined)) hints.push('a small /dev/shm in a container');
  const causes: string[] = [];
  if (system)
    causes.push(
      'system error: memlock (`Call to ibv_reg_mr failed with error Cannot allocate memory`, R35); QP setup (D05); a small /dev/shm in a container ' +
        '(`Error while creating shared memory segment`); a firewalled NCCL port range (R48)',
    );
  if (cuda)
    causes.push('CUDA error: a runtime newer than the driver (R33); P2P or IPC (R36, R37); a bad GPU (D21); MIG (D23)');
  return {
    rule: 'D17',
    severity: 'blocker',
    title: `NCCL unhandled ${cuda && !system ? 'CUDA' : system && !cuda ? 'system' : 'system/CUDA'} error during init`,
    evidence: [
      ...lines,
      ...(related.length > 0 ? [`the underlying NCCL WARN is in this text: see ${related.join(', ')}`] : []),
      ...(hints.length > 0 ? [`also here: ${hints.join('; ')}`] : []),
    ].join('\n'),
    fix: `Causes: ${causes.join('. ')}. Next: rerun with \`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET\` on every rank and read the first \`NCCL WARN\` line.`,
    line: first.line,
  };
}
