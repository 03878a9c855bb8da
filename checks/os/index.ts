/**
 * Stage 2, `os` (docs/STAGES.md §3.2): sudo, base packages, time sync, memlock, package holds, host names.
 * Deliberately not done: narrowing ip_local_port_range (the fabric firewall admits all fabric traffic).
 */
import type { ClusterRunContext, StageDef, StepDef } from '../../src/engine/types.js';
import { collectOs, type OsFacts } from './facts.js';
import { osChecks, type OsCluster } from './checks.js';
import { BASE_PACKAGES, KERNEL_HOLDS, osProbes } from './probes.js';

export const MEMLOCK_FILE = '/etc/security/limits.d/90-l20-memlock.conf';
export const MEMLOCK_CONTENT =
  '# l20-setup: RDMA registers (pins) large buffers; NCCL, Ray and vLLM need unlimited memlock\n* soft memlock unlimited\n* hard memlock unlimited\n';

const installBase: StepDef<OsFacts> = {
  id: 'os.install-base',
  title: 'install base packages, enable chrony and lldpd',
  danger: 'safe',
  guards: ['os.packages', 'os.time-sync'],
  plan: (ctx) => {
    const missing = BASE_PACKAGES.filter((p) => !ctx.facts.installed[p]);
    return {
      summary:
        missing.length > 0 ? `install ${missing.join(', ')}; enable chrony and lldpd` : 'enable chrony and lldpd',
      commands: [
        { command: { argv: ['apt-get', 'update'] }, timeoutMs: 10 * 60_000 },
        {
          command: { argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', ...BASE_PACKAGES] },
          timeoutMs: 30 * 60_000,
        },
        { command: { argv: ['systemctl', 'enable', '--now', 'chrony', 'lldpd'] } },
      ],
    };
  },
};

const memlock: StepDef<OsFacts> = {
  id: 'os.memlock',
  title: 'memlock unlimited',
  danger: 'safe',
  guards: ['os.memlock'],
  plan: () => ({
    summary: `write ${MEMLOCK_FILE}`,
    files: [{ path: MEMLOCK_FILE, content: MEMLOCK_CONTENT, mode: 0o644 }],
  }),
};

const holds: StepDef<OsFacts> = {
  id: 'os.holds',
  title: 'hold kernel and driver packages',
  danger: 'safe',
  guards: ['os.holds'],
  plan: (ctx) => {
    const want = [...new Set([...KERNEL_HOLDS, ...ctx.facts.holdCandidates])].filter(
      (p) => ctx.facts.holdCandidates.includes(p) && !ctx.facts.holds.includes(p),
    );
    return want.length === 0
      ? null
      : {
          summary: `apt-mark hold ${want.join(' ')}`,
          commands: [{ command: { argv: ['apt-mark', 'hold', ...want] } }],
          rollback: [{ command: { argv: ['apt-mark', 'unhold', ...want] } }],
        };
  },
};

/** Reads every host's clock at once and relates it to ours: offset = remote − midpoint of the round trip. */
async function measureClocks(ctx: ClusterRunContext<OsFacts>): Promise<OsCluster> {
  const offsets = await Promise.all(
    ctx.hosts.map(async (host) => {
      const t0 = Date.now();
      const r = await ctx.run(host, 'clock', { argv: ['date', '+%s.%N'] }, { readsOnly: true });
      const t1 = Date.now();
      const remote = Number(r.stdout.trim());
      if (r.exitCode !== 0 || !Number.isFinite(remote))
        return { host, evidence: `${host}: date +%s.%N → exit ${r.exitCode} ${r.stdout.trim()}` };
      const offsetS = remote - (t0 + t1) / 2000;
      return { host, offsetS, evidence: `${host}: date ${remote.toFixed(3)}, round trip ${t1 - t0} ms` };
    }),
  );
  return { offsets };
}

export const osStage: StageDef<OsFacts, OsCluster> = {
  id: 'os',
  title: 'sudo, base packages, time sync, memlock',
  purpose:
    'Passwordless sudo, the base tools later stages use (chrony, lldpd, jq, …), synchronized clocks, unlimited memlock for RDMA, and held kernel/driver packages. The tutorial\'s ibutils/ifenslave/ntp are not needed and its "disable the firewall" advice is wrong (see network.firewall).',
  probes: osProbes,
  collect: collectOs,
  cluster: measureClocks,
  checks: osChecks,
  steps: [installBase, memlock, holds],
};
