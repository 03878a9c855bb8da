/**
 * The RDMA userspace tools the nic-stack stage reads (docs/STAGES.md §3.3):
 *
 * - `ofed_info` (MLNX_OFED/DOCA `ofed-scripts`): `-s` → `MLNX_OFED_LINUX-23.10-1.1.9.0:` (corpus
 *   ofed_info-s__*), DOCA-OFED → `OFED-internal-24.10-1.1.4:`; `-n` the bare version.
 * - `ibv_devices` (rdma-core libibverbs/examples/device_list.c): 4 spaces, name padded to 16, TAB,
 *   the 16-hex-digit node GUID (corpus ibv_devices__cx4lx-4dev-raw-tabs.txt).
 * - `ibv_devinfo [-d DEV] [-i PORT] [-l]` (devinfo.c): device fields TAB-aligned as in the corpus
 *   sample ofed_info-s__command-not-found-plus-ibv_devinfo-vv…; the port block's layout follows
 *   devinfo.c (source-derived: no complete Ethernet-port sample in the corpus). Known gap: `-v`
 *   prints the same fields (its extra capability lines and GID list are not modelled; show_gids and
 *   /sys/class/infiniband carry the GIDs).
 * - `ibdev2netdev [-v]` (MLNX_OFED mlnx-ofed-kernel-utils script; corpus ibdev2netdev__*,
 *   ibdev2netdev-v__cx4-sriov-…): `mlx5_0 port 1 ==> ens1f0 (Up)`.
 *
 * /etc/init.d/openibd is not a tool but a script file (model/nic-stack.ts OPENIBD_SCRIPT) that
 * reloads the driver stack with modprobe; tools/ofed-driver.ts makes the reload rename devices and
 * drop the driver's runtime state.
 */
import type { Machine, RdmaDevice } from '../model/types.js';
import { installedOfed } from '../model/nic-stack.js';
import { activeMtu, rdmaPortState } from '../model/rdma.js';
import { fail, getopt, has, ok, value } from '../shell/args.js';
import type { Tool } from './types.js';
// The driver's reactions to loads, unloads and reboots (renaming, runtime state) come with its tools.
import './ofed-driver.js';

/** `ofed_info` names the bundle differently per flavour; DOCA reports the OFED tree it was built from. */
function ofedHeader(flavor: 'mlnx_ofed' | 'doca', version: string, short: boolean): string {
  if (flavor === 'doca') return `OFED-internal-${version}:`;
  return short ? `MLNX_OFED_LINUX-${version}:` : `MLNX_OFED_LINUX-${version} (OFED-${version.replace(/\.0$/, '')}):`;
}

export const ofedInfo: Tool = {
  name: 'ofed_info',
  path: '/usr/bin/ofed_info',
  packages: ['ofed-scripts'],
  run(args, { machine: m }) {
    const o = installedOfed(m);
    if (!o) return fail(1, 'ofed_info: no OFED installation found\n');
    if (args.includes('-s')) return ok(`${ofedHeader(o.flavor, o.version, true)}\n`);
    if (args.includes('-n')) return ok(`${o.version}\n`);
    const pkgs = [...m.packages.values()]
      .filter((p) => /mlnx|ofed|2307mlnx|OFED/.test(`${p.name} ${p.version}`))
      .sort((a, b) => a.name.localeCompare(b.name));
    const lines = pkgs.map((p) => `ii  ${p.name.padEnd(30)} ${p.version.padEnd(40)} ${p.arch}`);
    return ok(
      `${ofedHeader(o.flavor, o.version, false)}\n\nInstalled Packages:\n-------------------\n${lines.join('\n')}\n`,
    );
  },
};

/** RDMA devices in the order libibverbs enumerates them (sysfs order: by name). */
function devices(m: Machine): RdmaDevice[] {
  return [...m.rdma].sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
}

export const ibvDevices: Tool = {
  name: 'ibv_devices',
  path: '/usr/bin/ibv_devices',
  packages: ['ibverbs-utils'],
  run(_args, { machine: m }) {
    const rows = devices(m).map((r) => `    ${r.name.padEnd(16)}\t${r.nodeGuid}\n`);
    return ok(
      `    ${'device'.padEnd(16)}\t   node GUID\n    ${'------'.padEnd(16)}\t----------------\n${rows.join('')}`,
    );
  },
};

/** `b8599f0300d6c2f0` → `b859:9f03:00d6:c2f0` (devinfo.c guid_str). */
const guidStr = (g: string): string => g.match(/.{4}/g)?.join(':') ?? g;

