import { describe, expect, it } from 'vitest';
import * as c from '../../checks/gpu-driver/checks.js';
import { collectGpuDriver, type GpuDriverFacts } from '../../checks/gpu-driver/facts.js';
import { install, removeConflicts, persistence } from '../../checks/gpu-driver/steps.js';
import type { CheckDef, HostCheckDef, PairCheckDef, StepDef, StepPlanContext } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';
import { NO_SYSTEMD, notFound, unreadableVerdict } from '../helpers/needs.js';
import { gpuDriverStage } from '../../checks/gpu-driver/index.js';
import { loadFixture, splitSamples } from '../parse/fixtures.js';

const ctx = testContext();
const run = (stdout: string, exitCode = 0, stderr = '', commandLine = 'x'): RunResult => ({
  commandLine,
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});
const host = (check: CheckDef<GpuDriverFacts>, f: GpuDriverFacts) =>
  (check as HostCheckDef<GpuDriverFacts>).evaluate(f, f.host, ctx);

const BDFS = ['18', '19', '3a', '3b', '98', '99', 'ba', 'bb'];
const LSPCI =
  BDFS.map((b) => `0000:${b}:00.0 3D controller [0302]: NVIDIA Corporation AD102GL [L20] [10de:26ba] (rev a1)`).join(
    '\n',
  ) + '\n';
const query = (version: string, persistence = 'Enabled'): string =>
  BDFS.map(
    (b, i) => `${i}, NVIDIA L20, 00000000:${b.toUpperCase()}:00.0, ${version}, ${persistence}, 46068, 350.00, 1, 16`,
  ).join('\n') + '\n';
const OPEN_580 =
  'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.126.09  Release Build  (root@l20-n1)  Sun Nov 29 10:00:00 UTC 2026\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n';
const dpkg = (
  branch: string,
  version: string,
  flavour: 'server-open' | 'open' | '' = 'server-open',
  status = 'hi ',
): string => {
  const us = flavour === 'server-open' ? `${branch}-server` : branch;
  const ks = flavour === '' ? us : `${us}-open`;
  return (
    [
      `nvidia-driver-${ks}`,
      `nvidia-dkms-${ks}`,
      `nvidia-utils-${us}`,
      `libnvidia-compute-${us}`,
      `nvidia-compute-utils-${us}`,
      `nvidia-kernel-common-${us}`,
    ]
      .map((n) => `${status}${n} ${version}`)
      .join('\n') + '\n'
  );
};
const POLICY =
  'nvidia-driver-580-server-open:\n  Installed: 580.126.09-0ubuntu0.22.04.1\n  Candidate: 580.126.09-0ubuntu0.22.04.1\n  Version table:\n *** 580.126.09-0ubuntu0.22.04.1 500\n        500 http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages\n        100 /var/lib/dpkg/status\n';

/** A converged host (what `ready` leaves): 580 open loaded, packages held, persistence on. */
function facts(over: Record<string, RunResult> = {}, name = 'l20-n1'): GpuDriverFacts {
  return collectGpuDriver({
    host: name,
    results: {
      kernel: run('5.15.0-126-generic\n'),
      'nvidia-version': run(OPEN_580),
      modules: run(
        'nvidia_uvm 1830912 0 - Live 0x0000000000000000 (OE)\nnvidia 14299136 1 nvidia_uvm, Live 0x0000000000000000 (OE)\n',
      ),
      packages: run(
        dpkg('580', '580.126.09-0ubuntu0.22.04.1'),
        1,
        'dpkg-query: no packages found matching linux-modules-nvidia-*\ndpkg-query: no packages found matching cuda-drivers*\n',
      ),
      runfile: run(''),
      dkms: run('nvidia-srv/580.126.09, 5.15.0-126-generic, x86_64: installed\n'),
      'lspci-gpus': run(LSPCI),
      query: run(query('580.126.09')),
      smi: run(loadFixture('h200-x2/nvidia-smi.txt').replace(/580\.159\.04/g, '580.126.09')),
      persistenced: run('active\n'),
      'secure-boot': run('SecureBoot disabled\n'),
      nvcc: run('nvcc: not found\n', 127),
      candidate: run(POLICY, 0, '', 'apt-cache policy nvidia-driver-580-server-open'),
      holds: run('nvidia-driver-580-server-open\nnvidia-dkms-580-server-open\n'),
      ...over,
    },
  });
}

const FRESH: Record<string, RunResult> = {
  'nvidia-version': run('', 1, 'cat: /proc/driver/nvidia/version: No such file or directory\n'),
  modules: run('nouveau 2269184 0 - Live 0x0000000000000000\nnvidiafb 53248 0 - Live 0x0000000000000000\n'),
  packages: run('', 1, 'dpkg-query: no packages found matching nvidia-driver-*\n'),
  dkms: run('', 1, 'sudo: dkms: command not found\n'),
  query: run('', 127, 'bash: line 1: nvidia-smi: command not found\n'),
  smi: run('', 127, 'bash: line 1: nvidia-smi: command not found\n'),
  persistenced: run('inactive\n', 3),
  holds: run(''),
};

