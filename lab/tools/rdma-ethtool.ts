/**
 * `rdma` (iproute2 5.15 rdma/link.c: every `key value` followed by a space, as in the corpus
 * samples) and `ethtool` 5.16 (netlink output order linkmodes → linkinfo → wol → debug → link
 * state, FEC lists TAB-separated, the message-level line indented with 8 spaces; a non-root WOL
 * query fails with `netlink error: Operation not permitted`). ConnectX-4 Lx link modes are the
 * real MCX4121A list (corpus sample on CentOS); `ethtool -i` on the inbox 5.15 driver reports the
 * kernel release as version (source-derived: ethtool core fills drvinfo->version).
 */
import type { Machine, NetDev } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import { mlx5LoadedVersion } from '../model/nic-stack.js';
import { ethtoolStatistics } from './ethtool-stats.js';
import type { Tool } from './types.js';

function rdmaState(m: Machine, netdev: string): [string, string] {
  return m.carrier(netdev) ? ['ACTIVE', 'LINK_UP'] : ['DOWN', 'DISABLED'];
}

export const rdma: Tool = {
  name: 'rdma',
  path: '/usr/sbin/rdma',
  packages: ['iproute2'],
  run(args, { machine: m }) {
    let json = false;
    let i = 0;
    for (; i < args.length && (args[i] as string).startsWith('-'); i++) {
      const a = args[i] as string;
      if (a === '-j' || a === '-json' || a === '--json') json = true;
      else if (a === '-d' || a === '-details' || a === '-p' || a === '-pretty') continue;
      else return fail(1, `Option "${a}" is unknown, try "rdma -help".\n`);
    }
    const obj = args[i] ?? '';
    const rest = args.slice(i + 1).filter((a) => a !== 'show' && a !== 'list');
    const sel = rest[0];
    if ('link'.startsWith(obj) && obj !== '') {
      const links = m.rdma.filter((r) => !sel || sel === r.name || sel === `${r.name}/${r.port}`);
      if (sel && links.length === 0) return fail(1, 'Wrong device name\n');
      if (json) {
        return ok(
          `${JSON.stringify(
            links.map((r, idx) => {
              const [state, phys] = rdmaState(m, r.netdev);
              const nd = m.netdevs.find((d) => d.name === r.netdev);
              return {
                ifindex: idx,
                ifname: r.name,
                port: r.port,
                state,
                physical_state: phys,
                netdev: r.netdev,
                netdev_index: nd?.ifindex ?? 0,
              };
            }),
          )}\n`,
        );
      }
      return ok(
        links
          .map((r) => {
            const [state, phys] = rdmaState(m, r.netdev);
            return `link ${r.name}/${r.port} state ${state} physical_state ${phys} netdev ${r.netdev} \n`;
          })
          .join(''),
      );
    }
    if ('dev'.startsWith(obj) && obj !== '') {
      const devs = m.rdma.filter((r) => !sel || sel === r.name);
      const fw = (r: (typeof devs)[number]): string =>
        (m.netdevs.find((d) => d.name === r.netdev)?.firmware ?? '').split(' ')[0] ?? '';
      const g = (s: string): string => s.match(/.{4}/g)?.join(':') ?? s;
      if (json)
        return ok(
          `${JSON.stringify(devs.map((r, idx) => ({ ifindex: idx, ifname: r.name, node_type: 'ca', fw: fw(r), node_guid: g(r.nodeGuid), sys_image_guid: g(r.sysImageGuid) })))}\n`,
        );
      return ok(
        devs
          .map(
            (r, idx) =>
              `${idx}: ${r.name}: node_type ca fw ${fw(r)} node_guid ${g(r.nodeGuid)} sys_image_guid ${g(r.sysImageGuid)} \n`,
          )
          .join(''),
      );
    }
    if (obj === '') return fail(1, 'Usage: rdma [ OPTIONS ] OBJECT { COMMAND | help }\n');
    return fail(1, `Object "${obj}" is unknown, try "rdma help".\n`);
  },
};

const CX4LX_MODES = ['1000baseKX/Full', '10000baseKR/Full', '25000baseCR/Full', '25000baseKR/Full', '25000baseSR/Full'];
const I210_MODES = ['10baseT/Half', '10baseT/Full', '100baseT/Half', '100baseT/Full', '1000baseT/Full'];

/** ethtool groups a /Full mode on the line of its /Half sibling; every other mode gets its own line. */
function modeLines(label: string, modes: readonly string[]): string {
  const pad = ' '.repeat(label.length);
  const lines: string[] = [];
  for (const mode of modes) {
    const prev = lines[lines.length - 1];
    if (prev !== undefined && mode.endsWith('/Full') && prev.endsWith(mode.replace('/Full', '/Half')))
      lines[lines.length - 1] = `${prev} ${mode}`;
    else lines.push(mode);
  }
  return lines.map((l, i) => `\t${i === 0 ? label : pad}${l}\n`).join('');
}

const MSG_LEVEL_NAMES = ['drv', 'probe', 'link', 'timer', 'ifdown', 'ifup', 'rx_err', 'tx_err'];