function devinfo(m: Machine, r: RdmaDevice): string {
  const nd = m.netdevs.find((d) => d.name === r.netdev);
  const pci = m.pci.find((p) => p.bdf === r.pci);
  const fw = (nd?.firmware ?? '').split(' ')[0] ?? '';
  const st = rdmaPortState(m, r);
  const mtu = activeMtu(m, r);
  return [
    `hca_id:\t${r.name}`,
    '\ttransport:\t\t\tInfiniBand (0)',
    `\tfw_ver:\t\t\t\t${fw}`,
    `\tnode_guid:\t\t\t${guidStr(r.nodeGuid)}`,
    `\tsys_image_guid:\t\t\t${guidStr(r.sysImageGuid)}`,
    '\tvendor_id:\t\t\t0x02c9',
    `\tvendor_part_id:\t\t\t${pci?.deviceId ?? 4117}`,
    '\thw_ver:\t\t\t\t0x0',
    `\tboard_id:\t\t\t${r.boardId}`,
    '\tphys_port_cnt:\t\t\t1',
    `\t\tport:\t${r.port}`,
    `\t\t\tstate:\t\t\tPORT_${st.state} (${st.stateCode})`,
    '\t\t\tmax_mtu:\t\t4096 (5)',
    `\t\t\tactive_mtu:\t\t${mtu.bytes} (${mtu.code})`,
    '\t\t\tsm_lid:\t\t\t0',
    '\t\t\tport_lid:\t\t0',
    '\t\t\tport_lmc:\t\t0x00',
    '\t\t\tlink_layer:\t\tEthernet',
    '',
    '',
  ].join('\n');
}

export const ibvDevinfo: Tool = {
  name: 'ibv_devinfo',
  path: '/usr/bin/ibv_devinfo',
  packages: ['ibverbs-utils'],
  run(args, { machine: m }) {
    const p = getopt(args, 'd:i:lvhg:', {
      'ib-dev': true,
      'ib-port': true,
      list: false,
      verbose: false,
      help: false,
      gid: true,
    });
    if (p.error || has(p, 'h', 'help')) {
      const usage =
        'Usage: ibv_devinfo             print the ca attributes\n\nOptions:\n  -d, --ib-dev=<dev>     use IB device <dev> (default first device found)\n  -i, --ib-port=<port>   use port <port> of IB device (default all ports)\n  -l, --list             print only the IB devices names\n  -v, --verbose          print all the attributes of the IB device(s)\n';
      return p.error
        ? fail(255, `ibv_devinfo: unrecognized option '${args.find((a) => a.startsWith('-')) ?? ''}'\n${usage}`)
        : ok(usage);
    }
    const list = devices(m);
    if (has(p, 'l', 'list'))
      return ok(
        `${list.length} HCA${list.length === 1 ? '' : 's'} found:\n${list.map((r) => `\t${r.name}\n`).join('')}`,
      );
    if (list.length === 0) return fail(255, 'No IB devices found\n');
    const want = value(p, 'd', 'ib-dev');
    if (want !== undefined) {
      const r = list.find((x) => x.name === want);
      return r ? ok(devinfo(m, r)) : fail(255, `IB device '${want}' wasn't found\n`);
    }
    return ok(list.map((r) => devinfo(m, r)).join(''));
  },
};

export const ibdev2netdev: Tool = {
  name: 'ibdev2netdev',
  path: '/usr/bin/ibdev2netdev',
  packages: ['mlnx-ofed-kernel-utils'],
  run(args, { machine: m }) {
    const verbose = args.includes('-v');
    const lines = devices(m).map((r) => {
      const nd = m.netdevs.find((d) => d.name === r.netdev);
      const up = m.carrier(r.netdev);
      const link = up ? 'Up' : 'Down';
      if (!verbose) return `${r.name} port ${r.port} ==> ${r.netdev} (${link})`;
      const fw = (nd?.firmware ?? '').split(' ')[0] ?? '';
      // The script prints the board id (PSID) from sysfs and the VPD product name lspci reports.
      return `${r.pci} ${r.name} (${r.hcaType} - ${r.boardId}) CX4121A - ConnectX-4 LX SFP28 fw ${fw} port ${r.port} (${(up ? 'ACTIVE' : 'DOWN').padEnd(6)}) ==> ${r.netdev} (${link})`;
    });
    return ok(lines.map((l) => `${l}\n`).join(''));
  },
};

export const OFED_TOOLS: readonly Tool[] = [ofedInfo, ibvDevices, ibvDevinfo, ibdev2netdev];
