/**
 * "Verdicts rest on evidence", as the tests judge it: written here, not imported from the product's guard
 * (src/engine/verdict-guard.ts), so the product is not the only judge of itself. Used by the lab scenarios'
 * test, the real-host conformance suite and the H200 replay.
 */
export interface CheckJson {
  id: string;
  host?: string | null;
  status: string;
  summary: string;
  evidence: string;
}

/** A value that was never read, printed as `?`, `x?`, undefined, NaN or an object's default string. */
const UNREAD = /(?:^|[\s(:=,/])\?(?=$|[\s),.;:/]|GT)|\bx\?(?!\w)|\bundefined\b|\bNaN\b|\[object Object\]/m;
const SPLICED_EMPTY = /:\s*$|\bis {2,}on\b| \(\)/m;
const GUARD_FIRED = /^cannot tell: (no evidence for|".*" rests on a value)/;

/** Each check that breaks the rule, with why: `status host id: summary — reasons`. */
export function ungroundedVerdicts(checks: readonly CheckJson[]): string[] {
  return checks.flatMap((c) => {
    const why: string[] = [];
    if ((c.status === 'pass' || c.status === 'warn') && !c.evidence.trim()) why.push('pass/warn without evidence');
    if (UNREAD.test(c.summary)) why.push('placeholder in summary');
    const line = c.evidence.split('\n').find((l) => UNREAD.test(l));
    if (line !== undefined) why.push(`placeholder in evidence: ${line}`);
    if (GUARD_FIRED.test(c.summary)) why.push('the engine guard fired (fix the check)');
    if (SPLICED_EMPTY.test(c.summary)) why.push('empty value spliced into the summary');
    return why.length > 0 ? [`${verdictLabel(c)} — ${why.join('; ')}`] : [];
  });
}

export const verdictLabel = (c: CheckJson): string =>
  `${c.status} ${c.host ?? 'cluster'} ${c.id}: ${c.summary.slice(0, 100)}`;
