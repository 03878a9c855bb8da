/**
 * Inventory verdicts (docs/STAGES.md §3.1). Pure functions over InventoryFacts; each verdict carries the
 * values it rests on as evidence and says what to do when it is not a pass.
 */
import type { CheckDef, Verdict } from '../../src/engine/types.js';
import { fabricNetdevs, type InventoryFacts, type PciFunction } from './facts.js';

const CX4LX = '1015';
const CX4 = '1013';
const L20_IDS = new Set(['26ba', '26b7']);

function lines(items: string[], max = 12): string {
  return items.length > max ? [...items.slice(0, max), `… ${items.length - max} more`].join('\n') : items.join('\n');
}

function pciLine(p: PciFunction): string {
  return `${p.bdf} ${p.description}${p.deviceId ? ` [${p.vendorId ?? '?'}:${p.deviceId}]` : ''}${p.revision ? ` (rev ${p.revision})` : ''}`;
}

function problemVerdict(f: InventoryFacts, probe: string, what: string): Verdict | undefined {
  const p = f.problems.find((x) => x.probe === probe);
  return p
    ? {
        status: 'error',
        summary: `cannot tell: could not read ${what}`,
        evidence: p.evidence,
        fix: `check that \`${probe}\` runs on ${f.host}`,
      }
    : undefined;
}

export const osCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.os',
  title: 'Ubuntu 22.04 with a 5.15 generic kernel',
  scope: 'host',
  evaluate(f) {
    const o = f.os;
    const evidence = `VERSION_ID="${o.versionId ?? '?'}" (${o.prettyName ?? o.id ?? 'unknown OS'})\nuname -r: ${o.kernel ?? '?'}`;
    if (o.id !== 'ubuntu' || o.versionId !== '22.04') {
      return {
        status: 'fail',
        summary: `${o.prettyName ?? o.versionId ?? 'unknown OS'}: l20-setup supports Ubuntu 22.04`,
        evidence,
        fix: 'install Ubuntu 22.04 LTS (jammy) server',
      };
    }
    const k = o.kernel ?? '';
    if (/^5\.15\.\d+-\d+-generic$/.test(k))
      return { status: 'pass', summary: `${o.prettyName ?? 'Ubuntu 22.04'}, kernel ${k}`, evidence };
    if (/^6\.8\./.test(k)) {
      return {
        status: 'warn',
        summary: `HWE kernel ${k}: the NIC stack must support it`,
        evidence,
        fix: 'nic-stack confirms OFED/DOCA support for the HWE kernel, or install linux-generic (5.15)',
      };
    }
    return {
      status: 'warn',
      summary: `kernel ${k || 'unknown'} is not the 5.15 generic kernel`,
      evidence,
      fix: 'boot the jammy 5.15 generic kernel (linux-image-generic)',
    };
  },
};

export const cpuMemCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.cpu-mem',
  title: 'CPU and memory',
  scope: 'host',
  needs: ['lscpu'],
  evaluate(f) {
    const gpuMemKiB = f.gpus.length * 46068 * 1024; // L20: 48 GB (46068 MiB usable)
    const memGiB = f.memTotalKiB !== undefined ? f.memTotalKiB / 1024 / 1024 : undefined;
    const told = (v: string | number | undefined, what: string) =>
      v === undefined ? `${what} not reported` : `${v} ${what}`;
    const evidence =
      `CPU: ${f.cpu.modelName ?? 'model not reported'}, ${told(f.cpu.sockets, 'sockets')}, ` +
      `${told(f.cpu.cpus, 'CPUs')}, ${told(f.cpu.numaNodes, 'NUMA nodes')}\nMemTotal: ${told(f.memTotalKiB, 'kB')}`;
    if (f.memTotalKiB === undefined || f.cpu.cpus === undefined) {
      return {
        status: 'error',
        summary: 'cannot tell: could not read CPU or memory',
        evidence,
        fix: 'check `lscpu -J` and /proc/meminfo on the host',
      };
    }
    const model = f.cpu.modelName
      ? `${f.cpu.sockets !== undefined ? `${f.cpu.sockets} × ` : ''}${f.cpu.modelName}`
      : 'model not reported';
    const summary = `${f.cpu.cpus} CPUs (${model}), ${memGiB!.toFixed(0)} GiB RAM`;
    if (f.memTotalKiB < gpuMemKiB) {
      return {
        status: 'warn',
        summary: `${summary}: less RAM than GPU memory`,
        evidence,
        fix: 'loading weights and KV offload want RAM ≥ total GPU memory (8 × 48 GB)',
      };
    }
    return { status: 'pass', summary, evidence };
  },
};

