import { describe, expect, it } from 'vitest';
import * as c from '../../checks/nic-stack/checks.js';
import { collectNicStack, type NicStackFacts } from '../../checks/nic-stack/facts.js';
import { nicStackStage } from '../../checks/nic-stack/index.js';
import type { HostCheckDef, PairCheckDef, StepPlanContext } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { loadFixture } from '../parse/fixtures.js';
import { hostVerdictAsRun } from '../helpers/as-runner.js';
import { testContext } from '../helpers/stage-context.js';
import { PORTS, fabricResults, rdmaNames, run } from './nic-stack-fabric.js';

const ctx = testContext();
const KERNEL = '5.15.0-126-generic';

/** ibv_devinfo as rdma-core's devinfo.c prints a ConnectX-4 Lx Ethernet port (TABs as in the corpus sample). */
function devinfo(names: readonly string[], partId = 4117): string {
  return names
    .map((n, i) =>
      [
        `hca_id:\t${n}`,
        '\ttransport:\t\t\tInfiniBand (0)',
        '\tfw_ver:\t\t\t\t14.32.1010',
        `\tnode_guid:\t\t\tb859:9f03:0001:000${i}`,
        '\tsys_image_guid:\t\t\tb859:9f03:0001:0000',
        '\tvendor_id:\t\t\t0x02c9',
        `\tvendor_part_id:\t\t\t${partId}`,
        '\thw_ver:\t\t\t\t0x0',
        '\tboard_id:\t\t\tMT_2420110034',
        '\tphys_port_cnt:\t\t\t1',
        '\t\tport:\t1',
        '\t\t\tstate:\t\t\tPORT_ACTIVE (4)',
        '\t\t\tmax_mtu:\t\t4096 (5)',
        '\t\t\tactive_mtu:\t\t4096 (5)',
        '\t\t\tsm_lid:\t\t\t0',
        '\t\t\tport_lid:\t\t0',
        '\t\t\tport_lmc:\t\t0x00',
        '\t\t\tlink_layer:\t\tEthernet',
        '',
        '',
      ].join('\n'),
    )
    .join('');
}

function ibvDevices(names: readonly string[]): string {
  return `    ${'device'.padEnd(16)}\t   node GUID\n    ${'------'.padEnd(16)}\t----------------\n${names.map((n, i) => `    ${n.padEnd(16)}\tb8599f030001000${i}\n`).join('')}`;
}

function ethtoolI(version: string, fw = '14.32.1010 (MT_2420110034)'): string {
  return PORTS.map(
    (p) =>
      `### ethtool-i ${p.netdev}\ndriver: mlx5_core\nversion: ${version}\nfirmware-version: ${fw}\nexpansion-rom-version: \nbus-info: ${p.bdf}\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: yes\n`,
  ).join('');
}

const INBOX_DPKG =
  'ii  rdma-core 39.0-1\nii  ibverbs-utils 39.0-1\nii  rdmacm-utils 39.0-1\nii  infiniband-diags 39.0-1\nii  perftest 4.4+0.37-1\n';
const NO_OFED_PKGS = [
  'mlnx-ofed-kernel-utils',
  'mlnx-ofed-kernel-dkms',
  'ofed-scripts',
  'mlnx-tools',
  'doca-ofed',
  'mlnx-ofed-all',
]
  .map((p) => `dpkg-query: no packages found matching ${p}`)
  .join('\n');

/** The ready host's probe results: inbox stack, rdma-core installed and the devices renamed. */
function readyResults(n = 1): Record<string, RunResult> {
  const names = rdmaNames('udev');
  return {
    ...fabricResults(n, { naming: 'udev' }),
    kernel: run(`${KERNEL}\n`),
    'ofed-info': run('', 127, 'bash: ofed_info: command not found\n', 'ofed_info -s'),
    ethtool: run(ethtoolI(KERNEL)),
    modinfo: run('\n'),
    packages: run(INBOX_DPKG, 1, `${NO_OFED_PKGS}\n`),
    'ibv-devices': run(ibvDevices(names)),
    'ibv-devinfo': run(devinfo(names)),
  };
}

