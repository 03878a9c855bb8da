/**
 * Facts both serving stages read: versions (R47), GPUs and P2P (the advisor's inputs), the model
 * directories (R41), the management address (where the API listens) and the listening TCP sockets
 * (R46). Collection never throws: what a probe could not tell stays undefined, with its evidence.
 */
import { probeProblems, type ProbeProblem } from '../../src/engine/probe-health.js';
import type { ProbeDef, ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseIpJson } from '../../src/parse/ip-json.js';
import { parseNvidiaSmiCsv } from '../../src/parse/nvidia-smi-csv.js';

export interface Versions {
  python?: string;
  ray?: string;
  vllm?: string;
  torch?: string;
  /** `vllm --version`. */
  vllmCli?: string;
  nccl?: string;
  driver?: string;
  /** Each block as printed, for evidence. */
  raw: Record<string, string>;
}

export interface ModelDir {
  path: string;
  du?: number;
  configSha?: string;
  indexSha?: string;
  /** Weight bytes: the index's metadata.total_size, else the shards' size. */
  weightBytes?: number;
  config?: string;
}

export interface ListenSocket {
  address: string;
  port: number;
  /** The line as ss printed it. */
  line: string;
}

export interface SharedFacts {
  host: string;
  user?: string;
  /** The address this SSH session reached (management). */
  mgmtAddress?: string;
  mgmtIf?: string;
  /** Every IPv4 address with its netdev. */
  addresses: Array<{ ifname: string; address: string; prefixlen: number; up: boolean }>;
  versions: Versions;
  gpus?: { count: number; memoryMiB: number };
  gpuEvidence: string;
  /** Whether every GPU pair reports P2P OK; undefined when not measurable. */
  p2pOk?: boolean;
  p2pEvidence: string;
  models: ModelDir[];
  listening?: ListenSocket[];
  listeningEvidence: string;
}

const out = (r: RunResult | undefined): string => (r ? `${r.stdout}${r.stderr}` : '');

/** A systemd unit as the serving stages' unit probes print it: `### is-active`, `### show`, `### file` blocks. */
export interface UnitFacts {
  loadState?: string;
  active?: string;
  subState?: string;
  nRestarts?: number;
  /** The unit file (read with cat: known without a unit manager). */
  file?: string;
  /** Why systemctl gave no state (not installed, no unit manager, sudo): the unit's state is then unknown. */
  unreadable: ProbeProblem[];
}

export function collectUnit(probe: ProbeDef | undefined, r: RunResult | undefined): UnitFacts {
  const unit: UnitFacts = { unreadable: probe && r ? probeProblems(probe, r) : [] };
  for (const b of blocks(r?.stdout ?? '')) {
    if (b.name === 'is-active') {
      const state = b.body.trim().split('\n')[0];
      if (state) unit.active = state;
    } else if (b.name === 'show') {
      for (const line of b.body.split('\n')) {
        const eq = line.indexOf('=');
        const [k, v] = [line.slice(0, eq), line.slice(eq + 1)];
        if (k === 'LoadState' && v) unit.loadState = v;
        else if (k === 'ActiveState' && v) unit.active ??= v;
        else if (k === 'SubState' && v) unit.subState = v;
        else if (k === 'NRestarts' && /^\d+$/.test(v)) unit.nRestarts = Number(v);
      }
    } else if (b.name === 'file' && b.body.trim()) unit.file = `${b.body}\n`;
  }
  return unit;
}

/** Why systemctl printed no state: `unknown (…)`, or undefined when nothing stopped it. */
function unreadableState(u: UnitFacts): string | undefined {
  const p = u.unreadable[0];
  if (!p) return undefined;
  if (p.kind === 'missing-tool') return `unknown (${p.tool} is not installed)`;
  return p.kind === 'sudo' ? 'unknown (sudo refused)' : 'unknown (no systemd unit manager)';
}

