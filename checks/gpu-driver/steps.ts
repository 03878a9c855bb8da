/**
 * gpu-driver apply steps (docs/STAGES.md §3.7): remove what mixes methods or branches, install one driver
 * at one version on every host and reboot into it, keep persistence on. The toolkit step is only for
 * building nccl-tests.
 */
import type { StepCommand, StepDef, StepPlanContext } from '../../src/engine/types.js';
import { DRIVER_BRANCHES } from '../../src/rules/cfg/data.js';
import { branchOf, installedDriver, upstreamVersion, type GpuDriverFacts } from './facts.js';
import { DRIVER_PACKAGE } from './probes.js';

const apt = (...args: string[]): StepCommand => ({
  command: { argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args] },
  timeoutMs: 30 * 60_000,
});

/** Package names of a driver branch, whatever Ubuntu calls the parts. */
export const NVIDIA_PACKAGE = /^(?:nvidia-|libnvidia-|xserver-xorg-video-nvidia-)/;

/** Holds every installed NVIDIA driver package, whatever the branch's package names are. */
export const HOLD_SCRIPT = `pkgs=$(dpkg-query -W -f='\${db:Status-Abbrev} \${Package}\\n' 'nvidia-*' 'libnvidia-*' 'xserver-xorg-video-nvidia-*' 2>/dev/null | awk '$1 ~ /^[hi]i/ {print $2}')
if [ -n "$pkgs" ]; then apt-mark hold $pkgs; fi
`;

/** The version every host installs: the first host's candidate, so all hosts end on one version. */
export function targetVersion(ctx: StepPlanContext<GpuDriverFacts>): string | undefined {
  return ctx.all[0]?.facts.candidate ?? ctx.facts.candidate;
}

export const removeConflicts: StepDef<GpuDriverFacts> = {
  id: 'gpu-driver.remove-conflicts',
  title: 'remove runfile drivers and other branches',
  danger: 'disruptive',
  guards: ['gpu-driver.method'],
  plan(ctx) {
    const f = ctx.facts;
    const commands: StepCommand[] = [];
    const what: string[] = [];
    if (f.runfile.uninstaller) {
      commands.push({ command: { argv: ['/usr/bin/nvidia-uninstall', '--silent'] }, timeoutMs: 10 * 60_000 });
      what.push('uninstall the runfile driver');
    }
    const keep = branchOf(upstreamVersion(targetVersion(ctx) ?? '')) ?? 580;
    const branches = new Set(f.packages.map((p) => p.branch).filter((b): b is number => b !== undefined));
    const purge = f.packages
      .filter((p) => p.kind === 'cuda-drivers' || (branches.size > 1 && p.branch !== keep))
      .map((p) => p.name);
    if (purge.length > 0) {
      const held = f.holds.filter((p) => purge.includes(p));
      if (held.length > 0) commands.push({ command: { argv: ['apt-mark', 'unhold', ...held] } });
      commands.push(apt('purge', '-y', ...purge));
      what.push(`purge ${purge.join(' ')}`);
    }
    // A runfile that stopped at "Existing package manager installation" installed nothing; its logs
    // are archived (kept in the run's backup directory) so the host no longer looks half-converted.
    const logs = f.packages.some((p) => p.kind !== 'cuda-drivers') ? f.runfile.logs.map((l) => l.path) : [];
    if (logs.length > 0) what.push(`archive the failed runfile's logs (${logs.join(', ')})`);
    if (commands.length === 0 && logs.length === 0) return null;
    return { summary: what.join('; '), commands, removeFiles: logs };
  },
};

export const install: StepDef<GpuDriverFacts> = {
  id: 'gpu-driver.install',
  title: `install ${DRIVER_PACKAGE}, hold it, reboot`,
  danger: 'reboot',
  guards: ['gpu-driver.loaded', 'gpu-driver.branch', 'gpu-driver.open', 'gpu-driver.parity'],
  plan(ctx) {
    const f = ctx.facts;
    const target = targetVersion(ctx);
    const want = target ? upstreamVersion(target) : undefined;
    const inst = installedDriver(f);
    const pkg = f.packages.find((p) => p.name === DRIVER_PACKAGE);
    const installed = pkg !== undefined && (!target || pkg.version === target);
    if (installed && f.loaded && f.loaded.open && f.loaded.version === want) return null;
    const commands: StepCommand[] = [];
    // Held packages of the branch being replaced would make apt refuse to remove them.
    const held = f.holds.filter((p) => NVIDIA_PACKAGE.test(p));
    if (held.length > 0 && !installed) commands.push({ command: { argv: ['apt-mark', 'unhold', ...held] } });
    if (!installed) commands.push(apt('install', '-y', target ? `${DRIVER_PACKAGE}=${target}` : DRIVER_PACKAGE));
    commands.push({ command: { script: HOLD_SCRIPT } });
    commands.push({ command: { argv: ['systemctl', 'enable', 'nvidia-persistenced'] } });
    const previous = f.packages.find((p) => p.kind === 'driver');
    const rollback: StepCommand[] =
      previous && previous.name !== DRIVER_PACKAGE
        ? [
            apt(
              'install',
              '-y',
              '--allow-downgrades',
              '--allow-change-held-packages',
              `${previous.name}=${previous.version}`,
            ),
          ]
        : installed
          ? []
          : [apt('purge', '-y', '--allow-change-held-packages', DRIVER_PACKAGE)];
    const from = f.loaded
      ? `${f.loaded.version} ${f.loaded.open ? 'open' : 'proprietary'}`
      : inst.version
        ? `${inst.version} (not loaded)`
        : 'no driver';
    return {
      summary: `${installed ? 'reboot into' : 'install'} ${DRIVER_PACKAGE}${target ? ` ${target}` : ''} (from ${from}), hold the NVIDIA packages, enable nvidia-persistenced, reboot`,
      commands,
      reboot: true,
      rollback,
    };
  },
};

export const persistence: StepDef<GpuDriverFacts> = {
  id: 'gpu-driver.persistence',
  title: 'persistence daemon on',
  danger: 'safe',
  guards: ['gpu-driver.persistence'],
  plan(ctx) {
    // Without a loaded driver the daemon cannot start; gpu-driver.install enables it for the next boot.
    if (!ctx.facts.loaded) return null;
    return {
      summary: 'systemctl enable --now nvidia-persistenced',
      commands: [{ command: { argv: ['systemctl', 'enable', '--now', 'nvidia-persistenced'] } }],
      rollback: [{ command: { argv: ['systemctl', 'disable', '--now', 'nvidia-persistenced'] } }],
    };
  },
};

export const toolkit: StepDef<GpuDriverFacts> = {
  id: 'gpu-driver.toolkit',
  title: 'CUDA toolkit matching the driver (nccl-tests only)',
  danger: 'safe',
  guards: ['gpu-driver.toolkit'],
  plan(ctx) {
    const f = ctx.facts;
    const cuda = f.smi.cudaVersion ?? DRIVER_BRANCHES[branchOf(f.loaded?.version) ?? 0]?.cuda;
    if (!cuda) return null;
    const tk = `cuda-toolkit-${cuda.replace('.', '-')}`;
    // Never `cuda` or `cuda-drivers`: they pull a driver of the repository's choosing (R32).
    return {
      summary: `install ${tk} libnccl2 libnccl-dev from the CUDA repository (cuda-keyring)`,
      commands: [apt('install', '-y', tk, 'libnccl2', 'libnccl-dev')],
    };
  },
};

export const gpuDriverSteps: readonly StepDef<GpuDriverFacts>[] = [removeConflicts, install, persistence, toolkit];
