/**
 * `/etc/nccl.conf` as the nccl stage writes it (docs/STAGES.md §3.9 nccl.conf), NCCL's view of the
 * settings a host has (environment > `$NCCL_CONF_FILE` or `~/.nccl.conf` > `/etc/nccl.conf`, each
 * applied with setenv(…, 0)), and NCCL_IB_HCA / NCCL_SOCKET_IFNAME resolution against the live names.
 * The file is generated from names discovered this stage, never hard-coded (R07), and never sets
 * NCCL_ALGO, NCCL_IB_GID_INDEX, NCCL_NET_GDR_LEVEL, NCCL_BUFFSIZE, NCCL_IB_CUDA_SUPPORT or debug variables.
 */
import { packageVersion } from '../../src/util/version.js';
import type { ClusterConfig } from '../../src/config/schema.js';
import { railSubnet } from '../common/design.js';
import type { FabricFacts, FabricPort } from '../common/fabric.js';
import type { NcclFacts } from './facts.js';

export const NCCL_CONF = '/etc/nccl.conf';
/** What marks a file this stage wrote (its first line). */
export const GENERATED_MARK = '# l20-setup ';

const VERSION = packageVersion();

/** RoCE traffic class: DSCP in the upper six bits, ECN 2 (ECT(0)) below: DSCP 26 → 106 (R08). */
export function trafficClass(config: ClusterConfig): number {
  return (config.qos.dscp << 2) | 2;
}

function inSubnet(cidr: string, subnet: string): boolean {
  const [ip] = cidr.split('/');
  const [net, len] = subnet.split('/');
  const n = (s: string): number => s.split('.').reduce((a, o) => (a * 256 + Number(o)) >>> 0, 0);
  const mask = Number(len) === 0 ? 0 : (0xffffffff << (32 - Number(len))) >>> 0;
  return (n(ip ?? '') & mask) >>> 0 === (n(net ?? '') & mask) >>> 0;
}

export interface ConfPlan {
  content: string;
  /** The body without the header line (what conf-names compares: the header names the run). */
  body: string;
  socketIfname: string;
  devices: string[];
  /** Rails the design expects (A: 4 cables, B: 2 bonds, tutorial: 4 slaves). */
  expectedRails: number;
}

/** Design A rails from the live addresses the network stage configured: cable k ↔ 192.168.10k.0/24. */
function railsA(f: FabricFacts): Array<{ k: number; port: FabricPort }> {
  const out: Array<{ k: number; port: FabricPort }> = [];
  for (let k = 1; k <= 4; k++) {
    const port = f.ports.find((p) => p.addresses.some((a) => inSubnet(a, railSubnet(k))));
    if (port) out.push({ k, port });
  }
  return out;
}

/** The file for this host, or why there is none yet. */
export function desiredConf(config: ClusterConfig, f: FabricFacts, runId: string): ConfPlan | string {
  const design = config.network.design;
  const tc = trafficClass(config);
  let lines: string[];
  let socketIfname: string;
  let devices: string[];
  let expectedRails: number;
  if (design === 'A') {
    const rails = railsA(f);
    const first = rails.find((r) => r.k === 1);
    if (!first)
      return `no fabric port of ${f.host} has an address in ${railSubnet(1)} (cable 1): apply the network stage first`;
    const missing = rails.filter((r) => !r.port.rdmaDevice);
    if (missing.length > 0)
      return `no RDMA device on ${missing.map((r) => r.port.netdev).join(', ')} (rdma link show): apply the nic-stack stage first`;
    socketIfname = first.port.netdev;
    devices = rails.map((r) => r.port.rdmaDevice!);
    expectedRails = 4;
    lines = designALines(socketIfname, devices, tc, config.nccl.crossNic);
  } else if (design === 'B') {
    devices = [];
    for (const bond of ['bond0', 'bond1']) {
      const dev =
        f.ports.find((p) => p.master === bond && p.rdmaDevice)?.rdmaDevice ??
        f.rdma.find((r) => r.netdev === bond)?.device;
      if (dev && !devices.includes(dev)) devices.push(dev);
    }
    if (devices.length === 0)
      return `no RDMA device on bond0/bond1 of ${f.host} (no RoCE LAG formed): apply the network stage for design B first`;
    socketIfname = 'bond0';
    expectedRails = 2;
    lines = [
      `NCCL_SOCKET_IFNAME==${socketIfname}`,
      `NCCL_IB_HCA==${devices.map((d) => `${d}:1`).join(',')}`,
      `NCCL_IB_TC=${tc}`,
      'NCCL_IB_QPS_PER_CONNECTION=2',
    ];
  } else {
    const slaves = f.ports.filter((p) => p.master === 'bond0' && p.rdmaDevice);
    if (slaves.length === 0)
      return `no bond0 slave with an RDMA device on ${f.host}: the tutorial's bond0 is not there`;
    socketIfname = 'bond0';
    devices = slaves.map((p) => p.rdmaDevice!);
    expectedRails = 4;
    lines = [
      `NCCL_SOCKET_IFNAME==${socketIfname}`,
      `NCCL_IB_HCA==${devices.map((d) => `${d}:1`).join(',')}`,
      `NCCL_IB_TC=${tc}`,
      `NCCL_CROSS_NIC=${config.nccl.crossNic}`,
    ];
  }
  return { ...renderConf(design, runId, lines), socketIfname, devices, expectedRails };
}