function settings(m: Machine, d: NetDev, root: boolean): { stdout: string; stderr: string } {
  let s = `Settings for ${d.name}:\n`;
  let stderr = '';
  const up = d.adminUp && m.carrier(d.name);
  if (d.linkType === 'loopback') return { stdout: `${s}\tLink detected: ${d.adminUp ? 'yes' : 'no'}\n`, stderr };
  if (d.phy === 'cx4lx-sfp28') {
    s += '\tSupported ports: [ FIBRE ]\n';
    s += modeLines('Supported link modes:   ', CX4LX_MODES);
    s +=
      '\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: Yes\n\tSupported FEC modes: None\t RS\t BASER\n';
    s += modeLines('Advertised link modes:  ', CX4LX_MODES);
    s += '\tAdvertised pause frame use: Symmetric\n\tAdvertised auto-negotiation: Yes\n';
    s += `\tAdvertised FEC modes: ${up ? 'RS' : 'Not reported'}\n`;
    s += up ? `\tSpeed: ${d.linkSpeedMbps}Mb/s\n\tDuplex: Full\n` : '\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n';
    s += '\tAuto-negotiation: on\n\tPort: Direct Attach Copper\n\tPHYAD: 0\n\tTransceiver: internal\n';
    if (root) s += '\tSupports Wake-on: d\n\tWake-on: d\n';
  } else {
    s += '\tSupported ports: [ TP ]\n';
    s += modeLines('Supported link modes:   ', I210_MODES);
    s +=
      '\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: Yes\n\tSupported FEC modes: Not reported\n';
    s += modeLines('Advertised link modes:  ', I210_MODES);
    s +=
      '\tAdvertised pause frame use: Symmetric\n\tAdvertised auto-negotiation: Yes\n\tAdvertised FEC modes: Not reported\n';
    s += up ? `\tSpeed: ${d.linkSpeedMbps}Mb/s\n\tDuplex: Full\n` : '\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n';
    s += '\tAuto-negotiation: on\n\tPort: Twisted Pair\n\tPHYAD: 1\n\tTransceiver: internal\n\tMDI-X: off (auto)\n';
    if (root) s += '\tSupports Wake-on: pumbg\n\tWake-on: g\n';
  }
  if (!root) stderr += 'netlink error: Operation not permitted\n';
  const lvl = d.msgLevel ?? 0;
  const names = MSG_LEVEL_NAMES.filter((_, i) => lvl & (1 << i)).join(' ');
  s += `        Current message level: 0x${lvl.toString(16).padStart(8, '0')} (${lvl})\n                               ${names}\n`;
  s += `\tLink detected: ${up ? 'yes' : 'no'}\n`;
  return { stdout: s, stderr };
}

function driverInfo(m: Machine, d: NetDev): string {
  return [
    `driver: ${d.driver ?? ''}`,
    // An OFED's mlx5_core reports its release (corpus ethtool-i__cx7-mofed-23.10.txt); in-tree drivers the kernel's.
    `version: ${d.driver === 'mlx5_core' ? mlx5LoadedVersion(m) : d.driver === 'igb' ? m.os.kernelRelease : ''}`,
    `firmware-version: ${d.firmware ?? ''}`,
    'expansion-rom-version: ',
    `bus-info: ${d.pci ?? ''}`,
    'supports-statistics: yes',
    'supports-test: yes',
    `supports-eeprom-access: ${d.driver === 'igb' ? 'yes' : 'no'}`,
    `supports-register-dump: ${d.driver === 'igb' ? 'yes' : 'no'}`,
    `supports-priv-flags: ${d.driver === 'mlx5_core' ? 'yes' : 'yes'}`,
    '',
  ].join('\n');
}

export const ethtool: Tool = {
  name: 'ethtool',
  path: '/usr/sbin/ethtool',
  packages: ['ethtool'],
  run(args, { machine: m, root }) {
    const flag = args[0]?.startsWith('-') ? args[0] : undefined;
    const ifname = flag ? args[1] : args[0];
    if (ifname === undefined)
      return fail(1, 'ethtool: bad command line argument(s)\nFor more information run ethtool -h\n');
    const dev = m.netdevs.find((d) => d.name === ifname);
    if (flag === '-i' || flag === '--driver') {
      if (!dev) return fail(71, 'Cannot get driver information: No such device\n');
      if (dev.linkType === 'loopback') return fail(71, 'Cannot get driver information: Operation not supported\n');
      return ok(driverInfo(m, dev));
    }
    if (flag === '-S' || flag === '--statistics') return ethtoolStatistics(m, ifname);
    if (flag !== undefined)
      return fail(1, `ethtool: bad command line argument(s)\nFor more information run ethtool -h\n`);
    if (!dev) return fail(1, 'netlink error: no device matches name (offset 24)\nnetlink error: No such device\n');
    const r = settings(m, dev, root);
    return { stdout: r.stdout, stderr: r.stderr, exitCode: 0 };
  },
};
