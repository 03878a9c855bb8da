/**
 * The network stage's checks across hosts (docs/STAGES.md §3.4): the cabling map (which decides which
 * subnet each port gets), the planned addresses (R17), MTU on every port and at both ends of every
 * cable (R24), and reachability per fabric subnet in both directions, jumbo included, from the
 * stage's cluster run.
 */
import type { CheckDef, HostFacts, StageContext, Verdict } from '../../src/engine/types.js';
import { cableText, PORT_NEEDS, type CablingMap } from '../common/fabric.js';
import { oneHostSkip } from '../common/pair.js';
import { designPlan, type DesignPlan } from '../common/design.js';
import { networkCabling, subnetOf } from './cabling.js';
import type { NetworkFacts } from './facts.js';
import { linkProblems, type ReachCluster } from './reach.js';
import { classify, fabricL3Names } from './checks-host.js';

/** The hosts without a ConnectX fabric port, as a fail verdict; undefined when every host has one. */
function portlessFail(all: ReadonlyArray<HostFacts<NetworkFacts>>, what: string): Verdict | undefined {
  const portless = all.filter((a) => a.facts.fabric.ports.length === 0);
  if (portless.length === 0) return undefined;
  return {
    status: 'fail',
    summary: `no ConnectX fabric port on ${portless.map((a) => a.host).join(', ')}: ${what}`,
    evidence: portless.map((a) => `${a.host}: no netdev belongs to a ConnectX function`).join('\n'),
    fix: 'see inventory.nics and inventory.netdevs',
  };
}

/** The design plan of every host (or why there is none), from the cabling this stage sees. */
export function plansFor(
  all: ReadonlyArray<HostFacts<NetworkFacts>>,
  ctx: StageContext,
  cabling = networkCabling(all),
): Map<string, DesignPlan | string> {
  const out = new Map<string, DesignPlan | string>();
  all.forEach((a, i) => out.set(a.host, designPlan(ctx.config, i, a.facts.fabric, cabling, all.length)));
  return out;
}

export const cablingCheck: CheckDef<NetworkFacts, ReachCluster> = {
  id: 'network.cabling',
  title: 'every fabric port cabled to the other host',
  scope: 'pair',
  needs: [...PORT_NEEDS, 'neighbours'],
  evaluate(all, ctx) {
    const early = oneHostSkip(ctx.hosts) ?? portlessFail(all, 'no cable to map');
    if (early) return early;
    const map: CablingMap = networkCabling(all);
    const evidence = [
      ...map.cables.map(cableText),
      ...map.unknown.map((u) => `${u.host}:${u.netdev}: no neighbour seen`),
      ...map.loops.map(([a, b]) => `${a.host}:${a.netdev} ↔ ${b.host}:${b.netdev} (same host)`),
    ].join('\n');
    if (map.loops.length > 0)
      return {
        status: 'fail',
        summary: `a port is cabled to its own host: ${map.loops[0]![0].netdev} ↔ ${map.loops[0]![1].netdev}`,
        evidence,
        fix: 'each DAC must join server 1 to server 2',
      };
    if (map.unknown.length === 0) return { status: 'pass', summary: `${map.cables.length} cables mapped`, evidence };
    const down = map.unknown.filter(
      (u) =>
        all.find((a) => a.host === u.host)?.facts.fabric.ports.find((p) => p.netdev === u.netdev)?.operstate !== 'UP',
    );
    return {
      status: 'fail',
      rule: 'R17',
      summary: `${map.unknown.length} port(s) without a known peer: ${map.unknown.map((u) => `${u.host}:${u.netdev}`).join(', ')}`,
      evidence,
      fix:
        down.length > 0
          ? 'apply network.discover-cabling (brings unconfigured ports up, `lldpcli update`); a port that stays down has no carrier: check that cable at both ends'
          : 'install and start lldpd (os.install-base) so LLDP names each peer port',
    };
  },
};

export const addressesCheck: CheckDef<NetworkFacts, ReachCluster> = {
  id: 'network.addresses',
  title: 'planned fabric addresses, one subnet per interface',
  scope: 'pair',
  needs: [...PORT_NEEDS, 'ip-addr', 'neighbours'],
  evaluate(all, ctx) {
    const early = oneHostSkip(ctx.hosts) ?? portlessFail(all, 'no address to plan');
    if (early) return early;
    const plans = plansFor(all, ctx);
    const problems: string[] = [];
    const lines: string[] = [];
    for (const a of all) {
      const plan = plans.get(a.host);
      const live = (n: string): string[] =>
        (a.facts.fabric.netdevs.find((d) => d.name === n)?.addresses ?? []).filter((x) => !x.includes(':'));
      // R17: two fabric interfaces of one host in one subnet.
      const bySubnet = new Map<string, string>();
      for (const n of fabricL3Names(a.facts)) {
        for (const cidr of live(n)) {
          const s = subnetOf(cidr);
          const other = bySubnet.get(s);
          if (other && other !== n) problems.push(`${a.host}: ${other} and ${n} share ${s} (ARP flux)`);
          bySubnet.set(s, n);
        }
      }
      if (plan === undefined || typeof plan === 'string') {
        problems.push(`${a.host}: ${plan ?? 'no plan'}`);
        continue;
      }
      for (const i of plan.interfaces.filter((x) => x.addresses.length > 0)) {
        const have = live(i.name);
        lines.push(`${a.host}:${i.name} planned ${i.addresses.join(', ')}, live ${have.join(', ') || 'none'}`);
        if (have.length !== i.addresses.length || i.addresses.some((x) => !have.includes(x)))
          problems.push(`${a.host}:${i.name} has ${have.join(', ') || 'no IPv4'}, planned ${i.addresses.join(', ')}`);
      }
    }
    const evidence = lines.join('\n') || '(no plan)';
    if (problems.length === 0)
      return {
        status: 'pass',
        rule: 'R17',
        summary: `every planned address live (design ${ctx.config.network.design})`,
        evidence,
      };
    const cablingUnknown = [...plans.values()].some((p) => typeof p === 'string' && /cabling/.test(p));
    return {
      status: 'fail',
      rule: 'R17',
      summary: problems.slice(0, 3).join('; ') + (problems.length > 3 ? ` … ${problems.length - 3} more` : ''),
      evidence: `${evidence}\n${problems.join('\n')}`,
      fix: cablingUnknown
        ? 'apply network.discover-cabling, then network.write and network.apply'
        : 'apply network.write and network.apply',
    };
  },
};

