/**
 * The NVIDIA side of the lab model without SSH: toolkits' nvcc, Secure Boot refusing a DKMS module,
 * the GPUDirect path other models read, grub's command line from its defaults files.
 */
import { describe, expect, it } from 'vitest';
import { installInModel } from '../../lab/apt/dpkg-db.js';
import { createCluster, type Cluster } from '../../lab/model/cluster.js';
import { gdrPath, installedModule, smiFailure } from '../../lab/model/nvidia.js';
import type { Machine } from '../../lab/model/types.js';
import { resolveScenario } from '../../lab/scenarios/index.js';
import { KernelLog, loadModule } from '../../lab/system/kernel.js';
import { grubCmdline, sourceDefaults } from '../../lab/tools/grub.js';
import { mokutil } from '../../lab/tools/mokutil.js';
import { nvcc } from '../../lab/tools/nvcc.js';
import { ubuntuDrivers } from '../../lab/tools/ubuntu-drivers.js';
import type { Tool } from '../../lab/tools/types.js';
import '../../lab/tools/nvidia-system.js';
import { parseNvcc } from '../../src/parse/nvcc.js';

function cluster(scenario: string): Cluster {
  const c = createCluster(2, 1, 'max');
  for (const s of resolveScenario(scenario)) s.apply(c);
  return c;
}

async function runTool(tool: Tool, m: Machine, args: string[]): Promise<{ stdout: string; exitCode: number }> {
  const r = await tool.run(args, { machine: m, cluster: undefined as never, ctx: {} as never, root: true });
  return { stdout: r.stdout, exitCode: r.exitCode };
}

describe('NVIDIA model pieces', () => {
  it('nvcc reports the installed CUDA toolkit in the five-line format the corpus parser reads', async () => {
    const m = cluster('fresh').machines[0]!;
    installInModel(m, [{ name: 'cuda-nvcc-13-0', version: '13.0.88-1' }]);
    expect(parseNvcc((await runTool(nvcc, m, ['--version'])).stdout)).toMatchObject({
      cudaVersion: '13.0',
      cudaBuildVersion: '13.0.88',
      build: 'cuda_13.0.r13.0/compiler.36424714_0',
    });
  });

  it('Secure Boot refuses the unsigned DKMS module; nouveau holding the GPUs refuses any', () => {
    const m = cluster('fresh').machines[0]!;
    installInModel(m, [{ name: 'nvidia-dkms-580-server-open', version: '580.126.09-0ubuntu0.22.04.1' }]);
    expect(installedModule(m)).toMatchObject({ version: '580.126.09', open: true, server: true, source: 'dkms' });
    const log = new KernelLog(() => 12.5);
    expect(loadModule(m, log, 'nvidia')).toMatchObject({ ok: false, failure: { error: 'No such device' } });
    m.modules = m.modules.filter((x) => x !== 'nouveau');
    m.nvidia = { persistence: false, secureBoot: true };
    expect(loadModule(m, log, 'nvidia')).toMatchObject({
      ok: false,
      failure: { error: 'Key was rejected by service' },
    });
    m.nvidia.secureBoot = false;
    expect(loadModule(m, log, 'nvidia')).toMatchObject({ ok: true });
    expect(m.nvidia.loaded).toMatchObject({ version: '580.126.09', open: true });
    expect(m.pci.filter((p) => p.kind === 'gpu').every((p) => p.driver === 'nvidia')).toBe(true);
    expect(smiFailure(m)).toBeUndefined();
  });

  it('mokutil and ubuntu-drivers answer from the model', async () => {
    const m = cluster('fresh').machines[0]!;
    expect((await runTool(mokutil, m, ['--sb-state'])).stdout).toBe('SecureBoot disabled\n');
    m.nvidia = { persistence: false, secureBoot: true };
    expect((await runTool(mokutil, m, ['--sb-state'])).stdout).toBe('SecureBoot enabled\n');
    expect((await runTool(ubuntuDrivers, m, ['list', '--gpgpu'])).stdout.split('\n')).toContain(
      'nvidia-driver-580-server-open',
    );
  });

  it('gdrPath: DMA-BUF on ready, peermem on no-peermem once loaded, none without either', () => {
    expect(gdrPath(cluster('ready').machines[0]!)).toBe('dmabuf');
    const np = cluster('no-peermem').machines[1]!;
    expect(gdrPath(np)).toBe('none');
    np.modules.push('nvidia_peermem');
    expect(gdrPath(np)).toBe('peermem');
    expect(gdrPath(cluster('fresh').machines[0]!)).toBe('none');
  });

  it('grub: drop-ins expand earlier values, single quotes stay literal; the command line keeps image, root and ro', () => {
    const m = cluster('fresh').machines[0]!;
    const vars = new Map<string, string>();
    sourceDefaults(
      'GRUB_DEFAULT=0\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n',
      vars,
    );
    sourceDefaults('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt"\n', vars);
    sourceDefaults("GRUB_CMDLINE_LINUX='$HOME'\n", vars);
    expect(vars.get('GRUB_CMDLINE_LINUX_DEFAULT')).toBe('quiet iommu=pt');
    expect(vars.has('GRUB_DISTRIBUTOR')).toBe(false);
    const line = grubCmdline(m, vars);
    expect(line).toMatch(/^BOOT_IMAGE=\/vmlinuz-5\.15\.0-126-generic root=UUID=[0-9a-f-]+ ro \$HOME quiet iommu=pt$/);
  });
});
