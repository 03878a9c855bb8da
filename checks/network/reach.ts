/**
 * The stage's cluster run (network.reachability, and the proof of network.apply): for every fabric
 * subnet, from each end to the other, `ping -c 3 -W 1 -I <if> <peer>`, the jumbo
 * `ping -c 3 -W 1 -M do -s <mtu-28> -I <if> <peer>` and `ip -j neigh show <peer>` — the neighbour
 * must sit on the interface pinged from and carry the MAC of the peer's interface (else the cable
 * lands elsewhere than the addressing assumes: ARP flux, R17). Links run in parallel.
 */
import type { ClusterConfig } from '../../src/config/schema.js';
import type { HostFacts, HostRunner } from '../../src/engine/types.js';
import { parseIpNeigh } from '../../src/parse/lldp.js';
import type { RunResult } from '../../src/transport/types.js';
import { l3Links, networkCabling, type L3End, type L3Link } from './cabling.js';
import type { CablingMap } from '../common/fabric.js';
import type { NetworkFacts } from './facts.js';

export interface PingOutcome {
  from: L3End;
  to: L3End;
  kind: 'normal' | 'jumbo';
  sent: number;
  received: number;
  /** `ping: local error: message too long, mtu=N` — the local MTU is below the jumbo size. */
  localMtuError: boolean;
  exitCode: number | null;
  /** The command line and its statistics lines. */
  evidence: string;
}

export interface NeighOutcome {
  host: string;
  dst: string;
  /** Interface the entry sits on and the MAC it learned (absent when no entry). */
  dev?: string;
  lladdr?: string;
  state?: string;
  evidence: string;
}

export interface LinkProof {
  link: L3Link;
  pings: PingOutcome[];
  neigh: NeighOutcome[];
}

export interface ReachCluster {
  cabling: CablingMap;
  links: LinkProof[];
}

function pingStats(r: RunResult): { sent: number; received: number } {
  const m = /(\d+) packets transmitted, (\d+) received/.exec(r.stdout);
  return m ? { sent: Number(m[1]), received: Number(m[2]) } : { sent: 0, received: 0 };
}

function pingEvidence(r: RunResult): string {
  const keep = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .filter((l) => /packets transmitted|local error|Unreachable|unreachable|No such device|rtt /.test(l));
  return [
    `$ ${r.commandLine.replace(/^.*?(ping )/, '$1')}`,
    ...[...new Set(keep)].slice(0, 4),
    `exit ${r.exitCode}`,
  ].join('\n');
}

async function pingOnce(
  run: HostRunner,
  from: L3End,
  to: L3End,
  kind: PingOutcome['kind'],
  mtu: number,
): Promise<PingOutcome> {
  const argv =
    kind === 'normal'
      ? ['ping', '-c', '3', '-W', '1', '-I', from.netdev, to.address]
      : ['ping', '-c', '3', '-W', '1', '-M', 'do', '-s', String(mtu - 28), '-I', from.netdev, to.address];
  const r = await run(from.host, `reach:${kind}:${from.netdev}`, { argv }, { timeoutMs: 20_000 });
  const s = pingStats(r);
  return {
    from,
    to,
    kind,
    ...s,
    localMtuError: /local error: message too long/.test(r.stderr),
    exitCode: r.exitCode,
    evidence: pingEvidence(r),
  };
}

async function neighOf(run: HostRunner, from: L3End, to: L3End): Promise<NeighOutcome> {
  const r = await run(from.host, `reach:neigh:${from.netdev}`, { argv: ['ip', '-j', 'neigh', 'show', to.address] });
  const n =
    parseIpNeigh(r.stdout).neighbors.find(
      (x) => x.dst === to.address && (x.dev === undefined || x.dev === from.netdev),
    ) ?? parseIpNeigh(r.stdout).neighbors.find((x) => x.dst === to.address);
  const line = r.stdout.trim() || '(no entry)';
  return {
    host: from.host,
    dst: to.address,
    ...(n?.dev ? { dev: n.dev } : n ? { dev: from.netdev } : {}),
    ...(n?.lladdr ? { lladdr: n.lladdr } : {}),
    ...(n?.state[0] ? { state: n.state[0] } : {}),
    evidence: `${from.host}$ ip -j neigh show ${to.address}\n${line}`,
  };
}

