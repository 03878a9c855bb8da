/**
 * Test helpers for the lab: a lab with ssh2 clients (openLab, openLabPair, closeLab, a reboot that
 * reconnects), exec with optional stdin and its output as text (sh), a poller for conditions
 * (tests wait for state, never for fixed time); through the real transport, a lab of a test's own
 * (withLabTarget), scripts as text (runScript) and the stage helpers (applier, notPassing, find).
 */
import ssh2, { type Client, type ClientChannel } from 'ssh2';

const { Client: SshClient } = ssh2;
import { startLab, type Lab, type LabHost, type LabOptions } from '../../lab/index.js';
import { reboot } from '../../lab/system/boot.js';
import type { Host, RunOptions } from '../../src/transport/types.js';
import { buildCommand } from '../../src/transport/quote.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import type { Engine, StageOutcome } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { CheckResult } from '../../src/engine/types.js';

export interface ExecResult {
  stdout: Buffer;
  stderr: Buffer;
  code: number | null;
  signal: string | null;
}

export function connect(
  lab: Lab,
  host: LabHost,
  opts: { privateKey?: string; username?: string; keepaliveInterval?: number; keepaliveCountMax?: number } = {},
): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c = new SshClient();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({
      host: host.address,
      port: host.port,
      username: opts.username ?? host.user,
      privateKey: opts.privateKey ?? lab.clientPrivateKey,
      readyTimeout: 10_000,
      keepaliveInterval: opts.keepaliveInterval ?? 0,
      keepaliveCountMax: opts.keepaliveCountMax ?? 2,
      hostVerifier: (key: Buffer) => key.equals(host.hostKeyBlob),
    });
  });
}

/**
 * The exit status as it arrived: ssh2 emits `exit` while it parses the packet, which can be the same read as the
 * exec's success, before a caller awaiting openExec could add a listener (the product's queue does the same).
 */
const exits = new WeakMap<ClientChannel, { code: number | null; signal: string | null }>();

function recordExit(ch: ClientChannel): void {
  if (exits.has(ch)) return;
  exits.set(ch, { code: null, signal: null });
  ch.on('exit', (code: number | null, signal?: string) => exits.set(ch, { code, signal: signal ?? null }));
}

export function openExec(conn: Client, command: string): Promise<ClientChannel> {
  return new Promise((resolve, reject) =>
    conn.exec(command, (err, ch) => {
      if (err) return reject(err);
      recordExit(ch);
      resolve(ch);
    }),
  );
}

export function collect(ch: ClientChannel): Promise<ExecResult> {
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    recordExit(ch);
    ch.on('data', (d: Buffer) => out.push(d));
    ch.stderr.on('data', (d: Buffer) => err.push(d));
    ch.on('close', () => {
      const { code, signal } = exits.get(ch) ?? { code: null, signal: null };
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(err), code, signal });
    });
  });
}

/** Runs `command`; writes `stdin` then EOF unless `stdin` is undefined and `eof` is false. */
export async function exec(
  conn: Client,
  command: string,
  opts: { stdin?: string; eof?: boolean } = {},
): Promise<ExecResult> {
  const ch = await openExec(conn, command);
  const done = collect(ch);
  if (opts.stdin !== undefined) ch.write(opts.stdin);
  if (opts.stdin !== undefined || opts.eof !== false) ch.end();
  return done;
}

export interface TextResult {
  out: string;
  err: string;
  code: number | null;
}

export const text = (r: ExecResult): TextResult => ({
  out: r.stdout.toString(),
  err: r.stderr.toString(),
  code: r.code,
});

/** Runs `command` (writing `stdin`, then EOF, when given) and returns its output as text. */
export async function sh(conn: Client, command: string, stdin?: string): Promise<TextResult> {
  return text(await exec(conn, command, stdin === undefined ? {} : { stdin }));
}

/** A lab (speed 'max' unless `options` say otherwise) with one client connected to host `index`. */
/** Runs one shell command on lab host `i` of a target over a connection of its own; stdout. */
export async function shellOn(t: LabTarget, i: number, cmd: string): Promise<string> {
  const c = await connect(t.lab, t.lab.hosts[i]!);
  try {
    return (await sh(c, cmd)).out;
  } finally {
    await end(c);
  }
}

export async function openLab(options: LabOptions = {}, index = 0): Promise<{ lab: Lab; host: LabHost; conn: Client }> {
  const lab = await startLab({ speed: 'max', ...options });
  const host = lab.hosts[index]!;
  return { lab, host, conn: await connect(lab, host) };
}

/** A lab with one client on each of its first two hosts. */
export async function openLabPair(options: LabOptions = {}): Promise<{ lab: Lab; n1: Client; n2: Client }> {
  const { lab, conn: n1 } = await openLab(options, 0);
  return { lab, n1, n2: await connect(lab, lab.hosts[1]!) };
}

/** Ends the clients, then closes the lab. */
export async function closeLab(lab: Lab, ...conns: Client[]): Promise<void> {
  for (const c of conns) await end(c);
  await lab.close();
}

/** Ends `conn`, reboots host `index` (the model's reboot, no SSH) and returns a new client to it. */
export async function rebootAndReconnect(lab: Lab, conn: Client, index: number): Promise<Client> {
  const host = lab.hosts[index]!;
  await end(conn);
  await reboot(host.machine.system);
  return connect(lab, host);
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

export function end(conn: Client): Promise<void> {
  return new Promise((resolve) => {
    conn.once('close', () => resolve());
    conn.end();
  });
}

/** Runs `body` on a lab of its own reached through the real transport, closed afterwards whatever `body` did. */
export async function withLabTarget<T>(options: LabOptions, body: (t: LabTarget) => Promise<T>): Promise<T> {
  const t = await labTarget(options);
  try {
    return await body(t);
  } finally {
    await t.close();
  }
}

/** Runs `script` on `h` through the transport and returns its output as text, as `sh` does over ssh2. */
export async function runScript(h: Host, script: string, options: RunOptions = {}): Promise<TextResult> {
  const r = await h.run({ script }, options);
  return { out: r.stdout, err: r.stderr, code: r.exitCode };
}

/** A StepExecutor as `l20-setup apply --yes` makes one: for real, no questions, reboots allowed. */
export const applier = (engine: Engine): StepExecutor =>
  new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true });

/** A stage's results that did not pass, one line each (host, id, status, summary): `toEqual([])` shows what failed. */
export const notPassing = (o: StageOutcome): string[] =>
  o.results.filter((r) => r.status !== 'pass').map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status} ${r.summary}`);

/** The result of check `id` on `host` (null: a pair check). */
export const find = (o: StageOutcome, id: string, host: string | null): CheckResult | undefined =>
  o.results.find((r) => r.id === id && r.host === host);

/** The inventory stage's own probe scripts: the lab is tested with exactly what the stage runs. */
export { PCIE_SCRIPT, ETHTOOL_SCRIPT } from '../../checks/inventory/probes.js';

/** A root script exactly as the transport sends it: `sudo -n -- bash -c '<wrapper>' l20 env LC_ALL=C bash -s --`. */
export const ROOT_BASH = buildCommand({ script: '' }, { sudo: true }).line;