export const nicsCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.nics',
  title: 'Two dual-port ConnectX-4 Lx',
  scope: 'host',
  needs: ['lspci-nics'],
  evaluate(f) {
    const evidence = lines(f.nics.map(pciLine)) || '(no Mellanox functions in lspci -D -nn -d 15b3:)';
    const offBus = f.nics.filter((n) => n.offBus);
    if (offBus.length > 0)
      return {
        status: 'fail',
        summary: `${offBus.length} NIC function(s) fell off the PCIe bus`,
        evidence,
        fix: 'reseat the card or power-cycle the server; check dmesg for AER errors',
      };
    const pfs = f.nics.filter((n) => !/Virtual Function/i.test(n.description));
    const cards = new Map<string, PciFunction[]>();
    for (const p of pfs) {
      const key = p.bdf.replace(/\.\d$/, '');
      cards.set(key, [...(cards.get(key) ?? []), p]);
    }
    if (pfs.length < 4)
      return {
        status: 'fail',
        summary: `${pfs.length} NIC physical functions; need 4 (2 cards × 2 ports)`,
        evidence,
        fix: 'install two dual-port ConnectX-4 Lx (MCX4121A) cards; VFs alone cannot carry the fabric',
      };
    if (pfs.some((p) => p.deviceId === CX4)) {
      return {
        status: 'warn',
        summary: 'ConnectX-4 (15b3:1013), not ConnectX-4 Lx: support ends earlier',
        evidence,
        fix: 'pin MLNX_OFED 24.10 LTS or DOCA 2.9 LTS in nic-stack',
        rule: 'R30',
      };
    }
    const lx = pfs.filter((p) => p.deviceId === CX4LX);
    if (lx.length === pfs.length && cards.size === 2 && [...cards.values()].every((c) => c.length === 2)) {
      return { status: 'pass', summary: `2 × ConnectX-4 Lx dual-port (${[...cards.keys()].join(', ')})`, evidence };
    }
    return {
      status: 'warn',
      summary: `${pfs.length} PFs on ${cards.size} cards (expected 2 dual-port ConnectX-4 Lx)`,
      evidence,
      fix: 'later stages use whatever 4 ports exist; check the card models',
    };
  },
};

export const gpusCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.gpus',
  title: 'Eight NVIDIA L20',
  scope: 'host',
  needs: ['lspci-gpus'],
  evaluate(f) {
    const evidence = lines(f.gpus.map(pciLine)) || '(no NVIDIA functions in lspci -D -nn -d 10de:)';
    const gpus = f.gpus.filter((g) => g.classId === undefined || g.classId.startsWith('03'));
    const offBus = gpus.filter((g) => g.offBus);
    if (offBus.length > 0)
      return {
        status: 'fail',
        summary: `${offBus.length} GPU(s) fell off the bus (rev ff)`,
        evidence,
        fix: 'power-cycle the server; check dmesg for Xid 79 / AER and reseat the GPU',
      };
    const l20 = gpus.filter((g) => g.deviceId !== undefined && L20_IDS.has(g.deviceId));
    if (l20.length === 8 && gpus.length === 8) return { status: 'pass', summary: '8 × NVIDIA L20 (AD102GL)', evidence };
    return {
      status: 'fail',
      summary: `${l20.length} L20 of ${gpus.length} NVIDIA display/3D functions; need 8 L20`,
      evidence,
      fix: 'check that all eight GPUs are seated and powered (BIOS: Above 4G decoding on)',
    };
  },
};

