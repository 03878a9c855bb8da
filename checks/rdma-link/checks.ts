/**
 * rdma-link verdicts from the probes (docs/STAGES.md §3.6): port state, the GID table (R05, R16) and the
 * active MTU (R24). The measured checks (bandwidth, counters) are in bw-checks.ts.
 */
import type { CheckDef, HostFacts, PairCheckDef, StageContext, Verdict } from '../../src/engine/types.js';
import { cablingMap, RDMA_PORT_NEEDS } from '../common/fabric.js';
import { oneHostSkip } from '../common/pair.js';
import type { RdmaLinkCluster } from './cluster.js';
import { l3Of, rdmaPorts, type GidRow, type RdmaLinkFacts } from './facts.js';

const bare = (cidr: string): string => cidr.replace(/\/\d+$/, '');

export const portsCheck: CheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.ports',
  title: 'RDMA ports active on their netdevs',
  scope: 'host',
  needs: RDMA_PORT_NEEDS,
  evaluate(f) {
    const ports = f.fabric.ports;
    const unread = 'not reported';
    const linkLines = f.fabric.rdma.map(
      (r) =>
        `link ${r.device}/${r.port} state ${r.state ?? unread} ` +
        `physical_state ${r.physState ?? unread} netdev ${r.netdev ?? '-'}`,
    );
    const ib = f.ibstat.map(
      (p) =>
        `ibstat ${p.device} port ${p.port}: State ${p.state ?? unread}, ` +
        `Physical state ${p.physState ?? unread}, Rate ${p.rateGbps ?? unread}`,
    );
    const evidence = [
      'rdma link show:',
      ...(linkLines.length ? linkLines : ['(no RDMA link)']),
      ...(ib.length ? ['', ...ib] : []),
      ...(f.ibdev2netdev ? ['', 'ibdev2netdev:', f.ibdev2netdev.trim()] : []),
    ].join('\n');
    if (ports.length === 0)
      return {
        status: 'fail',
        summary: 'no ConnectX fabric ports found',
        evidence,
        fix: 'run the inventory stage: the NICs or their driver are missing',
      };
    const bad = ports.filter((p) => {
      const link = f.fabric.rdma.find((r) => r.device === p.rdmaDevice);
      return !p.rdmaDevice || link?.state !== 'ACTIVE' || link.physState !== 'LINK_UP';
    });
    if (bad.length === 0) {
      const devices = [...new Set(ports.map((p) => p.rdmaDevice))];
      return {
        status: 'pass',
        summary: `${devices.length} RDMA device${devices.length === 1 ? '' : 's'} ACTIVE/LINK_UP on ${ports.map((p) => p.netdev).join(', ')}`,
        evidence,
      };
    }
    const what = bad.map((p) => {
      if (!p.rdmaDevice) return `${p.netdev}: no RDMA device`;
      const link = f.fabric.rdma.find((r) => r.device === p.rdmaDevice);
      const seen = link
        ? `${link.state ?? 'state not reported'}/${link.physState ?? 'physical state not reported'}`
        : 'not in rdma link show';
      return `${p.netdev} (${p.rdmaDevice}): ${seen}`;
    });
    const noDevice = bad.some((p) => !p.rdmaDevice);
    return {
      status: 'fail',
      summary: what.join('; '),
      evidence,
      fix: noDevice
        ? 'load the RDMA stack (nic-stack stage: mlx5_ib / rdma-core)'
        : `bring the port up and check its cable at both ends (\`ip link show ${bad[0]!.netdev}\`; network.apply sets fabric ports up); ibstat's Rate is printed for down ports too and never means the link is up`,
    };
  },
};

interface DeviceGid {
  host: string;
  device: string;
  /** Netdev whose address the GID must carry (the port, or its bond). */
  l3: string;
  ips: string[];
  row?: GidRow;
}

function deviceGids(all: ReadonlyArray<HostFacts<RdmaLinkFacts>>): DeviceGid[] {
  const out: DeviceGid[] = [];
  for (const { host, facts: f } of all) {
    const seen = new Set<string>();
    for (const p of rdmaPorts(f)) {
      if (seen.has(p.rdmaDevice!)) continue;
      seen.add(p.rdmaDevice!);
      const l3 = l3Of(f, p);
      const ips = l3.addresses.map(bare);
      const row = f.gids
        .filter(
          (g) =>
            g.device === p.rdmaDevice &&
            g.type === 'RoCE v2' &&
            g.ipv4 !== undefined &&
            ips.includes(g.ipv4) &&
            g.ndev === l3.name,
        )
        .sort((a, b) => a.index - b.index)[0];
      out.push({ host, device: p.rdmaDevice!, l3: l3.name, ips, ...(row ? { row } : {}) });
    }
  }
  return out;
}

