/** What the os stage reads about one host. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';

export interface OsFacts {
  host: string;
  sudo: { ok: boolean; evidence: string };
  /** Installed versions of the base and tutorial-only packages. */
  installed: Record<string, string>;
  /** Installed kernel/NVIDIA/OFED packages that should be held. */
  holdCandidates: string[];
  ntpSynchronized?: boolean;
  ntpEvidence: string;
  /** `ulimit -l` of a login shell: `unlimited` or KiB. */
  memlock?: string;
  holds: string[];
  hostname?: string;
  problems: Array<{ probe: string; evidence: string }>;
}

function text(r: ProbeOutputs['results'][string] | undefined): string {
  return r ? `${r.stdout}${r.stderr}` : '';
}

export function collectOs({ host, results }: ProbeOutputs): OsFacts {
  const problems: OsFacts['problems'] = [];
  const sudo = results.sudo;
  const installed: Record<string, string> = {};
  for (const p of parseDpkgQuery(text(results.packages)).packages)
    if (p.installed && p.version) installed[p.name] = p.version;
  const holdCandidates = parseDpkgQuery(text(results['held-candidates']))
    .packages.filter((p) => p.installed)
    .map((p) => p.name);
  const ntp = results['ntp-sync'];
  const ntpValue = ntp?.exitCode === 0 ? ntp.stdout.trim() : undefined;
  if (ntp && ntp.exitCode !== 0)
    problems.push({ probe: 'ntp-sync', evidence: `${ntp.commandLine} → exit ${ntp.exitCode}\n${text(ntp).trim()}` });
  const memlock = results.memlock?.exitCode === 0 ? results.memlock.stdout.trim().split('\n').pop()?.trim() : undefined;
  const holds =
    results.holds?.exitCode === 0
      ? results.holds.stdout
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
      : [];
  const hostname = results.hostname?.exitCode === 0 ? results.hostname.stdout.trim() : undefined;
  return {
    host,
    sudo: {
      ok: sudo?.exitCode === 0,
      evidence: sudo
        ? `${sudo.commandLine} → exit ${sudo.exitCode}${text(sudo).trim() ? `\n${text(sudo).trim()}` : ''}`
        : 'not run',
    },
    installed,
    holdCandidates,
    ...(ntpValue === 'yes' || ntpValue === 'no' ? { ntpSynchronized: ntpValue === 'yes' } : {}),
    ntpEvidence: ntp ? `timedatectl show -p NTPSynchronized --value → ${text(ntp).trim() || '(empty)'}` : 'not run',
    ...(memlock ? { memlock } : {}),
    holds,
    ...(hostname ? { hostname } : {}),
    problems,
  };
}