export const pcieCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.pcie',
  title: 'PCIe links at full speed and width',
  scope: 'host',
  needs: ['pcie', 'lspci-nics', 'lspci-gpus'],
  evaluate(f) {
    const p = problemVerdict(f, 'pcie', 'PCIe details (lspci -vv as root)');
    if (p) return p;
    const nicSet = new Set(f.nics.map((n) => n.bdf));
    const gpuSet = new Set(f.gpus.map((g) => g.bdf));
    const endpoints = f.pcie.filter((l) => nicSet.has(l.bdf) || gpuSet.has(l.bdf));
    if (endpoints.some((l) => l.capabilitiesHidden)) {
      return {
        status: 'fail',
        summary: 'lspci hid the capabilities (not run as root)',
        evidence: 'Capabilities: <access denied>',
        fix: 'give the SSH user passwordless sudo for probes',
      };
    }
    const rows: string[] = [];
    const slow: string[] = [];
    for (const l of endpoints) {
      const isGpu = gpuSet.has(l.bdf);
      const want = isGpu ? { s: 16, w: 16 } : { s: 8, w: 8 };
      const link = (speed: number | undefined, width: number | undefined) =>
        `${speed !== undefined ? `${speed}GT/s` : 'speed not read'} ${width !== undefined ? `x${width}` : 'width not read'}`;
      const row =
        `${l.bdf} LnkSta ${link(l.staSpeedGTs, l.staWidth)} (LnkCap ${link(l.capSpeedGTs, l.capWidth)})` +
        `${l.numaNode !== undefined ? ` NUMA ${l.numaNode}` : ''}`;
      rows.push(row);
      // R38: always compare the width. Idle GPUs drop their link to 2.5GT/s to save power, so a GPU's
      // speed counts only through LnkCap (what the slot and device can do); NICs keep their speed.
      const width = l.staWidth;
      const speed = isGpu ? l.capSpeedGTs : l.staSpeedGTs;
      if (width === undefined || speed === undefined || width < want.w || speed < want.s) slow.push(row);
    }
    if (endpoints.length === 0) {
      if (f.nics.length === 0 && f.gpus.length === 0) {
        return {
          status: 'fail',
          summary: 'no GPU or ConnectX function on the PCIe bus to check',
          evidence: 'lspci -d 10de: and -d 15b3: listed no function',
          fix: 'see inventory.gpus and inventory.nics',
        };
      }
      return {
        status: 'error',
        summary: 'cannot tell: lspci -vv showed none of the GPU and NIC functions lspci lists',
        evidence: lines([...f.nics, ...f.gpus].map(pciLine)),
        fix: 'check `sudo lspci -vv` on the host',
      };
    }
    if (slow.length > 0) {
      return {
        status: 'warn',
        summary: `${slow.length} link(s) below GPU 16GT/s x16 or NIC 8GT/s x8 (GPU speed from LnkCap: idle GPUs downclock the link)`,
        evidence: lines(slow),
        fix: 'reseat the device or check BIOS PCIe settings; a downtrained link caps bandwidth',
        rule: 'R38',
      };
    }
    return {
      status: 'pass',
      summary: `${endpoints.length} links at full speed (GPUs 16GT/s x16, NICs 8GT/s x8)`,
      evidence: lines(rows),
    };
  },
};

export const netdevsCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.netdevs',
  title: 'A netdev for every NIC port',
  scope: 'host',
  needs: ['ip-link', 'lspci-nics', 'sysfs-net'],
  evaluate(f) {
    const fabric = fabricNetdevs(f);
    const evidence =
      lines(
        f.netdevs
          .filter((n) => n.name !== 'lo')
          .map((n) =>
            [
              n.name,
              n.bdf ?? 'virtual',
              n.mac ?? '',
              n.mtu !== undefined ? `mtu ${n.mtu}` : '',
              n.operstate ?? '',
              n.master ? `master ${n.master}` : '',
            ]
              .filter(Boolean)
              .join(' '),
          ),
      ) || '(ip link lists no netdev besides lo)';
    const pfs = f.nics.filter((n) => !/Virtual Function/i.test(n.description));
    if (pfs.length === 0)
      return { status: 'fail', summary: 'no ConnectX port to find a netdev for', evidence, fix: 'see inventory.nics' };
    if (fabric.length < pfs.length || fabric.length === 0) {
      return {
        status: 'fail',
        summary: `${fabric.length} netdevs for ${pfs.length} NIC ports`,
        evidence,
        fix: 'load mlx5_core (modprobe mlx5_core) and check dmesg for mlx5 errors',
      };
    }
    return { status: 'pass', summary: `fabric ports ${fabric.map((n) => n.name).join(' ')}`, evidence };
  },
};

