/**
 * ray verdicts (docs/STAGES.md §3.10; R35, R45, R46, R47). When the layout needs no Ray (data parallelism)
 * every check is `skip` with that reason — except where a Ray is running anyway (the tutorial's
 * hand-started head on 0.0.0.0): its registered addresses and its open dashboard are still findings.
 */
import { cannotTellVerdict } from '../../src/engine/probe-health.js';
import type { CheckDef, ClusterRunContext, StageContext, Verdict } from '../../src/engine/types.js';
import { parseRayStatus, type RayStatusFacts } from '../../src/parse/ray-status.js';
import { controlAddress, controlSubnet } from '../common/design.js';
import { versionParity } from '../vllm/pair-checks.js';
import { inSubnet, unitStateLine } from '../vllm/shared-facts.js';
import type { RayFacts } from './facts.js';
import { RAY_BIN, rayNeeded, rayUnit } from './plan.js';

export interface RayCluster {
  status?: { facts: RayStatusFacts; evidence: string };
  skipped?: string;
}

const WILDCARD = /^(?:0\.0\.0\.0|::|\*)$/;

function need(f: RayFacts, ctx: StageContext): ReturnType<typeof rayNeeded> {
  return rayNeeded(ctx.config, f, ctx.hosts.length);
}

const running = (f: RayFacts): boolean => f.procs.some((p) => p.kind === 'raylet' || p.kind === 'gcs_server');

/** A skip shows what it rests on: the layout arithmetic behind "Ray unused", or the reason itself. */
function skip(why: string, evidence?: string): Verdict {
  return { status: 'skip', summary: why, evidence: evidence?.trim() ? evidence : why };
}

export async function rayClusterRun(ctx: ClusterRunContext<RayFacts>): Promise<RayCluster> {
  const head = ctx.facts[0];
  if (!head) return { skipped: 'no hosts' };
  const n = rayNeeded(ctx.config, head.facts, ctx.hosts.length);
  if (n.needed !== true) return { skipped: n.why };
  const address = `${controlAddress(ctx.config.network.design, 0)}:${ctx.config.ray.port}`;
  const r = await ctx.run(
    head.host,
    'ray.status',
    { argv: [RAY_BIN, 'status', '--address', address] },
    { timeoutMs: 60_000 },
  );
  const text = `${r.stdout}${r.stderr}`;
  return {
    status: {
      facts: parseRayStatus(text),
      evidence: `${RAY_BIN} status --address ${address} → exit ${r.exitCode}\n${text.trim().split('\n').slice(0, 24).join('\n')}`,
    },
  };
}

export const versionsCheck: CheckDef<RayFacts, RayCluster> = {
  id: 'ray.versions',
  title: 'Python, Ray, vLLM, torch equal on every host',
  scope: 'pair',
  needs: ['versions'],
  evaluate(all, ctx) {
    const n = all[0] ? need(all[0].facts, ctx) : undefined;
    if (n?.needed !== true) return skip(n?.why ?? 'no hosts', n?.lines.join('\n'));
    if (all.length < 2) return skip(`one host (${all[0]!.host}): nothing to compare`, `hosts: ${all[0]!.host}`);
    return {
      ...versionParity(all, [
        ['python', 'Python'],
        ['ray', 'Ray'],
        ['vllm', 'vLLM'],
        ['torch', 'torch'],
      ]),
      rule: 'R47',
    };
  },
};

