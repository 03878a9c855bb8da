/**
 * From the inventory probes' raw outputs to InventoryFacts, through the shared parsers. Tolerant:
 * a probe that failed leaves its facts empty and records why, so checks can say what is missing.
 */
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseOsRelease, parseKernelRelease } from '../../src/parse/os-release.js';
import { parseLscpu } from '../../src/parse/lscpu.js';
import { parseMeminfo } from '../../src/parse/meminfo.js';
import { parseLspci, type LspciDevice } from '../../src/parse/lspci.js';
import { parseIpJson, mergeIpJson, parseIpRoute } from '../../src/parse/ip-json.js';
import { parseSysfsNet, pciPathOf } from '../../src/parse/sysfs-net.js';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import { parseEthtool, parseEthtoolInfo } from '../../src/parse/ethtool.js';
import { parseNvidiaSmiTopo } from '../../src/parse/nvidia-smi-topo.js';
import { parseOfedInfo } from '../../src/parse/ofed-info.js';
import { parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { parseLldpNeighbors, parseIpNeigh } from '../../src/parse/lldp.js';
import type { InventoryFacts, Neighbour, PcieLink, PciFunction } from './facts.js';
import { pciRelation } from './topology.js';

/** Splits `### <tag> <name>` sections of a multi-command script's output. */
export function sections(text: string): Array<{ tag: string; name: string; rest: string; body: string }> {
  const out: Array<{ tag: string; name: string; rest: string; body: string }> = [];
  let cur: { tag: string; name: string; rest: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const m = /^### (\S+) (\S+)\s*(.*)$/.exec(line);
    if (m) {
      if (cur) out.push({ tag: cur.tag, name: cur.name, rest: cur.rest, body: cur.lines.join('\n') });
      cur = { tag: m[1]!, name: m[2]!, rest: m[3] ?? '', lines: [] };
    } else cur?.lines.push(line);
  }
  if (cur) out.push({ tag: cur.tag, name: cur.name, rest: cur.rest, body: cur.lines.join('\n') });
  return out;
}

function ok(r: RunResult | undefined): r is RunResult {
  return r !== undefined && r.exitCode === 0;
}

function evidenceOf(id: string, r: RunResult | undefined): string {
  if (!r) return `${id}: did not run`;
  const err = (r.stderr || r.stdout).trim().split('\n').slice(0, 4).join('\n');
  return `$ ${r.commandLine}\nexit ${r.exitCode ?? (r.timedOut ? 'timeout' : 'none')}\n${err}`;
}

function toFunction(d: LspciDevice): PciFunction {
  return {
    bdf: d.bdf,
    description: d.description,
    offBus: d.offBus ?? false,
    ...(d.vendorId ? { vendorId: d.vendorId } : {}),
    ...(d.deviceId ? { deviceId: d.deviceId } : {}),
    ...(d.classId ? { classId: d.classId } : {}),
    ...(d.revision ? { revision: d.revision } : {}),
  };
}

export function collectInventory({ host, results }: ProbeOutputs): InventoryFacts {
  const r = (id: string) => results[id];
  const out = (id: string) => (ok(r(id)) ? r(id)!.stdout : '');
  const problems: InventoryFacts['problems'] = [];
  const require = (id: string) => {
    if (!ok(r(id))) problems.push({ probe: id, evidence: evidenceOf(id, r(id)) });
  };
  [
    'os-release',
    'kernel',
    'lscpu',
    'meminfo',
    'lspci-nics',
    'lspci-gpus',
    'pcie',
    'ip-link',
    'ip-addr',
    'rdma-link',
  ].forEach(require);

  const osr = parseOsRelease(out('os-release'));
  const kernel = parseKernelRelease(out('kernel'));
  const cpu = parseLscpu(out('lscpu'));
  const mem = parseMeminfo(out('meminfo'));
  const nics = parseLspci(out('lspci-nics')).devices.map(toFunction);
  const gpus = parseLspci(out('lspci-gpus')).devices.map(toFunction);

  // The pcie script interleaves `numa_node <bdf> <n>` lines with lspci -vv blocks.
  const pcieText = r('pcie')?.stdout ?? '';
  // and `pci_path <bdf> <sysfs path>` lines (the same format as the sysfs-net probe).
  const numa = new Map<string, number>();
  const pciPaths = new Map<string, string[]>();
  const lspciText = pcieText
    .split('\n')
    .filter((l) => {
      const m = /^numa_node (\S+) (-?\d+)\s*$/.exec(l);
      if (m) numa.set(m[1]!, Number(m[2]));
      const p = /^pci_path (\S+) (.*)$/.exec(l);
      if (p) pciPaths.set(p[1]!, pciPathOf(p[2]!).pciPath);
      return !m && !p;
    })
    .join('\n');
  const sysfs = parseSysfsNet(out('sysfs-net'));
  const verbose = parseLspci(lspciText).devices;
  const pathOf = (bdf: string): string[] => {
    const direct = pciPaths.get(bdf);
    if (direct && direct.length > 0) return direct;
    for (const e of Object.values(sysfs.netdevs)) if (e.bdf === bdf) return e.pciPath;
    return [];
  };
  const pcie: PcieLink[] = verbose.map((d) => ({
    bdf: d.bdf,
    description: d.description,
    capabilitiesHidden: d.capabilitiesDenied ?? false,
    path: pathOf(d.bdf),
    ...(d.lnkCap?.speedGTs !== undefined ? { capSpeedGTs: d.lnkCap.speedGTs } : {}),
    ...(d.lnkCap?.width !== undefined ? { capWidth: d.lnkCap.width } : {}),
    ...(d.lnkSta?.speedGTs !== undefined ? { staSpeedGTs: d.lnkSta.speedGTs } : {}),
    ...(d.lnkSta?.width !== undefined ? { staWidth: d.lnkSta.width } : {}),
    ...((numa.get(d.bdf) ?? d.numaNode) !== undefined ? { numaNode: numa.get(d.bdf) ?? d.numaNode! } : {}),
    ...(d.driver ? { driver: d.driver } : {}),
    ...(d.acsCtl
      ? {
          acsEnabled: Object.entries(d.acsCtl)
            .filter(([, v]) => v)
            .map(([k]) => k),
        }
      : {}),
  }));

  const ip = mergeIpJson(parseIpJson(out('ip-link')), parseIpJson(out('ip-addr')));
  const netdevs = ip.netdevs.map((n) => {
    const s = sysfs.netdevs[n.ifname];
    const bdf = s?.bdf ?? (n.parentbus === 'pci' && n.parentdev ? n.parentdev : null);
    return {
      name: n.ifname,
      bdf,
      adminUp: (n.flags ?? []).includes('UP'),
      addresses: (n.addresses ?? []).map((a) => `${a.local}/${a.prefixlen ?? '?'}`),
      ...(n.mac ? { mac: n.mac } : {}),
      ...(n.permMac ? { permMac: n.permMac } : {}),
      ...(n.mtu !== undefined ? { mtu: n.mtu } : {}),
      ...(n.operstate ? { operstate: n.operstate } : {}),
      ...(n.master ? { master: n.master } : {}),
      ...(n.linkKind ? { kind: n.linkKind } : {}),
    };
  });

  // SSH_CONNECTION = client-ip client-port server-ip server-port: the netdev holding server-ip is management.
  const conn = out('ssh-connection').trim().split(/\s+/);
  const serverAddress = conn[2];
  const serverPort = conn[3] !== undefined && /^\d+$/.test(conn[3]) ? Number(conn[3]) : undefined;
  const mgmtDev = ip.netdevs.find((n) => (n.addresses ?? []).some((a) => a.local === serverAddress));
  const route = parseIpRoute(out('route-default'));

  const rdma = parseRdmaLink(out('rdma-link')).ports.map((p) => ({
    device: p.device,
    port: p.port,
    state: p.state ?? '?',
    physState: p.physState ?? '?',
    ...(p.netdev ? { netdev: p.netdev } : {}),
  }));

  const links = sections(r('ethtool')?.stdout ?? '').reduce<Map<string, InventoryFacts['links'][number]>>((acc, s) => {
    const cur = acc.get(s.name) ?? { netdev: s.name };
    if (s.tag === 'ethtool') {
      const e = parseEthtool(s.body);
      Object.assign(cur, {
        ...(e.speedMbps !== undefined ? { speedMbps: e.speedMbps } : {}),
        ...(e.linkDetected !== undefined ? { linkDetected: e.linkDetected } : {}),
        ...(e.linkReason ? { linkReason: e.linkReason } : {}),
      });
    } else if (s.tag === 'ethtool-i') {
      const i = parseEthtoolInfo(s.body);
      Object.assign(cur, {
        ...(i.driver ? { driver: i.driver } : {}),
        ...(i.version ? { driverVersion: i.version } : {}),
        ...(i.firmware ? { firmware: i.firmware } : {}),
        ...(i.busInfo ? { busInfo: i.busInfo } : {}),
      });
    }
    acc.set(s.name, cur);
    return acc;
  }, new Map());

  const ofed = parseOfedInfo(r('ofed-info')?.stdout ?? '');
  const drv = parseNvidiaDriverVersion(out('nvidia-version'));
  const dpkg = parseDpkgQuery(`${r('dpkg')?.stdout ?? ''}\n${r('dpkg')?.stderr ?? ''}`);
  const packages: Record<string, string> = {};
  const packageStatus: Record<string, string> = {};
  for (const p of dpkg.packages) {
    if (!p.installed || !p.version) continue;
    packages[p.name] = p.version;
    if (p.status) packageStatus[p.name] = p.status;
  }
  const machineId = /^[0-9a-f]{32}$/m.exec(out('machine-id'))?.[0];
  // --query-gpu=index,name,uuid,… (noheader): the third column.
  const gpuUuids = out('gpu-query')
    .split('\n')
    .map((l) => l.split(',')[2]?.trim() ?? '')
    .filter((u) => /^GPU-[0-9a-f-]+$/i.test(u));

  // Topology: nvidia-smi when the driver runs, else from PCI paths (docs/STAGES.md §3.1 inventory.topology).
  const gpuBdfs = gpus.map((g) => g.bdf);
  const nicFns = netdevs.filter((n) => n.bdf && nics.some((x) => x.bdf === n.bdf));
  const gpuPaths = new Map(pcie.map((p) => [p.bdf, p]));
  let topology: InventoryFacts['topology'] = { source: 'none', gpuToNic: [] };
  const topo = ok(r('topo')) ? parseNvidiaSmiTopo(out('topo')) : undefined;
  if (topo && topo.devices.length > 0) {
    const gpusT = topo.devices.filter((d) => d.startsWith('GPU'));
    const nicsT = topo.devices.filter((d) => d.startsWith('NIC'));
    topology = {
      source: 'nvidia-smi',
      gpuToNic: gpusT.flatMap((g) =>
        nicsT.map((n) => ({ gpu: g, nic: topo.nicLegend?.[n] ?? n, relation: topo.matrix[g]?.[n] ?? '?' })),
      ),
    };
  } else if (gpuBdfs.length > 0 && nicFns.length > 0) {
    topology = {
      source: 'pci',
      gpuToNic: gpuBdfs.flatMap((g, gi) =>
        nicFns.map((n) => ({
          gpu: `GPU${gi}`,
          nic: n.name,
          relation: pciRelation(pathOf(g), pathOf(n.bdf!), gpuPaths.get(g)?.numaNode, gpuPaths.get(n.bdf!)?.numaNode),
        })),
      ),
    };
  }

  const neighbours: Neighbour[] = [];
  const lldp = ok(r('lldp')) ? parseLldpNeighbors(out('lldp')) : undefined;
  for (const s of sections(r('neighbours')?.stdout ?? '')) {
    if (s.tag !== 'neigh') continue;
    if (s.rest.startsWith('down')) {
      neighbours.push({ port: s.name, peerMacs: [], state: 'down' });
      continue;
    }
    const peers = parseIpNeigh(s.body)
      .neighbors.map((x) => x.lladdr)
      .filter((m): m is string => !!m);
    const l = lldp?.neighbors.find((x) => x.localPort === s.name);
    neighbours.push({
      port: s.name,
      peerMacs: [...new Set([...peers, ...(l?.chassisMac ? [l.chassisMac] : [])])],
      state: 'up',
      ...(l?.chassisName ? { peerSystem: l.chassisName } : {}),
      ...(l?.peerPortId ? { peerPort: l.peerPortId } : {}),
      ...(l?.peerPortIdType ? { peerPortIdType: l.peerPortIdType } : {}),
      ...(l?.peerPortDescr ? { peerPortDescr: l.peerPortDescr } : {}),
    });
  }

  return {
    host,
    os: {
      ...(osr.id ? { id: osr.id } : {}),
      ...(osr.versionId ? { versionId: osr.versionId } : {}),
      ...(osr.prettyName ? { prettyName: osr.prettyName } : {}),
      ...(kernel?.release ? { kernel: kernel.release } : {}),
    },
    cpu: {
      ...(cpu.modelName ? { modelName: cpu.modelName } : {}),
      ...(cpu.sockets !== undefined ? { sockets: cpu.sockets } : {}),
      ...(cpu.cpus !== undefined ? { cpus: cpu.cpus } : {}),
      ...(cpu.numaNodes !== undefined ? { numaNodes: cpu.numaNodes } : {}),
    },
    ...(mem.memTotalKiB !== undefined ? { memTotalKiB: mem.memTotalKiB } : {}),
    nics,
    gpus,
    pcie,
    netdevs,
    mgmt: {
      ...(serverAddress ? { serverAddress } : {}),
      ...(serverPort !== undefined ? { serverPort } : {}),
      ...(mgmtDev ? { netdev: mgmtDev.ifname } : {}),
      ...(route.gateway ? { gateway: route.gateway } : {}),
      ...(route.dev ? { defaultDev: route.dev } : {}),
    },
    rdma,
    links: [...links.values()],
    topology,
    stack: {
      ...(ofed.version && ofed.flavor ? { ofed: { version: ofed.version, flavor: ofed.flavor } } : {}),
      ...(drv.version
        ? { nvidiaDriver: { version: drv.version, openKernelModule: drv.openKernelModule ?? false } }
        : {}),
      gpuDriverLoaded: drv.version !== undefined,
      packages,
      packageStatus,
    },
    identity: { ...(machineId ? { machineId } : {}), gpuUuids },
    neighbours,
    problems,
  };
}