async function direction(
  run: HostRunner,
  from: L3End,
  to: L3End,
  mtu: number,
): Promise<{ pings: PingOutcome[]; neigh: NeighOutcome }> {
  const normal = await pingOnce(run, from, to, 'normal', mtu);
  const jumbo = await pingOnce(run, from, to, 'jumbo', mtu);
  return { pings: [normal, jumbo], neigh: await neighOf(run, from, to) };
}

/** Pings every fabric subnet both ways; never throws for a failed ping (it is data). */
export async function proveReachability(
  all: ReadonlyArray<HostFacts<NetworkFacts>>,
  run: HostRunner,
  config: ClusterConfig,
): Promise<ReachCluster> {
  const cabling = networkCabling(all);
  const links = l3Links(all, cabling);
  const proofs = await Promise.all(
    links.map(async (link): Promise<LinkProof> => {
      const [a, b] = link.ends;
      if (!b) return { link, pings: [], neigh: [] };
      const [ab, ba] = await Promise.all([
        direction(run, a, b, config.network.mtu),
        direction(run, b, a, config.network.mtu),
      ]);
      return { link, pings: [...ab.pings, ...ba.pings], neigh: [ab.neigh, ba.neigh] };
    }),
  );
  return { cabling, links: proofs };
}

/** Problems of one link's proof (empty when it passed): what the verdicts and the apply report say. */
export function linkProblems(p: LinkProof): Array<{ rule?: string; text: string }> {
  const out: Array<{ rule?: string; text: string }> = [];
  const [a, b] = p.link.ends;
  const where = `${p.link.subnet}${p.link.cables.length ? ` (cable ${p.link.cables.join(', ')})` : ''}`;
  if (!b) {
    out.push({
      rule: 'R17',
      text: `${where}: ${a.host}:${a.netdev} has ${a.address} but no other host has an address in ${p.link.subnet}`,
    });
    return out;
  }
  for (const ping of p.pings) {
    const dir = `${ping.from.host}:${ping.from.netdev} → ${ping.to.address}`;
    if ((ping.kind === 'normal' && ping.received < ping.sent) || (ping.kind === 'normal' && ping.sent === 0)) {
      out.push({ rule: 'R17', text: `${where}: ${dir} lost ${ping.sent - ping.received}/${ping.sent || 3} pings` });
    }
  }
  const normalOk = p.pings.filter((x) => x.kind === 'normal').every((x) => x.sent > 0 && x.received === x.sent);
  for (const ping of p.pings.filter((x) => x.kind === 'jumbo')) {
    if (ping.sent > 0 && ping.received === ping.sent) continue;
    const dir = `${ping.from.host}:${ping.from.netdev} → ${ping.to.address}`;
    if (!normalOk) continue;
    out.push({
      rule: 'R24',
      text: ping.localMtuError
        ? `${where}: ${dir}: jumbo frames fail locally (${ping.from.netdev}'s MTU is below the jumbo size)`
        : `${where}: ${dir}: jumbo pings lost while normal ones pass — MTU mismatch on the path`,
    });
  }
  for (const n of p.neigh) {
    const from = n.host === a.host ? a : b;
    const to = n.host === a.host ? b : a;
    if (!normalOk) break;
    if (n.dev !== undefined && n.dev !== from.netdev)
      out.push({ rule: 'R17', text: `${where}: ${n.host} learned ${n.dst} on ${n.dev}, not ${from.netdev}` });
    else if (n.lladdr && to.mac && n.lladdr !== to.mac) {
      out.push({
        rule: 'R17',
        text: `${where}: ${n.host}:${from.netdev} reaches ${n.dst} through MAC ${n.lladdr}, not ${to.host}:${to.netdev} (${to.mac}): the cable lands on another port (ARP flux)`,
      });
    }
  }
  return out;
}
