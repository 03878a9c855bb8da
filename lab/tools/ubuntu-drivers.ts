/**
 * ubuntu-drivers (ubuntu-drivers-common 0.9.6, jammy): `list [--gpgpu]` prints the driver packages
 * that support the machine's GPUs, one per line, as the package name; `devices` the detailed block.
 * Which packages exist is the apt archive's business: the lab offers the branches an L20 (AD102GL,
 * 10de:26ba) supports in jammy's restricted pocket. Format source-derived (UbuntuDrivers/detect.py).
 */
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

/** Driver packages jammy-updates carries for the L20, as ubuntu-drivers orders them (by name). */
export const L20_DRIVERS = [
  'nvidia-driver-535',
  'nvidia-driver-535-server',
  'nvidia-driver-570-open',
  'nvidia-driver-570-server-open',
  'nvidia-driver-580-open',
  'nvidia-driver-580-server',
  'nvidia-driver-580-server-open',
];

export const ubuntuDrivers: Tool = {
  name: 'ubuntu-drivers',
  path: '/usr/bin/ubuntu-drivers',
  packages: ['ubuntu-drivers-common'],
  run(args, { machine }) {
    const cmd = args.find((a) => !a.startsWith('-'));
    if (cmd === 'list') return ok(L20_DRIVERS.map((d) => `${d}\n`).join(''));
    if (cmd === 'devices') {
      const gpu = machine.pci.find((p) => p.kind === 'gpu');
      if (!gpu) return ok('');
      const lines = [
        `== /sys/devices/pci0000:${gpu.bdf.slice(5, 7)}/${gpu.bdf} ==`,
        'modalias : pci:v000010DEd000026BAsv000010DEsd00001957bc03sc02i00',
        'vendor   : NVIDIA Corporation',
        'model    : AD102GL [L20]',
        ...L20_DRIVERS.map(
          (d) => `driver   : ${d} - distro non-free${d === 'nvidia-driver-580-server-open' ? ' recommended' : ''}`,
        ),
        'driver   : xserver-xorg-video-nouveau - distro free builtin',
        '',
      ];
      return ok(`${lines.join('\n')}\n`);
    }
    return fail(
      2,
      "Usage: ubuntu-drivers [OPTIONS] COMMAND [ARGS]...\nTry 'ubuntu-drivers --help' for help.\n\nError: Missing command.\n",
    );
  },
};
