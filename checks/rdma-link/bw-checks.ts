/**
 * rdma-link verdicts on what the cluster run measured (docs/STAGES.md §3.6): per-cable and aggregate
 * bandwidth, the LAG members (design B), the crossed pair (tutorial), and the counters around the runs
 * (R29). Thresholds are fractions of line rate, kept here as data.
 */
import {
  worstStatus,
  type CheckStatus,
  type PairCheckDef,
  type StageContext,
  type Verdict,
} from '../../src/engine/types.js';
import { RDMA_PORT_NEEDS } from '../common/fabric.js';
import { oneHostSkip } from '../common/pair.js';
import type { BwRun, CounterSnapshot, RdmaLinkCluster } from './cluster.js';
import type { RdmaLinkFacts } from './facts.js';

/** Pass at ≥ 90 % of line rate (88 % when the path MTU is 1024: R24 costs the rest), warn at ≥ 75 %. */
export const BW_PASS = 0.9;
export const BW_PASS_MTU1024 = 0.88;
export const BW_WARN = 0.75;
/** All cables at once: pass ≥ 88 Gb/s, warn ≥ 70 Gb/s. */
export const AGGREGATE_PASS_GBPS = 88;
export const AGGREGATE_WARN_GBPS = 70;

/** The counters whose growth during a test means loss (R29) and the ones that mean retransmission. */
const DISCARDS = /^(?:rx_discards_phy|rx_out_of_buffer|rx_prio\d_discards)$/;
const RETRANS = ['out_of_sequence', 'packet_seq_err', 'local_ack_timeout_err'];

export function runStatus(r: BwRun): CheckStatus {
  if (r.gbps === undefined) return 'fail';
  const pct = r.gbps / r.unit.lineGbps;
  if (pct >= (r.mtu === 1024 ? BW_PASS_MTU1024 : BW_PASS)) return 'pass';
  return pct >= BW_WARN ? 'warn' : 'fail';
}

function runLine(r: BwRun): string {
  const c = r.unit.client;
  const s = r.unit.server;
  const ends = `${c.host}:${c.netdevs.join('+')} ${c.device} GID ${c.gidIndex} (${c.ip}) → ${s.host}:${s.netdevs.join('+')} ${s.device} GID ${s.gidIndex} (${s.ip})`;
  const result =
    r.gbps !== undefined
      ? `${r.gbps.toFixed(2)} Gb/s = ${Math.round((r.gbps / r.unit.lineGbps) * 100)} % of ${r.unit.lineGbps} Gb/s${r.mtu !== undefined ? `, Mtu ${r.mtu}` : ''}`
      : (r.completionError ?? r.error ?? 'no result');
  return `${r.unit.label}: ${ends}: ${result}`;
}

/** `cable 2: 16.20 Gb/s (65 %)` / `cable 2: completion error, status 12`. */
function shortLine(r: BwRun): string {
  if (r.gbps === undefined) return `${r.unit.label}: ${r.completionError ?? r.error ?? 'no result'}`;
  return `${r.unit.label}: ${r.gbps.toFixed(2)} Gb/s (${Math.round((r.gbps / r.unit.lineGbps) * 100)} %${r.mtu === 1024 ? ', Mtu 1024' : ''})`;
}

/** Counter growth between the two snapshots: host → name (`netdev counter` / `device counter`) → delta. */
export function counterDeltas(
  before: readonly CounterSnapshot[],
  after: readonly CounterSnapshot[],
): Map<string, Array<{ where: string; name: string; from: number; to: number }>> {
  const out = new Map<string, Array<{ where: string; name: string; from: number; to: number }>>();
  for (const a of after) {
    const b = before.find((x) => x.host === a.host);
    const rows: Array<{ where: string; name: string; from: number; to: number }> = [];
    for (const [where, set] of [...Object.entries(a.ethtool), ...Object.entries(a.hw)]) {
      const old = b?.ethtool[where] ?? b?.hw[where] ?? {};
      for (const [name, to] of Object.entries(set)) {
        const from = old[name] ?? 0;
        if (to !== from) rows.push({ where, name, from, to });
      }
    }
    out.set(a.host, rows);
  }
  return out;
}

interface CounterFindings {
  discards: string[];
  retrans: string[];
  otherPauses: string[];
  rocePauses: string[];
  unreadable: string[];
}

