/**
 * /sys rendered from the model: the PCI device hierarchy under /sys/devices/pci0000:XX (so
 * `readlink -f /sys/bus/pci/devices/<bdf>` yields the bridges above a device), bus/class
 * symlinks, netdev and RDMA attributes. Attribute formats follow the kernel's show() functions
 * (e.g. `current_link_speed` = "16.0 GT/s PCIe", unreadable `carrier`/`speed` on a down link).
 *
 * `/sys/class/net/<if>/statistics/*` (net-sysfs.c's NETSTAT group, one decimal per file) are the
 * kernel's rtnl_link_stats64: for mlx5 what mlx5e_get_stats folds from the driver's software and port
 * counters (the `ethtool -S` names below), for a bond the sum of its slaves (bond_get_stats), for other
 * devices the same-named ethtool counters. RDMA bypasses the kernel, so RoCE traffic moves the RDMA
 * counters (`ports/1/counters`, the vport_rdma ethtool counters) and not these; they carry only what
 * the kernel sends, which in the lab is near idle. Traffic in flight is settled before every read.
 *
 * `/sys/class/net/<if>/device` is the port's PCI function, so `device/infiniband/<dev>` lists the
 * RDMA device registered on that function: each PF's own, and for a RoCE LAG `mlx5_bond_N` under the
 * first PF only (mlx5_ib registers the LAG device on the master PF; the second PF has none).
 */
import { posix } from 'node:path';
import { sysfsDevicePath } from '../model/pci-topology.js';
import type { Machine, NetDev, PciFunction, RdmaDevice } from '../model/types.js';
import { dir, file, link, text, vfsError, type VDir, type VNode } from './vfs.js';
import { rdmaPortEntries } from './rdma-sysfs.js';
import { ethtoolCounter } from '../model/rdma.js';
import { settleTraffic } from '../model/traffic.js';

const hex = (n: number, w: number): string => `0x${n.toString(16).padStart(w, '0')}`;
const SPEEDS = ['', '2.5 GT/s PCIe', '5.0 GT/s PCIe', '8.0 GT/s PCIe', '16.0 GT/s PCIe', '32.0 GT/s PCIe'];

export function numaCpuList(m: Machine, node: number): string {
  const cores = m.cpu.coresPerSocket;
  const total = cores * m.cpu.sockets;
  const ranges: string[] = [];
  for (let t = 0; t < m.cpu.threadsPerCore; t++) {
    const first = t * total + node * cores;
    ranges.push(`${first}-${first + cores - 1}`);
  }
  return ranges.join(',');
}

function cpuMask(m: Machine, node: number): string {
  // 128 CPUs → four 32-bit words, most significant first, as the kernel's bitmap_print_to_pagebuf.
  const total = m.cpu.coresPerSocket * m.cpu.sockets * m.cpu.threadsPerCore;
  const bits = new Array<boolean>(total).fill(false);
  for (const r of numaCpuList(m, node).split(',')) {
    const [a, b] = r.split('-').map(Number);
    for (let i = a ?? 0; i <= (b ?? a ?? 0); i++) bits[i] = true;
  }
  const words: string[] = [];
  for (let w = Math.ceil(total / 32) - 1; w >= 0; w--) {
    let v = 0;
    for (let i = 0; i < 32; i++) if (bits[w * 32 + i]) v |= 1 << i;
    words.push((v >>> 0).toString(16).padStart(8, '0'));
  }
  return words.join(',');
}

/** The rtnl_link_stats64 fields net-sysfs exposes, in its attribute order. */
const NETSTAT = [
  'rx_packets',
  'tx_packets',
  'rx_bytes',
  'tx_bytes',
  'rx_errors',
  'tx_errors',
  'rx_dropped',
  'tx_dropped',
  'multicast',
  'collisions',
  'rx_length_errors',
  'rx_over_errors',
  'rx_crc_errors',
  'rx_frame_errors',
  'rx_fifo_errors',
  'rx_missed_errors',
  'tx_aborted_errors',
  'tx_carrier_errors',
  'tx_fifo_errors',
  'tx_heartbeat_errors',
  'tx_window_errors',
  'rx_compressed',
  'tx_compressed',
  'rx_nohandler',
] as const;

