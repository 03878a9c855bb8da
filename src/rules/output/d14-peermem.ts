/**
 * D14 nvidia-peermem not loaded — info (docs/RULES.md §3). Reads `lsmod`, full or grepped for nvidia/peer:
 * neither `nvidia_peermem` nor `nv_peer_mem` (as a module or a user of one). A grep for another pattern
 * proves nothing, and a listing whose origin is unknown (no header, no visible grep) proves nothing either.
 * A pasted `lsmod | grep nvidia_peermem` followed by the next prompt with nothing between is an answer too.
 */
import type { LsmodFacts } from '../../parse/lsmod.js';
import type { Finding } from '../types.js';

const PEERMEM = ['nvidia_peermem', 'nv_peer_mem'] as const;

/** Would `grep [flags] pattern` have shown a line naming one of the peermem modules? undefined: cannot tell. */
export function grepWouldShowPeermem(grep: { pattern: string; flags?: string }): boolean | undefined {
  const flags = grep.flags ?? '';
  // -v inverts; -q, -c, -l, -L print no module lines at all, so their silence proves nothing.
  if (/[vqclL]/.test(flags)) return undefined;
  let src = grep.pattern;
  if (flags.includes('F')) src = src.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  else if (!flags.includes('E') && !flags.includes('P')) src = src.replace(/\\\|/g, '|').replace(/\\([(){}+?])/g, '$1');
  let re: RegExp;
  try {
    re = new RegExp(src, flags.includes('i') ? 'i' : '');
  } catch {
    return undefined;
  }
  return PEERMEM.some((m) => re.test(`${m} 16384 0`));
}

/**
 * `lines`: the text the facts came from. Its last non-blank line must be a complete lsmod row (or the
 * header, or a prompt): a listing that ends in a fragment was cut, and what is missing may be the module.
 */
export function d14Peermem(f: LsmodFacts, lines?: readonly string[]): Finding | undefined {
  if (f.modules.length === 0 && !f.full && !f.grep) return undefined;
  // A grep that printed nothing before the next prompt is a complete answer, whatever the paste ends with.
  const answeredEmpty = f.grep?.empty === true && f.modules.length === 0;
  if (lines && !answeredEmpty) {
    let last = lines.length - 1;
    while (last >= 0 && (lines[last] ?? '').trim() === '') last--;
    const l = (lines[last] ?? '').trim();
    const complete =
      /^[A-Za-z0-9_]+\s+\d+\s+-?\d+(?:\s+\S+)?$/.test(l) ||
      /^Module\s+Size\s+Used by$/.test(l) ||
      /lsmod\b/.test(l) ||
      /^(?:\S+@\S+|\[[^\]]*\])\S*\s*[$#>]\s*$/.test(l) ||
      /^[$#>]\s*$/.test(l);
    if (!complete) return undefined;
  }
  const decisive = f.full === true || (f.grep !== undefined && grepWouldShowPeermem(f.grep) === true);
  if (!decisive) return undefined;
  const present = f.modules.some(
    (m) =>
      (PEERMEM as readonly string[]).includes(m.name) ||
      m.usedBy.some((u) => (PEERMEM as readonly string[]).includes(u)),
  );
  if (present) return undefined;
  const grepText = `lsmod | grep ${f.grep?.flags ? `-${f.grep.flags} ` : ''}${f.grep?.pattern ?? ''}`;
  const what = f.full
    ? `full lsmod (${f.modules.length} modules)`
    : answeredEmpty
      ? `${grepText} printed nothing`
      : `${grepText} (${f.modules.length} lines)`;
  return {
    rule: 'D14',
    severity: 'info',
    title: 'nvidia-peermem not loaded',
    evidence: `${what}: neither nvidia_peermem nor nv_peer_mem is listed`,
    fix:
      'Fine when NCCL uses DMA-BUF for GPUDirect RDMA; needed only on the peermem path (R34 decides). To load it: `modprobe nvidia-peermem`. ' +
      'If modprobe fails with `Invalid argument` and dmesg shows `Unknown symbol ib_register_peer_memory_client`, ib_core is the inbox one: use DMA-BUF instead.',
    source: 'lsmod',
  };
}
