/**
 * D15 nccl-tests reported wrong results — blocker (docs/RULES.md §3). A non-zero `#wrong` in any row, or
 * `# Out of bounds values : <n> FAILED`. The old format's `error` column is a max abs error (small values normal):
 * only its footer counts. `#wrong` `N/A` (`-c 0`) is "not validated", a fact, not a finding.
 */
import type { NcclTestsFacts } from '../../parse/nccl-tests.js';
import type { Finding } from '../types.js';

export function d15NcclTestsWrong(
  facts: NcclTestsFacts,
  footerLine?: { line: number; text: string },
): Finding | undefined {
  const bad = facts.rows.filter((r) => (r.wrongOut ?? 0) > 0 || (r.wrongIn ?? 0) > 0);
  const failedFooter =
    facts.outOfBoundsStatus !== undefined && /FAIL/i.test(facts.outOfBoundsStatus) ? footerLine : undefined;
  if (bad.length === 0 && !failedFooter && !((facts.outOfBounds ?? 0) > 0 && footerLine)) return undefined;
  const ev: string[] = bad
    .slice(0, 4)
    .map(
      (r) =>
        `line ${r.line}: ${r.bytes} B ${r.type}: #wrong out-of-place ${r.wrongOut ?? '-'}, in-place ${r.wrongIn ?? '-'}`,
    );
  if (bad.length > 4) ev.push(`… ${bad.length} rows with wrong values in total`);
  if (footerLine) ev.push(`line ${footerLine.line}: ${footerLine.text}`);
  const line = bad[0]?.line ?? footerLine?.line;
  return {
    rule: 'D15',
    severity: 'blocker',
    title: `${facts.test ?? 'nccl-tests'} reported wrong results`,
    evidence: ev.join('\n'),
    fix:
      'Causes: GDR or P2P through ACS or IOMMU (R36); NCCL_PROTO=LL128 forced; a faulty GPU (D21, D18); mixed NCCL versions (R47). ' +
      'Next: run the same test on one node; then across nodes with NCCL_NET_GDR_LEVEL=LOC; then with NCCL_P2P_DISABLE=1. The first clean run ' +
      'isolates the path. Then `dcgmi diag -r 3` on both nodes.',
    ...(line !== undefined ? { line } : {}),
  };
}