function counterFindings(cluster: RdmaLinkCluster, ctx: StageContext): CounterFindings {
  const prio = ctx.config.qos.priority;
  const f: CounterFindings = { discards: [], retrans: [], otherPauses: [], rocePauses: [], unreadable: [] };
  for (const s of [...cluster.before, ...cluster.after])
    if (!s.ok) f.unreadable.push(`${s.host}: ${s.error ?? 'counters unreadable'}`);
  for (const [host, rows] of counterDeltas(cluster.before, cluster.after)) {
    for (const r of rows) {
      const line = `${host} ${r.where} ${r.name}: ${r.from} → ${r.to} (+${r.to - r.from})`;
      const pause = /^(?:rx|tx)_(prio(\d)|global)_pause$/.exec(r.name);
      if (DISCARDS.test(r.name)) f.discards.push(line);
      else if (RETRANS.includes(r.name)) f.retrans.push(line);
      else if (/^tx_pause_storm/.test(r.name)) f.otherPauses.push(line);
      else if (pause && (pause[1] === 'global' || Number(pause[2]) !== prio)) f.otherPauses.push(line);
      else if (pause) f.rocePauses.push(line);
    }
  }
  return f;
}

const noCluster = (): Verdict => ({
  status: 'fail',
  summary: 'no measurement: the bandwidth runs did not take place',
  evidence: 'the cluster run returned nothing (a host could not be probed, or it was cancelled)',
});

export const bwCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.bw',
  title: 'ib_write_bw per cable at line rate in the lossless class',
  scope: 'pair',
  // The cables to test come from the ports, their netdevs and RDMA devices.
  needs: RDMA_PORT_NEEDS,
  evaluate(_all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const cl = ctx.cluster;
    if (!cl) return noCluster();
    const lines = [...cl.runs.map(runLine), ...cl.skipped.map((s) => `${s.label}: ${s.reason}`)];
    const statuses: CheckStatus[] = [...cl.runs.map(runStatus), ...cl.skipped.map((): CheckStatus => 'fail')];
    if (statuses.length === 0)
      return {
        status: 'fail',
        summary: 'no cable to test',
        evidence: 'the cabling map found no cable between the hosts',
        fix: 'network.discover-cabling (ports up, LLDP), then re-check',
      };
    const status = worstStatus(statuses);
    const gbps = cl.runs.filter((r) => r.gbps !== undefined).map((r) => r.gbps!);
    const commands = cl.runs.flatMap((r) => [r.serverLine, r.clientLine]);
    const bad = cl.runs.filter((r) => runStatus(r) !== 'pass');
    const strays =
      cl.strays.length > 0 ? ['', 'ended before the runs (stray servers holding ports):', ...cl.strays] : [];
    const evidence = [
      `--tclass=${cl.tclass} (DSCP ${cl.tclass >> 2}), -D 10, -q per unit`,
      ...lines,
      '',
      ...commands,
      ...strays,
      ...bad.flatMap((r) => ['', `${r.unit.label}:`, r.evidence]),
    ];
    if (status === 'pass') {
      return {
        status,
        evidence: evidence.join('\n'),
        summary: `${cl.runs.length} × ${Math.min(...gbps).toFixed(1)}–${Math.max(...gbps).toFixed(1)} Gb/s (≥ ${BW_PASS * 100} % of line rate)`,
      };
    }
    const counters = counterFindings(cl, ctx);
    const signature =
      counters.retrans.length > 0 &&
      (counters.discards.length > 0 || counters.otherPauses.length > 0 || counters.rocePauses.length > 0);
    const mtu1024 = cl.runs.some((r) => r.mtu === 1024);
    if (signature)
      evidence.push(
        '',
        'rdma-link.counters during the runs:',
        ...counters.discards,
        ...counters.retrans,
        ...counters.rocePauses,
        ...counters.otherPauses,
      );
    const summary = [...bad.map(shortLine), ...cl.skipped.map((x) => `${x.label}: ${x.reason}`)].join('; ');
    if (cl.skipped.length > 0 && bad.length === 0) {
      return {
        status,
        evidence: evidence.join('\n'),
        summary,
        fix: 'bring the untested ports up with their cables plugged in (rdma-link.ports; network stage), then re-check',
      };
    }
    if (signature) {
      return {
        status,
        rule: 'R26',
        evidence: evidence.join('\n'),
        summary: `${summary} — drops and retransmissions during the run: the lossless class is not lossless`,
        fix: 'make PFC, trust and dscp2prio equal at both ends of every cable (qos.pair; apply qos.persist on both hosts)',
      };
    }
    if (mtu1024) {
      return {
        status,
        rule: 'R24',
        evidence: evidence.join('\n'),
        summary: `${summary} (path MTU 1024)`,
        fix: 'mtu: 9000 on both ends of every cable (network stage): active_mtu 4096',
      };
    }
    const broken = bad.some((r) => r.gbps === undefined);
    return {
      status,
      rule: 'D20',
      evidence: evidence.join('\n'),
      summary,
      fix: broken
        ? 'check the port, its GID and the cable of the failing run (rdma-link.ports, rdma-link.gids); a completion error with status 12 means the packets reach an HCA that does not own the QP'
        : 'check link speed (ethtool), PCIe width and ACS (gpudirect.acs), and the counters (rdma-link.counters)',
    };
  },
};