/** mlx5e_get_stats: which driver counters each kernel statistic comes from (unlisted ones stay 0). */
const MLX5_NETSTAT: Partial<Record<(typeof NETSTAT)[number], readonly string[]>> = {
  rx_packets: ['rx_packets'],
  tx_packets: ['tx_packets'],
  rx_bytes: ['rx_bytes'],
  tx_bytes: ['tx_bytes'],
  rx_dropped: ['rx_out_of_buffer'],
  tx_dropped: ['tx_queue_dropped'],
  rx_length_errors: ['rx_in_range_len_errors_phy', 'rx_out_of_range_len_phy', 'rx_oversize_pkts_phy'],
  rx_crc_errors: ['rx_crc_errors_phy'],
  tx_aborted_errors: ['tx_discards_phy'],
  rx_errors: ['rx_in_range_len_errors_phy', 'rx_out_of_range_len_phy', 'rx_oversize_pkts_phy', 'rx_crc_errors_phy'],
  tx_errors: ['tx_discards_phy'],
  multicast: ['rx_vport_multicast_packets'],
};

function netStat(m: Machine, dev: NetDev, name: (typeof NETSTAT)[number]): number {
  if (dev.bond) {
    return dev.bond.slaves.reduce((sum, s) => {
      const slave = m.netdevs.find((x) => x.name === s);
      return sum + (slave ? netStat(m, slave, name) : 0);
    }, 0);
  }
  const from = dev.driver === 'mlx5_core' ? (MLX5_NETSTAT[name] ?? []) : [name];
  return from.reduce((sum, c) => sum + ethtoolCounter(m, dev.name, c), 0);
}

function statisticsDir(m: Machine, dev: NetDev): VDir {
  return dir(() =>
    Object.fromEntries(
      NETSTAT.map((n) => [
        n,
        file(() => {
          settleTraffic(m);
          return `${netStat(m, dev, n)}\n`;
        }, 0o444),
      ]),
    ),
  );
}

/** Relative symlink from the directory `fromDir` to `target` (both absolute, under /sys). */
const rel = (fromDir: string, target: string): VNode => link(posix.relative(fromDir, target));

function netdevDir(m: Machine, dev: NetDev, selfDir: string, deviceDir?: string): VDir {
  const up = (): boolean => dev.adminUp;
  const carrier = (): boolean => m.carrier(dev.name);
  const einval = (name: string) => (): string => {
    throw vfsError('EINVAL', 'read', `${selfDir}/${name}`);
  };
  return dir(() => {
    const e: Record<string, VNode> = {
      address: file(() => `${dev.mac}\n`),
      addr_len: text('6\n'),
      broadcast: text(dev.linkType === 'loopback' ? '00:00:00:00:00:00\n' : 'ff:ff:ff:ff:ff:ff\n'),
      carrier: file(() => (up() ? `${carrier() ? 1 : 0}\n` : einval('carrier')())),
      dormant: text('0\n'),
      duplex: file(() =>
        up() && carrier() ? 'full\n' : dev.linkType === 'loopback' ? einval('duplex')() : 'unknown\n',
      ),
      flags: file(() => hex((up() ? 0x1 : 0) | (dev.linkType === 'loopback' ? 0x8 : 0x1002), 4) + '\n'),
      ifalias: text('\n'),
      ifindex: text(`${dev.ifindex}\n`),
      iflink: text(`${dev.ifindex}\n`),
      mtu: file(() => `${dev.mtu}\n`),
      operstate: file(() => (dev.linkType === 'loopback' ? 'unknown\n' : up() && carrier() ? 'up\n' : 'down\n')),
      speed: file(() => (up() ? (carrier() ? `${dev.linkSpeedMbps ?? -1}\n` : '-1\n') : einval('speed')())),
      tx_queue_len: file(() => `${dev.txqlen}\n`),
      type: text(dev.linkType === 'loopback' ? '772\n' : '1\n'),
      subsystem: rel(selfDir, '/sys/class/net'),
      statistics: statisticsDir(m, dev),
    };
    if (deviceDir) e.device = rel(selfDir, deviceDir);
    return e;
  });
}