export const mtuCheck: CheckDef<NetworkFacts, ReachCluster> = {
  id: 'network.mtu',
  title: `MTU on ports, bonds and slaves; equal at both cable ends`,
  scope: 'pair',
  needs: [...PORT_NEEDS],
  evaluate(all, ctx) {
    const want = ctx.config.network.mtu;
    const early = oneHostSkip(ctx.hosts) ?? portlessFail(all, `no interface to carry MTU ${want}`);
    if (early) return early;
    const problems: string[] = [];
    const lines: string[] = [];
    const mtuOf = (h: string, n: string): number | undefined =>
      all.find((a) => a.host === h)?.facts.fabric.netdevs.find((d) => d.name === n)?.mtu;
    for (const a of all) {
      const names = [...new Set([...a.facts.fabric.ports.map((p) => p.netdev), ...fabricL3Names(a.facts)])];
      lines.push(`${a.host}: ${names.map((n) => `${n} ${mtuOf(a.host, n) ?? 'MTU not reported by ip'}`).join(', ')}`);
      for (const n of names) {
        if (mtuOf(a.host, n) !== want)
          problems.push(`${a.host}:${n} MTU ${mtuOf(a.host, n) ?? 'not reported by ip'} (want ${want})`);
      }
    }
    for (const c of networkCabling(all).cables) {
      const [x, y] = c.ends;
      const mx = mtuOf(x.host, x.netdev);
      const my = mtuOf(y.host, y.netdev);
      const end = (e: typeof x, m: number | undefined): string => `${e.host}:${e.netdev} ${m ?? 'not reported'}`;
      if (mx !== my) problems.push(`cable ${c.index}: ${end(x, mx)} ≠ ${end(y, my)}`);
    }
    const evidence = `${lines.join('\n')}${problems.length ? `\n${problems.join('\n')}` : ''}`;
    if (problems.length === 0)
      return {
        status: 'pass',
        rule: 'R24',
        summary: `MTU ${want} on every fabric interface and at both ends of every cable`,
        evidence,
      };
    const unequal = problems.some((p) => p.startsWith('cable'));
    return {
      status: 'fail',
      rule: 'R24',
      summary: `${unequal ? 'MTU differs at the ends of a cable: ' : ''}${problems.slice(0, 3).join('; ')}`,
      evidence,
      fix: `mtu: ${want} on every port, bond and slave: network.write and network.apply (NCCL ≥ 2.20 errors or hangs on a mismatch; below 4200 RoCE runs at active_mtu 1024)`,
    };
  },
};

export const reachabilityCheck: CheckDef<NetworkFacts, ReachCluster> = {
  id: 'network.reachability',
  title: 'every fabric subnet reachable both ways, jumbo included',
  scope: 'pair',
  needs: [...PORT_NEEDS, 'ip-addr'],
  evaluate(all, ctx) {
    const early = oneHostSkip(ctx.hosts) ?? portlessFail(all, 'no subnet to reach');
    if (early) return early;
    const cluster = ctx.cluster;
    if (!cluster)
      return { status: 'error', summary: 'the reachability run did not happen', evidence: 'no cluster result' };
    if (cluster.links.length === 0) {
      const none = all.every((a) => classify(a.facts).design === 'none');
      return {
        status: 'fail',
        summary: none ? 'no fabric addresses configured yet' : 'no fabric subnet to test',
        evidence: all.map((a) => `${a.host}: ${classify(a.facts).why}`).join('\n'),
        fix: 'apply network.write and network.apply',
      };
    }
    const problems = cluster.links.flatMap((l) => linkProblems(l));
    const evidence = cluster.links
      .map((l) =>
        [
          `${l.link.subnet}: ${l.link.ends.map((e) => (e ? `${e.host}:${e.netdev} ${e.address}` : '(no peer)')).join(' ↔ ')}`,
          ...l.pings.map((p) => p.evidence),
          ...l.neigh.map((n) => n.evidence),
        ].join('\n'),
      )
      .join('\n\n');
    if (problems.length === 0)
      return {
        status: 'pass',
        rule: 'R17',
        summary: `${cluster.links.length} fabric subnet(s) reachable both ways at MTU ${ctx.config.network.mtu}; neighbours on the pinged interfaces`,
        evidence,
      };
    const jumboOnly = problems.every((p) => p.rule === 'R24');
    return {
      status: 'fail',
      rule: problems[0]!.rule ?? 'R17',
      summary: problems
        .map((p) => p.text)
        .slice(0, 3)
        .join('; '),
      evidence: `${problems.map((p) => p.text).join('\n')}\n\n${evidence}`,
      fix: jumboOnly
        ? `MTU ${ctx.config.network.mtu} on both ends (network.write + network.apply)`
        : 'check the cable and both ports (ip link; ethtool <if>), then the cabling map: both ends of a cable must hold one subnet',
    };
  },
};

export const networkPairChecks: readonly CheckDef<NetworkFacts, ReachCluster>[] = [
  cablingCheck,
  addressesCheck,
  mtuCheck,
  reachabilityCheck,
];
