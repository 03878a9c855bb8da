/** The os stage's read-only probes (docs/STAGES.md §3.2). */
import type { ProbeDef } from '../../src/engine/types.js';

/** What every host needs before the later stages (tools the probes and steps use, time sync, LLDP). */
export const BASE_PACKAGES = [
  'chrony',
  'pciutils',
  'ethtool',
  'iproute2',
  'jq',
  'curl',
  'python3-venv',
  'lldpd',
] as const;
/** In the tutorial's list but not wanted: legacy IB fabric tool, ifenslave (networkd bonds natively), ntp (chrony). */
export const TUTORIAL_ONLY_PACKAGES = ['ibutils', 'ifenslave', 'ntp'] as const;
/** Kernel metapackages held so unattended upgrades cannot pull a kernel the NVIDIA/OFED modules were not built for. */
export const KERNEL_HOLDS = ['linux-generic', 'linux-image-generic', 'linux-headers-generic'] as const;

export const DPKG_FORMAT = '-f=${db:Status-Abbrev} ${Package} ${Version}\\n';

export const osProbes: readonly ProbeDef[] = [
  { id: 'sudo', command: { argv: ['sudo', '-n', 'true'] } },
  { id: 'packages', command: { argv: ['dpkg-query', '-W', DPKG_FORMAT, ...BASE_PACKAGES, ...TUTORIAL_ONLY_PACKAGES] } },
  // Every package whose upgrade could break a built module: NVIDIA, OFED/DOCA, the kernel metapackages.
  {
    id: 'held-candidates',
    command: {
      argv: [
        'dpkg-query',
        '-W',
        DPKG_FORMAT,
        ...KERNEL_HOLDS,
        'nvidia-driver-*',
        'nvidia-dkms-*',
        'mlnx-ofed-kernel-dkms',
        'doca-ofed',
      ],
    },
  },
  { id: 'ntp-sync', command: { argv: ['timedatectl', 'show', '-p', 'NTPSynchronized', '--value'] } },
  { id: 'memlock', command: { argv: ['bash', '-lc', 'ulimit -l'] } },
  { id: 'holds', command: { argv: ['apt-mark', 'showhold'] } },
  { id: 'hostname', command: { argv: ['hostname'] } },
];
