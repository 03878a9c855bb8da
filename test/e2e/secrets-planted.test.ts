/**
 * A host that echoes the sudo password back (issue 16 item 7): an operator pasted it into ~/.nccl.conf (which
 * the nccl stage's probe prints) and into an env file the bundle collects, plain and in the forms a host
 * prints it in (single-quoted, backslash-escaped, JSON). The built CLI is given the password the way a user
 * gives it (--sudo-password-stdin) and runs check, apply, troubleshoot, bundle and report against `lab serve`;
 * none of the password's forms is in any session log, the unpacked bundle, the report, or any stdout/stderr.
 * Figures: `planted secrets: F forms × S sinks, 0 found`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cliEnv } from '../helpers/cli.js';
import { serveLab, stopLab } from '../helpers/lab-serve.js';
import { filesHolding } from '../helpers/processes.js';
import { loadInventoryFile } from '../../src/config/store.js';
import { hostsFromConfig } from '../../src/target.js';
import { quoteWord } from '../../src/transport/quote.js';
import { echoForms } from '../../src/util/secrets.js';

/** Every quote and separator a shell, a JSON or an env file treats specially. */
const PASSWORD = `Planted-Sudo pw;4'2"x\\y,z$`;
const FORMS = [...new Set([...echoForms(PASSWORD), quoteWord(PASSWORD)])];

let lab: ChildProcess | undefined;
let home: string;
let inventory: string;
let env: NodeJS.ProcessEnv;

/** The CLI with the password as the first line of its standard input. */
function cliWithPassword(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const argv = [BIN, ...args, '--inventory', inventory, '--sudo-password-stdin'];
    const child = spawn(process.execPath, argv, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.stdin.end(`${PASSWORD}\n`);
    child.once('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'l20-planted-'));
  env = cliEnv(home);
  inventory = join(home, 'inventory.json');
  lab = await serveLab(['--scenario', 'ready', '--speed', 'max'], inventory, env);
  const hosts = hostsFromConfig(await loadInventoryFile(inventory));
  try {
    const head = hosts[0]!;
    const conf = `NCCL_DEBUG=WARN\nNCCL_PASSWORD=${PASSWORD}\n`;
    await head.run({ argv: ['tee', '/home/l20/.nccl.conf'] }, { stdin: conf });
    const planted = [
      `SUDO_PW=${quoteWord(PASSWORD)}`,
      `ESCAPED=${PASSWORD.replace(/[^A-Za-z0-9_@%+=:,./-]/g, (c) => `\\${c}`)}`,
      `JSON=${JSON.stringify({ pw: PASSWORD })}`,
      `PLAIN ${PASSWORD}`,
    ].join('\n');
    await head.run({ argv: ['tee', '/etc/l20/planted.env'] }, { sudo: true, stdin: `${planted}\n` });
    // Planted where each verb reads: the probe prints it back.
    const echoed = await head.run({ argv: ['cat', '/home/l20/.nccl.conf', '/etc/l20/planted.env'] }, { sudo: true });
    for (const f of FORMS.slice(0, 1)) expect(echoed.stdout).toContain(f);
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
}, 120_000);

afterAll(async () => {
  await stopLab(lab);
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('a sudo password a host echoes back', () => {
  it('is in no session log, bundle, report or output of check, apply, troubleshoot, bundle and report', async () => {
    const runs = [
      ['check', '--json'],
      ['apply', '--stage', 'nccl', '--yes'],
      ['troubleshoot'],
      ['bundle', '--out', join(home, 'bundle.tar.gz')],
      ['report', '--out', join(home, 'report.md')],
    ];
    const outputs: string[] = [];
    for (const args of runs) {
      const r = await cliWithPassword(args);
      expect(r.out, args.join(' ')).not.toMatch(/internal error|refusing to write/);
      expect([0, 1], `${args.join(' ')}: ${r.out.slice(-2000)}`).toContain(r.code);
      outputs.push(r.out);
    }
    const logs = readdirSync(join(home, 'state', 'l20-setup', 'sessions'));
    // check, apply and troubleshoot keep a session log (bundle and report write their own files).
    expect(logs.length).toBe(3);
    const searched = { files: 0 };
    const found = FORMS.flatMap((f) =>
      filesHolding(home, f, searched).map((file) => `${JSON.stringify(f)} in ${file}`),
    );
    for (const f of FORMS) {
      outputs.forEach((o, i) => o.includes(f) && found.push(`${JSON.stringify(f)} in the output of ${runs[i]![0]}`));
    }
    expect(found).toEqual([]);
    // The password was there to leak: the nccl probe's evidence names the planted line, redacted.
    expect(outputs[0]).toContain('NCCL_PASSWORD=[REDACTED:sudo-password]');
    // The bundle and the report were searched (filesHolding unpacks the .tar.gz).
    expect(readFileSync(join(home, 'report.md'), 'utf8')).toMatch(/l20-n1/);
    const sinks = searched.files / FORMS.length + outputs.length;
    console.log(
      `planted secrets: ${FORMS.length} forms of the sudo password in 2 host files × ${sinks} sinks ` +
        `(session logs, bundle members, report, config, ${outputs.length} verbs' stdout+stderr): 0 found`,
    );
  }, 240_000);
});
