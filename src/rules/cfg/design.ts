/**
 * The network design the supplied netplan files describe (docs/STAGES.md §2): A (one subnet per cable, no bond on
 * RDMA ports), B (one RoCE-LAG bond per dual-port NIC), tutorial (one bond over ports of several NICs), or
 * none (no fabric in the files). Static only: names stand in for PCI functions (`ens1f0`/`ens1f1` are the two
 * functions of one device), which the live checks confirm through sysfs.
 */
import type { NetplanDevice } from '../../parse/netplan-yaml.js';
import { allDevices, ipv4Net, mgmtDevices } from './context.js';
import type { CfgContext, CfgFile } from './context.js';

export interface Design {
  kind: 'A' | 'B' | 'tutorial' | 'other' | 'none';
  /** Fabric ports (non-management ethernets that carry addresses or are bond slaves), in file order. */
  ports: string[];
  /** Bonds holding a fabric address. */
  bonds: Array<{ file: CfgFile; d: NetplanDevice }>;
  /** The control netdev: cable 1's port (design A) or the first bond. */
  control?: string;
  /** This host's index (last octet of the control address), when known. */
  hostIndex?: number;
}

/** `ens1f0` → {device: 'ens1', fn: 0}; `enp65s0f1np1` → {device: 'enp65s0', fn: 1}. */
export function pciFunction(name: string): { device: string; fn: number } | undefined {
  const m = /^(.+?)f(\d+)(?:np\d+)?$/.exec(name);
  return m ? { device: m[1] as string, fn: Number(m[2]) } : undefined;
}

/** A RoCE LAG forms only from exactly the two PFs of one device in mode 1, 2 or 4. */
export function lagProblems(bond: NetplanDevice): string[] {
  const out: string[] = [];
  const fns = bond.interfaces.map(pciFunction);
  const devices = new Set(fns.map((f, i) => f?.device ?? bond.interfaces[i]));
  if (bond.interfaces.length !== 2)
    out.push(
      `${bond.interfaces.length} slaves on ${devices.size} PCI device${devices.size === 1 ? '' : 's'} (${[...devices].map((d) => `${d}f*`).join(', ')}); a LAG needs exactly the 2 PFs of one device`,
    );
  else if (devices.size !== 1 || fns.some((f) => !f))
    out.push(`slaves ${bond.interfaces.join(' + ')} are not the two functions of one PCI device`);
  const mode = String(bond.mode ?? 'balance-rr');
  if (!['active-backup', 'balance-xor', '802.3ad', '1', '2', '4'].includes(mode))
    out.push(`mode ${mode} (a LAG needs active-backup, balance-xor or 802.3ad)`);
  return out;
}

export function designOf(ctx: CfgContext): Design {
  const mgmt = mgmtDevices(ctx);
  const devs = allDevices(ctx);
  const slaves = new Set(devs.filter(({ d }) => d.type === 'bond').flatMap(({ d }) => d.interfaces));
  const ports = [
    ...new Set(
      devs
        .filter(({ d }) => d.type === 'ethernet' && !mgmt.has(d.name) && (d.addresses.length > 0 || slaves.has(d.name)))
        .map(({ d }) => d.name),
    ),
  ];
  const bonds = devs.filter(({ d }) => d.type === 'bond' && d.addresses.length > 0 && !mgmt.has(d.name));
  const hostOf = (d: NetplanDevice): number | undefined => {
    const a = d.addresses.map(ipv4Net).find(Boolean);
    return a ? a.ip & 0xff : undefined;
  };
  if (bonds.length > 0) {
    const lag = bonds.every(({ d }) => lagProblems(d).length === 0);
    const first = bonds[0]?.d as NetplanDevice;
    const kind = lag
      ? 'B'
      : first.interfaces.length === 4 && String(first.mode) === 'balance-xor'
        ? 'tutorial'
        : 'other';
    const h = hostOf(first);
    return { kind, ports, bonds, control: first.name, ...(h !== undefined ? { hostIndex: h } : {}) };
  }
  // per netplan file (one host's view): several addressed fabric ports, each in its own subnet
  let addressed: NetplanDevice[] = [];
  for (const file of ctx.files) {
    const mine = devs
      .filter(({ file: f, d }) => f === file && d.type === 'ethernet' && !mgmt.has(d.name) && d.addresses.length > 0)
      .map(({ d }) => d);
    const nets = new Set(mine.flatMap((d) => d.addresses.map((a) => ipv4Net(a)?.net)));
    if (mine.length >= 2 && nets.size >= mine.length) {
      addressed = mine;
      break;
    }
  }
  if (addressed.length >= 2) {
    const c1 = addressed.find((d) => d.addresses.some((a) => a.startsWith('192.168.101.'))) ?? addressed[0];
    const h = c1 ? hostOf(c1) : undefined;
    return {
      kind: 'A',
      ports,
      bonds,
      ...(c1 ? { control: c1.name } : {}),
      ...(h !== undefined ? { hostIndex: h } : {}),
    };
  }
  return { kind: ports.length > 0 ? 'other' : 'none', ports, bonds };
}

/** The four fabric ports to name in fixes: from the files, else the tutorial's names. */
export function fabricPorts(ctx: CfgContext): string[] {
  const d = designOf(ctx);
  const fromBonds = d.bonds.flatMap(({ d: b }) => b.interfaces);
  const ports = [...new Set([...d.ports, ...fromBonds])];
  return ports.length > 0 ? ports : ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'];
}

/** Design A netplan for this host, with the files' port names (docs/STAGES.md §3.4). */
export function designAYaml(ctx: CfgContext): string {
  const host = designOf(ctx).hostIndex ?? 1;
  const ports = fabricPorts(ctx).slice(0, 4);
  // Per-device renderer (a top-level one would also re-render management), optional: a fabric link
  // down must not hold network-online.target.
  const device = (p: string, k: number): string =>
    `${p}: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.10${k + 1}.${host}/24]}`;
  return `network: {version: 2, ethernets: {${ports.map(device).join(', ')}}}`;
}

/** Does an NCCL_SOCKET_IFNAME-style list select `name`? `=` exact, else prefix; `^` excludes. */
export function ifnameSelects(value: string, name: string): boolean {
  let v = value.trim();
  const exclude = v.startsWith('^');
  if (exclude) v = v.slice(1);
  const exact = v.startsWith('=');
  if (exact) v = v.slice(1);
  const hit = v.split(',').some((t) => t.trim() !== '' && (exact ? name === t.trim() : name.startsWith(t.trim())));
  return exclude ? !hit : hit;
}