export const unitsCheck: CheckDef<RayFacts, RayCluster> = {
  id: 'ray.units',
  title: 'l20-ray.service active with pinned ports',
  scope: 'host',
  evaluate(f, host, ctx) {
    const n = need(f, ctx);
    const state = unitStateLine('l20-ray.service', f.unit);
    if (n.needed === undefined) return skip(n.why, state);
    if (!n.needed) {
      if (f.unit.file)
        return {
          status: 'fail',
          summary: `l20-ray.service is installed but ${n.why}`,
          evidence: state,
          fix: 'apply ray.units (stops and removes the unused Ray)',
        };
      return skip(n.why, n.lines.join('\n'));
    }
    const i = Math.max(0, ctx.hosts.indexOf(host));
    if (!f.unit.file)
      return { status: 'fail', summary: 'l20-ray.service is not installed', evidence: state, fix: 'apply ray.units' };
    // The file is read with cat; whether it runs only systemctl can say.
    if (f.unit.unreadable.length > 0) return cannotTellVerdict(f.unit.unreadable, host);
    const want = rayUnit(ctx.config, i, f.user ?? 'root');
    if (f.unit.file !== want)
      return {
        status: 'fail',
        summary: 'l20-ray.service differs from the plan (addresses, ports or limits)',
        evidence: `${state}\n--- installed\n${f.unit.file}--- planned\n${want}`,
        fix: 'apply ray.units',
      };
    if (f.unit.active !== 'active')
      return {
        status: 'fail',
        summary: `l20-ray.service is ${f.unit.active ?? 'in no state systemctl printed'}`,
        evidence: state,
        fix: 'read `journalctl -u l20-ray.service`; apply ray.units',
      };
    if ((f.unit.nRestarts ?? 0) > 0)
      return {
        status: 'warn',
        summary: `active, restarted ${f.unit.nRestarts} time(s)`,
        evidence: state,
        fix: 'read `journalctl -u l20-ray.service`',
      };
    return {
      status: 'pass',
      summary: `active (${i === 0 ? 'head' : 'worker'}, ${controlAddress(ctx.config.network.design, i)})`,
      evidence: state,
    };
  },
};

export const statusCheck: CheckDef<RayFacts, RayCluster> = {
  id: 'ray.status',
  title: 'every node and GPU in the Ray cluster',
  scope: 'pair',
  evaluate(all, ctx) {
    const c = ctx.cluster;
    if (!c?.status) return skip(c?.skipped ?? 'not run');
    const s = c.status.facts;
    const gpus = all.reduce((a, h) => a + (h.facts.gpus?.count ?? 8), 0);
    const nodes = s.nodesActive ?? 0;
    const total = s.gpusTotal ?? 0;
    if (s.errors.length > 0 || nodes < all.length || total < gpus) {
      return {
        status: 'fail',
        summary: `Ray sees ${nodes}/${all.length} nodes and ${total}/${gpus} GPUs${s.errors[0] ? `: ${s.errors[0]}` : ''}`,
        evidence: c.status.evidence,
        fix: 'check ray.units and ray.node-ips on every host (a worker on the wrong address never joins)',
      };
    }
    return { status: 'pass', summary: `${nodes} nodes, ${total} GPUs`, evidence: c.status.evidence };
  },
};

export const nodeIpsCheck: CheckDef<RayFacts, RayCluster> = {
  // Without ps no raylet shows: "Ray unused, none runs" would rest on nothing.
  id: 'ray.node-ips',
  title: 'nodes registered with their control-subnet address',
  scope: 'host',
  needs: ['ray-procs'],
  evaluate(f, host, ctx) {
    const n = need(f, ctx);
    const subnet = controlSubnet(ctx.config.network.design);
    const local = f.procs
      .filter((p) => p.kind === 'raylet')
      .map((p) => p.nodeIp)
      .filter((x): x is string => !!x);
    if (!running(f) && n.needed !== true) return skip(n.why, f.nodeIpsEvidence);
    const ips = f.nodeIps ?? local;
    const raylet = local.length ? `--node_ip_address=${local.join(', ')}` : 'no raylet runs';
    const evidence =
      `${f.nodeIpsEvidence}\nraylet on ${host}: ${raylet}` +
      `\ncontrol subnet ${subnet}; management ${f.mgmtAddress ?? 'address unknown (SSH_CONNECTION empty)'}`;
    if (ips.length === 0)
      return { status: 'fail', rule: 'R45', summary: 'no Ray node registered here', evidence, fix: 'apply ray.units' };
    const wrong = ips.filter((ip) => !inSubnet(ip, subnet));
    if (wrong.length > 0) {
      const mgmt = wrong.filter((ip) => ip === f.mgmtAddress);
      return {
        status: 'fail',
        rule: 'R45',
        summary: `registered outside ${subnet}: ${wrong.join(', ')}${mgmt.length ? " (the management address: no --node-ip-address, so Ray took the default route's)" : ''}`,
        evidence,
        fix: n.needed
          ? 'apply ray.units (--node-ip-address=<control address> on every node)'
          : `apply ray.units: ${n.why}, so the hand-started Ray is stopped`,
      };
    }
    return { status: 'pass', rule: 'R45', summary: `${ips.join(', ')} in ${subnet}`, evidence };
  },
};