export const mgmtCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.mgmt',
  title: 'Management path is not a fabric port',
  scope: 'host',
  needs: ['ip-addr', 'route-default'],
  evaluate(f) {
    const m = f.mgmt;
    const evidence = [
      m.serverAddress
        ? `SSH_CONNECTION server address ${m.serverAddress} port ${m.serverPort ?? 22}`
        : 'SSH_CONNECTION is empty',
      m.netdev ? `held by ${m.netdev}` : 'held by no netdev in ip addr',
      m.gateway ? `default route via ${m.gateway}${m.defaultDev ? ` dev ${m.defaultDev}` : ''}` : 'no default route',
    ].join('\n');
    if (!m.netdev)
      return {
        status: 'error',
        summary: 'cannot tell: no netdev holds the SSH server address',
        evidence,
        fix: 'check SSH_CONNECTION and ip addr on the host',
      };
    if (m.netdev === 'lo' || /^127\.|^::1$/.test(m.serverAddress ?? '')) {
      return {
        status: 'error',
        summary: `cannot tell which interface is management: SSH arrives over loopback (${m.netdev} ${m.serverAddress ?? ''})`,
        evidence,
        fix: "put the host's management address in the inventory (a tunnel or a local connection hides the management interface)",
      };
    }
    const fabric = new Set(fabricNetdevs(f).map((n) => n.name));
    const slaves = f.netdevs.filter((n) => n.master === m.netdev).map((n) => n.name);
    if (fabric.has(m.netdev) || slaves.some((s) => fabric.has(s))) {
      return {
        status: 'fail',
        summary: `management (SSH) runs over fabric port ${m.netdev}`,
        evidence,
        fix: 'move SSH to a separate management interface; fabric changes would cut this session',
      };
    }
    return {
      status: 'pass',
      summary: `management ${m.netdev} ${m.serverAddress ?? ''}${m.gateway ? `, gateway ${m.gateway}` : ''}`,
      evidence,
    };
  },
};

export const rdmaCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.rdma',
  title: 'One RDMA device per fabric port',
  scope: 'host',
  needs: ['rdma-link', 'ip-link', 'lspci-nics'],
  evaluate(f) {
    const evidence =
      lines(
        f.rdma.map(
          (r) =>
            `${r.device}/${r.port} state ${r.state} physical_state ${r.physState}${r.netdev ? ` netdev ${r.netdev}` : ''}`,
        ),
      ) || '(rdma link show printed nothing)';
    const fabric = fabricNetdevs(f);
    const bonds = new Set(fabric.map((n) => n.master).filter((m): m is string => !!m));
    const byNetdev = new Map(f.rdma.filter((r) => r.netdev).map((r) => [r.netdev!, r]));
    if (fabric.length === 0)
      return {
        status: 'fail',
        summary: 'no fabric port to match an RDMA device to',
        evidence,
        fix: 'see inventory.netdevs',
      };
    const missing = fabric.filter((n) => !byNetdev.has(n.name) && !(n.master && byNetdev.has(n.master)));
    if (missing.length > 0) {
      return {
        status: 'fail',
        summary: `no RDMA device for ${missing.map((n) => n.name).join(', ')}`,
        evidence,
        fix: 'load mlx5_ib (modprobe mlx5_ib); the nic-stack stage installs rdma-core',
        rule: 'R07',
      };
    }
    const naming = f.rdma.some((r) => /^mlx5_bond_/.test(r.device))
      ? 'RoCE LAG (mlx5_bond_N)'
      : f.rdma.some((r) => /^roce/.test(r.device))
        ? 'rdma-core names (rocep…)'
        : 'kernel names (mlx5_N)';
    return {
      status: 'pass',
      summary: `${f.rdma.length} RDMA ports, ${naming}${bonds.size ? `; bonds ${[...bonds].join(' ')}` : ''}`,
      evidence,
    };
  },
};

