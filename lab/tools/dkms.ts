/**
 * `dkms status` of jammy's dkms 2.8.7: `module/version, kernel, arch: installed`, one line per
 * module built for the running kernel (format per fixtures/corpus/dkms-status__nvidia-old-comma-format.txt,
 * whose notes give the slash form newer dkms prints). A module is registered by the package that
 * ships its source: NVIDIA's `nvidia-dkms-<branch>[-server][-open]` (module `nvidia`, or `nvidia-srv`
 * for the server branches) and OFED's `mlnx-ofed-kernel-dkms`.
 */
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { upstream } from '../model/nvidia.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

export function dkmsModules(m: Machine): Array<{ module: string; version: string }> {
  const out: Array<{ module: string; version: string }> = [];
  for (const p of m.packages.values()) {
    if (!isInstalled(m.packages, p.name)) continue;
    const nv = /^nvidia-dkms-(\d+)(-server)?(?:-open)?$/.exec(p.name);
    if (nv) out.push({ module: nv[2] ? 'nvidia-srv' : 'nvidia', version: upstream(p.version) });
    if (p.name === 'mlnx-ofed-kernel-dkms') out.push({ module: 'mlnx-ofed-kernel', version: upstream(p.version) });
  }
  return out.sort((a, b) => a.module.localeCompare(b.module));
}

export const dkms: Tool = {
  name: 'dkms',
  path: '/usr/sbin/dkms',
  packages: ['dkms'],
  run(args, { machine: m }) {
    const action = args[0];
    if (action === 'status')
      return ok(
        dkmsModules(m)
          .map((d) => `${d.module}/${d.version}, ${m.os.kernelRelease}, x86_64: installed\n`)
          .join(''),
      );
    // The modules are built for the running kernel already: nothing to do, as dkms says nothing then.
    if (action === 'autoinstall') return ok('');
    if (action === undefined) return fail(2, 'Error! No action was specified.\n');
    return fail(2, `Error! Unknown action: ${action}\n`);
  },
};
