/**
 * The gpu-driver stage against the lab over real SSH: the NVIDIA tools print what the corpus parsers
 * read, `ready` passes every check, and each scenario that breaks the driver fails the checks
 * docs/STAGES.md names until the stage's steps (apt, holds, reboot) repair it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import { gpuDriverStage } from '../../checks/gpu-driver/index.js';
import { parseNvidiaSmi } from '../../src/parse/nvidia-smi.js';
import { parseNvidiaSmiQueryGpu } from '../../src/parse/nvidia-smi-query-gpu.js';
import { parseNvidiaSmiList, parseNvidiaSmiVersion } from '../../src/parse/nvidia-smi-misc.js';
import { parseNvidiaSmiTopo } from '../../src/parse/nvidia-smi-topo.js';
import { parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { parseDkmsStatus } from '../../src/parse/dkms-status.js';
import { parseLsmod } from '../../src/parse/lsmod.js';
import { addGpuWork, removeGpuWork } from '../../lab/model/gpu-telemetry.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, find, notPassing, withLabTarget } from './helpers.js';

async function applyTwice(t: LabTarget): Promise<{ first: StageOutcome; second: StageOutcome }> {
  const engine = new Engine(t.hosts, { config: t.config });
  const exec = applier(engine);
  const first = await exec.applyStage(gpuDriverStage);
  const second = await exec.applyStage(gpuDriverStage);
  return { first, second };
}

describe('gpu-driver on the ready lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
  });
  afterAll(() => t.close());
  const run = async (script: string, sudo = false) => t.hosts[0]!.run({ script }, { sudo });

  it('nvidia-smi prints the R580 table of 8 L20s serving vLLM (a context each: P0), as the corpus parser reads it', async () => {
    const r = await run('nvidia-smi');
    expect(r.exitCode).toBe(0);
    const f = parseNvidiaSmi(r.stdout);
    expect(f).toMatchObject({ driverVersion: '580.126.09', cudaVersion: '13.0', errors: [] });
    expect(f.gpus).toHaveLength(8);
    for (const g of f.gpus) {
      expect(g).toMatchObject({
        name: 'NVIDIA L20',
        persistenceMode: 'On',
        perfState: 'P0',
        memTotalMiB: 46068,
        powerCapW: 350,
        migMode: 'N/A',
      });
      const mine = f.processes.filter((p) => p.gpu === g.index);
      expect(mine.length).toBeGreaterThan(0);
      expect(g.memUsedMiB).toBe(mine.reduce((sum, p) => sum + (p.memMiB ?? 0), 0));
    }
    expect(f.gpus.map((g) => g.busId)).toEqual([
      '00000000:18:00.0',
      '00000000:19:00.0',
      '00000000:3A:00.0',
      '00000000:3B:00.0',
      '00000000:98:00.0',
      '00000000:99:00.0',
      '00000000:BA:00.0',
      '00000000:BB:00.0',
    ]);
    // The simulated clock stands still at speed 'max': the same command prints the same bytes.
    expect((await run('nvidia-smi')).stdout).toBe(r.stdout);
  });

  it('query CSV (with and without header/units), -L, --version and /proc/driver/nvidia/version', async () => {
    const q = parseNvidiaSmiQueryGpu(
      (
        await run(
          'nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,memory.total,power.draw,power.limit,persistence_mode,clocks.sm --format=csv',
        )
      ).stdout,
    );
    expect(q.columns).toEqual([
      'index',
      'name',
      'uuid',
      'pci.bus_id',
      'memory.total',
      'power.draw',
      'power.limit',
      'persistence_mode',
      'clocks.current.sm',
    ]);
    expect(q.units).toMatchObject({ 'memory.total': 'MiB', 'power.limit': 'W' });
    expect(q.gpus[3]).toMatchObject({ index: 3, name: 'NVIDIA L20', bdf: '0000:3b:00.0', memoryTotalMiB: 46068 });
    expect(q.rows[0]?.['persistence_mode']).toBe('Enabled');
    const list = parseNvidiaSmiList((await run('nvidia-smi -L')).stdout);
    expect(list.gpus.map((g) => g.uuid)).toEqual(q.gpus.map((g) => g.uuid));
    expect(parseNvidiaSmiVersion((await run('nvidia-smi --version')).stdout)).toEqual({
      smiVersion: '580.126.09',
      nvmlVersion: '580.126',
      driverVersion: '580.126.09',
      cudaVersion: '13.0',
    });
    expect(parseNvidiaDriverVersion((await run('cat /proc/driver/nvidia/version')).stdout)).toMatchObject({
      version: '580.126.09',
      openKernelModule: true,
    });
    const bad = await run('nvidia-smi --query-gpu=bogus --format=csv');
    expect(bad).toMatchObject({ exitCode: 2, stdout: 'Field "bogus" is not a valid field to query.\n\n' });
  });

  it('topo -m: tabs, PCIe codes, NIC legend; a NIC shares a switch (PIX) with two GPUs of its socket', async () => {
    const topo = parseNvidiaSmiTopo((await run('nvidia-smi topo -m')).stdout);
    expect(topo.gpus).toHaveLength(8);
    expect(topo.nics).toHaveLength(4);
    expect(topo.matrix['GPU0']).toMatchObject({
      GPU1: 'PIX',
      GPU2: 'NODE',
      GPU4: 'SYS',
      NIC0: 'PIX',
      NIC1: 'PIX',
      NIC2: 'SYS',
    });
    expect(topo.matrix['GPU5']).toMatchObject({ NIC2: 'PIX', NIC0: 'SYS' });
    expect(topo.affinity['GPU4']).toMatchObject({ numaNode: 1, cpuAffinity: '32-63,96-127' });
    expect(Object.keys(topo.nicLegend)).toEqual(['NIC0', 'NIC1', 'NIC2', 'NIC3']);
  });

  it('lsmod, dkms status and holds are what the install left', async () => {
    const mods = parseLsmod((await run('lsmod')).stdout).modules.map((x) => x.name);
    expect(mods).toEqual(expect.arrayContaining(['nvidia', 'nvidia_uvm', 'nvidia_modeset', 'nvidia_drm']));
    expect(mods).not.toContain('nouveau');
    expect(parseDkmsStatus((await run('dkms status', true)).stdout).modules).toEqual([
      { name: 'nvidia-srv', version: '580.126.09', kernel: '5.15.0-126-generic', arch: 'x86_64', status: 'installed' },
    ]);
    expect((await run('apt-mark showhold')).stdout).toContain('nvidia-driver-580-server-open\n');
    expect((await run('systemctl is-active nvidia-persistenced')).stdout).toBe('active\n');
  });

  it('work on a GPU shows in the table and the CSV from one telemetry model: P0, power and heat follow the load', async () => {
    const m = t.lab.hosts[0]!.machine;
    addGpuWork(m, {
      gpu: 2,
      pid: 48213,
      name: '/opt/l20/venv/lib/python3.10/site-packages/vllm/engine_core',
      memMiB: 2048,
      utilPct: 97,
    });
    try {
      const before = parseNvidiaSmi((await run('nvidia-smi')).stdout);
      addGpuWork(m, { gpu: 2, pid: 48214, name: '/opt/l20/venv/bin/python3', memMiB: 1024, utilPct: 0 });
      const f = parseNvidiaSmi((await run('nvidia-smi')).stdout);
      expect(f.processes.filter((p) => p.pid === 48213 || p.pid === 48214)).toEqual([
        {
          gpu: 2,
          gi: 'N/A',
          ci: 'N/A',
          pid: 48213,
          type: 'C',
          name: '...3.10/site-packages/vllm/engine_core',
          memMiB: 2048,
        },
        { gpu: 2, gi: 'N/A', ci: 'N/A', pid: 48214, type: 'C', name: '/opt/l20/venv/bin/python3', memMiB: 1024 },
      ]);
      const busy = f.gpus[2]!;
      expect(busy).toMatchObject({
        perfState: 'P0',
        utilPct: 97,
        memUsedMiB: (before.gpus[2]!.memUsedMiB ?? 0) + 1024,
      });
      expect(busy.powerW).toBeGreaterThan(250);
      expect(busy.tempC).toBeGreaterThan(f.gpus[0]!.tempC! + 20);
      const q = parseNvidiaSmiQueryGpu(
        (
          await run(
            'nvidia-smi -i 2 --query-gpu=utilization.gpu,memory.used,power.draw,pstate --format=csv,noheader,nounits',
          )
        ).stdout,
        { fields: ['utilization.gpu', 'memory.used', 'power.draw', 'pstate'] },
      );
      expect(q.rows).toEqual([
        { 'utilization.gpu': 97, 'memory.used': busy.memUsedMiB, 'power.draw': expect.any(Number), pstate: 'P0' },
      ]);
      // The table rounds to whole watts what the CSV prints with two decimals: one sample, two views.
      expect(Math.round(q.rows[0]!['power.draw'] as number)).toBe(busy.powerW);
    } finally {
      removeGpuWork(m, 48213);
      removeGpuWork(m, 48214);
    }
    expect(parseNvidiaSmi((await run('nvidia-smi')).stdout).processes.map((p) => p.pid)).not.toContain(48213);
  });

  it('every gpu-driver check passes', async () => {
    const o = await new Engine(t.hosts, { config: t.config }).runStage(gpuDriverStage);
    expect(notPassing(o)).toEqual([]);
    expect(o.results).toHaveLength(8 * 2 + 1);
  });

  it('persistence follows nvidia-persistenced; the persistence step restarts it', async () => {
    expect((await run('nvidia-smi -pm 1')).stdout).toContain(
      'Unable to set persistence mode for GPU 00000000:18:00.0: Insufficient Permissions',
    );
    expect((await run('nvidia-smi -i 0 -pm 1', true)).stdout).toBe(
      'Persistence mode is already Enabled for GPU 00000000:18:00.0.\nAll done.\n',
    );
    await run('systemctl stop nvidia-persistenced', true);
    const engine = new Engine(t.hosts, { config: t.config });
    expect(find(await engine.runStage(gpuDriverStage), 'gpu-driver.persistence', 'l20-n1')).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('persistence mode off on 8 GPUs, nvidia-persistenced inactive'),
    });
    const applied = await applier(engine).applyStage(gpuDriverStage);
    expect((applied.steps ?? []).filter((x) => x.changed).map((x) => `${x.host}:${x.id}`)).toEqual([
      'l20-n1:gpu-driver.persistence',
    ]);
    expect(notPassing(applied)).toEqual([]);
  });
});

describe('gpu-driver from a fresh host (nouveau, no driver)', () => {
  it('apt installs the driver but nothing loads until the reboot; the install step reboots into it and a second apply changes nothing', () =>
    withLabTarget({ scenario: 'fresh' }, async (t) => {
      const h = t.hosts[1]!;
      await h.run({ argv: ['apt-get', 'install', '-y', 'nvidia-driver-580-server-open'] }, { sudo: true });
      const smi = await h.run({ argv: ['nvidia-smi'] });
      expect(smi).toMatchObject({
        exitCode: 9,
        stdout: expect.stringContaining("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"),
      });
      expect((await h.run({ argv: ['lsmod'] })).stdout).toMatch(/^nouveau /m);
      expect((await h.run({ script: 'sudo modprobe nvidia 2>&1; echo "exit $?"' })).stdout).toBe(
        "modprobe: ERROR: could not insert 'nvidia': No such device\nexit 1\n",
      );

      const before = await new Engine(t.hosts, { config: t.config }).runStage(gpuDriverStage);
      expect(find(before, 'gpu-driver.loaded', 'l20-n1')).toMatchObject({
        status: 'fail',
        summary: expect.stringContaining('no NVIDIA driver installed'),
      });
      expect(find(before, 'gpu-driver.loaded', 'l20-n2')).toMatchObject({
        status: 'fail',
        summary: expect.stringContaining('reboot is pending'),
      });
      expect(find(before, 'gpu-driver.gpus', 'l20-n2')?.summary).toContain("couldn't communicate");

      const { first, second } = await applyTwice(t);
      expect((first.steps ?? []).filter((s) => s.status === 'applied').map((s) => `${s.host}:${s.id}`)).toEqual([
        'l20-n1:gpu-driver.install',
        'l20-n2:gpu-driver.install',
      ]);
      expect(notPassing(first)).toEqual([]);
      expect(second.changed).toBe(0);
      // Nothing runs on them yet: idle L20s sit in P8 at 24–34 W.
      const idle = parseNvidiaSmi((await h.run({ argv: ['nvidia-smi'] })).stdout);
      expect(idle.noRunningProcesses).toBe(true);
      for (const g of idle.gpus) {
        expect(g).toMatchObject({ persistenceMode: 'On', perfState: 'P8', utilPct: 0, memUsedMiB: 0 });
        expect(g.powerW).toBeGreaterThanOrEqual(24);
        expect(g.powerW).toBeLessThanOrEqual(34);
      }
    }));
});

describe('driver-mismatch: node 2 on 570, node 1 on 580', () => {
  it('fails parity (R47); new userspace over the loaded 570 module is the NVML mismatch; install + reboot aligns both', () =>
    withLabTarget({ scenario: 'driver-mismatch' }, async (t) => {
      const engine = new Engine(t.hosts, { config: t.config });
      const o = await engine.runStage(gpuDriverStage);
      expect(find(o, 'gpu-driver.parity', null)).toMatchObject({
        status: 'fail',
        rule: 'R47',
        evidence: expect.stringContaining('l20-n2: 570.172.08 open'),
      });
      expect(notPassing(o).filter((x) => !x.startsWith('pair:'))).toEqual([]);

      const n2 = t.hosts[1]!;
      const up = await n2.run(
        {
          script:
            'apt-mark unhold $(apt-mark showhold | grep nvidia) >/dev/null\nDEBIAN_FRONTEND=noninteractive apt-get install -y nvidia-driver-580-server-open',
        },
        { sudo: true },
      );
      expect(up.exitCode).toBe(0);
      const mismatch = await n2.run({ argv: ['nvidia-smi'] });
      expect(mismatch).toMatchObject({
        exitCode: 18,
        stdout: 'Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 580.126\n',
      });
      expect(find(await engine.runStage(gpuDriverStage), 'gpu-driver.loaded', 'l20-n2')).toMatchObject({
        status: 'fail',
        summary: expect.stringContaining('userspace 580.126.09 over the loaded 570.172.08'),
      });

      const { first, second } = await applyTwice(t);
      expect((first.steps ?? []).filter((s) => s.changed).map((s) => `${s.host}:${s.id}`)).toEqual([
        'l20-n2:gpu-driver.install',
      ]);
      expect(notPassing(first)).toEqual([]);
      expect(second.changed).toBe(0);
    }));
});

describe('tutorial: apt nvidia-driver-535 plus the CUDA runfile with --driver', () => {
  it("fails R32 with the runfile's log, warns R33 and proprietary; remove-conflicts then install converge", () =>
    withLabTarget({ scenario: 'tutorial' }, async (t) => {
      const o = await new Engine(t.hosts, { config: t.config }).runStage(gpuDriverStage);
      const method = find(o, 'gpu-driver.method', 'l20-n1');
      expect(method).toMatchObject({ status: 'fail', rule: 'R32', summary: expect.stringContaining('(branch 545)') });
      expect(method?.evidence).toContain('[ERROR]: Existing package manager installation of the driver found');
      expect(find(o, 'gpu-driver.branch', 'l20-n2')).toMatchObject({
        status: 'warn',
        rule: 'R33',
        summary: expect.stringContaining('535.183.01'),
      });
      expect(find(o, 'gpu-driver.open', 'l20-n1')?.status).toBe('warn');
      expect(find(o, 'gpu-driver.toolkit', 'l20-n1')?.summary).toContain('no nvcc');
      expect((await t.hosts[0]!.run({ script: 'nvcc --version' })).exitCode).toBe(127);
      // The proprietary module's /proc wording (no "Open", the NVIDIA build date).
      expect(
        parseNvidiaDriverVersion((await t.hosts[0]!.run({ argv: ['cat', '/proc/driver/nvidia/version'] })).stdout),
      ).toMatchObject({ version: '535.183.01', openKernelModule: false, build: 'Sun May 12 19:39:15 UTC 2024' });
      // Re-running the recipe's runfile over the apt driver refuses again and installs nothing.
      const again = await t.hosts[0]!.run({
        script: 'sudo sh cuda_12.3.2_545.23.08_linux.run --silent --driver --toolkit',
      });
      expect(again).toMatchObject({
        exitCode: 1,
        stdout: ' Installation failed. See log at /var/log/cuda-installer.log for details.\n',
      });
      expect((await t.hosts[0]!.run({ script: 'command -v nvcc; ls /usr/bin/nvidia-uninstall' })).exitCode).not.toBe(0);

      const { first, second } = await applyTwice(t);
      expect((first.steps ?? []).filter((s) => s.changed).map((s) => s.id)).toEqual([
        'gpu-driver.remove-conflicts',
        'gpu-driver.remove-conflicts',
        'gpu-driver.install',
        'gpu-driver.install',
      ]);
      expect(notPassing(first)).toEqual([]);
      expect(second.changed).toBe(0);
      // The failed runfile's log is kept in the run's backup directory, not deleted.
      const kept = await t.hosts[0]!.run({ script: 'ls /var/lib/l20-setup/backup/*/var/log/' }, { sudo: true });
      expect(kept.stdout).toContain('cuda-installer.log');
    }));
});