/** The unit's state in a word, as summaries say it: never an empty state. */
export function unitStateWord(u: UnitFacts): string {
  if (u.active) return u.active;
  if (!u.file) return 'not installed';
  return unreadableState(u) ?? 'in no state systemctl printed';
}

/** `systemctl is-active NAME → state (LoadState …, NRestarts …); the unit file`, what was not shown said so. */
export function unitStateLine(name: string, u: UnitFacts): string {
  const state = u.active ?? unreadableState(u) ?? 'no state printed';
  return (
    `systemctl is-active ${name} → ${state} ` +
    `(LoadState ${u.loadState ?? 'not shown'}, NRestarts ${u.nRestarts ?? 'not shown'})` +
    `; /etc/systemd/system/${name}: ${u.file ? 'present' : 'absent'}`
  );
}

/** `### name rest` blocks. */
export function blocks(text: string): Array<{ name: string; rest: string; body: string }> {
  const res: Array<{ name: string; rest: string; lines: string[] }> = [];
  for (const line of text.split('\n')) {
    const m = /^### (\S+)(?: (.*))?$/.exec(line);
    if (m) res.push({ name: m[1]!, rest: (m[2] ?? '').trim(), lines: [] });
    else res[res.length - 1]?.lines.push(line);
  }
  return res.map((b) => ({ name: b.name, rest: b.rest, body: b.lines.join('\n').replace(/\n+$/, '') }));
}

export function parseVersions(text: string): Versions {
  const v: Versions = { raw: {} };
  for (const b of blocks(text)) {
    const t = b.body.trim();
    v.raw[b.name] = t;
    const last = t.split('\n').pop()?.trim() ?? '';
    switch (b.name) {
      case 'python': {
        const m = /^Python (\d+\.\d+\.\d+\S*)$/m.exec(t);
        if (m) v.python = m[1];
        break;
      }
      case 'ray': {
        const m = /^ray, version (\S+)$/m.exec(t);
        if (m) v.ray = m[1];
        break;
      }
      case 'vllm-torch': {
        const m = /^(\d+\.\d+\.\d+\S*) (\d+\.\d+\.\d+\S*)$/.exec(last);
        if (m) {
          v.vllm = m[1];
          v.torch = m[2];
        }
        break;
      }
      case 'vllm':
        if (/^\d+\.\d+\.\d+\S*$/.test(last)) v.vllmCli = last;
        break;
      case 'nccl': {
        const m = /^\((\d+), (\d+), (\d+)\)$/.exec(last);
        if (m) v.nccl = `${m[1]}.${m[2]}.${m[3]}`;
        break;
      }
      case 'driver':
        if (/^\d+\.\d+(\.\d+)?$/.test(last)) v.driver = last;
        break;
    }
  }
  return v;
}

export function parseModels(text: string): ModelDir[] {
  const dirs = new Map<string, ModelDir>();
  for (const b of blocks(text)) {
    const path = b.rest;
    if (!path) continue;
    const d = dirs.get(path) ?? { path };
    dirs.set(path, d);
    if (b.name === 'config') {
      if (b.body.trim()) d.config = b.body;
      continue;
    }
    for (const line of b.body.split('\n')) {
      const [k, val] = line.trim().split(/\s+/, 2);
      if (k === 'du' && val && /^\d+$/.test(val)) d.du = Number(val);
      else if (k === 'config-sha256' && val) d.configSha = val;
      else if (k === 'index-sha256' && val) d.indexSha = val;
      else if (k === 'weights' && val && /^\d+$/.test(val)) d.weightBytes = Number(val);
      const ts = /"total_size":\s*(\d+)/.exec(line);
      if (ts) d.weightBytes = Number(ts[1]);
    }
  }
  return [...dirs.values()];
}

