/**
 * What the network stage reads about one host: the fabric (shared discovery), each port's own
 * MAC, LLDP neighbours, the netplan files and netplan's merged view, every bond as the driver and
 * iproute2 report it, and the firewall. Tolerant: a probe that failed leaves its part empty and
 * says why in `problems`.
 */
import { parse as parseYaml } from 'yaml';
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseBonding, type BondingFacts } from '../../src/parse/bonding.js';
import { parseIpJson } from '../../src/parse/ip-json.js';
import { parseIpLink } from '../../src/parse/ip-link.js';
import { parseLldpNeighbors, type LldpNeighbor } from '../../src/parse/lldp.js';
import { collectFabric, type FabricFacts } from '../common/fabric.js';
import { sections } from '../inventory/collect.js';
import { parseUfwStatus, type UfwFacts } from './ufw-status.js';

export interface NetplanFileFact {
  path: string;
  /** Octal permission bits (`600` → 0o600). */
  mode: number;
  text: string;
}

export interface BondFact {
  name: string;
  /** `/proc/net/bonding/<name>`. */
  proc?: BondingFacts;
  /** `ip -d link show type bond`. */
  mode?: string;
  lacpRate?: string;
  miimon?: number;
  xmitHashPolicy?: string;
  mtu?: number;
  /** IPv4 `a.b.c.d/nn`. */
  addresses: string[];
  slaves: Array<{ name: string; bdf?: string; card?: string; mtu?: number; mii?: string }>;
  /** Defined by a netplan file (else R23: netplan apply will never remove it). */
  described: boolean;
}

export interface NetworkFacts {
  host: string;
  fabric: FabricFacts;
  /** Each fabric port's own MAC (a bond member's `perm_hwaddr`), lower case. */
  permMacs: Record<string, string>;
  lldp: LldpNeighbor[];
  lldpError?: string;
  /** lldpcli is not installed (exit 127): nothing to ask for an update. */
  lldpMissing: boolean;
  netplanFiles: NetplanFileFact[];
  /** `netplan get` parsed: what netplan would apply now. */
  merged: {
    ok: boolean;
    ethernets: Record<string, unknown>;
    bonds: Record<string, { interfaces?: string[] } & Record<string, unknown>>;
    text: string;
    error?: string;
  };
  /** network.write left a pre-write snapshot that network.apply has not confirmed yet. */
  pendingSnapshot: boolean;
  /** That snapshot's netplan files (the configuration live before the write); empty without one. */
  pendingFiles: NetplanFileFact[];
  bonds: BondFact[];
  ufw: UfwFacts;
  problems: Array<{ probe: string; evidence: string }>;
}

function out(r: RunResult | undefined): string {
  return r && r.exitCode === 0 ? r.stdout : '';
}

