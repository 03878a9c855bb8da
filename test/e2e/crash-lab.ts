/**
 * The crash-journal tests' lab: `lab serve` in its own process with a state directory of its own, and an
 * apply killed with SIGKILL once the journal shows what the test waits for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { BIN, cli } from '../helpers/cli.js';
import { loadInventoryFile } from '../../src/config/store.js';
import { hostsFromConfig } from '../../src/target.js';
import type { JournalFile } from '../../src/engine/journal.js';

export interface Report {
  stages: Array<{
    id: string;
    checks: Array<{ id: string; host: string | null; status: string; summary: string }>;
    steps: Array<{ id: string; host: string; status: string; error?: string }>;
  }>;
}

/** A lab in its own process and a state directory of our own (where the journal lives). */
export class Lab {
  private child: ChildProcess | undefined;
  readonly dir = mkdtempSync(join(tmpdir(), 'l20-crash-'));
  readonly inventory = join(this.dir, 'inv.json');
  env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: this.dir,
    XDG_STATE_HOME: join(this.dir, 'state'),
    XDG_CONFIG_HOME: join(this.dir, 'config'),
    NO_COLOR: '1',
  };

  async start(scenario: string, speed: string): Promise<void> {
    this.child = spawn(
      process.execPath,
      [BIN, 'lab', 'serve', '--scenario', scenario, '--speed', speed, '--inventory-out', this.inventory],
      { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    this.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    await until(
      () => existsSync(this.inventory) && out.includes('serving; Ctrl-C to stop'),
      () => `lab serve to listen: ${out}`,
      60_000,
      this.child,
    );
  }

  get journalDir(): string {
    return join(this.env.XDG_STATE_HOME!, 'l20-setup', 'journal');
  }

  /** The journal file's content, or undefined while there is none (a rename replaces it whole: never half-read). */
  journal(): JournalFile | undefined {
    const file = existsSync(this.journalDir)
      ? readdirSync(this.journalDir).find((f) => f.endsWith('.json'))
      : undefined;
    return file ? (JSON.parse(readFileSync(join(this.journalDir, file), 'utf8')) as JournalFile) : undefined;
  }

  cli(args: string[]) {
    return cli([...args, '--inventory', this.inventory], this.env);
  }

  /** Starts `apply …` and kills it with SIGKILL once the journal satisfies `ready`; the journal the kill left. */
  async crash(args: string[], ready: (j: JournalFile) => boolean, what: string): Promise<JournalFile> {
    const child = spawn(process.execPath, [BIN, ...args, '--inventory', this.inventory], {
      env: this.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.once('exit', (_code, signal) => r(signal)));
    await until(
      () => {
        const j = this.journal();
        return j !== undefined && j.pid === child.pid && ready(j);
      },
      () => `${what}; journal: ${JSON.stringify(this.journal())}\n${out.slice(-2000)}`,
      300_000,
      child,
    );
    child.kill('SIGKILL');
    // Reaped before we go on: a zombie would still answer kill(pid, 0) and look like a running apply.
    expect(await exited).toBe('SIGKILL');
    return this.journal()!;
  }

  /** Whether each host has the file (through the inventory's own SSH settings, as the tool reaches them). */
  async hasFile(path: string): Promise<Record<string, boolean>> {
    const hosts = hostsFromConfig(await loadInventoryFile(this.inventory));
    try {
      const out: Record<string, boolean> = {};
      for (const h of hosts)
        out[h.name] = (await h.run({ argv: ['stat', '-c', '%F', '--', path] }, { sudo: true })).exitCode === 0;
      return out;
    } finally {
      await Promise.all(hosts.map((h) => h.close()));
    }
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child!.once('exit', r));
      this.child.kill('SIGINT');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls a condition (every 20 ms) until it holds; fails early if the process it waits on ends. */
async function until(cond: () => boolean, what: () => string, timeoutMs: number, proc?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (proc && proc.exitCode !== null) throw new Error(`process exited ${proc.exitCode} while waiting for ${what()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 20)); // polling interval of the condition, not a fixed wait
  }
}

export const notPassing = (r: Report) =>
  r.stages.flatMap((s) =>
    s.checks
      .filter((c) => c.status !== 'pass' && c.status !== 'skip')
      .map((c) => `${s.id} ${c.host ?? 'cluster'} ${c.id} ${c.status}: ${c.summary}`),
  );
