/**
 * `ufw status verbose` (ufw 0.36): `Status: active|inactive`, the Logging/Default/New profiles lines,
 * then a `To  Action  From` table whose `To` column reads `22/tcp on eno1`, `Anywhere on ens1f0`,
 * `22/tcp (v6) on eno1`; Action `ALLOW IN` (verbose) or `ALLOW`.
 */
export interface UfwRuleFact {
  line: string;
  action: string;
  direction: 'IN' | 'OUT' | 'FWD' | '';
  iface?: string;
  port?: number;
  proto?: string;
  v6: boolean;
  /** `From` column. */
  from: string;
}

export interface UfwFacts {
  /** The command ran (ufw installed, root). */
  available: boolean;
  active?: boolean;
  defaultIncoming?: string;
  rules: UfwRuleFact[];
  /** What the verdicts quote. */
  evidence: string;
}

const ROW = /^(.+?)\s{2,}(ALLOW|DENY|REJECT|LIMIT)(?: (IN|OUT|FWD))?\s+(.+?)\s*$/;

export function parseUfwStatus(text: string, raw: string, exitCode: number | null): UfwFacts {
  const lines = text.split('\n');
  const status = lines.map((l) => /^Status:\s*(\S+)/.exec(l)?.[1]).find((s) => s !== undefined);
  const defaults = lines.map((l) => /^Default:\s*(\S+) \(incoming\)/.exec(l)?.[1]).find((s) => s !== undefined);
  const rules: UfwRuleFact[] = [];
  let inTable = false;
  for (const l of lines) {
    if (/^--\s+------\s+----/.test(l)) {
      inTable = true;
      continue;
    }
    if (!inTable || l.trim() === '') continue;
    const m = ROW.exec(l);
    if (!m) continue;
    const to = m[1] as string;
    const iface = / on (\S+)$/.exec(to)?.[1];
    const port = /^(\d+)(?:\/(tcp|udp))?/.exec(to);
    rules.push({
      line: l.trimEnd(),
      action: m[2] as string,
      direction: (m[3] ?? '') as UfwRuleFact['direction'],
      ...(iface ? { iface } : {}),
      ...(port ? { port: Number(port[1]) } : {}),
      ...(port?.[2] ? { proto: port[2] } : {}),
      v6: to.includes('(v6)'),
      from: m[4] as string,
    });
  }
  return {
    available: exitCode === 0 && status !== undefined,
    ...(status !== undefined ? { active: status === 'active' } : {}),
    ...(defaults ? { defaultIncoming: defaults } : {}),
    rules,
    evidence: raw.trim() === '' ? '(no output)' : raw.trim().split('\n').slice(0, 24).join('\n'),
  };
}

/** Whether an IPv4 ALLOW IN rule admits TCP `port` arriving on `iface`. */
export function admits(u: UfwFacts, iface: string, port?: number): boolean {
  return u.rules.some(
    (r) =>
      !r.v6 &&
      r.action === 'ALLOW' &&
      r.direction !== 'OUT' &&
      (r.iface === undefined || r.iface === iface) &&
      (port === undefined ? r.port === undefined : r.port === undefined || r.port === port) &&
      (r.proto === undefined || r.proto === 'tcp' || port === undefined),
  );
}
