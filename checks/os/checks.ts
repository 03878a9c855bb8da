/** os verdicts (docs/STAGES.md §3.2; R35 memlock, R51 time). */
import type { CheckDef } from '../../src/engine/types.js';
import { oneHostSkip } from '../common/pair.js';
import type { OsFacts } from './facts.js';
import { BASE_PACKAGES, KERNEL_HOLDS, TUTORIAL_ONLY_PACKAGES } from './probes.js';

/** Clock offsets per host measured by the stage's cluster run (seconds, remote − local midpoint). */
export interface OsCluster {
  offsets: Array<{ host: string; offsetS?: number; evidence: string }>;
}

export const SKEW_WARN_S = 0.5;

export const sudoCheck: CheckDef<OsFacts> = {
  id: 'os.sudo',
  title: 'passwordless sudo',
  scope: 'host',
  needs: ['sudo'],
  evaluate(f) {
    if (f.sudo.ok) return { status: 'pass', summary: '`sudo -n true` works', evidence: f.sudo.evidence };
    return {
      status: 'fail',
      summary: 'sudo needs a password: steps run as root unattended',
      evidence: f.sudo.evidence,
      // The inventory never holds a password (the schema refuses one): it is typed or piped in at run time.
      fix:
        'add `<user> ALL=(ALL) NOPASSWD:ALL` with `sudo visudo -f /etc/sudoers.d/l20-setup`, or give the password ' +
        'when you run: `l20-setup apply --ask-sudo-password` (prompt, echo off) or ' +
        '`pass show sudo | l20-setup apply --sudo-password-stdin`; it stays in memory and goes to sudo on stdin only',
    };
  },
};

export const packagesCheck: CheckDef<OsFacts> = {
  id: 'os.packages',
  title: 'base packages',
  scope: 'host',
  needs: ['packages'],
  evaluate(f) {
    const missing = BASE_PACKAGES.filter((p) => !f.installed[p]);
    const tutorial = TUTORIAL_ONLY_PACKAGES.filter((p) => f.installed[p]);
    const evidence = [
      ...BASE_PACKAGES.map((p) => `${f.installed[p] ? 'ii' : '--'} ${p} ${f.installed[p] ?? '(not installed)'}`),
      ...tutorial.map((p) => `ii ${p} ${f.installed[p]} (tutorial-only: not needed, left in place)`),
    ].join('\n');
    if (missing.length > 0) {
      return {
        status: 'fail',
        summary: `missing: ${missing.join(', ')}`,
        evidence,
        fix: 'apply os.install-base (apt-get install -y chrony pciutils ethtool iproute2 jq curl python3-venv lldpd)',
      };
    }
    const note = tutorial.length > 0 ? `; tutorial-only ${tutorial.join(', ')} present (not removed)` : '';
    return { status: 'pass', summary: `all ${BASE_PACKAGES.length} base packages installed${note}`, evidence };
  },
};

export const timeSyncCheck: CheckDef<OsFacts> = {
  id: 'os.time-sync',
  title: 'NTP synchronized',
  scope: 'host',
  needs: ['ntp-sync'],
  evaluate(f) {
    if (f.ntpSynchronized === true)
      return {
        status: 'pass',
        summary: 'clock synchronized (NTPSynchronized=yes)',
        evidence: f.ntpEvidence,
        rule: 'R51',
      };
    const fix =
      'apply os.install-base: chrony enabled and running ' +
      '(logs of both hosts are only comparable with synchronized clocks)';
    if (f.ntpSynchronized === false) {
      return {
        status: 'fail',
        summary: 'clock not synchronized (NTPSynchronized=no)',
        evidence: f.ntpEvidence,
        rule: 'R51',
        fix,
      };
    }
    return {
      status: 'error',
      summary: 'cannot tell: timedatectl did not answer yes or no for NTPSynchronized',
      evidence: f.ntpEvidence,
      rule: 'R51',
      fix,
    };
  },
};

