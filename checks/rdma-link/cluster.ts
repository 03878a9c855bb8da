/**
 * The rdma-link stage's cluster run (docs/STAGES.md §3.6): stray perftest servers are ended by PID, the
 * counters are read, then `ib_write_bw` runs per cable (design B: per bond with 8 QPs) — server on the
 * later host, then the client on the first — then all of them at once on distinct ports, then (tutorial
 * design only) a crossed pair, and the counters are read again.
 *
 * The GID index of each end is discovered from that host's GID table (the RoCE v2 entry carrying the
 * port's IPv4 address), the client connects to the server's address from its GID, and the traffic
 * class comes from config.qos.dscp: TC = DSCP × 4 + 2 (ECN-capable, never CE), 106 for DSCP 26.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ClusterConfig } from '../../src/config/schema.js';
import type { ClusterRunContext, HostFacts } from '../../src/engine/types.js';
import { parseEthtoolStats } from '../../src/parse/ethtool-stats.js';
import { parsePerftest } from '../../src/parse/perftest.js';
import { parseSysfsInfiniband } from '../../src/parse/sysfs-infiniband.js';
import type { RunResult } from '../../src/transport/types.js';
import { cablingMap, type CablingMap } from '../common/fabric.js';
import { COUNTERS_SCRIPT, KILL_PORT_SCRIPT, KILL_STRAYS_SCRIPT } from './probes.js';
import { l3Of, rdmaPorts, type GidRow, type RdmaLinkFacts } from './facts.js';

/** `-D`: seconds each test writes. */
export const TEST_SECONDS = 10;
/** First TCP port of the per-unit tests; the all-at-once run and the crossed pair use the next ranges. */
export const BASE_PORT = 18515;
/** Each port of a ConnectX-4 Lx. */
export const PORT_GBPS = 25;

export interface BwEnd {
  host: string;
  device: string;
  /** The fabric port(s) the device uses. */
  netdevs: string[];
  gidIndex: number;
  ip: string;
}

export interface BwUnit {
  /** `cable 1`, `bond0`. */
  label: string;
  cable?: number;
  client: BwEnd;
  server: BwEnd;
  qps: number;
  /** Line rate of the unit (one port 25, a two-port LAG 50). */
  lineGbps: number;
}

export interface BwRun {
  unit: BwUnit;
  port: number;
  clientLine: string;
  serverLine: string;
  gbps?: number;
  mtu?: number;
  /** Completion with error (status 12 …) on the client. */
  completionError?: string;
  /** Why there is no result (connection, timeout, device errors). */
  error?: string;
  /** The client's and server's output, trimmed to what matters. */
  evidence: string;
}

export interface CounterSnapshot {
  host: string;
  ok: boolean;
  /** netdev → counter → value. */
  ethtool: Record<string, Record<string, number>>;
  /** RDMA device → hw counter → value. */
  hw: Record<string, Record<string, number>>;
  error?: string;
}

export interface RdmaLinkCluster {
  cabling: CablingMap;
  units: BwUnit[];
  /** Cables or ports not tested, and why (down, no GID, no perftest). */
  skipped: Array<{ label: string; reason: string }>;
  runs: BwRun[];
  aggregate: BwRun[];
  crossPair?: BwRun;
  before: CounterSnapshot[];
  after: CounterSnapshot[];
  strays: string[];
  tclass: number;
}

/** The traffic class NCCL_IB_TC and perftest's --tclass carry: DSCP in the upper six bits, ECT(0). */
export function trafficClass(config: ClusterConfig): number {
  return config.qos.dscp * 4 + 2;
}

/** The RoCE v2 IPv4 GID of a device, preferring the one on the netdev that carries the port's address. */
export function v2Ipv4Gid(f: RdmaLinkFacts, device: string, ndev?: string): GidRow | undefined {
  const rows = f.gids
    .filter((g) => g.device === device && g.type === 'RoCE v2' && g.ipv4 !== undefined)
    .sort((a, b) => a.index - b.index);
  return rows.find((g) => g.ndev === ndev) ?? rows[0];
}

