/**
 * The gpudirect stage against the lab over real SSH: DMA-BUF on `ready`, nvidia-peermem refused by the
 * inbox ib_core and loaded on DOCA-OFED, ACS from the BIOS switched off by a boot unit that survives
 * reboots, and iommu=pt through update-grub and a reboot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { gpudirectStage } from '../../checks/gpudirect/index.js';
import { parseLsmod } from '../../src/parse/lsmod.js';
import { parseLspci } from '../../src/parse/lspci.js';
import { rebootAndWait } from '../../src/engine/reboot.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, find, notPassing, withLabTarget } from './helpers.js';

describe('gpudirect on the ready lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  });
  afterAll(() => t.close());

  it('every check passes: DMA-BUF, ACS off, iommu=pt booted, P2P inside each socket', async () => {
    const o = await new Engine(t.hosts, { config: t.config }).runStage(gpudirectStage);
    expect(notPassing(o)).toEqual([]);
    expect(find(o, 'gpudirect.path', 'l20-n1')?.summary).toContain('DMA-BUF');
    expect((await t.hosts[0]!.run({ argv: ['cat', '/proc/cmdline'] })).stdout).toMatch(/ iommu=pt\n$/);
  });

  it('modprobe nvidia-peermem fails on the inbox stack: Invalid argument, Unknown symbol in dmesg', async () => {
    const h = t.hosts[1]!;
    const r = await h.run({ argv: ['modprobe', 'nvidia-peermem'] }, { sudo: true });
    expect(r).toMatchObject({
      exitCode: 1,
      stderr: "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument\n",
    });
    expect((await h.run({ script: 'dmesg | grep peermem' }, { sudo: true })).stdout).toMatch(
      /nvidia_peermem: Unknown symbol ib_register_peer_memory_client \(err -2\)/,
    );
    expect(parseLsmod((await h.run({ argv: ['lsmod'] })).stdout).modules.map((m) => m.name)).not.toContain(
      'nvidia_peermem',
    );
  });

  it('setpci writes ACS control until the next reboot', async () => {
    const h = t.hosts[1]!;
    const bridge = '0000:17:00.0';
    expect((await h.run({ argv: ['setpci', '-s', bridge, 'ECAP_ACS+0x6.w'] })).stdout).toBe('0000\n');
    expect((await h.run({ argv: ['setpci', '-s', bridge, 'ECAP_ACS+0x6.w=001d'] })).exitCode).toBe(1);
    await h.run({ argv: ['setpci', '-s', bridge, 'ECAP_ACS+0x6.w=001d'] }, { sudo: true });
    const on = parseLspci((await h.run({ argv: ['lspci', '-vv', '-s', bridge] }, { sudo: true })).stdout).devices[0];
    expect(on?.acsCtl).toMatchObject({
      SrcValid: true,
      ReqRedir: true,
      CmpltRedir: true,
      UpstreamFwd: true,
      TransBlk: false,
    });
    const engine = new Engine(t.hosts, { config: t.config });
    expect(find(await engine.runStage(gpudirectStage), 'gpudirect.acs', 'l20-n2')).toMatchObject({
      status: 'fail',
      rule: 'R36',
    });
    const r = await rebootAndWait(h, (host, label, command, options) => h.run(command, options ?? {}), {
      timeoutMs: 60_000,
    });
    expect(r.ok).toBe(true);
    expect((await h.run({ argv: ['setpci', '-s', bridge, 'ECAP_ACS+0x6.w'] })).stdout).toBe('0000\n');
  });
});

describe("acs-enabled: the BIOS turns ACS on above node 1's GPUs and NIC 1", () => {
  it("fails R36 with the bridges' ACSCtl lines; acs-off clears it now and after every reboot", () =>
    withLabTarget({ scenario: 'acs-enabled' }, async (t) => {
      const engine = new Engine(t.hosts, { config: t.config });
      const o = await engine.runStage(gpudirectStage);
      const acs = find(o, 'gpudirect.acs', 'l20-n1');
      expect(acs).toMatchObject({ status: 'fail', rule: 'R36' });
      expect(acs?.evidence).toContain(
        '0000:17:00.0 ACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans- (above 0000:18:00.0)',
      );
      expect(find(o, 'gpudirect.acs', 'l20-n2')?.status).toBe('pass');
      const exec = applier(engine);
      const first = await exec.applyStage(gpudirectStage);
      expect((first.steps ?? []).filter((s) => s.changed).map((s) => `${s.host}:${s.id}`)).toEqual([
        'l20-n1:gpudirect.acs-off',
      ]);
      expect(notPassing(first)).toEqual([]);
      expect((await exec.applyStage(gpudirectStage)).changed).toBe(0);

      const h = t.hosts[0]!;
      expect((await h.run({ argv: ['systemctl', 'is-enabled', 'l20-acs-off.service'] })).stdout).toBe('enabled\n');
      const r = await rebootAndWait(h, (host, label, command, options) => h.run(command, options ?? {}), {
        timeoutMs: 60_000,
      });
      expect(r.ok).toBe(true);
      expect(notPassing(await engine.runStage(gpudirectStage))).toEqual([]);
    }));
});

describe('no-peermem: DOCA-OFED with the proprietary driver and no nvidia-peermem', () => {
  it('has no GPUDirect path (R34); the peermem step loads and persists it; a second apply changes nothing', () =>
    withLabTarget({ scenario: 'no-peermem' }, async (t) => {
      const engine = new Engine(t.hosts, { config: t.config });
      const o = await engine.runStage(gpudirectStage);
      for (const host of ['l20-n1', 'l20-n2']) {
        expect(find(o, 'gpudirect.path', host)).toMatchObject({
          status: 'warn',
          rule: 'R34',
          summary: expect.stringContaining('no GPUDirect RDMA path'),
        });
      }
      const exec = applier(engine);
      const first = await exec.applyStage(gpudirectStage);
      expect((first.steps ?? []).filter((s) => s.changed).map((s) => `${s.host}:${s.id}`)).toEqual([
        'l20-n1:gpudirect.peermem',
        'l20-n2:gpudirect.peermem',
      ]);
      expect(notPassing(first)).toEqual([]);
      expect(find(first, 'gpudirect.path', 'l20-n2')?.summary).toContain(
        'nvidia-peermem: loaded on the DOCA-OFED ib_core',
      );
      expect((await exec.applyStage(gpudirectStage)).changed).toBe(0);
      const lsmod = parseLsmod((await t.hosts[0]!.run({ argv: ['lsmod'] })).stdout);
      expect(lsmod.modules.find((m) => m.name === 'ib_core')?.usedBy).toContain('nvidia_peermem');
    }));
});

describe('gpudirect from fresh', () => {
  it('IOMMU translated warns (R36); iommu-pt writes grub.d, runs update-grub and reboots into iommu=pt', () =>
    withLabTarget({ scenario: 'fresh' }, async (t) => {
      const engine = new Engine(t.hosts, { config: t.config });
      const o = await engine.runStage(gpudirectStage);
      expect(find(o, 'gpudirect.iommu', 'l20-n1')).toMatchObject({
        status: 'warn',
        rule: 'R36',
        evidence: expect.stringContaining('iommu: Default domain type: Translated'),
      });
      const exec = applier(engine);
      const first = await exec.applyStage(gpudirectStage);
      expect((first.steps ?? []).filter((s) => s.changed).map((s) => `${s.host}:${s.id}`)).toEqual([
        'l20-n1:gpudirect.iommu-pt',
        'l20-n2:gpudirect.iommu-pt',
      ]);
      expect(find(first, 'gpudirect.iommu', 'l20-n2')).toMatchObject({
        status: 'pass',
        evidence: expect.stringContaining('Passthrough (set via kernel command line)'),
      });
      expect((await t.hosts[0]!.run({ argv: ['grep', '-c', 'iommu=pt', '/boot/grub/grub.cfg'] })).stdout).toBe('1\n');
      expect((await exec.applyStage(gpudirectStage)).changed).toBe(0);
    }));
});