export const linksCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.links',
  title: 'Fabric ports: mlx5_core, 25 Gb/s, link',
  scope: 'host',
  needs: ['ethtool', 'ip-link', 'lspci-nics'],
  evaluate(f) {
    const fabric = fabricNetdevs(f);
    const info = new Map(f.links.map((l) => [l.netdev, l]));
    const rows: string[] = [];
    const failures: string[] = [];
    const warnings: string[] = [];
    let down = 0;
    for (const n of fabric) {
      const l = info.get(n.name);
      const detected =
        l?.linkDetected === undefined
          ? 'not reported'
          : l.linkDetected
            ? 'yes'
            : `no${l.linkReason ? ` (${l.linkReason})` : ''}`;
      const row =
        `${n.name}: ${n.adminUp ? 'admin up' : 'admin down'}, Speed ${l?.speedMbps !== undefined ? `${l.speedMbps}Mb/s` : 'Unknown!'}, ` +
        `Link detected: ${detected}, driver ${l?.driver ?? 'not reported'} fw ${l?.firmware ?? 'not reported'}`;
      rows.push(row);
      if (!l) {
        failures.push(`${n.name}: ethtool printed nothing`);
        continue;
      }
      if (l.driver !== 'mlx5_core') failures.push(`${n.name}: driver ${l.driver ?? 'unknown'}, expected mlx5_core`);
      if (!n.adminUp) {
        down++;
        continue;
      }
      if (l.linkDetected === false)
        failures.push(`${n.name}: Link detected: no${l.linkReason ? ` (${l.linkReason})` : ''}`);
      else if (l.speedMbps !== undefined && l.speedMbps < 25000) warnings.push(`${n.name}: ${l.speedMbps}Mb/s`);
    }
    const evidence = lines(rows);
    if (fabric.length === 0)
      return {
        status: 'fail',
        summary: 'no fabric ports to check',
        evidence: 'no netdev belongs to a ConnectX function',
        fix: 'see inventory.netdevs',
      };
    if (failures.length > 0)
      return {
        status: 'fail',
        summary: failures.join('; '),
        evidence,
        fix: 'check the DAC cable and the peer port; `ethtool <if>` shows the reason',
      };
    if (warnings.length > 0)
      return {
        status: 'warn',
        summary: `below 25 Gb/s: ${warnings.join(', ')}`,
        evidence,
        fix: 'use 25G DACs (SFP28) and check the peer port speed',
      };
    const deferred =
      down > 0 ? `; ${down} administratively down — the network stage brings them up and verifies the link` : '';
    return {
      status: 'pass',
      summary: `${fabric.length} ports on mlx5_core${fabric.length - down ? `, ${fabric.length - down} at 25 Gb/s with link` : ''}${deferred}`,
      evidence,
    };
  },
};

export const topologyCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.topology',
  title: 'GPU ↔ NIC placement',
  scope: 'host',
  needs: ['pcie', 'lspci-gpus', 'lspci-nics'],
  evaluate(f) {
    const t = f.topology;
    if (f.gpus.length === 0 || fabricNetdevs(f).length === 0) {
      return {
        status: 'skip',
        summary: `nothing to place: ${f.gpus.length} GPU(s), ${fabricNetdevs(f).length} fabric port(s)`,
        evidence: 'see inventory.gpus and inventory.netdevs',
        rule: 'R39',
      };
    }
    if (t.gpuToNic.length === 0)
      return {
        status: 'warn',
        summary: 'could not derive GPU↔NIC placement',
        evidence: `source: ${t.source}`,
        fix: 'check lspci -vv and sysfs paths',
      };
    const rows = t.gpuToNic.map((x) => `${x.gpu} ↔ ${x.nic}: ${x.relation}`);
    const near = t.gpuToNic.filter((x) => x.relation === 'PIX' || x.relation === 'PXB');
    const nicsWithNear = new Set(near.map((x) => x.nic));
    return {
      status: 'pass',
      summary: `${nicsWithNear.size} NIC port(s) share a PCIe switch with a GPU (${t.source === 'pci' ? 'from PCI paths' : 'nvidia-smi topo -m'})`,
      evidence: lines(rows, 16),
      rule: 'R39',
    };
  },
};