export const aggregateCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.bw-aggregate',
  title: 'all cables at once ≥ 88 Gb/s',
  scope: 'pair',
  evaluate(_all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const cl = ctx.cluster;
    if (!cl) return noCluster();
    const runs = cl.aggregate.length > 0 ? cl.aggregate : cl.runs;
    if (runs.length === 0) {
      return {
        status: 'skip',
        summary: 'no bandwidth test ran: nothing to add up (rdma-link.bw says why)',
        evidence: cl.skipped.map((s) => `${s.label}: ${s.reason}`).join('\n') || 'no cables',
      };
    }
    const total = runs.reduce((s, r) => s + (r.gbps ?? 0), 0);
    const evidence = [
      `${runs.length} test${runs.length === 1 ? '' : 's'} at once on distinct ports:`,
      ...runs.map(runLine),
      `total ${total.toFixed(2)} Gb/s (pass ≥ ${AGGREGATE_PASS_GBPS}, warn ≥ ${AGGREGATE_WARN_GBPS})`,
      ...cl.skipped.map((s) => `${s.label}: ${s.reason}`),
    ].join('\n');
    const status: CheckStatus = total >= AGGREGATE_PASS_GBPS ? 'pass' : total >= AGGREGATE_WARN_GBPS ? 'warn' : 'fail';
    if (status === 'pass')
      return { status, evidence, summary: `${total.toFixed(1)} Gb/s over ${runs.length} cables at once` };
    return {
      status,
      evidence,
      rule: 'D20',
      summary: `${total.toFixed(1)} Gb/s over ${runs.length} test${runs.length === 1 ? '' : 's'} at once${cl.skipped.length ? ` (${cl.skipped.length} port${cl.skipped.length === 1 ? '' : 's'} untested)` : ''}`,
      fix: 'fix the cables that fail rdma-link.bw first; if each passes alone but not together, check PCIe (a shared switch uplink) and the counters',
    };
  },
};

export const lagCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.lag',
  title: 'both members of each RoCE LAG carry traffic (design B)',
  scope: 'pair',
  evaluate(_all, ctx) {
    if (ctx.config.network.design !== 'B')
      return {
        status: 'skip',
        summary: `design ${ctx.config.network.design} has no RoCE LAG`,
        evidence: `network.design: ${ctx.config.network.design}`,
      };
    const cl = ctx.cluster;
    if (!cl) return noCluster();
    const deltas = counterDeltas(cl.before, cl.after);
    const moved = (host: string, netdev: string, name: string): number => {
      const r = deltas.get(host)?.find((x) => x.where === netdev && x.name === name);
      return r ? r.to - r.from : 0;
    };
    const lines: string[] = [];
    const idle: string[] = [];
    for (const r of cl.runs) {
      for (const [side, name] of [
        ['client', 'tx_vport_rdma_unicast_bytes'],
        ['server', 'rx_vport_rdma_unicast_bytes'],
      ] as const) {
        const end = r.unit[side];
        for (const n of end.netdevs) {
          const b = moved(end.host, n, name);
          lines.push(`${r.unit.label} ${end.host} ${n} ${name}: +${b}`);
          if (b <= 0) idle.push(`${end.host}:${n}`);
        }
      }
    }
    const evidence = [...cl.runs.map(runLine), '', ...lines].join('\n');
    if (cl.runs.length === 0)
      return {
        status: 'fail',
        summary: 'no LAG device tested',
        evidence: cl.skipped.map((s) => `${s.label}: ${s.reason}`).join('\n'),
        fix: 'configure design B (network stage): bond0/bond1 802.3ad over both ports of one card',
      };
    if (idle.length > 0)
      return {
        status: 'fail',
        evidence,
        summary: `LAG member carried nothing during the 8-QP test: ${idle.join(', ')}`,
        fix: "check the member's link and LACP state (network.lacp); NCCL needs NCCL_IB_QPS_PER_CONNECTION=2 to use both members",
      };
    return {
      status: 'pass',
      evidence,
      summary: `both members of ${cl.runs.length} LAG device${cl.runs.length === 1 ? '' : 's'} carried traffic`,
    };
  },
};

