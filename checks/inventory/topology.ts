/**
 * GPU↔NIC relation from PCI paths when nvidia-smi is not there yet, with nvidia-smi's codes:
 * PIX (one bridge between them), PXB (several bridges, no host bridge), PHB (same root complex),
 * NODE (same NUMA node, different root complexes), SYS (across the inter-socket link).
 */
export function pciRelation(a: readonly string[], b: readonly string[], numaA?: number, numaB?: number): string {
  if (a.length === 0 || b.length === 0) return '?';
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  if (common === 0) {
    // Different root ports. Same root bus → same host bridge (PHB); else compare NUMA nodes.
    const bus = (p: readonly string[]) => p[0]?.slice(0, 7);
    if (bus(a) === bus(b)) return 'PHB';
    if (numaA !== undefined && numaB !== undefined) return numaA === numaB ? 'NODE' : 'SYS';
    return '?';
  }
  // Shared bridges: the last shared element is their closest common bridge. If it is the parent of
  // both (each one step below), a single bridge joins them.
  const belowA = a.length - common;
  const belowB = b.length - common;
  return belowA === 1 && belowB === 1 ? 'PIX' : 'PXB';
}