export const memlockCheck: CheckDef<OsFacts> = {
  id: 'os.memlock',
  title: 'memlock unlimited for login sessions',
  scope: 'host',
  needs: ['memlock'],
  evaluate(f) {
    const evidence = `bash -lc 'ulimit -l' → ${f.memlock ?? '(no answer)'}`;
    if (f.memlock === 'unlimited')
      return { status: 'pass', summary: 'max locked memory unlimited', evidence, rule: 'R35' };
    if (f.memlock === undefined || !/^\d+$/.test(f.memlock)) {
      return {
        status: 'error',
        summary: 'cannot tell: `ulimit -l` in a login shell printed no limit',
        evidence,
        rule: 'R35',
        fix: "run `bash -lc 'ulimit -l'` on the host by hand",
      };
    }
    return {
      status: 'fail',
      summary: `max locked memory ${f.memlock} KiB: RDMA memory registration fails for large buffers`,
      evidence,
      rule: 'R35',
      fix: 'apply os.memlock: /etc/security/limits.d/90-l20-memlock.conf with `* soft memlock unlimited` and `* hard memlock unlimited` (units set LimitMEMLOCK=infinity themselves)',
    };
  },
};

export const holdsCheck: CheckDef<OsFacts> = {
  id: 'os.holds',
  title: 'kernel and driver packages held',
  scope: 'host',
  needs: ['holds', 'held-candidates'],
  evaluate(f) {
    const want = [...new Set([...KERNEL_HOLDS.filter((k) => f.holdCandidates.includes(k)), ...f.holdCandidates])];
    const unheld = want.filter((p) => !f.holds.includes(p));
    const evidence = `apt-mark showhold:\n${f.holds.join('\n') || '(nothing held)'}\ninstalled kernel/NVIDIA/OFED packages: ${want.join(', ') || 'none'}`;
    if (want.length === 0) {
      return {
        status: 'skip',
        summary: `none of ${KERNEL_HOLDS.join(', ')}, NVIDIA or OFED packages installed: nothing to hold`,
        evidence,
      };
    }
    if (unheld.length === 0) return { status: 'pass', summary: `${want.length} packages held`, evidence };
    return {
      status: 'warn',
      summary: `not held: ${unheld.join(', ')}`,
      evidence,
      fix: 'apply os.holds: unattended upgrades of the kernel or driver cause the NVML mismatch and untested DKMS rebuilds',
    };
  },
};

export const hostnamesCheck: CheckDef<OsFacts, OsCluster> = {
  id: 'os.hostnames',
  title: 'distinct host names and synchronized clocks',
  scope: 'pair',
  needs: ['hostname'],
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const names = all.map((a) => `${a.host}: hostname ${a.facts.hostname ?? 'not read (`hostname` printed nothing)'}`);
    const counts = new Map<string, number>();
    for (const a of all) if (a.facts.hostname) counts.set(a.facts.hostname, (counts.get(a.facts.hostname) ?? 0) + 1);
    const dup = [...counts].filter(([, n]) => n > 1).map(([h]) => h);
    const offsets = ctx.cluster?.offsets ?? [];
    const known = offsets.filter((o) => o.offsetS !== undefined).map((o) => o.offsetS!);
    const skew = known.length > 1 ? Math.max(...known) - Math.min(...known) : undefined;
    const evidence = [
      ...names,
      ...offsets.map((o) => o.evidence),
      skew !== undefined ? `skew ${skew.toFixed(3)} s (warn above ${SKEW_WARN_S} s)` : '',
    ]
      .filter(Boolean)
      .join('\n');
    if (dup.length > 0)
      return {
        status: 'fail',
        summary: `hosts share the name ${dup.join(', ')}: Ray and NCCL logs cannot tell them apart`,
        evidence,
        fix: 'sudo hostnamectl set-hostname <unique-name> on one of them',
      };
    const unnamed = all.filter((a) => !a.facts.hostname);
    if (unnamed.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: no host name read on ${unnamed.map((a) => a.host).join(', ')}`,
        evidence,
        fix: 'check that `hostname` runs on the host',
      };
    }
    if (skew !== undefined && skew > SKEW_WARN_S)
      return {
        status: 'warn',
        summary: `clocks differ by ${skew.toFixed(2)} s`,
        evidence,
        fix: 'check chrony on both hosts (chronyc tracking)',
        rule: 'R51',
      };
    return {
      status: 'pass',
      summary: `${all.length} distinct host names${skew !== undefined ? `, clock skew ${skew.toFixed(3)} s` : ''}`,
      evidence,
    };
  },
};

export const osChecks: readonly CheckDef<OsFacts, OsCluster>[] = [
  sudoCheck,
  packagesCheck,
  timeSyncCheck,
  memlockCheck,
  holdsCheck,
  hostnamesCheck,
];
