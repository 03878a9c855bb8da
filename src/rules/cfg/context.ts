/**
 * What the cfg rules see: every supplied file parsed into facts (`CfgFile`), and the whole lint run
 * (`CfgContext`), so one file's rule can use another file's facts (NCCL_SOCKET_IFNAME=bond0 in nccl.conf +
 * the bond in netplan). Each rule is `{id, title, check(file, ctx) → Finding[]}`: pure, reporting findings
 * on `file` only, so a cause seen in two files is reported where its lines are.
 */
import type { ConfEntry, ConfMalformed } from '../../parse/nccl-conf.js';
import type { NetplanDevice, NetplanFacts } from '../../parse/netplan-yaml.js';
import type { PythonLaunchFacts } from '../../parse/python-launch.js';
import type { ShellCommand } from '../../parse/shell-commands.js';
import type { Finding, Severity } from '../types.js';

export type LintKind =
  | 'nccl-conf'
  | 'env'
  | 'netplan-yaml'
  | 'systemd-unit'
  | 'shell-script'
  | 'command-line'
  | 'python-launcher'
  | 'markdown'
  | 'empty'
  | 'binary'
  | 'unknown';

/** A variable setting (NCCL_*, GLOO_*, VLLM_*, RAY_*, …) and where it came from. */
export interface Setting {
  key: string;
  value: string;
  line: number;
  /** Verbatim text that set it (the conf line, or the excerpt from prose). */
  raw: string;
  origin: 'conf' | 'export' | 'assign' | 'env-prefix' | 'unit' | 'python' | 'prose';
  /** The strict KEY=VALUE parse, when it came from a conf/env file or block (R12 reads it). */
  entry?: ConfEntry;
}

export interface UnitEntry {
  section: string;
  key: string;
  value: string;
  line: number;
}

export interface UnitFacts {
  line: number;
  entries: UnitEntry[];
  /** Commands of ExecStart / ExecStartPre / ExecStop. */
  commands: ShellCommand[];
}

export interface ProseFacts {
  /** Performance claims: consecutive claim lines form one block. */
  claims: Array<Array<{ line: number; text: string }>>;
  /** Monitoring tools offered in prose (`iftop`, `nload`, …). */
  monitors: Array<{ line: number; tool: string; text: string }>;
  /** Advice to open UDP 4791 for RoCE. */
  udp4791: Array<{ line: number; text: string }>;
  /** Workload facts the document states anywhere (R50). */
  workload: { lengths: boolean; concurrency: boolean; prompts: boolean; tool: boolean; layout: boolean };
}

export interface CfgFile {
  name: string;
  kind: LintKind;
  /** Sanitized lines; line n is `lines[n - 1]`. */
  lines: string[];
  settings: Setting[];
  /** Malformed lines of conf blocks (R12). */
  confMalformed: ConfMalformed[];
  netplans: NetplanFacts[];
  commands: ShellCommand[];
  /** Commands read out of prose: their evidence is the excerpt, not the whole line. */
  proseEvidence: Map<ShellCommand, string>;
  python: PythonLaunchFacts[];
  units: UnitFacts[];
  prose?: ProseFacts;
  /** File mode, when read from disk. */
  mode?: number;
}

export interface CfgContext {
  files: CfgFile[];
  /** Versions stated by the files (pins), else undefined: rules then assume the current release. */
  versions: { nccl?: string };
}

export interface CfgRule {
  id: string;
  title: string;
  check(file: CfgFile, ctx: CfgContext): Finding[];
}

export const G = 8; // GPUs per node
export const N = 2; // nodes
export const ROCE_TC = 106; // NCCL_IB_TC of the RoCE class: DSCP 26, prio 3
export const ROCE_PRIO = 3;

const MAX_EVIDENCE = 600;

export function clip(s: string, max = MAX_EVIDENCE): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Line `n`, verbatim, surrounding whitespace trimmed (clipped for huge lines). */
export function lineText(f: CfgFile, n: number): string {
  return clip((f.lines[n - 1] ?? '').trim(), 300);
}

