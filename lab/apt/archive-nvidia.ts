/**
 * NVIDIA software: Ubuntu's driver packages (restricted, `nvidia-graphics-drivers-<branch>[-server]`
 * source packages as jammy names them) and NVIDIA's CUDA repository (cuda-keyring, toolkits,
 * NCCL, and the `cuda`/`cuda-drivers` metapackages that pull a driver).
 *
 * Ubuntu names: `nvidia-driver-580-server-open` depends on `nvidia-dkms-580-server-open` (the
 * open kernel module source, built by DKMS as `nvidia-srv`; desktop branches build `nvidia`) and
 * on the `-580-server` userspace (`nvidia-utils-580-server` has nvidia-smi,
 * `nvidia-compute-utils-580-server` has nvidia-persistenced, `libnvidia-compute-580-server` has
 * NVML and CUDA's libcuda). Every kind of package of one branch conflicts with the same kind of
 * any other branch (virtual names), so installing another branch removes the installed one.
 */
import { lib, pkg, unit } from './archive-build.js';
import type { ArchivePackage } from './archive-types.js';
import { CUDA_REPO_URI } from './repos.js';

interface Branch {
  branch: string;
  server: boolean;
  open: boolean;
  /** `580.126.09` */
  version: string;
  /** Debian revision: `0ubuntu0.22.04.1` */
  revision: string;
  where: string;
}

const KOS = ['nvidia', 'nvidia-modeset', 'nvidia-drm', 'nvidia-uvm', 'nvidia-peermem'];

/**
 * What jammy's dkms 2.8.7 prints when a package's postinst adds, builds and installs a module.
 * `{kernel}` is replaced by the running kernel release when the transcript is rendered.
 */
export function dkmsBuildLines(module: string, version: string, kos: readonly string[]): string[] {
  const lines = [
    `Loading new ${module}-${version} DKMS files...`,
    'Building for {kernel}',
    'Building for architecture x86_64',
    'Building initial module for {kernel}',
    'Done.',
  ];
  for (const ko of kos) {
    lines.push(
      '',
      `${ko}.ko:`,
      'Running module version sanity check.',
      ' - Original module',
      '   - No original module exists within this kernel',
      ' - Installation',
      '   - Installing to /lib/modules/{kernel}/updates/dkms/',
    );
  }
  lines.push('', 'depmod...', '');
  return lines;
}

const PERSISTENCED_UNIT = unit({
  Unit: [
    'Description=NVIDIA Persistence Daemon',
    'Wants=syslog.target',
    'StopWhenUnneeded=true',
    'Before=systemd-backlight@backlight:nvidia_0.service',
  ],
  Service: [
    'Type=forking',
    'ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --verbose',
    'ExecStopPost=/bin/rm -rf /var/run/nvidia-persistenced',
  ],
  Install: ['WantedBy=multi-user.target'],
});

