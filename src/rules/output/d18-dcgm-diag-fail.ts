/**
 * D18 DCGM diagnostic failure — high (docs/RULES.md §3). A test row or `GPUn:` sub-row with `Fail`; the following
 * `Error` row's wrapped text is joined by the parser. `Skip` and `Warn` do not fire; all-`Skip` means the tests did
 * not run (reported in the summary, not here).
 */
import type { DcgmiDiagFacts } from '../../parse/dcgmi-diag.js';
import type { Finding } from '../types.js';

function causeOf(test: string): string {
  const t = test.toLowerCase();
  if (t.includes('persistence'))
    return 'persistence mode is off: `nvidia-smi -pm 1` on every GPU (or enable nvidia-persistenced)';
  if (t.includes('pcie')) return 'PCIe link health or ACS/IOMMU (R38, R36)';
  if (/denylist|nvml|cuda|library|software/.test(t)) return 'the driver install (D13, R32)';
  if (/memory|diagnostic|stress|power|eud|sm /.test(t))
    return 'hardware: drain the node, reset the GPU, RMA if it recurs';
  return 'see the DCGM error text';
}

export function d18DcgmDiagFail(facts: DcgmiDiagFacts): Finding | undefined {
  const failed = facts.results.filter((r) => r.result === 'Fail' || (r.gpus ?? []).some((g) => g.result === 'Fail'));
  const first = failed[0];
  if (!first) return undefined;
  const ev = failed.slice(0, 4).map((r) => {
    const gpus = (r.gpus ?? []).filter((g) => g.result === 'Fail').map((g) => `GPU${g.gpu}`);
    return `line ${r.line}: ${r.test}: ${r.raw ?? r.result}${gpus.length > 0 ? ` (${gpus.join(', ')})` : ''}${r.message ? `\n  Error: ${r.message.length > 300 ? `${r.message.slice(0, 300)}…` : r.message}` : ''}`;
  });
  return {
    rule: 'D18',
    severity: 'high',
    title: `DCGM diagnostic failed: ${failed.map((r) => r.test).join(', ')}`,
    evidence: ev.join('\n'),
    fix: `Causes: ${[...new Set(failed.map((r) => `${r.test} → ${causeOf(r.test)}`))].join('; ')}. Next: fix, then \`dcgmi diag -r 3\`.`,
    line: first.line,
  };
}
