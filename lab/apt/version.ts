/**
 * Debian version ordering (deb-version(7)): `[epoch:]upstream[-revision]`, compared epoch first,
 * then upstream and revision with dpkg's algorithm: alternating non-digit runs (letters sort
 * before non-letters, `~` before everything including the end) and numeric runs. apt uses it to
 * pick candidates, to decide upgrades and to check `(>= V)` dependencies, so the lab uses it too.
 */

interface Parsed {
  epoch: number;
  upstream: string;
  revision: string;
}

function parse(v: string): Parsed {
  const colon = v.indexOf(':');
  const epoch = colon > 0 ? Number(v.slice(0, colon)) : 0;
  const rest = colon > 0 ? v.slice(colon + 1) : v;
  const dash = rest.lastIndexOf('-');
  return dash < 0
    ? { epoch, upstream: rest, revision: '' }
    : { epoch, upstream: rest.slice(0, dash), revision: rest.slice(dash + 1) };
}

/** dpkg's order() of one character in a non-digit run. */
function order(c: string | undefined): number {
  if (c === undefined) return 0;
  if (/[A-Za-z]/.test(c)) return c.charCodeAt(0);
  if (c === '~') return -1;
  return c.charCodeAt(0) + 256;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** dpkg's verrevcmp(). */
function verrevcmp(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    let firstDiff = 0;
    while ((i < a.length && !isDigit(a[i])) || (j < b.length && !isDigit(b[j]))) {
      const ac = order(i < a.length && !isDigit(a[i]) ? a[i] : undefined);
      const bc = order(j < b.length && !isDigit(b[j]) ? b[j] : undefined);
      if (ac !== bc) return ac - bc;
      i++;
      j++;
    }
    while (a[i] === '0') i++;
    while (b[j] === '0') j++;
    while (isDigit(a[i]) && isDigit(b[j])) {
      if (!firstDiff) firstDiff = (a.charCodeAt(i) as number) - (b.charCodeAt(j) as number);
      i++;
      j++;
    }
    if (isDigit(a[i])) return 1;
    if (isDigit(b[j])) return -1;
    if (firstDiff) return firstDiff;
  }
  return 0;
}

/** Negative, zero or positive as `a` sorts before, equal to or after `b`. */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (pa.epoch !== pb.epoch) return pa.epoch - pb.epoch;
  return verrevcmp(pa.upstream, pb.upstream) || verrevcmp(pa.revision, pb.revision);
}

export type Relation = '=' | '>=' | '<=' | '>>' | '<<';

export function satisfies(version: string, rel: Relation, wanted: string): boolean {
  const c = compareVersions(version, wanted);
  switch (rel) {
    case '=':
      return c === 0;
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '>>':
      return c > 0;
    case '<<':
      return c < 0;
  }
}

/** The version as dpkg prints it in file names: the epoch is dropped (`1:5.16-1` → `5.16-1`). */
export function fileVersion(v: string): string {
  const colon = v.indexOf(':');
  return colon > 0 ? v.slice(colon + 1) : v;
}