/** Which cable a down port would be by its design-A subnet (192.168.10k.0/24 → cable k). */
function cableBySubnet(addresses: readonly string[]): number | undefined {
  for (const a of addresses) {
    const m = /^192\.168\.10(\d)\.\d+\/24$/.exec(a);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** The tests to run, from every host's facts: per cable (A, tutorial) or per bond pair (B). */
export function planUnits(
  all: ReadonlyArray<HostFacts<RdmaLinkFacts>>,
  config: ClusterConfig,
): Pick<RdmaLinkCluster, 'cabling' | 'units' | 'skipped'> {
  const cabling = cablingMap(all.map((a) => ({ host: a.host, facts: a.facts.fabric })));
  const byHost = new Map(all.map((a) => [a.host, a.facts]));
  const units: BwUnit[] = [];
  const skipped: RdmaLinkCluster['skipped'] = [];
  for (const u of cabling.unknown) {
    const f = byHost.get(u.host);
    const port = f?.fabric.ports.find((p) => p.netdev === u.netdev);
    const k = port ? cableBySubnet(port.addresses) : undefined;
    const state = port?.rdmaState ?? port?.operstate ?? 'unknown';
    // A bond member has no address to ping from: only LLDP (lldpd on both hosts) names its peer.
    const why =
      port?.master && state === 'ACTIVE'
        ? `enslaved to ${port.master}, its peer is known only through LLDP (lldpd: os.install-base)`
        : `no peer seen on the port (RDMA ${state})`;
    skipped.push({
      label: `${u.host}:${u.netdev}${k ? ` (cable ${k} by its subnet)` : ''}`,
      reason: `${why}: not tested`,
    });
  }
  const ends = new Map<string, { cable: number; client: BwEnd; server: BwEnd }>();
  for (const c of cabling.cables) {
    const label = `cable ${c.index}`;
    const sides = c.ends.map((e) => {
      const f = byHost.get(e.host);
      const port = f?.fabric.ports.find((p) => p.netdev === e.netdev);
      return { e, f, port };
    });
    const problem = sides
      .map(({ e, f, port }) => {
        if (!f || !port) return `${e.host}:${e.netdev} not found`;
        if (!port.rdmaDevice) return `${e.host}:${e.netdev} has no RDMA device`;
        if (port.rdmaState !== 'ACTIVE')
          return `${e.host}:${e.netdev} (${port.rdmaDevice}) is ${port.rdmaState ?? 'not ACTIVE'}`;
        if (!f.perftest) return `${e.host} has no ib_write_bw (perftest)`;
        if (!v2Ipv4Gid(f, port.rdmaDevice, l3Of(f, port).name))
          return `${e.host}:${port.rdmaDevice} has no RoCE v2 GID with an IPv4 address`;
        return undefined;
      })
      .filter((x): x is string => x !== undefined);
    if (problem.length > 0) {
      skipped.push({ label, reason: `${problem.join('; ')}: not tested` });
      continue;
    }
    const [client, server] = sides.map(({ e, f, port }): BwEnd => {
      const gid = v2Ipv4Gid(f!, port!.rdmaDevice!, l3Of(f!, port!).name)!;
      return { host: e.host, device: port!.rdmaDevice!, netdevs: [e.netdev], gidIndex: gid.index, ip: gid.ipv4! };
    }) as [BwEnd, BwEnd];
    ends.set(label, { cable: c.index, client, server });
  }
  if (config.network.design === 'B') {
    // One test per pair of LAG devices, over all their cabled members.
    const groups = new Map<string, { cables: number[]; client: BwEnd; server: BwEnd }>();
    for (const { cable, client, server } of ends.values()) {
      const k = `${client.host}/${client.device}|${server.host}/${server.device}`;
      const g = groups.get(k);
      if (g) {
        g.cables.push(cable);
        g.client.netdevs.push(...client.netdevs);
        g.server.netdevs.push(...server.netdevs);
      } else
        groups.set(k, {
          cables: [cable],
          client: { ...client, netdevs: [...client.netdevs] },
          server: { ...server, netdevs: [...server.netdevs] },
        });
    }
    for (const g of groups.values()) {
      const f = byHost.get(g.client.host);
      const bond = f?.fabric.ports.find((p) => p.netdev === g.client.netdevs[0])?.master ?? g.client.device;
      units.push({
        label: `${bond} (${g.client.device}, cables ${g.cables.join('+')})`,
        client: g.client,
        server: g.server,
        qps: 8,
        lineGbps: PORT_GBPS * g.cables.length,
      });
    }
  } else {
    for (const [label, u] of ends)
      units.push({ label, cable: u.cable, client: u.client, server: u.server, qps: 4, lineGbps: PORT_GBPS });
  }
  return { cabling, units, skipped };
}

function perftestArgv(unit: BwUnit, side: 'client' | 'server', port: number, tclass: number): string[] {
  const end = unit[side];
  const argv = [
    'ib_write_bw',
    '-d',
    end.device,
    '-i',
    '1',
    '-x',
    String(end.gidIndex),
    '-F',
    '--report_gbits',
    '-q',
    String(unit.qps),
    '-D',
    String(TEST_SECONDS),
    `--tclass=${tclass}`,
    '-p',
    String(port),
  ];
  return side === 'client' ? [...argv, unit.server.ip] : argv;
}

const refused = (r: RunResult): boolean => /Couldn't connect to /.test(r.stderr);

/** The lines of a perftest output that tell what happened (header values, the result row, errors). */
function keyLines(r: RunResult | undefined): string {
  if (!r) return '(no output)';
  const lines = `${r.stdout}\n${r.stderr}`.split('\n').map((l) => l.trimEnd());
  const keep = lines.filter((l) =>
    /Mtu|GID index|Device |#bytes|^\s*\d+\s+\d+\s|Completion|Failed|Couldn't|Unable|error/i.test(l),
  );
  return `exit ${r.exitCode ?? r.signal ?? '?'}${r.timedOut ? ' (timed out)' : ''}\n${keep.join('\n')}`;
}

/** Whether `p` settles within `ms` (the timer is cleared either way). */
async function settledWithin(p: Promise<unknown>, ms: number, signal: AbortSignal): Promise<boolean> {
  const timer = new AbortController();
  const stop = (): void => timer.abort();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await Promise.race([p.then(() => true), delay(ms, false, { signal: timer.signal }).catch(() => false)]);
  } finally {
    timer.abort();
    signal.removeEventListener('abort', stop);
  }
}

/** One server-then-client run; ends its server by PID if the client left it waiting. */
async function runOne(
  ctx: ClusterRunContext<RdmaLinkFacts>,
  unit: BwUnit,
  port: number,
  tclass: number,
): Promise<BwRun> {
  const serverArgv = perftestArgv(unit, 'server', port, tclass);
  const clientArgv = perftestArgv(unit, 'client', port, tclass);
  const limitMs = (TEST_SECONDS + 20) * 1000;
  let serverDone: RunResult | undefined;
  const server = ctx
    .run(unit.server.host, `ib_write_bw server ${unit.label}`, { argv: serverArgv }, { timeoutMs: limitMs + 10_000 })
    .then((r) => (serverDone = r));
  let client: RunResult;
  const started = Date.now();
  // The server listens a moment after it starts; a refused control connection is retried while the
  // server still waits (a refusal never reached the fabric, so retrying cannot hide a link fault).
  for (let attempt = 1; ; attempt++) {
    client = await ctx.run(unit.client.host, `ib_write_bw ${unit.label}`, { argv: clientArgv }, { timeoutMs: limitMs });
    if (!refused(client) || serverDone || Date.now() - started > 10_000 || ctx.signal.aborted) break;
    await delay(Math.min(50 * attempt, 500), undefined, { signal: ctx.signal }).catch(() => undefined);
  }
  if (!(await settledWithin(server, 5_000, ctx.signal))) {
    await ctx.run(
      unit.server.host,
      `end ib_write_bw server ${unit.label}`,
      { script: KILL_PORT_SCRIPT, args: [String(port)] },
      { sudo: true },
    );
    await settledWithin(server, 5_000, ctx.signal);
  }
  return toBwRun(unit, port, clientArgv, serverArgv, client, serverDone, limitMs);
}

/** What one run measured, from the client's output (and the server's for evidence). */
export function toBwRun(
  unit: BwUnit,
  port: number,
  clientArgv: readonly string[],
  serverArgv: readonly string[],
  client: RunResult,
  server: RunResult | undefined,
  limitMs: number,
): BwRun {
  const parsed = parsePerftest(`${client.stdout}\n${client.stderr}`);
  const rowAvg = parsed.results[parsed.results.length - 1]?.bwAvgGbps;
  const completion = /Completion with error[^\n]*\n[^\n]*Failed status (\d+)[^\n]*/.exec(client.stderr);
  const run: BwRun = {
    unit,
    port,
    clientLine: `${unit.client.host}$ ${clientArgv.join(' ')}`,
    serverLine: `${unit.server.host}$ ${serverArgv.join(' ')}`,
    evidence: `client ${unit.client.host}: ${keyLines(client)}\nserver ${unit.server.host}: ${keyLines(server)}`,
    ...(parsed.mtu !== undefined ? { mtu: parsed.mtu } : {}),
  };
  if (client.exitCode === 0 && rowAvg !== undefined) run.gbps = rowAvg;
  else if (completion) run.completionError = `completion error, status ${completion[1]}`;
  else if (client.timedOut) run.error = `no result within ${limitMs / 1000} s`;
  else
    run.error =
      client.stderr
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .slice(0, 2)
        .join('; ') || `exit ${client.exitCode}`;
  return run;
}

async function snapshot(
  ctx: ClusterRunContext<RdmaLinkFacts>,
  host: string,
  netdevs: readonly string[],
  when: string,
): Promise<CounterSnapshot> {
  const r = await ctx.run(host, `counters ${when}`, { script: COUNTERS_SCRIPT, args: netdevs });
  const snap: CounterSnapshot = { host, ok: r.exitCode === 0, ethtool: {}, hw: {} };
  const sections = r.stdout.split(/^### /m);
  for (const s of sections) {
    const nl = s.indexOf('\n');
    const head = nl >= 0 ? s.slice(0, nl).trim() : s.trim();
    const body = nl >= 0 ? s.slice(nl + 1) : '';
    if (head === 'hw_counters') {
      for (const [k, v] of Object.entries(parseSysfsInfiniband(body).counters)) snap.hw[k.replace(/\/\d+$/, '')] = v;
    } else if (head.startsWith('ethtool -S ')) {
      snap.ethtool[head.slice('ethtool -S '.length)] = parseEthtoolStats(body).counters;
    }
  }
  if (!snap.ok) snap.error = `${r.commandLine} → exit ${r.exitCode}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
  return snap;
}

export async function runRdmaLinkCluster(ctx: ClusterRunContext<RdmaLinkFacts>): Promise<RdmaLinkCluster> {
  const tclass = trafficClass(ctx.config);
  const plan = planUnits(ctx.facts, ctx.config);
  const strays: string[] = [];
  await Promise.all(
    ctx.facts.map(async (h) => {
      if (!h.facts.perftest) return;
      const r = await ctx.run(h.host, 'stray perftest servers', { script: KILL_STRAYS_SCRIPT }, { sudo: true });
      for (const l of r.stdout.split('\n').filter(Boolean)) strays.push(`${h.host}: ${l}`);
    }),
  );
  const netdevsOf = (h: HostFacts<RdmaLinkFacts>) => rdmaPorts(h.facts).map((p) => p.netdev);
  const before = await Promise.all(ctx.facts.map((h) => snapshot(ctx, h.host, netdevsOf(h), 'before')));
  const runs: BwRun[] = [];
  for (const [i, unit] of plan.units.entries()) {
    if (ctx.signal.aborted) break;
    runs.push(await runOne(ctx, unit, BASE_PORT + i, tclass));
  }
  const aggregate =
    plan.units.length > 1 && !ctx.signal.aborted
      ? await Promise.all(plan.units.map((unit, i) => runOne(ctx, unit, BASE_PORT + 20 + i, tclass)))
      : [];
  let crossPair: BwRun | undefined;
  const [u1, u2] = plan.units;
  if (ctx.config.network.design === 'tutorial' && u1 && u2 && !ctx.signal.aborted) {
    const crossed: BwUnit = {
      label: `crossed pair: ${u1.label}'s ${u1.client.host}:${u1.client.device} → ${u2.label}'s ${u2.server.host}:${u2.server.device}`,
      client: u1.client,
      server: u2.server,
      qps: 4,
      lineGbps: PORT_GBPS,
    };
    crossPair = await runOne(ctx, crossed, BASE_PORT + 40, tclass);
  }
  const after = await Promise.all(ctx.facts.map((h) => snapshot(ctx, h.host, netdevsOf(h), 'after')));
  return { ...plan, runs, aggregate, ...(crossPair ? { crossPair } : {}), before, after, strays, tclass };
}