/** The file text: the header naming the version, run and design, then the settings. */
export function renderConf(design: string, runId: string, lines: readonly string[]): { content: string; body: string } {
  const header = `${GENERATED_MARK}${VERSION} run ${runId} design ${design}; generated from \`rdma link show\``;
  const body = `${lines.join('\n')}\n`;
  return { content: `${header}\n${body}`, body };
}

/** Design A's settings for a host whose cable-k ports (k = 1…4) carry these RDMA devices. */
export function designALines(socketIfname: string, devices: readonly string[], tc: number, crossNic: number): string[] {
  return [
    `NCCL_SOCKET_IFNAME==${socketIfname}`,
    `NCCL_IB_HCA==${devices.map((d) => `${d}:1`).join(',')}`,
    `NCCL_IB_TC=${tc}`,
    `NCCL_CROSS_NIC=${crossNic}`,
  ];
}

/** A conf file without its first line when that is this stage's header. */
export function confBody(text: string): string {
  return text.startsWith(GENERATED_MARK) ? text.slice(text.indexOf('\n') + 1) : text;
}

export interface Effective {
  value: string;
  /** `environment`, or the file it came from. */
  source: string;
}

/** NCCL's settings on this host: the environment first, then the conf files in NCCL's order (setenv(…, 0)). */
export function effectiveSettings(f: NcclFacts): Map<string, Effective> {
  const out = new Map<string, Effective>();
  for (const l of f.envLines) {
    const eq = l.indexOf('=');
    out.set(l.slice(0, eq), { value: l.slice(eq + 1), source: 'environment' });
  }
  for (const file of f.confFiles) {
    for (const raw of file.text.split('\n')) {
      if (raw.startsWith('#')) continue;
      const eq = raw.indexOf('=');
      if (eq < 0) continue;
      const k = raw.slice(0, eq);
      if (!out.has(k)) out.set(k, { value: raw.slice(eq + 1), source: file.path });
    }
  }
  return out;
}

export interface HcaToken {
  text: string;
  name: string;
  port?: number;
  matches: string[];
}

export interface HcaResolution {
  exclude: boolean;
  exact: boolean;
  tokens: HcaToken[];
  /** Devices NCCL would use (in `rdma link show` order). */
  devices: string[];
}

/** NCCL_IB_HCA against the host's RDMA devices (R06): `^` excludes, `=` exact, else prefix; the port must exist (1). */
export function resolveHca(value: string, rdmaDevices: readonly string[]): HcaResolution {
  let v = value;
  const exclude = v.startsWith('^');
  if (exclude) v = v.slice(1);
  const exact = v.startsWith('=');
  if (exact) v = v.slice(1);
  const tokens = v
    .split(',')
    .filter((t) => t !== '')
    .map((text): HcaToken => {
      const [name = '', port] = text.split(':');
      const p = port !== undefined && port !== '' ? Number(port) : undefined;
      const matches = rdmaDevices.filter(
        (d) => (exact ? d === name : d.startsWith(name)) && (p === undefined || p === 1),
      );
      return { text, name, ...(p !== undefined ? { port: p } : {}), matches };
    });
  const hit = new Set(tokens.flatMap((t) => t.matches));
  const devices = rdmaDevices.filter((d) => (exclude ? !hit.has(d) : hit.has(d)));
  return { exclude, exact, tokens, devices };
}

/** NCCL_SOCKET_IFNAME against the netdevs: the interfaces it selects (UP, with IPv4), first one used. */
export function resolveSocketIfname(
  value: string | undefined,
  f: FabricFacts,
): Array<{ name: string; addresses: string[] }> {
  let v = value ?? '';
  const exclude = v.startsWith('^');
  if (exclude) v = v.slice(1);
  const exact = v.startsWith('=');
  if (exact) v = v.slice(1);
  const names = v.split(',').filter(Boolean);
  return f.netdevs
    .filter((d) => d.adminUp && d.addresses.some((a) => !a.includes(':')))
    .filter((d) => {
      if (!value) return d.name !== 'lo' && !d.name.startsWith('docker');
      const hit = names.some((n) => (exact ? d.name === n : d.name.startsWith(n)));
      return exclude ? !hit && d.name !== 'lo' : hit;
    })
    .map((d) => ({ name: d.name, addresses: d.addresses.filter((a) => !a.includes(':')) }));
}

export { inSubnet };