function rdmaDir(m: Machine, r: RdmaDevice, selfDir: string, deviceDir: string): VDir {
  const fmtGuid = (g: string): string => g.match(/.{4}/g)?.join(':') ?? g;
  const active = (): boolean => m.carrier(r.netdev);
  return dir(() => ({
    board_id: text(`${r.boardId}\n`),
    fw_ver: text(`${(m.netdevs.find((d) => d.name === r.netdev)?.firmware ?? '').split(' ')[0] ?? ''}\n`),
    hca_type: text(`${r.hcaType}\n`),
    hw_rev: text('0x0\n'),
    node_desc: text(`${m.hostname} ${r.name}\n`),
    node_guid: text(`${fmtGuid(r.nodeGuid)}\n`),
    node_type: text('1: CA\n'),
    sys_image_guid: text(`${fmtGuid(r.sysImageGuid)}\n`),
    device: rel(selfDir, deviceDir),
    ports: dir(() => ({
      [String(r.port)]: dir(() => ({
        state: file(() => (active() ? '4: ACTIVE\n' : '1: DOWN\n')),
        phys_state: file(() => (active() ? '5: LinkUp\n' : '3: Disabled\n')),
        link_layer: text('Ethernet\n'),
        rate: file(() => (active() ? '25 Gb/sec (1X EDR)\n' : '40 Gb/sec (4X QDR)\n')),
        lid: text('0x0\n'),
        sm_lid: text('0x0\n'),
        lid_mask_count: text('0\n'),
        cap_mask: text('0x00010000\n'),
        ...rdmaPortEntries(m, r, `${selfDir}/ports/${r.port}`),
      })),
    })),
  }));
}

function pciDir(m: Machine, p: PciFunction, path: string): VDir {
  const driverDir = p.driver ? `/sys/bus/pci/drivers/${p.driver}` : undefined;
  return dir(() => {
    const e: Record<string, VNode> = {
      vendor: text(`${hex(p.vendorId, 4)}\n`),
      device: text(`${hex(p.deviceId, 4)}\n`),
      subsystem_vendor: text(`${hex(p.subVendorId, 4)}\n`),
      subsystem_device: text(`${hex(p.subDeviceId, 4)}\n`),
      class: text(`${hex(p.classCode, 6)}\n`),
      revision: text(`${hex(p.revision, 2)}\n`),
      numa_node: text(`${p.numaNode}\n`),
      local_cpulist: text(`${numaCpuList(m, p.numaNode)}\n`),
      local_cpus: text(`${cpuMask(m, p.numaNode)}\n`),
      irq: text(`${p.irq}\n`),
      enable: text('1\n'),
      subsystem: rel(path, '/sys/bus/pci'),
    };
    if (p.link) {
      e.current_link_speed = text(`${SPEEDS[p.link.staGen]}\n`);
      e.current_link_width = text(`${p.link.staWidth}\n`);
      e.max_link_speed = text(`${SPEEDS[p.link.capGen]}\n`);
      e.max_link_width = text(`${p.link.capWidth}\n`);
    }
    if (p.bridge) {
      e.secondary_bus_number = text(`${p.bridge.secondary}\n`);
      e.subordinate_bus_number = text(`${p.bridge.subordinate}\n`);
    }
    if (driverDir) e.driver = rel(path, driverDir);
    for (const child of m.pci.filter((c) => c.parent === p.bdf))
      e[child.bdf] = pciDir(m, child, `${path}/${child.bdf}`);
    const nets = m.netdevs.filter((d) => d.pci === p.bdf);
    if (nets.length > 0) {
      e.net = dir(() => Object.fromEntries(nets.map((d) => [d.name, netdevDir(m, d, `${path}/net/${d.name}`, path)])));
    }
    const ibs = m.rdma.filter((r) => r.pci === p.bdf);
    if (ibs.length > 0) {
      e.infiniband = dir(() =>
        Object.fromEntries(ibs.map((r) => [r.name, rdmaDir(m, r, `${path}/infiniband/${r.name}`, path)])),
      );
    }
    return e;
  });
}

