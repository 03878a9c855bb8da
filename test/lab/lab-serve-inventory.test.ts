/**
 * `lab serve --inventory-out FILE` in a directory whose name holds a space: OpenSSH connects with the
 * FILE.ssh_config it writes, the Ansible INI quotes every path for each level that splits it, and a
 * `check` over FILE logs each `bash -s` script, which replayed through OpenSSH exits as it did for us
 * (bench/fanout.mjs replays the session log this way).
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';
import { serveLab, sshVia, stopLab } from '../helpers/lab-serve.js';
import { ansibleConnectionVars } from '../../src/commands/lab-serve.js';
import { sshConfigPath } from '../../src/transport/quote.js';

const home = mkdtempSync(join(tmpdir(), 'l20-serve-inv-'));
const dir = join(home, 'with space');
const inventory = join(dir, 'inv.json');
const env = {
  ...process.env,
  HOME: home,
  XDG_STATE_HOME: join(home, 'state'),
  XDG_CONFIG_HOME: join(home, 'config'),
  NO_COLOR: '1',
};
let lab: ChildProcess;

/** OpenSSH with the written config; the script (if any) on its stdin. */
const ssh = (args: string[], stdin = ''): ReturnType<typeof sshVia> => sshVia(inventory, env, args, stdin);

beforeAll(async () => {
  mkdirSync(dir, { recursive: true });
  lab = await serveLab(['--hosts', '2', '--speed', 'max'], inventory, env);
});

afterAll(async () => {
  await stopLab(lab);
  rmSync(home, { recursive: true, force: true });
});

describe('lab serve inventories in a directory with a space', () => {
  it('OpenSSH connects to every host with FILE.ssh_config, checking the host key', async () => {
    const cfg = readFileSync(`${inventory}.ssh_config`, 'utf8');
    expect(cfg).toContain(`  IdentityFile "${dir}/inv.json.d/id_ed25519"\n`);
    expect(cfg).toContain(`  UserKnownHostsFile "${dir}/inv.json.d/known_hosts"\n  StrictHostKeyChecking yes\n`);
    for (const host of ['l20-n1', 'l20-n2'])
      expect(await ssh([host, 'hostname'])).toMatchObject({ code: 0, stdout: `${host}\n` });
  });

  it('the Ansible INI quotes the key for shlex and the known_hosts file for shlex, the shell split and ssh', () => {
    const ini = readFileSync(`${inventory}.ansible.ini`, 'utf8').split('\n');
    expect(ini[0]).toBe('[l20]');
    expect(ini[1]).toMatch(/^l20-n1 ansible_host=127\.0\.0\.1 ansible_port=\d+ ansible_user=l20 /);
    expect(ini[1]!.replace(/^.* ansible_user=l20 /, '')).toBe(
      `ansible_ssh_private_key_file="${dir}/inv.json.d/id_ed25519" ansible_ssh_common_args="-o 'UserKnownHostsFile=\\"${dir}/inv.json.d/known_hosts\\"'"`,
    );
  });

  it("paths with a quote, a backslash or a percent sign: escaped for ssh_config (OpenSSH reads them back), the key moved out of Ansible's own unescaped quoting", async () => {
    const odd = '/tmp/a "b\\c%d';
    expect(sshConfigPath(odd)).toBe('"/tmp/a \\"b\\\\c%%d"');
    const cfg = join(home, 'odd.ssh_config');
    writeFileSync(
      cfg,
      `Host odd\n  HostName 127.0.0.1\n  IdentityFile ${sshConfigPath(`${odd}/id`)}\n  UserKnownHostsFile ${sshConfigPath(`${odd}/kh`)}\n`,
    );
    const { stdout } = await promisify(execFile)('ssh', ['-G', '-F', cfg, 'odd'], { env });
    // -G prints IdentityFile before its %-expansion (done when the key is loaded), UserKnownHostsFile after.
    expect(stdout).toContain(`\nidentityfile /tmp/a "b\\c%%d/id\n`);
    expect(stdout).toContain(`\nuserknownhostsfile ${odd}/kh\n`);
    expect(ansibleConnectionVars({ identityFile: `${odd}/id`, knownHostsFile: `${odd}/kh` })).toBe(
      `ansible_ssh_common_args="-o 'IdentityFile=\\"/tmp/a \\\\\\"b\\\\\\\\c%%d/id\\"' -o 'UserKnownHostsFile=\\"/tmp/a \\\\\\"b\\\\\\\\c%%d/kh\\"'"`,
    );
  });

  it('check logs every bash -s script; replayed through OpenSSH, each exits as it did for us', async () => {
    const r = await cli(['check', '--inventory', inventory, '--stage', 'inventory'], env);
    expect([0, 1]).toContain(r.code); // checks may fail on a fresh lab; 2 would be an error
    const logDir = join(home, 'state', 'l20-setup', 'sessions');
    const events = readdirSync(logDir).flatMap((f) =>
      readFileSync(join(logDir, f), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
    const exits = new Map(events.filter((e) => e.type === 'cmd.exit').map((e) => [e.runId, e.exitCode]));
    const scripted = events.filter((e) => e.type === 'cmd.start' && String(e.commandLine).includes('bash -s'));
    expect(scripted.length).toBeGreaterThan(2);
    for (const e of scripted) {
      expect(typeof e.script).toBe('string');
      const replay = await ssh([String(e.host), String(e.commandLine)], String(e.script));
      expect({ probe: e.probe, code: replay.code }).toEqual({ probe: e.probe, code: exits.get(e.runId) });
    }
    // Lines without a script send nothing on stdin and carry none.
    expect(
      events
        .filter((e) => e.type === 'cmd.start' && !String(e.commandLine).includes('bash -s'))
        .every((e) => e.script === undefined),
    ).toBe(true);
  });
});
