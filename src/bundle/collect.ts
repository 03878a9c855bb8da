/**
 * Runs the bundle's commands on one host and renders each as a text file that starts with the exact
 * command line sent (a script follows as a here-document) and its exit code. A command that fails —
 * a tool not installed, no root — is evidence too: its file says so instead of being left out.
 * Never throws for a host that cannot be reached; the caller gets an error file for it.
 */
import type { Command, Host, RunResult } from '../transport/types.js';
import { clean, sanitize, type CleanText } from '../util/sanitize.js';
import {
  ethtoolStats,
  hostCommands,
  parseDiscovery,
  portCommands,
  DISCOVER_SCRIPT,
  type BundleCommand,
} from './commands.js';
import { withoutSudoWrapper } from '../transport/quote.js';

export interface CollectedFile {
  /** Name inside the host's folder. */
  file: string;
  what: string;
  text: string;
  exitCode: number | null;
  /** What the command printed (stdout, filtered, then stderr), without the header: what the report compares. */
  output: string;
}

export interface HostCollection {
  host: string;
  files: CollectedFile[];
  ports: string[];
  /** Set when the host could not be reached at all; it quotes the transport (the server's words): clean text. */
  error?: CleanText;
}

export interface CollectOptions {
  /** Seconds between the two `ethtool -S` snapshots (slept on the host). */
  deltaSeconds: number;
  signal?: AbortSignal;
  /** Only the configuration the report compares (versions, nccl.conf, netplan, QoS per port). */
  configOnly?: boolean;
  /** Fabric ports from the inventory, used instead of discovery when given. */
  fabricPorts?: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 60_000;
/** How many commands one host runs at a time (below OpenSSH's MaxSessions of 10, leaving room). */
const PARALLEL = 4;

/** The command line block a file starts with: the line as sent, and a script's text after it. */
export function commandHeader(r: Pick<RunResult, 'commandLine'>, command: Command): string {
  if ('argv' in command) return `$ ${withoutSudoWrapper(r.commandLine)}`;
  const body = command.script.endsWith('\n') ? command.script : `${command.script}\n`;
  return `$ ${withoutSudoWrapper(r.commandLine)} <<'L20_SCRIPT'\n${body}L20_SCRIPT`;
}

function exitLine(r: RunResult): string {
  const how = r.timedOut ? ' (timed out)' : r.cancelled ? ' (cancelled)' : r.signal ? ` (signal ${r.signal})` : '';
  return `# exit ${r.exitCode ?? 'none'}${how}, ${r.durationMs} ms`;
}

function filtered(text: string, filter: BundleCommand['filter']): { text: string; note?: string } {
  if (!filter) return { text };
  const lines = text.split('\n');
  const kept = lines.filter((l, i) => (i === 0 && /^\s*PID\b/.test(l) ? true : filter.re.test(l)));
  return {
    text: kept.join('\n'),
    note: `# kept ${kept.length} of ${lines.filter((l) => l !== '').length} lines: ${filter.why}`,
  };
}

function outputOf(r: RunResult, filter?: BundleCommand['filter']): string {
  const out = filtered(r.stdout, filter).text.replace(/\n+$/, '');
  return sanitize(r.stderr.trim() ? `${out}\n${r.stderr.replace(/\n+$/, '')}` : out);
}

export function renderRun(command: Command, r: RunResult, filter?: BundleCommand['filter']): string {
  const out = filtered(r.stdout, filter);
  const parts = [commandHeader(r, command), exitLine(r)];
  if (out.note) parts.push(out.note);
  parts.push(out.text.replace(/\n+$/, ''));
  if (r.stderr.trim()) parts.push(`--- stderr ---\n${r.stderr.replace(/\n+$/, '')}`);
  if (r.truncated) parts.push('# (output truncated by the transport)');
  // Remote output is untrusted: no control sequence reaches whoever opens the bundle in a terminal.
  return `${sanitize(parts.join('\n'))}\n`;
}

async function run(
  host: Host,
  c: Pick<BundleCommand, 'command' | 'sudo' | 'timeoutMs'>,
  signal?: AbortSignal,
): Promise<RunResult> {
  return host.run(c.command, {
    sudo: c.sudo ?? false,
    timeoutMs: c.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    ...(signal ? { signal } : {}),
  });
}

async function pool<T>(items: readonly T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}

/** netdev counter → value, from `ethtool -S` (`     name: value`). */
export function parseStats(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    const x = /^\s+([^:\s][^:]*):\s+(-?\d+)\s*$/.exec(line);
    if (x) m.set(x[1]!.trim(), Number(x[2]));
  }
  return m;
}