describe('gpu-driver checks on facts read from real formats', () => {
  it('a converged host passes every host check and reads 8 × L20 on the lspci bus ids', () => {
    const f = facts();
    for (const check of c.gpuDriverChecks.filter((x) => x.scope === 'host'))
      expect(host(check, f).status, check.id).toBe('pass');
    expect(f.loaded).toMatchObject({ version: '580.126.09', open: true });
    expect(host(c.gpusCheck, f).summary).toContain('8 × NVIDIA L20, 46068 MiB, 350 W');
    expect(host(c.branchCheck, f)).toMatchObject({ rule: 'R33', summary: expect.stringContaining('R580 LTSB') });
  });

  it('fresh: no driver (nouveau) fails loaded and gpus, with the install step as the fix', () => {
    const f = facts(FRESH);
    expect(host(c.loadedCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('nouveau'),
      fix: expect.stringContaining('gpu-driver.install'),
    });
    // No driver is no install method to judge: not a pass on nothing.
    expect(host(c.methodCheck, f)).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('no GPU driver installed'),
    });
    expect(host(c.branchCheck, f).status).toBe('skip');
    expect(host(c.openCheck, f).status).toBe('skip');
    expect(host(c.gpusCheck, f)).toMatchObject({
      status: 'fail',
      summary: 'nvidia-smi is not installed (no NVIDIA driver) beside 8 GPU(s) on the PCIe bus',
      fix: expect.stringContaining('gpu-driver.install'),
    });
    expect(host(c.persistenceCheck, f).status).toBe('skip');
  });

  it('installed but not rebooted: the module is not loaded and nvidia-smi cannot reach the driver', () => {
    const f = facts({
      ...FRESH,
      packages: run(dpkg('580', '580.126.09-0ubuntu0.22.04.1', 'server-open', 'ii ')),
      query: run(
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n\n",
        9,
      ),
    });
    expect(host(c.loadedCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('reboot is pending'),
    });
    expect(host(c.gpusCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining("couldn't communicate"),
    });
    // The installed package decides branch and flavour before the reboot.
    expect(host(c.openCheck, f).status).toBe('pass');
  });

  it('new userspace over the old loaded module: NVML mismatch', () => {
    const f = facts({
      'nvidia-version': run(OPEN_580.replace(/580\.126\.09/, '570.172.08')),
      query: run('Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.126\n', 18),
    });
    expect(host(c.loadedCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('userspace 580.126.09 over the loaded 570.172.08'),
    });
    expect(host(c.gpusCheck, f)).toMatchObject({
      status: 'fail',
      summary: 'Failed to initialize NVML: Driver/library version mismatch',
      fix: expect.stringContaining('reboot'),
    });
  });

  it('tutorial: apt 535 (proprietary) plus a CUDA runfile with --driver → R32, R33 end of life, proprietary', () => {
    const [proprietary] = splitSamples(loadFixture('corpus/proc-driver-nvidia-version__proprietary-515-and-580.txt'));
    const line = (proprietary ?? '')
      .split('\n')
      .filter((l) => l.startsWith('## NVRM') || l.startsWith('## GCC'))
      .map((l) => l.slice(3))
      .join('\n')
      .replace('515.76', '535.183.01');
    const f = facts({
      'nvidia-version': run(`${line}\n`),
      packages: run(dpkg('535', '535.183.01-0ubuntu0.22.04.1', '', 'ii ')),
      dkms: run('nvidia/535.183.01, 5.15.0-126-generic, x86_64: installed\n'),
      runfile: run(
        '### log /var/log/cuda-installer.log\n[INFO]: Driver installation detected by command: apt list --installed | grep -e nvidia-driver-[0-9][0-9][0-9] -e nvidia-[0-9][0-9][0-9]\n[ERROR]: Install of driver component failed. Existing package manager installation of the driver found. It is strongly recommended that you remove this before continuing.\n[INFO]: Cleaning up after cuda_12.3.2_545.23.08_linux.run\n',
      ),
      query: run(query('535.183.01')),
      holds: run(''),
    });
    const m = host(c.methodCheck, f);
    expect(m).toMatchObject({ status: 'fail', rule: 'R32' });
    expect(m.summary).toContain('Existing package manager installation of the driver found');
    expect(m.summary).toContain('branch 545');
    expect(host(c.branchCheck, f)).toMatchObject({
      status: 'warn',
      rule: 'R33',
      summary: expect.stringContaining('EOL June 2026'),
    });
    expect(host(c.openCheck, f)).toMatchObject({ status: 'warn', summary: expect.stringContaining('peermem') });
    expect(host(c.toolkitCheck, f)).toMatchObject({ status: 'pass', summary: expect.stringContaining('no nvcc') });
  });

  it("R32 also fires for a runfile driver over apt packages and for two branches; R33 fails below the wheels' CUDA major", () => {
    expect(host(c.methodCheck, facts({ runfile: run('### uninstaller /usr/bin/nvidia-uninstall\n') })).status).toBe(
      'fail',
    );
    const two = facts({
      packages: run(dpkg('580', '580.126.09-0ubuntu0.22.04.1') + 'ii nvidia-dkms-535 535.183.01-0ubuntu0.22.04.1\n'),
    });
    expect(host(c.methodCheck, two).summary).toContain('2 branches (535, 580)');
    const old = facts({
      'nvidia-version': run(OPEN_580.replace(/580\.126\.09/, '470.256.02')),
      packages: run(dpkg('470', '470.256.02-0ubuntu0.22.04.1', 'server-open')),
      smi: run(''),
    });
    expect(host(c.branchCheck, old)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('CUDA driver version is insufficient'),
    });
  });

  it('persistence off warns with the persistence step as the fix', () => {
    const f = facts({ query: run(query('580.126.09', 'Disabled')), persistenced: run('inactive\n', 3) });
    expect(host(c.persistenceCheck, f)).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('gpu-driver.persistence'),
    });
  });

  it('persistence beside a host without systemd is "cannot tell", never "nvidia-persistenced unknown"', () => {
    const booted = run('', 1, NO_SYSTEMD);
    const noSystemd = unreadableVerdict(gpuDriverStage, 'gpu-driver.persistence', { persistenced: booted });
    expect(noSystemd).toMatchObject({
      status: 'error',
      summary: 'cannot tell: l20-n1 runs no systemd unit manager (systemctl cannot reach it)',
    });
    const absent = unreadableVerdict(gpuDriverStage, 'gpu-driver.persistence', { persistenced: notFound('systemctl') });
    expect(absent).toMatchObject({
      status: 'error',
      summary: 'cannot tell: systemctl is not installed on l20-n1 (package systemd)',
    });
    // Whatever else leaves systemctl silent is said so, beside what the GPUs report.
    const denied = run('', 1, 'Failed to get properties: Access denied\n');
    const silent = host(c.persistenceCheck, facts({ persistenced: denied }));
    expect(silent).toMatchObject({
      status: 'error',
      summary: 'cannot tell: systemctl is-active nvidia-persistenced printed no state',
    });
    expect(silent.evidence).toContain('GPU 0 Enabled');
    expect(silent.evidence).toContain('Access denied');
  });

  it('a host with no GPU on the bus says so; nvidia-smi missing is "no driver", not a tool to install', () => {
    const bare = facts({ ...FRESH, 'lspci-gpus': run('') });
    expect(host(c.gpusCheck, bare)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('no NVIDIA GPU on the PCIe bus (lspci lists none)'),
    });
    expect(unreadableVerdict(gpuDriverStage, 'gpu-driver.gpus', { query: FRESH.query! })).toBeUndefined();
    const noLspci = unreadableVerdict(gpuDriverStage, 'gpu-driver.gpus', { 'lspci-gpus': notFound('lspci') });
    expect(noLspci?.summary).toBe('cannot tell: lspci is not installed on l20-n1 (package pciutils)');
    // A row with fields nvidia-smi left out shows what is missing, never a `?`.
    const partial = host(c.gpusCheck, facts({ query: run(query('580.126.09').replace(/, 350\.00,/g, ', [N/A],')) }));
    expect(partial.evidence).not.toMatch(/(^|[\s,:])\?($|[\s,])/m);
  });

  it('Secure Boot: mokutil missing is "cannot tell"; a legacy-BIOS host has none', () => {
    const missing = unreadableVerdict(gpuDriverStage, 'gpu-driver.secure-boot', { 'secure-boot': notFound('mokutil') });
    expect(missing).toMatchObject({
      status: 'error',
      summary: 'cannot tell: mokutil is not installed on l20-n1 (package mokutil)',
    });
    const noEfi = run('', 255, 'EFI variables are not supported on this system\n');
    expect(host(c.secureBootCheck, facts({ 'secure-boot': noEfi }))).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('no EFI (legacy boot)'),
    });
    expect(host(c.secureBootCheck, facts({ 'secure-boot': run('', 1, 'Failed to read SecureBoot\n') })).status).toBe(
      'error',
    );
  });

  it('parity on one host skips: nothing to compare', () => {
    const pair = c.parityCheck as PairCheckDef<GpuDriverFacts>;
    expect(pair.evaluate([{ host: 'l20-n1', facts: facts() }], { ...ctx, cluster: undefined })).toMatchObject({
      status: 'skip',
      summary: 'one host (l20-n1): nothing to compare',
    });
  });

  it('Secure Boot with a DKMS module warns (MOK enrolment at the console)', () => {
    expect(host(c.secureBootCheck, facts({ 'secure-boot': run('SecureBoot enabled\n') })).status).toBe('warn');
  });

  it('parity: a 570 host beside a 580 host fails R47; identical hosts pass', () => {
    const pair = c.parityCheck as PairCheckDef<GpuDriverFacts>;
    const a = facts();
    const b = facts(
      {
        'nvidia-version': run(OPEN_580.replace(/580\.126\.09/, '570.172.08')),
        packages: run(dpkg('570', '570.172.08-0ubuntu0.22.04.1', 'open')),
      },
      'l20-n2',
    );
    const v = pair.evaluate(
      [
        { host: 'l20-n1', facts: a },
        { host: 'l20-n2', facts: b },
      ],
      { ...ctx, cluster: undefined },
    );
    expect(v).toMatchObject({ status: 'fail', rule: 'R47', summary: expect.stringContaining('l20-n2') });
    expect(v.evidence).toContain('l20-n2: 570.172.08 open');
    expect(
      pair.evaluate(
        [
          { host: 'l20-n1', facts: a },
          { host: 'l20-n2', facts: facts({}, 'l20-n2') },
        ],
        { ...ctx, cluster: undefined },
      ).status,
    ).toBe('pass');
  });
});

