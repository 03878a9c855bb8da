/**
 * D21 GPU reporting errors — blocker, graded (docs/RULES.md §3). nvidia-smi: `ERR!` in a GPU row (`high` when only the
 * Fan field), `Unable to determine the device handle for GPU <bdf>: Unknown Error`, `GPU has fallen off the bus`,
 * `Volatile Uncorr. ECC` > 0; nvidia-smi -q: volatile DRAM/SRAM uncorrectable > 0, Remapped Rows `Pending: Yes`,
 * `Remapping Failure Occurred: Yes`. (dmesg Xids and lspci `rev ff` belong to other kinds.)
 */
import type { Finding, Severity } from '../types.js';

export interface D21Hit {
  line?: number;
  text: string;
  /** `fan-only` hits grade `high`; everything else `blocker`. */
  fanOnly?: boolean;
}

export function d21GpuErrors(hits: readonly D21Hit[]): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const severity: Severity = hits.every((h) => h.fanOnly) ? 'high' : 'blocker';
  return {
    rule: 'D21',
    severity,
    title: severity === 'high' ? 'GPU reporting errors (fan sensor ERR!)' : 'GPU reporting errors',
    evidence: hits
      .slice(0, 5)
      .map((h) => (h.line !== undefined ? `line ${h.line}: ${h.text}` : h.text))
      .join('\n'),
    fix:
      'Causes: a PCIe, riser or power fault; a memory ECC fault; a driver hang. Next: drain the node; ' +
      '`nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`; reset the GPU (`nvidia-smi -r -i <n>`; pending remaps apply at reset); ' +
      '`dcgmi diag -r 3`; RMA if it recurs.' +
      (severity === 'high'
        ? ' A fan-only ERR! on a passively cooled card is usually a sensor read fault: check the chassis fans and BMC.'
        : ''),
    ...(first.line !== undefined ? { line: first.line } : {}),
  };
}