export const stackCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.stack',
  title: 'Installed NIC and GPU software',
  scope: 'host',
  needs: ['dpkg'],
  evaluate(f) {
    const s = f.stack;
    const nic = s.ofed
      ? `${s.ofed.flavor} ${s.ofed.version}`
      : s.packages['rdma-core']
        ? `inbox rdma-core ${s.packages['rdma-core']}`
        : 'inbox kernel drivers (no rdma-core)';
    const gpu = s.nvidiaDriver
      ? `NVIDIA ${s.nvidiaDriver.version}${s.nvidiaDriver.openKernelModule ? ' (open)' : ''}`
      : 'no NVIDIA driver loaded';
    const evidence = [
      `ofed_info -s: ${s.ofed ? `${s.ofed.flavor} ${s.ofed.version}` : 'not installed'}`,
      `/proc/driver/nvidia/version: ${s.nvidiaDriver?.version ?? 'absent'}`,
      ...Object.entries(s.packages).map(([k, v]) => `${s.packageStatus[k] ?? 'ii'} ${k} ${v}`),
    ].join('\n');
    return { status: 'pass', summary: `${nic}; ${gpu}`, evidence };
  },
};

export const pairHardwareCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.pair-hardware',
  title: 'Hosts have the same GPUs and NICs',
  scope: 'pair',
  needs: ['lspci-gpus', 'lspci-nics', 'ip-link'],
  evaluate(all) {
    if (all.length < 2)
      return {
        status: 'skip',
        summary: `one host (${all[0]?.host ?? 'none'}): nothing to compare`,
        evidence: `hosts: ${all.map((a) => a.host).join(', ')}`,
      };
    const sig = (f: InventoryFacts) =>
      `${f.gpus.length}×GPU ${[...new Set(f.gpus.map((g) => g.deviceId))].join(',')} / ${f.nics.length}×NIC fn ${[...new Set(f.nics.map((n) => n.deviceId))].join(',')} / ${fabricNetdevs(f).length} fabric ports`;
    const rows = all.map((a) => `${a.host}: ${sig(a.facts)}`);
    const first = all[0];
    const differ = all.filter((a) => first && sig(a.facts) !== sig(first.facts));
    if (differ.length > 0) {
      return {
        status: 'fail',
        summary: `${differ.map((d) => d.host).join(', ')} differ from ${first?.host}`,
        evidence: rows.join('\n'),
        fix: 'give every host the same GPU and NIC population; NCCL rails and TP layouts assume symmetry',
      };
    }
    return { status: 'pass', summary: `${all.length} hosts match: ${sig(first!.facts)}`, evidence: rows.join('\n') };
  },
};