/** Counters that moved between the snapshots, largest change first. */
export function statDelta(before: string, after: string): Array<{ name: string; from: number; to: number }> {
  const a = parseStats(before);
  const b = parseStats(after);
  const rows: Array<{ name: string; from: number; to: number }> = [];
  for (const [name, to] of b) {
    const from = a.get(name);
    if (from !== undefined && from !== to) rows.push({ name, from, to });
  }
  return rows.sort((x, y) => Math.abs(y.to - y.from) - Math.abs(x.to - x.from));
}

async function ethtoolBeforeAfter(
  host: Host,
  ports: readonly string[],
  seconds: number,
  signal?: AbortSignal,
): Promise<CollectedFile[]> {
  const before = new Map<string, RunResult>();
  await pool(ports, PARALLEL, async (p) => void before.set(p, await run(host, { command: ethtoolStats(p) }, signal)));
  const sleep: Command = { argv: ['sleep', String(seconds)] };
  const slept = await run(host, { command: sleep, timeoutMs: (seconds + 30) * 1000 }, signal);
  const after = new Map<string, RunResult>();
  await pool(ports, PARALLEL, async (p) => void after.set(p, await run(host, { command: ethtoolStats(p) }, signal)));
  return ports.map((p) => {
    const b = before.get(p)!;
    const a = after.get(p)!;
    const delta = statDelta(b.stdout, a.stdout);
    const deltaText =
      delta.length > 0
        ? delta
            .map((d) => `${d.name}: ${d.from} → ${d.to} (${d.to - d.from >= 0 ? '+' : ''}${d.to - d.from})`)
            .join('\n')
        : 'no counter changed';
    const text = [
      `# before`,
      renderRun(ethtoolStats(p), b).trimEnd(),
      '',
      `# interval`,
      renderRun(sleep, slept).trimEnd(),
      '',
      `# after`,
      renderRun(ethtoolStats(p), a).trimEnd(),
      '',
      `# delta over ${seconds} s (counters that changed, largest first)`,
      sanitize(deltaText),
    ].join('\n');
    return {
      file: `ethtool-S-${p}.txt`,
      what: `ethtool -S ${p} twice, ${seconds} s apart, and the counters that moved`,
      text: `${text}\n`,
      exitCode: a.exitCode,
      output: sanitize(deltaText),
    };
  });
}

const CONFIG_FILES = new Set(['versions.txt', 'nccl-conf.txt', 'netplan.txt']);

export async function collectHost(host: Host, options: CollectOptions): Promise<HostCollection> {
  const { signal } = options;
  try {
    await host.connect();
  } catch (err) {
    const error = clean(`cannot connect to ${host.name}: ${(err as Error).message}`);
    return { host: host.name, files: [], ports: [], error };
  }
  const files: CollectedFile[] = [];
  try {
    const discovery = await run(host, { command: { script: DISCOVER_SCRIPT } }, signal);
    const found = parseDiscovery(discovery.stdout);
    const ports = options.fabricPorts && options.fabricPorts.length > 0 ? [...options.fabricPorts] : found.ports;
    files.push({
      file: 'fabric-ports.txt',
      what: 'the ConnectX netdevs the per-port files cover',
      text: renderRun({ script: DISCOVER_SCRIPT }, discovery),
      exitCode: discovery.exitCode,
      output: outputOf(discovery),
    });
    const commands = [
      ...hostCommands().filter((c) => !options.configOnly || CONFIG_FILES.has(c.file)),
      ...ports.flatMap((p) =>
        portCommands(p, found.mlnxQos).filter((c) => !options.configOnly || !c.file.startsWith('ethtool-')),
      ),
    ];
    const byFile = new Map<string, CollectedFile>();
    await pool(commands, PARALLEL, async (c) => {
      const r = await run(host, c, signal);
      byFile.set(c.file, {
        file: c.file,
        what: c.what,
        text: renderRun(c.command, r, c.filter),
        exitCode: r.exitCode,
        output: outputOf(r, c.filter),
      });
    });
    // Catalogue order, not completion order: the archive reads the same on every run.
    for (const c of commands) files.push(byFile.get(c.file)!);
    if (!options.configOnly && ports.length > 0)
      files.push(...(await ethtoolBeforeAfter(host, ports, options.deltaSeconds, signal)));
    return { host: host.name, files, ports };
  } catch (err) {
    // The connection went away mid-way: keep what was collected and say where it stopped.
    const error = clean(`lost ${host.name} while collecting: ${(err as Error).message}`);
    return { host: host.name, files, ports: [], error };
  }
}
