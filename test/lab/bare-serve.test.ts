/**
 * `lab serve --scenario bare` (the built CLI): the hosts serve over real OpenSSH and answer as hosts
 * without pciutils, iproute2, ethtool, systemd and nvidia-utils would; a check over the inventory it
 * wrote runs to its verdicts (exit 1: checks fail), not into an error (exit 2).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliEnv } from '../helpers/cli.js';
import { serveLab, sshVia, stopLab } from '../helpers/lab-serve.js';

const home = mkdtempSync(join(tmpdir(), 'l20-serve-bare-'));
const inventory = join(home, 'inv.json');
const env = cliEnv(home);
let lab: ChildProcess | undefined;

beforeAll(async () => {
  lab = await serveLab(['--hosts', '2', '--speed', 'max', '--scenario', 'bare'], inventory, env);
});
afterAll(async () => {
  await stopLab(lab);
  rmSync(home, { recursive: true, force: true });
});

describe('lab serve --scenario bare', () => {
  it('over OpenSSH: lspci, ip, ethtool, systemctl not found (bash 127, sudo 1); the rest answers', async () => {
    for (const tool of ['lspci', 'ip', 'ethtool', 'systemctl']) {
      expect(await sshVia(inventory, env, ['l20-n1', tool])).toEqual({
        code: 127,
        stdout: '',
        stderr: `bash: ${tool}: command not found\n`,
      });
      expect(await sshVia(inventory, env, ['l20-n2', `sudo -n ${tool}`])).toEqual({
        code: 1,
        stdout: '',
        stderr: `sudo: ${tool}: command not found\n`,
      });
    }
    expect(await sshVia(inventory, env, ['l20-n2', 'hostname'])).toEqual({ code: 0, stdout: 'l20-n2\n', stderr: '' });
  });

  it('check --stage inventory over the written inventory reaches its verdicts', async () => {
    const r = await cli(['check', '--inventory', inventory, '--stage', 'inventory'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(2); // checks that cannot tell are errors
    expect(r.stdout).toMatch(/^\[l20-n1\] PASS {2}inventory\.os {2}Ubuntu 22\.04\.5 LTS/m);
    expect(r.stdout).toMatch(
      /^\[l20-n1\] ERROR {1,2}inventory\.gpus {2}cannot tell: lspci is not installed on l20-n1 \(package pciutils\)$/m,
    );
  });
});