function driverBranch(b: Branch): ArchivePackage[] {
  const v = `${b.version}-${b.revision}`;
  const us = b.server ? `${b.branch}-server` : b.branch;
  const ks = b.open ? `${us}-open` : us;
  const eq = (name: string): string => `${name} (= ${v})`;
  const dkmsModule = b.server ? 'nvidia-srv' : 'nvidia';
  const src = `nvidia-graphics-drivers-${us}`;
  /** One package of the branch; `kind` is the virtual name every branch's package of that kind provides and conflicts with. */
  const part = (
    name: string,
    kind: string,
    section: string,
    description: string,
    size: number,
    kb: number,
    extra: Partial<ArchivePackage> = {},
  ): ArchivePackage =>
    pkg(name, v, b.where, section, description, size, kb, {
      source: src,
      provides: [kind],
      conflicts: [kind],
      maintainer: 'Ubuntu Core Developers <ubuntu-devel-discuss@lists.ubuntu.com>',
      ...extra,
    });
  const L = (
    name: string,
    kind: string,
    description: string,
    size: number,
    kb: number,
    extra: Partial<ArchivePackage> = {},
  ): ArchivePackage =>
    part(name, kind, 'libs', description, size, kb, { multiArch: 'same', triggers: ['libc-bin'], ...extra });
  const server = b.server ? ' Server' : '';
  return [
    part(`nvidia-driver-${ks}`, 'nvidia-driver-binary', 'libs', `NVIDIA${server} Driver metapackage`, 482_000, 1_521, {
      depends: [
        eq(`nvidia-dkms-${ks}`),
        eq(`nvidia-kernel-common-${us}`),
        eq(`libnvidia-compute-${us}`),
        eq(`libnvidia-extra-${us}`),
        eq(`nvidia-compute-utils-${us}`),
        eq(`libnvidia-decode-${us}`),
        eq(`libnvidia-encode-${us}`),
        eq(`nvidia-utils-${us}`),
        eq(`xserver-xorg-video-nvidia-${us}`),
        eq(`libnvidia-cfg1-${us}`),
        eq(`libnvidia-fbc1-${us}`),
        eq(`libnvidia-gl-${us}`),
      ],
      ...(b.server ? {} : { recommends: ['nvidia-settings', 'nvidia-prime'] }),
    }),
    part(
      `nvidia-dkms-${ks}`,
      'nvidia-dkms-kernel',
      'kernel',
      `NVIDIA DKMS package${b.open ? ' (open kernel module)' : ''}`,
      37_000,
      119,
      {
        depends: ['dkms', eq(`nvidia-kernel-common-${us}`), eq(`nvidia-kernel-source-${ks}`)],
        modules: KOS,
        dkms: { module: dkmsModule, version: b.version },
        setup: [
          'update-initramfs: deferring update (trigger activated)',
          ...dkmsBuildLines(dkmsModule, b.version, KOS),
        ],
        triggers: ['initramfs-tools'],
        ms: 25_000,
      },
    ),
    part(
      `nvidia-kernel-source-${ks}`,
      'nvidia-kernel-source',
      'kernel',
      `NVIDIA kernel source package${b.open ? ' (open)' : ''}`,
      b.open ? 18_900_000 : 44_600_000,
      b.open ? 112_000 : 66_000,
    ),
    part(
      `nvidia-kernel-common-${us}`,
      'nvidia-kernel-common',
      'kernel',
      'Shared files used with the kernel module',
      114_000,
      640,
      {
        depends: [`nvidia-firmware-${us}-${b.version}`],
        files: {
          '/lib/modprobe.d/nvidia-graphics-drivers.conf':
            'blacklist nouveau\nblacklist lbm-nouveau\nalias nouveau off\nalias lbm-nouveau off\n',
        },
        triggers: ['initramfs-tools'],
      },
    ),
    pkg(
      `nvidia-firmware-${us}-${b.version}`,
      v,
      b.where,
      'kernel',
      'Firmware files used by the kernel module',
      71_300_000,
      108_000,
      { source: src, conflicts: ['nvidia-firmware'], provides: ['nvidia-firmware'] },
    ),
    L(`libnvidia-compute-${us}`, 'libnvidia-compute', 'NVIDIA libcompute package', 49_700_000, 219_000, {
      depends: [eq(`libnvidia-common-${us}`)],
    }),
    part(
      `libnvidia-common-${us}`,
      'libnvidia-common',
      'libs',
      'Shared files used by the NVIDIA libraries',
      14_200,
      73,
      { arch: 'all' },
    ),
    L(`libnvidia-extra-${us}`, 'libnvidia-extra', `Extra libraries for the NVIDIA${server} Driver`, 76_000, 268),
    L(`libnvidia-decode-${us}`, 'libnvidia-decode', 'NVIDIA Video Decoding runtime libraries', 1_840_000, 7_320, {
      depends: [eq(`libnvidia-compute-${us}`)],
    }),
    L(`libnvidia-encode-${us}`, 'libnvidia-encode', 'NVENC Video Encoding runtime library', 105_000, 442, {
      depends: [eq(`libnvidia-decode-${us}`)],
    }),
    L(`libnvidia-cfg1-${us}`, 'libnvidia-cfg1', 'NVIDIA binary OpenGL/GLX configuration library', 151_000, 426),
    L(`libnvidia-fbc1-${us}`, 'libnvidia-fbc1', 'NVIDIA OpenGL-based Framebuffer Capture runtime library', 56_000, 218),
    L(
      `libnvidia-gl-${us}`,
      'libnvidia-gl',
      'NVIDIA OpenGL/GLX/EGL/GLES GLVND libraries and Vulkan ICD',
      168_000_000,
      692_000,
      { depends: ['libglvnd0', 'libegl1', 'libgles2', 'libgl1', eq(`libnvidia-common-${us}`)] },
    ),
    part(`nvidia-compute-utils-${us}`, 'nvidia-compute-utils', 'utils', 'NVIDIA compute utilities', 128_000, 445, {
      depends: [eq(`libnvidia-compute-${us}`)],
      units: [{ name: 'nvidia-persistenced.service', content: PERSISTENCED_UNIT, enable: true, start: true }],
      setup: [
        "Warning: The home dir /nonexistent you specified can't be accessed: No such file or directory",
        "Adding system user `nvidia-persistenced' (UID 115) ...",
        "Adding new group `nvidia-persistenced' (GID 122) ...",
        "Adding new user `nvidia-persistenced' (UID 115) with group `nvidia-persistenced' ...",
        "Not creating home directory `/nonexistent'.",
      ],
    }),
    part(`nvidia-utils-${us}`, 'nvidia-utils', 'utils', `NVIDIA${server} Driver support binaries`, 510_000, 2_890, {
      depends: [eq(`libnvidia-compute-${us}`)],
      triggers: ['man-db'],
    }),
    part(
      `xserver-xorg-video-nvidia-${us}`,
      'xserver-xorg-video-nvidia',
      'x11',
      'NVIDIA binary Xorg driver',
      1_620_000,
      4_300,
      { depends: ['xserver-xorg-core', eq(`libnvidia-cfg1-${us}`)] },
    ),
  ];
}