/** The GID index NCCL is pinned to on a host: /etc/nccl.conf first, else the cluster setting. */
function pinnedIndex(f: RdmaLinkFacts, ctx: StageContext): { index: number; source: string } | undefined {
  if (f.ncclGidIndex && /^\d+$/.test(f.ncclGidIndex.value))
    return {
      index: Number(f.ncclGidIndex.value),
      source: `/etc/nccl.conf:${f.ncclGidIndex.line} NCCL_IB_GID_INDEX=${f.ncclGidIndex.value}`,
    };
  const c = ctx.config.nccl.gidIndex;
  return typeof c === 'number' ? { index: c, source: `nccl.gidIndex: ${c} (cluster settings)` } : undefined;
}

export const gidsCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.gids',
  title: 'one RoCE v2 IPv4 GID per device on its own netdev',
  scope: 'pair',
  needs: [...RDMA_PORT_NEEDS, 'ip-addr', 'gids'],
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const devs = deviceGids(all);
    const evidence: string[] = devs.map(
      (d) =>
        `${d.host}: ${d.row ? d.row.line : `${d.device}: no RoCE v2 GID for ${d.ips.join(', ') || '(no IPv4 on ' + d.l3 + ')'} on ${d.l3}`}`,
    );
    const unread = all.filter((a) => !a.facts.gidsOk);
    if (unread.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: GID table unreadable on ${unread.map((a) => a.host).join(', ')}`,
        evidence: unread.map((a) => `${a.host}: ${a.facts.gidsEvidence}`).join('\n'),
        fix: 'check /sys/class/infiniband (the RDMA stack: nic-stack stage)',
      };
    }
    const deviceless = all.filter((a) => !devs.some((d) => d.host === a.host));
    if (deviceless.length > 0) {
      return {
        status: 'skip',
        summary: `no RDMA device on a fabric port of ${deviceless.map((a) => a.host).join(', ')}: no GID to check (rdma-link.ports)`,
        evidence: [...evidence, ...deviceless.map((a) => `${a.host}: no ConnectX port with an RDMA device`)].join('\n'),
      };
    }
    // R05: a pinned index must be the IPv4 RoCE v2 GID on every device of every host.
    const r05: string[] = [];
    const pins: string[] = [];
    for (const { host, facts: f } of all) {
      const pin = pinnedIndex(f, ctx);
      if (!pin) continue;
      pins.push(`${host}: ${pin.source}`);
      for (const d of devs.filter((x) => x.host === host)) {
        const at = f.gids.find((g) => g.device === d.device && g.index === pin.index);
        const good = at && at.type === 'RoCE v2' && at.ipv4 !== undefined && d.ips.includes(at.ipv4);
        const there = at ? `${at.type ?? 'of no type'} ${at.gid} on ${at.ndev ?? 'no netdev'}` : 'empty';
        if (!good)
          r05.push(
            `${host} ${d.device}: index ${pin.index} is ${there}; the RoCE v2 IPv4 GID is ${d.row ? `index ${d.row.index}` : 'missing'}`,
          );
      }
    }
    const missing = devs.filter((d) => !d.row);
    const ev = [...evidence, ...(pins.length ? ['', ...pins] : []), ...(r05.length ? ['', ...r05] : [])].join('\n');
    if (r05.length > 0) {
      return {
        status: 'fail',
        rule: 'R05',
        evidence: ev,
        summary: `NCCL_IB_GID_INDEX pins a GID that is not the RoCE v2 IPv4 GID: ${r05.map((x) => x.split(':')[0]).join('; ')}`,
        fix: 'delete NCCL_IB_GID_INDEX from /etc/nccl.conf on every host (the nccl.conf step writes it without): NCCL ≥ 2.21 selects the RoCE v2 IPv4 GID itself; pin a subnet with NCCL_IB_ADDR_RANGE if needed',
      };
    }
    if (missing.length > 0) {
      return {
        status: 'fail',
        evidence: ev,
        summary: `no RoCE v2 IPv4 GID: ${missing.map((d) => `${d.host} ${d.device} (${d.l3}${d.ips.length ? '' : ', no IPv4'})`).join('; ')}`,
        fix: 'give each fabric port its per-cable IPv4 address (network.write and network.apply), then re-check',
      };
    }
    // The tutorial's 4-port bond: its address's GIDs land on every slave's device (no RoCE LAG).
    const spilled = all.flatMap(({ host }) => {
      const byL3 = new Map<string, string[]>();
      for (const d of devs.filter((x) => x.host === host)) byL3.set(d.l3, [...(byL3.get(d.l3) ?? []), d.device]);
      return [...byL3]
        .filter(([, ds]) => ds.length > 1)
        .map(([l3, ds]) => `${host}: ${ds.join(', ')} all carry ${l3}'s GIDs`);
    });
    if (spilled.length > 0) {
      return {
        status: 'warn',
        rule: 'R16',
        evidence: [...spilled, '', ev].join('\n'),
        summary: `bond GIDs spill onto several RDMA devices (${spilled.join('; ')}): four HCAs claim one IP, so only cabled pairs work`,
        fix: 'migrate to design A (network stage): one subnet per cable, no bond over RDMA ports',
      };
    }
    const indexes = [...new Set(devs.map((d) => d.row!.index))];
    if (indexes.length > 1) {
      return {
        status: 'warn',
        evidence: ev,
        summary: `RoCE v2 IPv4 GID index differs between devices/hosts (${indexes.join(', ')}): harmless with NCCL's auto-selection, wrong for any pinned index`,
        fix: 'leave NCCL_IB_GID_INDEX unset',
      };
    }
    return {
      status: 'pass',
      evidence: ev,
      summary: `every device (${devs.length}) has its RoCE v2 IPv4 GID at index ${indexes[0]} on its own netdev`,
    };
  },
};