export const exposureCheck: CheckDef<RayFacts, RayCluster> = {
  id: 'ray.exposure',
  title: 'dashboard and Jobs API on 127.0.0.1 only',
  scope: 'host',
  needs: ['listening', 'ray-procs'],
  evaluate(f, _host, ctx) {
    const n = need(f, ctx);
    const port = ctx.config.ray.dashboardPort;
    const socks = (f.listening ?? []).filter((s) => s.port === port);
    const token =
      /^Environment=.*\bRAY_AUTH_MODE=token\b/m.test(f.unit.file ?? '') &&
      /^2\.(5[2-9]|[6-9]\d)/.test(f.versions.ray ?? '');
    const ray = f.versions.ray ? `Ray ${f.versions.ray}` : 'Ray version not read (no /opt/l20/venv/bin/ray)';
    const held = socks.map((s) => s.line.trim().replace(/\s+/g, ' ')).join(' | ') || 'nothing listens';
    const evidence =
      `ss -ltnH, port ${port}: ${held}\n${f.listeningEvidence}\n${ray}` + `${token ? ', RAY_AUTH_MODE=token' : ''}`;
    if (!f.listening)
      return {
        status: 'error',
        rule: 'R46',
        summary: 'cannot tell: ss could not list the listening sockets',
        evidence,
        fix: 'check `ss -ltnH` on the host (iproute2)',
      };
    if (!running(f) && socks.length === 0) {
      return skip(n.needed === true ? `no Ray runs here: nothing listens on ${port} (ray.units)` : n.why, evidence);
    }
    const wide = socks.filter((s) => WILDCARD.test(s.address) || (s.address !== '127.0.0.1' && s.address !== '::1'));
    if (wide.length > 0 && !token) {
      return {
        status: 'fail',
        rule: 'R46',
        summary: `the Ray dashboard / Jobs API listens on ${wide.map((s) => s.address).join(', ')}:${port} without token auth: anyone reaching it runs code (CVE-2023-48022)`,
        evidence,
        fix: n.needed
          ? 'apply ray.units (--dashboard-host=127.0.0.1; reach it with `ssh -L 8265:127.0.0.1:8265 <head>`)'
          : `apply ray.units: ${n.why}, so this Ray is stopped`,
      };
    }
    return {
      status: 'pass',
      rule: 'R46',
      summary: socks.length
        ? `dashboard on ${socks.map((s) => s.address).join(', ')}:${port}`
        : `Ray runs here with nothing on ${port} (no dashboard)`,
      evidence,
    };
  },
};

export const memlockCheck: CheckDef<RayFacts, RayCluster> = {
  id: 'ray.memlock',
  title: 'raylet may lock unlimited memory',
  scope: 'host',
  evaluate(f, host, ctx) {
    const n = need(f, ctx);
    if (n.needed !== true) return skip(n.why, n.lines.join('\n'));
    if (f.memlockUnreadable.length > 0) return cannotTellVerdict(f.memlockUnreadable, host);
    if (f.memlock === 'unlimited')
      return { status: 'pass', rule: 'R35', summary: 'Max locked memory unlimited', evidence: f.memlockEvidence };
    return {
      status: 'fail',
      rule: 'R35',
      summary: f.memlock
        ? `raylet may lock only ${f.memlock} bytes: RDMA registration fails (ibv_reg_mr: Cannot allocate memory)`
        : 'no raylet to read the limit from',
      evidence: f.memlockEvidence,
      fix: 'apply ray.units (LimitMEMLOCK=infinity: limits.d does not reach services)',
    };
  },
};

export const rayChecks: readonly CheckDef<RayFacts, RayCluster>[] = [
  versionsCheck,
  unitsCheck,
  statusCheck,
  nodeIpsCheck,
  exposureCheck,
  memlockCheck,
];
