/**
 * Inert by construction: hostile bytes planted at every entry point — a pre-KEX SSH_MSG_DISCONNECT description,
 * the identification line and the lines before it, a step's result and notes, file names given to lint and
 * doctor — and every sink checked: each verb's stdout, stderr, parsed --json values, and every file it writes
 * (bundle's SUMMARY.md and <host>/ERROR.txt, session logs, reports), plus the engine's events. None may hold a
 * raw ESC, C0 other than tab/newline, C1, BEL or bidi control, nor one escaped in JSON (\u009b parses back).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { runProcedure } from '../../src/engine/procedure.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { StepDef, StepResult } from '../../src/engine/types.js';
import { stageById } from '../../checks/stages.js';
import { FakeHost } from '../helpers/fake-host.js';
import { HOSTILE_TEXT, hostileSshServer } from '../helpers/hostile-ssh-server.js';
import { tmuxServer } from '../helpers/tmux.js';
import { serveLab, sshVia, stopLab } from '../helpers/lab-serve.js';
import { BIN, cli, cliEnv } from '../helpers/cli.js';

/** What no sink may hold: C0 but tab and newline, DEL, C1, bidi controls (BEL and ESC are C0). */

const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/u;

let sinksChecked = 0;
function inert(what: string, text: string): void {
  sinksChecked++;
  const at = text.search(RAW);
  const near = JSON.stringify(text.slice(Math.max(0, at - 40), at + 20));
  expect(at, `${what}: raw control U+${text.codePointAt(at)?.toString(16)} near ${near}`).toBe(-1);
}