describe('gpu-driver steps', () => {
  const plan = (step: StepDef<GpuDriverFacts>, f: GpuDriverFacts, all: GpuDriverFacts[] = [f]) =>
    step.plan!({
      ...ctx,
      host: f.host,
      hostIndex: all.indexOf(f),
      facts: f,
      all: all.map((x) => ({ host: x.host, facts: x })),
      results: [],
    } as StepPlanContext<GpuDriverFacts>);

  it("install pins the first host's candidate, holds the packages, enables persistence and reboots; nothing on a converged host", () => {
    const ref = facts();
    const fresh = facts(FRESH, 'l20-n2');
    const p = plan(install, fresh, [ref, fresh])!;
    expect(p.reboot).toBe(true);
    const lines = p.commands!.map((x) => ('argv' in x.command ? x.command.argv.join(' ') : x.command.script));
    expect(lines[0]).toBe(
      'env DEBIAN_FRONTEND=noninteractive apt-get install -y nvidia-driver-580-server-open=580.126.09-0ubuntu0.22.04.1',
    );
    expect(lines[1]).toContain('apt-mark hold $pkgs');
    expect(lines[2]).toBe('systemctl enable nvidia-persistenced');
    expect(plan(install, ref, [ref, fresh])).toBeNull();
  });

  it('install unholds another branch first (apt would refuse to replace held packages)', () => {
    const ref = facts();
    const old = facts(
      {
        'nvidia-version': run(OPEN_580.replace(/580\.126\.09/, '570.172.08')),
        packages: run(dpkg('570', '570.172.08-0ubuntu0.22.04.1', 'open')),
        holds: run('libnvidia-cfg1-570\nlinux-generic\nnvidia-driver-570-open\n'),
      },
      'l20-n2',
    );
    const p = plan(install, old, [ref, old])!;
    expect(p.commands![0]!.command).toEqual({
      argv: ['apt-mark', 'unhold', 'libnvidia-cfg1-570', 'nvidia-driver-570-open'],
    });
    expect(p.rollback?.[0] && 'argv' in p.rollback[0].command && p.rollback[0].command.argv.at(-1)).toBe(
      'nvidia-driver-570-open=570.172.08-0ubuntu0.22.04.1',
    );
  });

  it("remove-conflicts archives a failed runfile's logs and uninstalls a runfile driver", () => {
    const f = facts({
      runfile: run(
        '### uninstaller /usr/bin/nvidia-uninstall\n### log /var/log/nvidia-installer.log\nnvidia-installer log file\n',
      ),
    });
    const p = plan(removeConflicts, f)!;
    expect(p.removeFiles).toEqual(['/var/log/nvidia-installer.log']);
    expect(p.commands![0]!.command).toEqual({ argv: ['/usr/bin/nvidia-uninstall', '--silent'] });
    expect(plan(removeConflicts, facts())).toBeNull();
  });

  it('persistence waits for a loaded driver', () => {
    expect(plan(persistence, facts(FRESH))).toBeNull();
    expect(plan(persistence, facts())!.commands![0]!.command).toEqual({
      argv: ['systemctl', 'enable', '--now', 'nvidia-persistenced'],
    });
  });
});