export const activeMtuCheck: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster> = {
  id: 'rdma-link.active-mtu',
  title: 'active MTU 4096, equal at both ends',
  scope: 'pair',
  needs: [...RDMA_PORT_NEEDS, 'devinfo'],
  evaluate(all, ctx): Verdict {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const deviceless = all.filter((a) => rdmaPorts(a.facts).length === 0);
    if (deviceless.length > 0) {
      return {
        status: 'skip',
        summary: `no RDMA device on a fabric port of ${deviceless.map((a) => a.host).join(', ')}: no active MTU (rdma-link.ports)`,
        evidence: deviceless.map((a) => `${a.host}: no ConnectX port with an RDMA device`).join('\n'),
      };
    }
    const noTool = all.filter((a) => !a.facts.devinfoOk);
    if (noTool.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: ibv_devinfo failed on ${noTool.map((a) => a.host).join(', ')}`,
        evidence: noTool.map((a) => `${a.host}: ${a.facts.devinfoEvidence}`).join('\n'),
        fix: 'apply nic-stack.install-inbox (ibverbs-utils)',
      };
    }
    const mtuOf = (
      host: string,
      netdev: string,
    ): { device?: string; mtu?: number; line: string; netdevMtu?: number } => {
      const f = all.find((a) => a.host === host)?.facts;
      const p = f?.fabric.ports.find((x) => x.netdev === netdev);
      const d = f?.devinfo.find((x) => x.device === p?.rdmaDevice);
      return {
        ...(p?.rdmaDevice ? { device: p.rdmaDevice } : {}),
        ...(d?.activeMtu !== undefined ? { mtu: d.activeMtu } : {}),
        ...(p?.mtu !== undefined ? { netdevMtu: p.mtu } : {}),
        line: d?.line || 'no active_mtu line in ibv_devinfo',
      };
    };
    const evidence: string[] = [];
    const small: string[] = [];
    const unreadMtu: string[] = [];
    for (const { host, facts: f } of all) {
      for (const p of rdmaPorts(f)) {
        const m = mtuOf(host, p.netdev);
        evidence.push(`${host} ${p.netdev} (mtu ${m.netdevMtu ?? 'not reported by ip'}) ${m.device}: ${m.line}`);
        if (m.mtu !== undefined && m.mtu < 4096) small.push(`${host} ${p.netdev} ${m.device}: ${m.mtu}`);
        if (m.mtu === undefined) unreadMtu.push(`${host} ${p.netdev} ${m.device}`);
      }
    }
    const cabling = cablingMap(all.map((a) => ({ host: a.host, facts: a.facts.fabric })));
    const mismatched: string[] = [];
    for (const c of cabling.cables) {
      const [a, b] = c.ends.map((e) => ({ e, ...mtuOf(e.host, e.netdev) }));
      if (a && b && a.mtu !== undefined && b.mtu !== undefined && a.mtu !== b.mtu) {
        mismatched.push(
          `cable ${c.index}: ${a.e.host}:${a.e.netdev} ${a.mtu} (netdev ${a.netdevMtu}) ↔ ${b.e.host}:${b.e.netdev} ${b.mtu} (netdev ${b.netdevMtu})`,
        );
      }
    }
    const ev = [...mismatched, ...(mismatched.length ? [''] : []), ...evidence].join('\n');
    if (mismatched.length > 0) {
      return {
        status: 'fail',
        rule: 'R24',
        evidence: ev,
        summary: `active MTU differs across ${mismatched.map((m) => m.split(':')[0]).join(', ')}`,
        fix: 'set mtu: 9000 on both ends of every cable (network.write and network.apply); NCCL ≥ 2.20 errors or hangs on a mismatch',
      };
    }
    if (unreadMtu.length > 0) {
      return {
        status: 'error',
        rule: 'R24',
        evidence: ev,
        summary: `cannot tell: ibv_devinfo shows no active_mtu for ${unreadMtu.join('; ')}`,
        fix: 'check `ibv_devinfo -d <device>` by hand',
      };
    }
    if (small.length > 0) {
      return {
        status: 'warn',
        rule: 'R24',
        evidence: ev,
        summary: `active_mtu below 4096: ${small.join('; ')} (≈ 5 % less goodput)`,
        fix: 'set mtu: 9000 on the fabric ports at both ends (network stage)',
      };
    }
    return {
      status: 'pass',
      evidence: ev,
      summary: `active_mtu 4096 (5) on every device${cabling.cables.length ? `, equal across ${cabling.cables.length} cables` : ''}`,
    };
  },
};