/** JSON output: the text is inert and so is every string value once parsed (an escaped \u009b parses back). */
function inertJson(what: string, text: string): void {
  inert(what, text);
  const walk = (v: unknown, path: string): void => {
    if (typeof v === 'string') {
      const at = v.search(RAW);
      expect(at, `${what} ${path}: U+${v.codePointAt(at)?.toString(16)} in the value`).toBe(-1);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}.${k}`);
  };
  walk(JSON.parse(text), '$');
}

/** Every regular file under dir (the session logs, reports and state a verb left in its HOME). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

let dir: string;
let inventory: string;
const servers: Array<Awaited<ReturnType<typeof hostileSshServer>>> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'l20-inert-'));
  // Entry 1: a plain identification line, then the hostile disconnect. Entry 2: hostile bytes in the lines
  // before the identification line and in the identification line itself (its comment), then the same disconnect.
  servers.push(await hostileSshServer());
  servers.push(
    await hostileSshServer({
      preIdent: [`hello ${HOSTILE_TEXT}`],
      ident: `SSH-2.0-OpenSSH_9.6 ${HOSTILE_TEXT}`,
    }),
  );
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'id_ed25519')]);
  writeFileSync(join(dir, 'known_hosts'), '');
  inventory = join(dir, 'inv.json');
  const host = (name: string, port: number, role: string) => ({
    name,
    address: '127.0.0.1',
    port,
    user: 'l20',
    role,
    mgmtInterface: 'eno1',
    auth: { method: 'identityFile', path: join(dir, 'id_ed25519') },
    knownHostsFile: join(dir, 'known_hosts'),
  });
  writeFileSync(
    inventory,
    JSON.stringify({
      version: 1,
      hosts: [host('l20-n1', servers[0]!.port, 'head'), host('l20-n2', servers[1]!.port, 'worker')],
    }),
  );
});

afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
  // docs/RELIABILITY.md's figure: 40 sinks read and found inert. Fewer means a sink went unread (a verb
  // wrote no file, a bundle held no ERROR.txt) and the claim would no longer be measured.
  expect(sinksChecked).toBeGreaterThanOrEqual(40);
});

/** Runs a verb with a fresh HOME; checks both streams and every file it left there. */
async function verb(args: string[], json = false): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(dir, 'home-'));
  const r = await cli(args, cliEnv(home));
  const name = args.join(' ');
  if (json && r.stdout.trim() !== '') inertJson(`${name}: stdout`, r.stdout);
  else inert(`${name}: stdout`, r.stdout);
  inert(`${name}: stderr`, r.stderr);
  for (const f of filesUnder(home)) inert(`${name}: ${f}`, readFileSync(f, 'utf8'));
  return r;
}

describe('hostile bytes before key exchange reach no sink raw', () => {
  it("troubleshoot: stderr names each host and the server's words, inert", async () => {
    const r = await verb(['troubleshoot', '--inventory', inventory]);
    // The description arrived (its visible words are there) and nothing else of it did.
    expect(r.stderr).toMatch(/cannot connect to l20-n1: .*evil/);
    expect(r.stderr).toMatch(/cannot connect to l20-n2: .*evil/);
    expect(r.stderr).not.toContain('pwned');
    await verb(['troubleshoot', '--inventory', inventory, '--json'], true);
  }, 60_000);

  it('monitor --once, plain and --json', async () => {
    const plain = await verb(['monitor', '--once', '--inventory', inventory]);
    expect(`${plain.stdout}${plain.stderr}`).toMatch(/evil/);
    const json = await verb(['monitor', '--once', '--json', '--inventory', inventory], true);
    expect(json.stdout).toMatch(/evil/);
  }, 60_000);

  it('check, plain and --json', async () => {
    const plain = await verb(['check', '--stage', 'inventory', '--inventory', inventory]);
    expect(`${plain.stdout}${plain.stderr}`).toMatch(/evil/);
    await verb(['check', '--stage', 'inventory', '--json', '--inventory', inventory], true);
  }, 60_000);

  it('bundle: its output, SUMMARY.md and each <host>/ERROR.txt', async () => {
    const out = join(dir, 'bundle.tar.gz');
    await verb(['bundle', '--inventory', inventory, '--out', out]);
    const unpacked = join(dir, 'bundle');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', out, '-C', unpacked]);
    const files = filesUnder(unpacked);
    const errors = files.filter((f) => f.endsWith('ERROR.txt'));
    expect(errors.length, files.join('\n')).toBe(2);
    expect(
      files.some((f) => f.endsWith('SUMMARY.md')),
      files.join('\n'),
    ).toBe(true);
    for (const f of files) inert(`bundle: ${f}`, readFileSync(f, 'utf8'));
    for (const f of errors) expect(readFileSync(f, 'utf8')).toMatch(/evil/);
  }, 60_000);
});

describe('the TUI in tmux, the same hosts', () => {
  it('screen, pane title and clipboard: the reason shows, inert; no title set, no paste buffer made', async () => {
    const server = tmuxServer(`l20inert-${process.pid}`);
    const { tmux } = server;
    try {
      const t = server.terminal('inert');
      // With set-clipboard on, an OSC 52 that reached the terminal would create a paste buffer.
      tmux('set-option', '-s', 'set-clipboard', 'on');
      tmux('select-pane', '-t', 'inert', '-T', 'l20-inert-title');
      t.keys(`node ${BIN} --inventory ${inventory}`, 'Enter');
      const bothFailed = (x: string) => /l20-n1 .*failed .*evil/.test(x) && /l20-n2 .*failed .*evil/.test(x);
      const screen = await t.until(bothFailed, 'both hosts failed');
      inert('TUI screen', screen);
      sinksChecked += 2; // the title and the clipboard
      expect(tmux('display', '-p', '-t', 'inert', '#{pane_title}').trim()).toBe('l20-inert-title');
      expect(() => tmux('show-buffer'), 'an OSC 52 set the paste buffer').toThrow();
      t.keys('q');
      await t.until((x) => !x.includes('l20-setup · pipeline'), 'the TUI to quit');
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('hostile file names for lint and doctor', () => {
  const NAME = `name${HOSTILE_TEXT}.conf`;

  it('lint, plain and --json, a readable and a missing file', async () => {
    const file = join(dir, NAME);
    writeFileSync(file, 'NCCL_DEBUG=WARN\n');
    const plain = await verb(['lint', file, join(dir, `missing-${NAME}`)]);
    // Named exactly, with its controls as \u escapes.
    expect(plain.stdout).toContain('name\\u001b]52;c;aGk=\\u0007');
    expect(plain.stdout).toContain('\\u202eevil');
    const json = await verb(['lint', '--json', file, join(dir, `missing-${NAME}`)], true);
    expect(JSON.parse(json.stdout).files).toHaveLength(2);
  }, 60_000);

  it('doctor, plain and --json, a readable and a missing file', async () => {
    const file = join(dir, `doctor-${NAME}`);
    writeFileSync(file, "CA 'mlx5_0'\n\tCA type: MT4129\n");
    await verb(['doctor', file]);
    await verb(['doctor', '--json', file], true);
    const missing = await verb(['doctor', join(dir, `missing-${NAME}`)]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('\\u202eevil');
  }, 60_000);
});

/**
 * A `netplan` ahead of the real one on PATH (/usr/local/sbin, as on Ubuntu) that answers `generate` with
 * hostile bytes on stderr and exit 1 (the lab's checks read through `netplan get`, which it passes on):
 * the step's error carries that raw tail.
 */
const HOSTILE_NETPLAN = `#!/bin/sh
if [ "$1" = generate ]; then
  printf 'generate: \\033]52;c;aGk=\\007\\033]0;pwned\\007\\033[2J evil\\n' >&2
  exit 1
fi
exec /usr/bin/netplan "$@"
`;

describe('apply --stage network on a lab whose netplan prints OSC 52', () => {
  it("the failed step's output shows, inert, in stdout, stderr and the session log", async () => {
    const labDir = mkdtempSync(join(dir, 'lab-'));
    const env = cliEnv(labDir);
    const labInventory = join(labDir, 'inv.json');
    const lab = await serveLab(['--scenario', 'mtu-mismatch', '--speed', 'max'], labInventory, env);
    try {
      for (const h of ['l20-n1', 'l20-n2']) {
        const path = '/usr/local/sbin/netplan';
        const script = `base64 -d | sudo tee ${path} >/dev/null && sudo chmod 755 ${path}`;
        const w = await sshVia(labInventory, env, [h, script], Buffer.from(HOSTILE_NETPLAN).toString('base64'));
        expect(w.code, w.stderr).toBe(0);
      }
      const r = await verb(['apply', '--stage', 'network', '--yes', '--inventory', labInventory]);
      expect(r.stdout).toMatch(/FAIL {2}network.write .*\n.*netplan generate.* exited 1\n +generate: +evil$/m);
    } finally {
      await stopLab(lab);
    }
  }, 90_000);
});

describe('a step that returns raw host output', () => {
  it('runProcedure cleans every result and note before anyone sees it', async () => {
    const host = new FakeHost('l20-n1', () => ({ stdout: '' }));
    const engine = new Engine([host]);
    const events: EngineEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const stage = stageById('network')!;
    // What the armed steps do: a failed command's raw stdout+stderr tail in the error; a diff of a host's file.
    const step: StepDef<unknown> = {
      id: 'network.hostile',
      title: 'hostile',
      danger: 'network',
      guards: [],
      execute: async (ctx) => {
        ctx.note('l20-n1', `generate said ${HOSTILE_TEXT}`);
        return [
          {
            id: 'network.hostile',
            stage: 'network',
            host: 'l20-n1',
            status: 'failed',
            danger: 'network',
            summary: `netplan ${HOSTILE_TEXT}`,
            commands: [`netplan generate ${HOSTILE_TEXT}`],
            diff: `+${HOSTILE_TEXT}\n`,
            changed: false,
            error: `netplan generate failed (exit 1): ${HOSTILE_TEXT}`,
          } satisfies StepResult,
        ];
      },
    } as StepDef<unknown>;
    const signal = new AbortController().signal;
    const results = await runProcedure(
      {
        engine,
        dryRun: false,
        backupDir: '/tmp/none',
        reconnectTimeoutMs: 1000,
        host: () => host,
        writeFile: () => Promise.reject(new Error('not used')),
      },
      stage,
      step,
      ['l20-n1'],
      [],
      [],
      engine.hostRunner('network', signal),
      signal,
    );
    inertJson('step results', JSON.stringify(results));
    inertJson('engine events', JSON.stringify(events));
    expect(results[0]!.error).toMatch(/exit 1\): evil$/);
    expect(events.some((e) => e.type === 'step.note' && e.line === 'generate said evil')).toBe(true);
  });
});