export const cablingCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.cabling',
  title: 'Fabric cabling map',
  scope: 'pair',
  needs: ['neighbours', 'ip-link', 'lspci-nics'],
  evaluate(all) {
    if (all.length < 2)
      return {
        status: 'skip',
        summary: `one host (${all[0]?.host ?? 'none'}): no cable to map`,
        evidence: `hosts: ${all.map((a) => a.host).join(', ')}`,
      };
    const portless = all.filter((a) => fabricNetdevs(a.facts).length === 0);
    if (portless.length > 0) {
      return {
        status: 'fail',
        summary: `no fabric port to cable on ${portless.map((a) => a.host).join(', ')}`,
        evidence: portless.map((a) => `${a.host}: no netdev of a ConnectX function`).join('\n'),
        fix: 'see inventory.nics and inventory.netdevs',
      };
    }
    const macOwner = new Map<string, { host: string; port: string }>();
    for (const a of all)
      for (const n of fabricNetdevs(a.facts))
        if (n.mac) macOwner.set(n.mac.toLowerCase(), { host: a.host, port: n.name });
    const cables: string[] = [];
    const loops: string[] = [];
    let unknown = 0;
    const seen = new Set<string>();
    for (const a of all) {
      for (const nb of a.facts.neighbours) {
        if (nb.state === 'down') {
          unknown++;
          continue;
        }
        const peers = nb.peerMacs
          .map((m) => macOwner.get(m.toLowerCase()))
          .filter((p): p is { host: string; port: string } => !!p);
        if (peers.length === 0) {
          unknown++;
          continue;
        }
        for (const p of peers) {
          if (p.host === a.host) {
            loops.push(`${a.host}:${nb.port} ↔ ${p.host}:${p.port}`);
            continue;
          }
          const key = [`${a.host}:${nb.port}`, `${p.host}:${p.port}`].sort().join(' ↔ ');
          if (!seen.has(key)) {
            seen.add(key);
            cables.push(key);
          }
        }
      }
    }
    const evidence = [
      ...cables,
      ...loops.map((l) => `${l} (same host)`),
      unknown ? `${unknown} port(s) down or without a known neighbour` : '',
    ]
      .filter(Boolean)
      .join('\n');
    if (loops.length > 0)
      return {
        status: 'fail',
        summary: `a port is cabled to its own host: ${loops[0]}`,
        evidence,
        fix: 'each DAC must join server 1 to server 2',
      };
    const portCount = Math.min(...all.map((a) => fabricNetdevs(a.facts).length));
    if (cables.length === 0 && unknown > 0) {
      return {
        status: 'skip',
        summary: `cabling not yet visible: fabric ports are down — network.discover-cabling maps it once they are up`,
        evidence,
      };
    }
    if (cables.length < portCount) {
      return {
        status: 'fail',
        summary: `${cables.length} cables found; need ${portCount}`,
        evidence,
        fix: 'check that every DAC is plugged in at both ends and both ports are up',
      };
    }
    return { status: 'pass', summary: `${cables.length} cables: ${cables.join(', ')}`, evidence };
  },
};

/** Two inventory names for one machine would compare the machine with itself in every pair check. */
export const distinctHostsCheck: CheckDef<InventoryFacts> = {
  id: 'inventory.distinct-hosts',
  title: 'Every inventory host is a different machine',
  scope: 'pair',
  needs: ['machine-id'],
  evaluate(all) {
    const rows = all.map(
      (a) =>
        `${a.host}: machine-id ${a.facts.identity.machineId ?? 'not read'}` +
        `${a.facts.identity.gpuUuids.length ? `, GPUs ${a.facts.identity.gpuUuids.slice(0, 2).join(' ')}${a.facts.identity.gpuUuids.length > 2 ? ' …' : ''}` : ''}`,
    );
    const unread = all.filter((a) => !a.facts.identity.machineId);
    const same: string[] = [];
    for (let i = 0; i < all.length; i++) {
      for (let j = i + 1; j < all.length; j++) {
        const a = all[i]!.facts.identity;
        const b = all[j]!.facts.identity;
        const gpu = a.gpuUuids.find((u) => b.gpuUuids.includes(u));
        const sameMachineId = Boolean(a.machineId) && a.machineId === b.machineId;
        const why = sameMachineId ? `machine-id ${a.machineId}` : gpu ? `GPU ${gpu}` : undefined;
        if (why) same.push(`${all[i]!.host} and ${all[j]!.host} are the same machine (${why})`);
      }
    }
    if (same.length > 0)
      return {
        status: 'fail',
        summary: same.join('; '),
        evidence: rows.join('\n'),
        fix: 'list each machine once in the inventory (two names, addresses or ports that reach one host)',
      };
    if (unread.length > 0)
      return {
        status: 'error',
        summary: `cannot tell: /etc/machine-id unreadable on ${unread.map((a) => a.host).join(', ')}`,
        evidence: rows.join('\n'),
        fix: 'check `cat /etc/machine-id` on the host (systemd-machine-id-setup writes it)',
      };
    return { status: 'pass', summary: `${all.length} distinct machine(s)`, evidence: rows.join('\n') };
  },
};

export const inventoryChecks: readonly CheckDef<InventoryFacts>[] = [
  osCheck,
  cpuMemCheck,
  nicsCheck,
  gpusCheck,
  pcieCheck,
  netdevsCheck,
  mgmtCheck,
  rdmaCheck,
  linksCheck,
  topologyCheck,
  stackCheck,
  pairHardwareCheck,
  distinctHostsCheck,
  cablingCheck,
];