function evidenceOf(r: RunResult | undefined, id: string): string {
  if (!r) return `${id}: did not run`;
  return `$ ${r.commandLine}\nexit ${r.exitCode ?? (r.timedOut ? 'timeout' : 'none')}\n${(r.stderr || r.stdout).trim().split('\n').slice(0, 4).join('\n')}`;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseMerged(r: RunResult | undefined): NetworkFacts['merged'] {
  const text = r?.stdout ?? '';
  if (!r || r.exitCode !== 0)
    return { ok: false, ethernets: {}, bonds: {}, text, error: (r?.stderr ?? 'did not run').trim() };
  try {
    const doc = parseYaml(text) as unknown;
    const net = isObj(doc) && isObj(doc.network) ? doc.network : {};
    const eths = isObj(net.ethernets) ? net.ethernets : {};
    const bonds = isObj(net.bonds) ? (net.bonds as NetworkFacts['merged']['bonds']) : {};
    return { ok: true, ethernets: eths, bonds, text };
  } catch (e) {
    return { ok: false, ethernets: {}, bonds: {}, text, error: (e as Error).message };
  }
}

export function collectNetwork(outputs: ProbeOutputs): NetworkFacts {
  const { host, results } = outputs;
  const problems: NetworkFacts['problems'] = [];
  const fabric = collectFabric(outputs);

  const permMacs: Record<string, string> = {};
  for (const n of parseIpJson(out(results['ip-link'])).netdevs) {
    const own = n.permMac ?? n.mac;
    if (own) permMacs[n.ifname] = own.toLowerCase();
  }

  const lldpRun = results.lldp;
  const lldp = lldpRun?.exitCode === 0 ? parseLldpNeighbors(lldpRun.stdout) : undefined;
  const lldpError = !lldpRun
    ? 'not run'
    : lldpRun.exitCode !== 0
      ? (lldpRun.stderr || lldpRun.stdout).trim() || `exit ${lldpRun.exitCode}`
      : lldp?.error;

  const filesRun = results['netplan-files'];
  if (filesRun && filesRun.exitCode !== 0)
    problems.push({ probe: 'netplan-files', evidence: evidenceOf(filesRun, 'netplan-files') });
  const netplanFiles: NetplanFileFact[] = [];
  let pendingSnapshot = false;
  const pendingFiles: NetplanFileFact[] = [];
  for (const s of sections(filesRun?.stdout ?? '')) {
    if (s.tag === 'pending') pendingSnapshot = true;
    if (s.tag !== 'file' && s.tag !== 'pending-file') continue;
    const mode = /^[0-7]{3,4}$/.test(s.rest.trim()) ? parseInt(s.rest.trim(), 8) : 0o644;
    // The script prints an empty line after each file so one without a final newline stays apart;
    // the text is taken to end in exactly one newline.
    const text = `${s.body.replace(/\n+$/, '')}\n`;
    (s.tag === 'file' ? netplanFiles : pendingFiles).push({ path: s.name, mode, text });
  }

  const merged = parseMerged(results['netplan-get']);
  if (!merged.ok) problems.push({ probe: 'netplan-get', evidence: evidenceOf(results['netplan-get'], 'netplan-get') });

  const procs = new Map<string, BondingFacts>();
  for (const s of sections(out(results.bonding))) if (s.tag === 'bond') procs.set(s.name, parseBonding(s.body));
  const links = parseIpLink(out(results['ip-bond'])).netdevs;
  const bondNames = [...new Set([...links.filter((l) => l.linkKind === 'bond').map((l) => l.ifname), ...procs.keys()])];
  const bonds: BondFact[] = bondNames.map((name) => {
    const l = links.find((x) => x.ifname === name);
    const nd = fabric.netdevs.find((d) => d.name === name);
    const members = fabric.netdevs.filter((d) => d.master === name);
    const proc = procs.get(name);
    const slaveNames = proc?.slaves.length ? proc.slaves.map((s) => s.name) : members.map((d) => d.name);
    return {
      name,
      ...(proc ? { proc } : {}),
      ...((l?.bond?.mode ?? proc?.mode) ? { mode: (l?.bond?.mode ?? proc?.mode) as string } : {}),
      ...(l?.bond?.lacpRate ? { lacpRate: l.bond.lacpRate } : {}),
      ...(l?.bond?.miimon !== undefined ? { miimon: l.bond.miimon } : {}),
      ...(l?.bond?.xmitHashPolicy ? { xmitHashPolicy: l.bond.xmitHashPolicy } : {}),
      ...(nd?.mtu !== undefined ? { mtu: nd.mtu } : {}),
      addresses: (nd?.addresses ?? []).filter((a) => !a.includes(':')),
      slaves: slaveNames.map((s) => {
        const d = fabric.netdevs.find((x) => x.name === s);
        return {
          name: s,
          ...(d?.bdf ? { bdf: d.bdf, card: d.bdf.replace(/\.\d+$/, '') } : {}),
          ...(d?.mtu !== undefined ? { mtu: d.mtu } : {}),
          ...(proc?.slaves.find((x) => x.name === s)?.mii ? { mii: proc.slaves.find((x) => x.name === s)!.mii! } : {}),
        };
      }),
      described: name in merged.bonds,
    };
  });

  const ufwRun = results.ufw;
  const ufw = parseUfwStatus(
    ufwRun?.exitCode === 0 ? ufwRun.stdout : '',
    ufwRun ? `${ufwRun.stdout}${ufwRun.stderr}` : 'not run',
    ufwRun?.exitCode ?? null,
  );

  return {
    host,
    fabric,
    permMacs,
    lldp: lldp?.neighbors ?? [],
    ...(lldpError ? { lldpError } : {}),
    lldpMissing: lldpRun?.exitCode === 127,
    netplanFiles,
    merged,
    pendingSnapshot,
    pendingFiles,
    bonds,
    ufw,
    problems,
  };
}

/** The fabric netdevs the stage configures: every ConnectX port (never the management netdev). */
export function fabricPorts(f: NetworkFacts): string[] {
  return f.fabric.ports.map((p) => p.netdev).filter((n) => n !== f.fabric.mgmt.netdev);
}

/** SSH port of the management path (SSH_CONNECTION), 22 when unknown. */
export function sshPort(f: NetworkFacts): number {
  return f.fabric.mgmt.serverPort ?? 22;
}
