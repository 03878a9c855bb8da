/**
 * The `bare` scenario: the packages of the tools the probes use are gone, and the host answers as a
 * real one lacking them — bash's `command not found` (127), sudo's (1; sudo 1.9 prints `sudo: X: command
 * not found`), `command -v` failing, the absolute path not existing — while everything else works.
 */
import type { Client } from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Lab } from '../../lab/index.js';
import { resolveScenario, SCENARIOS } from '../../lab/scenarios/index.js';
import { closeLab, exec, openLab, text, type TextResult } from './helpers.js';

/** The probe tools the scenario removes: name, the path its package installs, the package. */
const GONE = [
  { tool: 'lspci', path: '/usr/bin/lspci', pkg: 'pciutils' },
  { tool: 'ip', path: '/usr/sbin/ip', pkg: 'iproute2' },
  { tool: 'rdma', path: '/usr/sbin/rdma', pkg: 'iproute2' },
  { tool: 'ethtool', path: '/usr/sbin/ethtool', pkg: 'ethtool' },
  { tool: 'systemctl', path: '/usr/bin/systemctl', pkg: 'systemd' },
] as const;

describe('bare: the probe tools are not installed (ready+bare)', () => {
  let lab: Lab;
  let conn: Client;
  const run = async (cmd: string): Promise<TextResult> => text(await exec(conn, cmd));

  beforeAll(async () => {
    ({ lab, conn } = await openLab({ scenario: 'ready+bare' }));
  });
  afterAll(async () => {
    await closeLab(lab, conn);
  });

  it('is a known scenario that composes', () => {
    expect(SCENARIOS).toContain('bare');
    expect(resolveScenario('fresh+bare').map((s) => s.name)).toEqual(['fresh', 'bare']);
  });

  for (const { tool, path, pkg } of GONE) {
    it(`${tool}: bash 127, sudo 1, command -v fails, ${path} does not exist, ${pkg} not installed`, async () => {
      expect(await run(`${tool} --version`)).toEqual({ out: '', err: `bash: ${tool}: command not found\n`, code: 127 });
      const sudoMessage = `sudo: ${tool}: command not found\n`;
      expect(await run(`sudo ${tool} --version`)).toEqual({ out: '', err: sudoMessage, code: 1 });
      expect(await run(`command -v ${tool}`)).toEqual({ out: '', err: '', code: 1 });
      const noFile = `bash: ${path}: No such file or directory\n`;
      expect(await run(`${path} --version`)).toEqual({ out: '', err: noFile, code: 127 });
      expect(await run(`test -e ${path}`)).toMatchObject({ code: 1 });
      // Gone from dpkg's database (exit 1), or `rc` where conffiles stay: not installed either way.
      const status = await run(`dpkg-query -W -f='\${db:Status-Abbrev}' ${pkg}`);
      expect(status.out === '' ? `exit ${status.code}` : status.out, `${pkg} in dpkg`).toMatch(/^(exit 1|rc )$/);
    });
  }

  it("nvidia-smi: no nvidia-utils, so not found (with the command-not-found hint the lab's database has)", async () => {
    const r = await run('nvidia-smi');
    expect(r.code).toBe(127);
    expect(r.err).toMatch(/^Command 'nvidia-smi' not found, but can be installed with:\n/);
    expect(await run('command -v nvidia-smi')).toEqual({ out: '', err: '', code: 1 });
    expect((await run('ls /usr/bin/nvidia-smi')).code).toBe(2);
  });

  it('the rest works: the shell, coreutils, lscpu, dpkg, the files ready left', async () => {
    expect(await run('echo ok | tr a-z A-Z')).toEqual({ out: 'OK\n', err: '', code: 0 });
    expect((await run('lscpu')).out).toMatch(/^Architecture: +x86_64$/m);
    expect((await run('cat /etc/nccl.conf')).out).toMatch(/^NCCL_IB_HCA=/m);
    expect((await run('sudo cat /etc/l20/vllm.env')).out).toMatch(/^VLLM_API_KEY=[0-9a-f]{64}$/m);
    expect((await run("dpkg-query -W -f='${Package}\\n' chrony")).out).toBe('chrony\n');
    expect((await run('command -v bash')).out).toBe('/usr/bin/bash\n');
  });

  it('fresh+bare and bare alone are the same state (bare starts from fresh)', async () => {
    const { lab: alone, conn: c } = await openLab({ scenario: 'bare', hosts: 1 });
    try {
      expect(text(await exec(c, 'lspci'))).toEqual({ out: '', err: 'bash: lspci: command not found\n', code: 127 });
      const fabric = alone.cluster.machines[0]!.netdevs.filter((d) => d.driver === 'mlx5_core');
      expect(fabric.every((d) => !d.adminUp)).toBe(true);
    } finally {
      await closeLab(alone, c);
    }
  });
});