export const crossPairCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.cross-pair',
  title: 'crossed pair over the tutorial bond (shows the GID spill)',
  scope: 'pair',
  evaluate(_all, ctx) {
    if (ctx.config.network.design !== 'tutorial')
      return {
        status: 'skip',
        summary: `only for the tutorial's bond (design ${ctx.config.network.design} pairs cables only)`,
        evidence: `network.design: ${ctx.config.network.design}`,
      };
    const cl = ctx.cluster;
    if (!cl) return noCluster();
    const r = cl.crossPair;
    if (!r)
      return {
        status: 'skip',
        summary: 'fewer than two tested cables: no crossed pair to try',
        evidence: cl.skipped.map((s) => `${s.label}: ${s.reason}`).join('\n') || 'no cables',
      };
    const evidence = [runLine(r), r.serverLine, r.clientLine, r.evidence].join('\n');
    if (r.gbps !== undefined)
      return {
        status: 'pass',
        evidence,
        summary: `the crossed pair worked (${r.gbps.toFixed(1)} Gb/s): cabling and enumeration happen to line up`,
      };
    return {
      status: 'warn',
      rule: 'R16',
      evidence,
      summary: `${r.completionError ?? r.error ?? 'no result'} between HCAs of different cables: every HCA carries bond0's GID, so NCCL pairing HCA k with a peer HCA on another cable fails (R16; NCCL_CROSS_NIC, R15)`,
      fix: 'migrate to design A (network stage); until then NCCL_CROSS_NIC=0 and cabled pairs only',
    };
  },
};

export const countersCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.counters',
  title: 'no drops, retransmissions or foreign pauses during the runs',
  scope: 'pair',
  evaluate(_all, ctx) {
    const cl = ctx.cluster;
    if (!cl) return noCluster();
    if (cl.runs.length === 0 && cl.aggregate.length === 0)
      return {
        status: 'skip',
        summary: 'no test ran: nothing to compare the counters around',
        evidence: cl.skipped.map((x) => `${x.label}: ${x.reason}`).join('\n') || 'no cables',
      };
    const f = counterFindings(cl, ctx);
    const prio = ctx.config.qos.priority;
    const evidence = [
      `ethtool -S and hw_counters before/after the runs (RoCE priority ${prio}):`,
      ...f.discards,
      ...f.retrans,
      ...f.otherPauses,
      ...f.rocePauses,
      ...f.unreadable,
    ].join('\n');
    const bwBad = cl.runs.some((r) => runStatus(r) !== 'pass') || cl.aggregate.some((r) => runStatus(r) !== 'pass');
    if (f.retrans.length > 0 && bwBad) {
      return {
        status: 'fail',
        rule: 'R29',
        evidence,
        summary: `retransmissions (${f.retrans.length} counters) with drops while the bandwidth fell short: the PFC-mismatch signature`,
        fix: 'compare PFC and trust at both ends (qos.pair) and apply qos.persist on both hosts',
      };
    }
    if (f.discards.length > 0 || f.retrans.length > 0 || f.otherPauses.length > 0) {
      return {
        status: 'warn',
        rule: 'R29',
        evidence,
        summary: [
          f.discards.length ? `${f.discards.length} drop counters grew` : '',
          f.retrans.length ? `${f.retrans.length} retransmission counters grew` : '',
          f.otherPauses.length ? `pause outside priority ${prio}` : '',
        ]
          .filter(Boolean)
          .join('; '),
        fix: 'check PFC on the RoCE priority at both ends (qos stage) and that only that priority is lossless (R26)',
      };
    }
    if (f.unreadable.length > 0)
      return {
        status: 'warn',
        evidence,
        summary: 'counters could not be read on every host',
        fix: 'install ethtool (os.install-base)',
      };
    return {
      status: 'pass',
      evidence,
      summary: `flat: no drops or retransmissions${f.rocePauses.length ? `; priority ${prio} pauses grew (lossless class working)` : ''}`,
    };
  },
};