/** Evidence for a command: its excerpt when read from prose, else the source line (`line`, default its first). */
export function cmdText(f: CfgFile, c: ShellCommand, line = c.line): string {
  return clip(f.proseEvidence.get(c) ?? lineText(f, line), 300);
}

export function mk(
  rule: { id: string; title: string },
  severity: Severity,
  f: CfgFile,
  line: number | undefined,
  evidence: string,
  fix: string,
  title = rule.title,
): Finding {
  const out: Finding = {
    rule: rule.id,
    severity,
    title,
    evidence: clip(evidence, 2000),
    fix,
    source: line ? `${f.name}:${line}` : f.name,
  };
  if (line) out.line = line;
  return out;
}

export function worst(sevs: Severity[]): Severity {
  const order: Severity[] = ['blocker', 'high', 'medium', 'low', 'info'];
  return order.find((s) => sevs.includes(s)) ?? 'info';
}

/** `a/b/c.yaml` → `c.yaml`, for evidence that points at another file. */
export function short(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

export function settingsOf(f: CfgFile, key: string): Setting[] {
  return f.settings.filter((s) => s.key === key);
}

export function allSettings(ctx: CfgContext, key?: string): Array<{ file: CfgFile; s: Setting }> {
  return ctx.files.flatMap((file) =>
    file.settings.filter((s) => key === undefined || s.key === key).map((s) => ({ file, s })),
  );
}

export function allCommands(ctx: CfgContext): Array<{ file: CfgFile; c: ShellCommand }> {
  return ctx.files.flatMap((file) =>
    [...file.commands, ...file.units.flatMap((u) => u.commands)].map((c) => ({ file, c })),
  );
}

/** Commands of a file, including its units' Exec lines. */
export function commandsOf(f: CfgFile): ShellCommand[] {
  return [...f.commands, ...f.units.flatMap((u) => u.commands)];
}

export function devicesOf(n: NetplanFacts): NetplanDevice[] {
  return [...n.ethernets, ...n.bonds, ...n.bridges, ...n.vlans];
}

export function allDevices(ctx: CfgContext): Array<{ file: CfgFile; d: NetplanDevice }> {
  return ctx.files.flatMap((file) => file.netplans.flatMap((n) => devicesOf(n).map((d) => ({ file, d }))));
}

/** A variable set anywhere in the run (settings, env prefixes, unit Environment=). */
export function isSetAnywhere(ctx: CfgContext, key: string): boolean {
  return (
    allSettings(ctx, key).length > 0 ||
    allCommands(ctx).some(({ c }) => c.env.some((e) => e.name === key) || c.assigns.some((a) => a.name === key))
  );
}

/** Compares dotted versions: <0, 0, >0. */
export function cmpVersion(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => parseInt(x, 10) || 0);
  const pb = b.split(/[.-]/).map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** IPv4 `a.b.c.d/len` → network number and mask, or undefined. */
export function ipv4Net(cidr: string): { ip: number; net: number; len: number } | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(cidr.trim());
  if (!m) return undefined;
  const oct = m.slice(1, 5).map(Number);
  if (oct.some((o) => o > 255)) return undefined;
  const ip =
    (((oct[0] as number) << 24) >>> 0) + ((oct[1] as number) << 16) + ((oct[2] as number) << 8) + (oct[3] as number);
  const len = m[5] === undefined ? 32 : Math.min(32, Number(m[5]));
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return { ip, net: (ip & mask) >>> 0, len };
}

export function inSubnet(ip: string, cidr: string): boolean {
  const a = ipv4Net(ip);
  const n = ipv4Net(cidr);
  if (!a || !n) return false;
  const mask = n.len === 0 ? 0 : (0xffffffff << (32 - n.len)) >>> 0;
  return (a.ip & mask) >>> 0 === n.net;
}

/** The management (default-route) devices of the run's netplan. */
export function mgmtDevices(ctx: CfgContext): Set<string> {
  return new Set(
    allDevices(ctx)
      .filter(({ d }) => d.gateway4 !== undefined || d.gateway6 !== undefined || d.defaultVia !== undefined)
      .map(({ d }) => d.name),
  );
}