function facts(over: Record<string, RunResult> = {}, host = 'l20-n1', n = 1): NicStackFacts {
  return collectNicStack({ host, results: { ...readyResults(n), ...over } });
}

const host = (check: HostCheckDef<NicStackFacts>, f: NicStackFacts) => check.evaluate(f, f.host, ctx);
const pair = (check: PairCheckDef<NicStackFacts>, a: NicStackFacts, b: NicStackFacts) =>
  check.evaluate(
    [
      { host: a.host, facts: a },
      { host: b.host, facts: b },
    ],
    { ...ctx, cluster: undefined },
  );

/** The ethtool -i corpus sample (CX4 Lx, MLNX_OFED 5.0-2.1.8, two firmware versions) relabelled onto our four ports. */
function corpusEthtool(): string {
  const runs = loadFixture('corpus/ethtool-i__cx4lx-mofed-5.0-2.1.8-two-fw-versions.txt')
    .split(/^# ethtool -i \S+\n/m)
    .filter((s) => s.includes('driver:'));
  return runs
    .map(
      (body, i) => `### ethtool-i ${PORTS[i]!.netdev}\n${body.replace(/bus-info: \S+/, `bus-info: ${PORTS[i]!.bdf}`)}`,
    )
    .join('');
}

describe('nic-stack checks', () => {
  it('the inbox stack with renamed devices passes every check', () => {
    const f = facts();
    expect(f.stack.flavor).toBe('inbox');
    expect(f.fabric.ports.map((p) => p.rdmaDevice)).toEqual(rdmaNames('udev'));
    for (const check of [c.flavorCheck, c.driverCheck, c.firmwareCheck, c.userspaceCheck, c.devicesCheck]) {
      expect(host(check, f), check.id).toMatchObject({ status: 'pass' });
    }
    const g = facts({}, 'l20-n2', 2);
    expect(pair(c.parityCheck, f, g)).toMatchObject({ status: 'pass', rule: 'R47' });
    expect(pair(c.firmwareParityCheck, f, g).status).toBe('pass');
  });

  it('flavor (R30): LTS MLNX_OFED passes, the unpublished 23.10-1.1.8.0 fails, a short-lived branch warns', () => {
    const lts = facts({
      'ofed-info': run(`${loadFixture('corpus/ofed_info-s__mofed-5.4-3.6.8-three-part-build-ubuntu.txt')}`),
    });
    expect(lts.stack).toMatchObject({ flavor: 'MLNX_OFED', version: '5.4-3.6.8' });
    expect(host(c.flavorCheck, lts)).toMatchObject({ status: 'pass', rule: 'R30' });
    const typo = host(c.flavorCheck, facts({ 'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.8.0:\n') }));
    expect(typo).toMatchObject({ status: 'fail', rule: 'R30', summary: expect.stringContaining('23.10-1.1.9.0') });
    expect(typo.fix).toContain('nic-stack.install-doca');
    expect(host(c.flavorCheck, facts({ 'ofed-info': run('MLNX_OFED_LINUX-5.5-1.0.3.2:\n') }))).toMatchObject({
      status: 'warn',
      rule: 'R30',
    });
    expect(host(c.flavorCheck, facts({ 'ofed-info': run('OFED-internal-24.10-1.1.4:\n') }))).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('DOCA'),
    });
    expect(host(c.flavorCheck, facts({ 'ofed-info': run('', 1, 'ofed_info: segmentation fault\n') })).status).toBe(
      'warn',
    );
  });

  it('driver: an installed OFED whose mlx5_core is not loaded fails; the loaded OFED driver passes', () => {
    const ofed = {
      'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.9.0:\n'),
      packages: run(`${INBOX_DPKG}ii  mlnx-ofed-kernel-utils 23.10.OFED.23.10.1.1.9.1-1\n`),
    };
    const stale = host(
      c.driverCheck,
      facts({ ...ofed, ethtool: run(ethtoolI(KERNEL)), modinfo: run('23.10-1.1.9\n') }),
    );
    expect(stale).toMatchObject({ status: 'fail', fix: expect.stringContaining('openibd restart') });
    expect(
      host(c.driverCheck, facts({ ...ofed, ethtool: run(ethtoolI('23.10-1.1.9')), modinfo: run('23.10-1.1.9\n') }))
        .status,
    ).toBe('pass');
    // The corpus sample: MLNX_OFED 5.0-2.1.8's driver on ConnectX-4 Lx, read from ethtool -i.
    const corpus = facts({ 'ofed-info': run('MLNX_OFED_LINUX-5.0-2.1.8.0:\n'), ethtool: run(corpusEthtool()) });
    expect(corpus.links.map((l) => l.driverVersion)).toEqual(['5.0-2.1.8', '5.0-2.1.8', '5.0-2.1.8', '5.0-2.1.8']);
    expect(host(c.driverCheck, corpus).status).toBe('pass');
    // An out-of-tree driver version without ofed_info warns.
    expect(host(c.driverCheck, facts({ ethtool: run(ethtoolI('5.0-2.1.8')) })).status).toBe('warn');
  });

  it('firmware: the corpus host with 14.28.2006 on one card warns; different firmware across hosts warns', () => {
    const f = facts({ ethtool: run(corpusEthtool()) });
    const v = host(c.firmwareCheck, f);
    expect(v).toMatchObject({ status: 'warn', summary: expect.stringContaining('14.28.2006') });
    expect(v.summary).toContain(c.CX4LX_FINAL_FIRMWARE);
    const other = facts({ ethtool: run(ethtoolI(KERNEL, '14.31.1014 (MT_2420110034)')) }, 'l20-n2', 2);
    expect(pair(c.firmwareParityCheck, facts(), other)).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('14.31.1014'),
    });
  });

  it('firmware: ports whose ethtool -i names no firmware are "cannot tell"; no ConnectX netdev skips; one host skips parity', () => {
    const noFw = facts({ ethtool: run(ethtoolI(KERNEL).replace(/firmware-version: .*\n/g, '')) });
    expect(host(c.firmwareCheck, noFw)).toMatchObject({
      status: 'error',
      summary: expect.stringMatching(/^cannot tell: ethtool -i reports no firmware-version for ens1f0/),
    });
    expect(host(c.firmwareCheck, noFw).evidence).toContain('firmware-version: not reported by ethtool -i');
    const bare = collectNicStack({ host: 'l20-n1', results: { 'lspci-nics': run('') } });
    expect(host(c.firmwareCheck, bare)).toMatchObject({ status: 'skip' });
    expect(host(c.flavorCheck, bare)).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('no ConnectX function'),
    });
    expect(
      c.firmwareParityCheck.evaluate([{ host: 'l20-n1', facts: facts() }], {
        ...testContext(['l20-n1']),
        cluster: undefined,
      }),
    ).toMatchObject({ status: 'skip', summary: 'one host (l20-n1): nothing to compare' });
  });

  it('userspace: fresh (nothing installed) fails with the install step as the fix', () => {
    const fresh = facts({ packages: run('', 1, 'dpkg-query: no packages found matching rdma-core\n') });
    const v = host(c.userspaceCheck, fresh);
    expect(v).toMatchObject({ status: 'fail', fix: expect.stringContaining('nic-stack.install-inbox') });
    expect(v.summary).toContain('ibverbs-utils');
  });

  it('devices: the corpus ibv_devices list (mlx5_0..3) matches kernel names; a ConnectX-4 (4115) and a missing ibv_devices fail', () => {
    const names = rdmaNames('kernel');
    const kernelNames = {
      ...fabricResults(1, { naming: 'kernel' }),
      'ibv-devices': run(loadFixture('corpus/ibv_devices__cx4lx-4dev-raw-tabs.txt')),
      'ibv-devinfo': run(devinfo(names)),
    };
    const f = facts(kernelNames);
    expect(f.ibvDevices).toEqual(['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']);
    expect(host(c.devicesCheck, f)).toMatchObject({ status: 'pass' });
    expect(host(c.devicesCheck, facts({ ...kernelNames, 'ibv-devinfo': run(devinfo(names, 4115)) }))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('4115'),
    });
    // A missing ibv_devices says nothing about the devices: the engine answers "cannot tell" and names the package.
    const missingRun = run('', 127, 'bash: line 1: ibv_devices: command not found\n', 'ibv_devices');
    const missing = hostVerdictAsRun(
      nicStackStage.probes,
      c.devicesCheck,
      { ...readyResults(), 'ibv-devices': missingRun },
      (r) => collectNicStack({ host: 'l20-n1', results: r }),
      'l20-n1',
      ctx,
    );
    expect(missing).toMatchObject({
      status: 'error',
      summary: expect.stringContaining('ibv_devices is not installed on l20-n1 (package ibverbs-utils)'),
      fix: expect.stringContaining('sudo apt-get install -y ibverbs-utils'),
    });
    // ibv_devices present but failing is no verdict on the devices either.
    expect(
      host(
        c.devicesCheck,
        facts({ 'ibv-devices': run('', 1, 'Failed to get IB devices list: Function not implemented\n') }),
      ),
    ).toMatchObject({
      status: 'error',
      summary: 'cannot tell: ibv_devices failed',
      fix: expect.stringContaining('install-inbox'),
    });
    // rdma link names the devices rocep… but ibv_devices (old names) does not list them.
    expect(host(c.devicesCheck, facts({ 'ibv-devices': run(ibvDevices(names)) })).status).toBe('fail');
  });

  it('parity (R47): inbox on one host and MLNX_OFED on the other fails', () => {
    const ofed = facts(
      { 'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.9.0:\n'), packages: run('ii  rdma-core 2307mlnx47-1.2310119\n') },
      'l20-n2',
      2,
    );
    expect(pair(c.parityCheck, facts(), ofed)).toMatchObject({
      status: 'fail',
      rule: 'R47',
      summary: expect.stringContaining('MLNX_OFED 23.10-1.1.9.0'),
    });
  });

  it('install-inbox plans the five packages on an inbox host and nothing on an OFED host', () => {
    const [inbox, doca] = nicStackStage.steps!;
    const plan = (f: NicStackFacts) =>
      inbox!.plan!({
        ...ctx,
        host: f.host,
        hostIndex: 0,
        facts: f,
        all: [{ host: f.host, facts: f }],
        results: [],
      } as StepPlanContext<NicStackFacts>);
    const fresh = facts({ packages: run('', 1, 'dpkg-query: no packages found matching rdma-core\n') });
    const p = plan(fresh);
    expect(p?.commands?.map((x) => ('argv' in x.command ? x.command.argv.join(' ') : ''))).toEqual([
      'apt-get update',
      'env DEBIAN_FRONTEND=noninteractive apt-get install -y rdma-core ibverbs-utils rdmacm-utils infiniband-diags perftest',
    ]);
    expect(plan(facts({ 'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.9.0:\n') }))).toBeNull();
    // DOCA is planned only over a stack that fails the flavor check, with the driver reload last.
    const bad = facts({ 'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.8.0:\n') });
    const d = doca!.plan!({
      ...ctx,
      host: bad.host,
      hostIndex: 0,
      facts: bad,
      all: [],
      results: [],
    } as StepPlanContext<NicStackFacts>);
    const argv = d?.commands?.map((x) => ('argv' in x.command ? x.command.argv.join(' ') : '')) ?? [];
    expect(argv[0]).toBe('/usr/sbin/ofed_uninstall.sh --force');
    expect(argv.at(-1)).toBe('/etc/init.d/openibd restart');
    expect(
      doca!.plan!({
        ...ctx,
        host: 'l20-n1',
        hostIndex: 0,
        facts: facts(),
        all: [],
        results: [],
      } as StepPlanContext<NicStackFacts>),
    ).toBeNull();
  });
});