export function buildSysfs(m: Machine): VDir {
  const devPath = (bdf: string): string => sysfsDevicePath(m.pci, bdf);
  const roots = [...new Set(m.pci.map((p) => p.rootBus))];
  const numaNodes = [...new Set(m.pci.map((p) => p.numaNode))].sort();
  const drivers = [...new Set(m.pci.flatMap((p) => (p.driver ? [p.driver] : [])))].sort();
  const netPath = (d: NetDev): string =>
    d.pci ? `${devPath(d.pci)}/net/${d.name}` : `/sys/devices/virtual/net/${d.name}`;
  const allCpus = `0-${m.cpu.sockets * m.cpu.coresPerSocket * m.cpu.threadsPerCore - 1}`;

  return dir(() => ({
    devices: dir(() => {
      const e: Record<string, VNode> = {};
      for (const rb of roots) {
        const base = `/sys/devices/${rb}`;
        e[rb] = dir(() =>
          Object.fromEntries(
            m.pci.filter((p) => p.rootBus === rb && !p.parent).map((p) => [p.bdf, pciDir(m, p, `${base}/${p.bdf}`)]),
          ),
        );
      }
      e.virtual = dir(() => ({
        net: dir(() =>
          Object.fromEntries(m.netdevs.filter((d) => !d.pci).map((d) => [d.name, netdevDir(m, d, netPath(d))])),
        ),
      }));
      e.system = dir(() => ({
        node: dir(() => ({
          online: text(`0-${numaNodes.length - 1}\n`),
          possible: text(`0-${numaNodes.length - 1}\n`),
          ...Object.fromEntries(
            numaNodes.map((n) => [`node${n}`, dir(() => ({ cpulist: text(`${numaCpuList(m, n)}\n`) }))]),
          ),
        })),
        cpu: dir(() => ({
          online: text(`${allCpus}\n`),
          possible: text(`${allCpus}\n`),
          present: text(`${allCpus}\n`),
        })),
      }));
      return e;
    }),
    bus: dir(() => ({
      pci: dir(() => ({
        devices: dir(() => Object.fromEntries(m.pci.map((p) => [p.bdf, rel('/sys/bus/pci/devices', devPath(p.bdf))]))),
        drivers: dir(() =>
          Object.fromEntries(
            drivers.map((drv) => [
              drv,
              dir(() =>
                Object.fromEntries(
                  m.pci
                    .filter((p) => p.driver === drv)
                    .map((p) => [p.bdf, rel(`/sys/bus/pci/drivers/${drv}`, devPath(p.bdf))]),
                ),
              ),
            ]),
          ),
        ),
        slots: dir(() =>
          Object.fromEntries(
            m.pci
              .filter((p) => p.slot !== undefined && p.bdf.endsWith('.0'))
              .map((p) => [String(p.slot), dir(() => ({ address: text(`${p.bdf.slice(0, -2)}\n`) }))]),
          ),
        ),
      })),
    })),
    class: dir(() => ({
      net: dir(() => Object.fromEntries(m.netdevs.map((d) => [d.name, rel('/sys/class/net', netPath(d))]))),
      infiniband: dir(() =>
        Object.fromEntries(
          m.rdma.map((r) => [r.name, rel('/sys/class/infiniband', `${devPath(r.pci)}/infiniband/${r.name}`)]),
        ),
      ),
    })),
    module: dir(() => Object.fromEntries(m.modules.map((mod) => [mod, dir(() => ({ initstate: text('live\n') }))]))),
    kernel: dir(() => ({})),
    firmware: dir(() => ({})),
  }));
}