/** Ubuntu's driver branches the stages and scenarios use; the first 580 server-open version is the candidate. */
export const DRIVER_580_SERVER_OPEN = '580.126.09-0ubuntu0.22.04.1';

const BRANCHES: Branch[] = [
  {
    branch: '580',
    server: true,
    open: true,
    version: '580.126.09',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted',
  },
  {
    branch: '580',
    server: true,
    open: true,
    version: '580.95.05',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-security/restricted',
  },
  {
    branch: '580',
    server: true,
    open: false,
    version: '580.126.09',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted',
  },
  {
    branch: '580',
    server: false,
    open: true,
    version: '580.126.09',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted jammy-security/restricted',
  },
  {
    branch: '570',
    server: false,
    open: true,
    version: '570.172.08',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted jammy-security/restricted',
  },
  {
    branch: '570',
    server: true,
    open: true,
    version: '570.172.08',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted jammy-security/restricted',
  },
  {
    branch: '535',
    server: false,
    open: false,
    version: '535.183.01',
    revision: '0ubuntu0.22.04.1',
    where: 'jammy-updates/restricted jammy-security/restricted',
  },
];

/** Packages the server-open and desktop drivers share (their userspace of one branch is identical). */
function dedupe(pkgs: ArchivePackage[]): ArchivePackage[] {
  const seen = new Set<string>();
  return pkgs.filter((p) => {
    const key = `${p.name} ${p.version}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

const XORG = '2:21.1.4-2ubuntu1.7~22.04.12';

const GRAPHICS: ArchivePackage[] = [
  pkg(
    'xserver-xorg-core',
    XORG,
    'jammy-updates/main jammy-security/main',
    'x11',
    'Xorg X server - core server',
    1_480_000,
    3_978,
    { depends: ['xserver-common', 'libxfont2', 'libxcvt0', 'keyboard-configuration', 'libgl1'], triggers: ['man-db'] },
  ),
  pkg(
    'xserver-common',
    XORG,
    'jammy-updates/main jammy-security/main',
    'x11',
    'common files used by various X servers',
    28_900,
    134,
    { arch: 'all', depends: ['x11-common', 'xkb-data'] },
  ),
  pkg('x11-common', '1:7.7+23ubuntu2', 'jammy/main', 'x11', 'X Window System (X.Org) infrastructure', 23_400, 312, {
    arch: 'all',
  }),
  pkg('xkb-data', '2.33-1', 'jammy/main', 'x11', 'X Keyboard Extension (XKB) configuration data', 394_000, 4_456, {
    arch: 'all',
  }),
  pkg(
    'keyboard-configuration',
    '1.205ubuntu3',
    'jammy/main',
    'utils',
    'system-wide keyboard preferences',
    371_000,
    2_532,
    { arch: 'all', depends: ['xkb-data'], debconf: true },
  ),
  lib('libxfont2', '1:2.0.5-1build1', 'jammy/main', 'X11 font rasterisation library', 94_800, 262),
  lib('libxcvt0', '0.1.1-3', 'jammy/main', 'VESA CVT standard timing modelines generator -- shared library', 5_494, 25),
  lib('libglvnd0', '1.4.0-1', 'jammy/main', 'Vendor neutral GL dispatch library', 73_600, 900),
  lib('libgl1', '1.4.0-1', 'jammy/main', 'Vendor neutral GL dispatch library -- legacy GL support', 110_000, 434, {
    depends: ['libglvnd0', 'libglx0'],
  }),
  lib('libglx0', '1.4.0-1', 'jammy/main', 'Vendor neutral GL dispatch library -- GLX support', 41_000, 171, {
    depends: ['libglvnd0'],
  }),
  lib('libegl1', '1.4.0-1', 'jammy/main', 'Vendor neutral GL dispatch library -- EGL support', 28_600, 96, {
    depends: ['libglvnd0'],
  }),
  lib('libgles2', '1.4.0-1', 'jammy/main', 'Vendor neutral GL dispatch library -- GLESv2 support', 18_100, 70, {
    depends: ['libglvnd0'],
  }),
  pkg(
    'nvidia-settings',
    '510.47.03-0ubuntu1',
    'jammy/restricted',
    'x11',
    'Tool for configuring the NVIDIA graphics driver',
    957_000,
    3_146,
    { triggers: ['man-db'] },
  ),
  pkg('nvidia-prime', '0.8.17.1', 'jammy/main', 'x11', "Tools to enable NVIDIA's Prime", 9_994, 55, { arch: 'all' }),
];

// --- NVIDIA CUDA repository ---------------------------------------------------------------------

const CUDA = 'cuda';
const NV_MAINT = 'cudatools <cudatools@nvidia.com>';

interface Toolkit {
  major: number;
  minor: number;
  toolkit: string;
  nvcc: string;
  cudart: string;
  libs: string;
}

function toolkit(t: Toolkit): ArchivePackage[] {
  const s = `${t.major}-${t.minor}`;
  const dir = `/usr/local/cuda-${t.major}.${t.minor}`;
  const c = (
    name: string,
    version: string,
    description: string,
    size: number,
    kb: number,
    extra: Partial<ArchivePackage> = {},
  ): ArchivePackage => pkg(name, version, CUDA, 'devel', description, size, kb, { maintainer: NV_MAINT, ...extra });
  const components = [
    'cuda-cudart',
    'libcublas',
    'libcufft',
    'libcurand',
    'libcusolver',
    'libcusparse',
    'libnpp',
    'libnvjitlink',
    'cuda-nvrtc',
  ];
  return [
    c(`cuda-toolkit-${s}`, t.toolkit, `CUDA Toolkit ${t.major}.${t.minor} meta-package`, 3_000, 8, {
      depends: [
        `cuda-compiler-${s} (>= ${t.toolkit})`,
        `cuda-libraries-${s} (>= ${t.toolkit})`,
        `cuda-libraries-dev-${s} (>= ${t.toolkit})`,
        `cuda-tools-${s}`,
        `cuda-toolkit-${s}-config-common`,
      ],
    }),
    c(`cuda-compiler-${s}`, t.toolkit, `CUDA compiler`, 2_500, 8, { depends: [`cuda-nvcc-${s}`] }),
    c(`cuda-nvcc-${s}`, t.nvcc, 'CUDA nvcc', 44_000_000, 136_000, {
      files: {
        [`${dir}/bin/nvcc.profile`]:
          '\nTOP              = $(_HERE_)/..\n\nCICC_PATH        = $(TOP)/nvvm/bin\nNVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice\n\nLD_LIBRARY_PATH += $(TOP)/lib:\nPATH            += $(CICC_PATH):$(_HERE_):\n\nINCLUDES        +=  "-I$(TOP)/$(_TARGET_DIR_)/include" $(_SPACE_)\n\nLIBRARIES        =+ $(_SPACE_) "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)/stubs" "-L$(TOP)/$(_TARGET_DIR_)/lib$(_TARGET_SIZE_)"\n\nCUDAFE_FLAGS    +=\nPTXAS_FLAGS     +=\n',
      },
    }),
    c(`cuda-libraries-${s}`, t.toolkit, 'CUDA Libraries meta-package', 2_500, 8, {
      depends: components.map((n) => `${n}-${s}`),
    }),
    c(`cuda-libraries-dev-${s}`, t.toolkit, 'CUDA Libraries dev meta-package', 2_500, 8, {
      depends: [`cuda-cudart-dev-${s}`],
    }),
    c(`cuda-cudart-${s}`, t.cudart, 'CUDA Runtime native Libraries', 171_000, 724, {
      depends: ['cuda-toolkit-config-common'],
    }),
    c(`cuda-cudart-dev-${s}`, t.cudart, 'CUDA Runtime native dev links, headers', 1_190_000, 6_500, {
      depends: [`cuda-cudart-${s}`],
    }),
    ...components
      .slice(1)
      .map((n) =>
        c(`${n}-${s}`, t.libs, `CUDA ${n.replace(/^lib|^cuda-/, '')} native runtime libraries`, 96_000_000, 312_000),
      ),
    c(`cuda-tools-${s}`, t.toolkit, 'CUDA Tools meta-package', 2_500, 8, { depends: [`cuda-command-line-tools-${s}`] }),
    c(`cuda-command-line-tools-${s}`, t.toolkit, 'CUDA command-line tools', 2_500, 8),
    c(`cuda-toolkit-${s}-config-common`, t.cudart, 'Common config package for CUDA Toolkit', 16_400, 14, {
      arch: 'all',
      links: {
        '/usr/local/cuda': '/etc/alternatives/cuda',
        '/etc/alternatives/cuda': dir,
        [`/usr/local/cuda-${t.major}`]: `/etc/alternatives/cuda-${t.major}`,
        [`/etc/alternatives/cuda-${t.major}`]: dir,
      },
      setup: [
        `update-alternatives: using ${dir} to provide /usr/local/cuda (cuda) in auto mode`,
        `update-alternatives: using ${dir} to provide /usr/local/cuda-${t.major} (cuda-${t.major}) in auto mode`,
      ],
    }),
  ];
}

const NCCL: ArchivePackage[] = [
  ['2.28.9-1+cuda13.0', 228_000_000, 512_000],
  ['2.28.9-1+cuda12.9', 224_000_000, 505_000],
  ['2.26.2-1+cuda12.8', 201_000_000, 470_000],
].flatMap(([v, size, kb]) => [
  pkg(
    'libnccl2',
    v as string,
    CUDA,
    'libs',
    'NVIDIA Collective Communication Library (NCCL) Runtime',
    size as number,
    kb as number,
    { maintainer: 'cudatools <cudatools@nvidia.com>' },
  ),
  pkg(
    'libnccl-dev',
    v as string,
    CUDA,
    'libdevel',
    'NVIDIA Collective Communication Library (NCCL) Development Files',
    38_000_000,
    112_000,
    { maintainer: 'cudatools <cudatools@nvidia.com>', depends: [`libnccl2 (= ${v as string})`] },
  ),
]);

/** cuda-keyring: ships the repository's sources list and signing key (the `dpkg -i` route documented by NVIDIA). */
export const CUDA_KEYRING = pkg(
  'cuda-keyring',
  '1.1-1',
  CUDA,
  'utils',
  'GPG keyring for the CUDA repository',
  4_328,
  17,
  {
    arch: 'all',
    maintainer: NV_MAINT,
    files: {
      '/etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list': {
        content: `deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] ${CUDA_REPO_URI}/ /\n`,
        conffile: true,
      },
      '/usr/share/keyrings/cuda-archive-keyring.gpg':
        '\u0099\u0001\u000dcuda-archive-keyring (binary OpenPGP keyring)\n',
    },
  },
);

const CUDA_META: ArchivePackage[] = [
  pkg('cuda-toolkit-config-common', '13.0.96-1', CUDA, 'devel', 'Common config package for CUDA Toolkit', 16_000, 14, {
    arch: 'all',
    maintainer: NV_MAINT,
  }),
  pkg('cuda-drivers-580', '580.126.09-1', CUDA, 'devel', 'CUDA Driver native Libraries', 2_600, 8, {
    maintainer: NV_MAINT,
    depends: ['nvidia-driver-580-open (>= 580.126.09)'],
  }),
  pkg('cuda-drivers', '580.126.09-1', CUDA, 'devel', 'CUDA Driver meta-package, branch-agnostic', 2_500, 8, {
    maintainer: NV_MAINT,
    depends: ['cuda-drivers-580 (= 580.126.09-1)'],
  }),
  pkg('cuda-runtime-13-0', '13.0.1-1', CUDA, 'devel', 'CUDA Runtime 13.0 meta-package', 2_500, 8, {
    maintainer: NV_MAINT,
    depends: ['cuda-drivers (>= 580.65.06)', 'cuda-libraries-13-0 (>= 13.0.1)'],
  }),
  pkg('cuda-13-0', '13.0.1-1', CUDA, 'devel', 'CUDA 13.0 meta-package', 2_500, 8, {
    maintainer: NV_MAINT,
    depends: ['cuda-runtime-13-0 (>= 13.0.1)', 'cuda-toolkit-13-0 (>= 13.0.1)'],
  }),
  pkg('cuda', '13.0.1-1', CUDA, 'devel', 'CUDA meta-package', 2_500, 8, {
    maintainer: NV_MAINT,
    depends: ['cuda-13-0 (>= 13.0.1)'],
  }),
];

export const NVIDIA_PACKAGES: readonly ArchivePackage[] = [
  ...dedupe(BRANCHES.flatMap(driverBranch)),
  ...GRAPHICS,
  ...toolkit({ major: 12, minor: 8, toolkit: '12.8.1-1', nvcc: '12.8.93-1', cudart: '12.8.90-1', libs: '12.8.4.1-1' }),
  ...toolkit({ major: 13, minor: 0, toolkit: '13.0.1-1', nvcc: '13.0.88-1', cudart: '13.0.96-1', libs: '13.0.2.14-1' }),
  ...NCCL,
  CUDA_KEYRING,
  ...CUDA_META,
];
