/**
 * How the NVIDIA driver lives in the lab's kernel and boot (lab/system): its kernel modules
 * (loading binds the GPUs and records the loaded version; nouveau holding the GPUs or an unsigned
 * DKMS module under Secure Boot refuse it; nvidia-peermem needs OFED's peer-memory ib_core), what a
 * reboot does (the installed module loads, persistence and ACS writes are lost, grub's new command
 * line takes effect) and nvidia-persistenced as a service program. Imported for its registrations.
 */
import { registerBootHook } from '../system/boot.js';
import { registerKernelModule, type KernelModuleDef } from '../system/kernel.js';
import { registerServiceProgram } from '../system/systemd/programs.js';
import { noAcs } from '../model/pci-topology.js';
import { bindGpus, installedModule, loadedFrom, nvrmLine, runtime } from '../model/nvidia.js';
import type { Machine } from '../model/types.js';

const dkmsPath =
  (name: string) =>
  (m: Machine): string =>
    installedModule(m)?.source === 'prebuilt'
      ? `kernel/nvidia-${installedModule(m)?.version.split('.')[0]}srv/${name}.ko`
      : `updates/dkms/${name}.ko`;
const fromPackage = (m: Machine): boolean => installedModule(m) !== undefined;
const version = (m: Machine): string | undefined => installedModule(m)?.version;
const common: Partial<KernelModuleDef> = {
  available: fromPackage,
  version,
  license: 'Dual MIT/GPL',
  author: 'NVIDIA Corporation',
};

registerKernelModule({
  ...common,
  name: 'nvidia',
  size: 14299136,
  path: dkmsPath('nvidia'),
  description: 'NVIDIA kernel module',
  // udev loads it for the 10de:26ba functions; nvidia-kernel-common's modprobe.d keeps nouveau off.
  autoload: () => true,
  load(m) {
    const build = installedModule(m);
    if (m.nvidia?.secureBoot && build?.source === 'dkms') {
      return {
        error: 'Key was rejected by service',
        dmesg: ['Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7'],
      };
    }
    if (m.modules.includes('nouveau')) {
      return {
        error: 'No such device',
        dmesg: [
          `NVRM: The NVIDIA probe routine was not called for ${m.gpus.length} device(s).`,
          'NVRM: This can occur when a driver such as: \nNVRM: nouveau, rivafb, nvidiafb or rivatv \nNVRM: was loaded and obtained ownership of the NVIDIA device(s).',
          'NVRM: No NVIDIA devices probed.',
        ],
      };
    }
    return undefined;
  },
  messages(m) {
    const build = installedModule(m);
    if (!build) return [];
    const l = loadedFrom(m, build, m.clock.now() - 3_600_000);
    return [
      'nvidia: loading out-of-tree module taints kernel.',
      ...(build.open
        ? []
        : ["nvidia: module license 'NVIDIA' taints kernel.", 'Disabling lock debugging due to kernel taint']),
      'nvidia-nvlink: Nvlink Core is being initialized, major device number 511',
      nvrmLine(l).replace(/^NVRM version: /, 'NVRM: loading '),
    ];
  },
  loaded(m) {
    const build = installedModule(m);
    if (build) runtime(m).loaded = loadedFrom(m, build, m.clock.now() - 3_600_000);
    bindGpus(m);
  },
  unloaded(m) {
    const rt = runtime(m);
    delete rt.loaded;
    rt.persistence = false;
    bindGpus(m);
  },
});

registerKernelModule({
  ...common,
  name: 'nvidia_modeset',
  size: 1355776,
  depends: ['nvidia'],
  path: dkmsPath('nvidia-modeset'),
  autoload: () => true,
  description: 'NVIDIA modeset kernel module',
});
registerKernelModule({
  ...common,
  name: 'nvidia_drm',
  size: 122880,
  depends: ['nvidia_modeset'],
  path: dkmsPath('nvidia-drm'),
  autoload: () => true,
  description: 'NVIDIA DRM kernel module',
});
registerKernelModule({
  ...common,
  name: 'nvidia_uvm',
  size: 1830912,
  depends: ['nvidia'],
  path: dkmsPath('nvidia-uvm'),
  autoload: () => true,
  description: 'NVIDIA Unified Memory kernel module',
});

registerKernelModule({
  ...common,
  name: 'nvidia_peermem',
  size: 16384,
  depends: ['ib_core', 'nvidia'],
  path: dkmsPath('nvidia-peermem'),
  description: 'NVIDIA GPU memory plug-in',
  // The inbox ib_core has no peer-memory client API; MLNX_OFED's and DOCA-OFED's have.
  load: (m) =>
    m.ofed?.loaded
      ? undefined
      : {
          error: 'Invalid argument',
          dmesg: [
            'nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)',
            'nvidia_peermem: Unknown symbol ib_unregister_peer_memory_client (err -2)',
          ],
        },
});

// A reboot: the running module, persistence and setpci writes are gone; the BIOS puts its ACS
// setting back; grub boots the command line update-grub generated last.
registerBootHook('shutdown', 'nvidia', ({ machine: m }) => {
  const rt = runtime(m);
  delete rt.loaded;
  rt.persistence = false;
  for (const p of m.pci) if (p.acs) p.acs.ctl = { ...(m.firmware?.acs?.[p.bdf] ?? noAcs()) };
  if (m.firmware?.grubCmdline) m.os.cmdline = m.firmware.grubCmdline;
  m.revision++;
});
// After the boot's modules loaded: bind the GPUs to whichever driver won.
registerBootHook('modules', 'nvidia-bind', ({ machine: m }) => bindGpus(m), { cold: true });

registerServiceProgram({
  name: 'nvidia-persistenced',
  matches: (argv) => argv[0] === '/usr/bin/nvidia-persistenced',
  async run(ctx) {
    const m = ctx.machine;
    if (!m.nvidia?.loaded) {
      await ctx.err('nvidia-persistenced failed to initialize. Check syslog for more details.\n');
      return 1;
    }
    await ctx.out('Started (' + ctx.main.pid + ')\n');
    runtime(m).persistence = true;
    m.revision++;
    ctx.ready();
    await ctx.until();
    // Without the daemon the driver tears the GPUs down when the last client exits.
    if (m.nvidia) m.nvidia.persistence = false;
    m.revision++;
    return 0;
  },
});