/** `ss -ltnH`: State Recv-Q Send-Q Local:Port Peer:Port [Process]. */
export function parseListening(text: string): ListenSocket[] {
  const res: ListenSocket[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] !== 'LISTEN' || !f[3]) continue;
    const m = /^(.*):(\d+|\*)$/.exec(f[3]);
    if (!m || m[2] === '*') continue;
    res.push({
      address: m[1]!.replace(/^\[(.*)\]$/, '$1').replace(/%\S+$/, ''),
      port: Number(m[2]),
      line: line.trimEnd(),
    });
  }
  return res;
}

/** `nvidia-smi topo -p2p r`: any pair not `OK` (CNS, GNS, TNS, NS, U) means no direct P2P. */
export function parseP2p(text: string): boolean | undefined {
  const rows = text.split('\n').filter((l) => /^\s*GPU\d+\s/.test(l));
  if (rows.length === 0) return undefined;
  for (const r of rows) {
    const cells = r.trim().split(/\s+/).slice(1);
    if (cells.some((c) => c !== 'X' && c !== 'OK')) return false;
  }
  return true;
}

/** Whether `addr` lies in `cidr` (IPv4). */
export function inSubnet(addr: string, cidr: string): boolean {
  const [net, len] = cidr.split('/');
  const n = (s: string): number => s.split('.').reduce((a, x) => (a << 8) + (Number(x) & 255), 0) >>> 0;
  if (!net || len === undefined || !/^\d+\.\d+\.\d+\.\d+$/.test(addr)) return false;
  const bits = Number(len);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (n(addr) & mask) === (n(net) & mask);
}

export function collectShared({ host, results }: ProbeOutputs): SharedFacts {
  const r = results;
  const conn = (r['ssh-connection']?.stdout ?? '').trim().split(/\s+/);
  const ip = parseIpJson(r['ip-addr']?.stdout ?? '');
  const addresses = ip.netdevs.flatMap((n) =>
    (n.addresses ?? [])
      .filter((a) => a.family === 'inet')
      .map((a) => ({
        ifname: n.ifname,
        address: a.local,
        prefixlen: a.prefixlen ?? 32,
        up: (n.flags ?? []).includes('UP'),
      })),
  );
  const mgmtAddress = conn[2];
  const mgmtIf = addresses.find((a) => a.address === mgmtAddress)?.ifname;

  const g = r.gpus;
  let gpus: SharedFacts['gpus'];
  if (g?.exitCode === 0) {
    const csv = parseNvidiaSmiCsv(g.stdout);
    const mem = csv.rows
      .map((row) => Number(row['memory.total [MiB]'] ?? row['memory.total']))
      .filter((x) => Number.isFinite(x) && x > 0);
    if (mem.length > 0) gpus = { count: mem.length, memoryMiB: Math.min(...mem) };
  }
  const p2p = r.p2p;
  const p2pOk = p2p?.exitCode === 0 ? parseP2p(p2p.stdout) : undefined;
  const ls = r.listening;
  const user = r.user?.exitCode === 0 ? r.user.stdout.trim() : undefined;
  return {
    host,
    ...(user ? { user } : {}),
    ...(mgmtAddress ? { mgmtAddress } : {}),
    ...(mgmtIf ? { mgmtIf } : {}),
    addresses,
    versions: parseVersions(r.versions?.stdout ?? ''),
    ...(gpus ? { gpus } : {}),
    gpuEvidence: g
      ? `${g.commandLine} → exit ${g.exitCode}\n${out(g).trim().split('\n').slice(0, 10).join('\n')}`
      : 'not run',
    ...(p2pOk !== undefined ? { p2pOk } : {}),
    p2pEvidence: p2p ? `${p2p.commandLine} → exit ${p2p.exitCode}` : 'not run',
    models: parseModels(r.models?.stdout ?? ''),
    ...(ls?.exitCode === 0 ? { listening: parseListening(ls.stdout) } : {}),
    listeningEvidence: ls
      ? `${ls.commandLine} → exit ${ls.exitCode}${ls.exitCode === 0 ? '' : `\n${out(ls).trim()}`}`
      : 'not run',
  };
}
