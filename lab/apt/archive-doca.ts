/**
 * DOCA-Host 2.9.1 LTS (DOCA-OFED = MLNX_OFED 24.10-1.1.4): `doca-host_…_amd64.deb` is a local
 * repository package — `dpkg -i` unpacks the repository under /usr/share and adds its sources
 * list; after `apt-get update`, `apt-get install doca-ofed` pulls the OFED kernel modules (built by
 * DKMS, the bulk of the ≈ 4 min install), OFED's rdma-core and tools. Its versions
 * (`2410mlnx54…`) sort above jammy's, so installed inbox packages are upgraded in place.
 */
import { lib, pkg, unit } from './archive-build.js';
import type { ArchivePackage } from './archive-types.js';
import { dkmsBuildLines } from './archive-nvidia.js';
import { DOCA_REPO_URI, DOCA_VERSION } from './repos.js';

const D = 'doca';
const OFED = '24.10.OFED.24.10.1.1.4.1-1';
const RDMA = '2410mlnx54-1.2410068';
const MAINT = 'Mellanox Technologies <support@mellanox.com>';

const OFED_KOS = [
  'mlx_compat',
  'ib_core',
  'ib_uverbs',
  'ib_umad',
  'ib_cm',
  'iw_cm',
  'rdma_cm',
  'rdma_ucm',
  'mlx5_core',
  'mlx5_ib',
  'mlxfw',
  'ib_ipoib',
  'mlxdevm',
];

const OPENIBD_UNIT = unit({
  Unit: [
    'Description=openibd - configure Mellanox devices',
    'Documentation=file:/etc/infiniband/openib.conf',
    'After=wickedd.service wickedd-nanny.service local-fs.target',
    'Before=network.target network-pre.target',
    'RefuseManualStop=true',
    'DefaultDependencies=false',
    'Conflicts=emergency.target emergency.service',
  ],
  Service: [
    'Type=oneshot',
    'RemainAfterExit=yes',
    'ExecStart=/etc/init.d/openibd start bootid=%b',
    'ExecStop=/etc/init.d/openibd stop',
    'TimeoutSec=0',
  ],
  Install: ['WantedBy=sysinit.target'],
});

const m = (
  name: string,
  version: string,
  section: string,
  description: string,
  size: number,
  kb: number,
  extra: Partial<ArchivePackage> = {},
): ArchivePackage => pkg(name, version, D, section, description, size, kb, { maintainer: MAINT, ...extra });
const ml = (
  name: string,
  version: string,
  description: string,
  size: number,
  kb: number,
  extra: Partial<ArchivePackage> = {},
): ArchivePackage => lib(name, version, D, description, size, kb, { maintainer: MAINT, ...extra });

/** The local repository package itself (never in a repository: installed with dpkg -i). */
export const DOCA_HOST = pkg(
  'doca-host',
  DOCA_VERSION,
  '',
  'misc',
  'DOCA host repository configuration',
  1_074_000_000,
  1_120_000,
  {
    maintainer: 'NVIDIA <doca-support@nvidia.com>',
    files: {
      '/etc/apt/sources.list.d/doca.list': {
        content: `deb [signed-by=/etc/apt/trusted.gpg.d/GPG-KEY-Mellanox.pub] ${DOCA_REPO_URI} ./\n`,
        conffile: true,
      },
      '/etc/apt/trusted.gpg.d/GPG-KEY-Mellanox.pub':
        '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBFZ2Qv8BCADcVXFz3nZ7fBFMrwZc8wJ9wHaYtHQTtHH5Ap0y6YEHRtAd\n-----END PGP PUBLIC KEY BLOCK-----\n',
      [`/usr/share/doca-host-${DOCA_VERSION}/repo/Release`]: `Origin: NVIDIA\nLabel: DOCA\nSuite: ./\nArchitectures: amd64\n`,
    },
  },
);

export const DOCA_PACKAGES: readonly ArchivePackage[] = [
  m(
    'doca-ofed',
    DOCA_VERSION,
    'misc',
    'DOCA-OFED metapackage: kernel drivers and userspace for NVIDIA networking',
    2_100,
    8,
    {
      // Versioned, so installed inbox packages (39.0-1) are upgraded to DOCA's builds.
      depends: [
        `mlnx-ofed-kernel-dkms (>= ${OFED})`,
        `mlnx-ofed-kernel-utils (>= ${OFED})`,
        'ofed-scripts',
        'mlnx-tools',
        ...[
          'rdma-core',
          'ibverbs-utils',
          'ibverbs-providers',
          'rdmacm-utils',
          'infiniband-diags',
          'ibacm',
          'libibverbs-dev',
          'librdmacm-dev',
          'srptools',
        ].map((n) => `${n} (>= ${RDMA})`),
        'perftest (>= 24.10.0)',
        'mstflint',
        'mlnx-iproute2',
        'mlnx-ethtool',
        'ucx',
      ],
    },
  ),
  m('mlnx-ofed-kernel-dkms', OFED, 'kernel', 'DKMS support for mlnx-ofed kernel modules', 2_920_000, 24_800, {
    arch: 'all',
    depends: ['dkms', 'mlnx-ofed-kernel-utils'],
    modules: OFED_KOS,
    dkms: { module: 'mlnx-ofed-kernel', version: '24.10.OFED.24.10.1.1.4.1' },
    setup: dkmsBuildLines('mlnx-ofed-kernel', '24.10.OFED.24.10.1.1.4.1', OFED_KOS),
    triggers: ['initramfs-tools'],
    ms: 185_000,
  }),
  m(
    'mlnx-ofed-kernel-utils',
    OFED,
    'kernel',
    'Userspace tools to restart and tune mlnx-ofed kernel modules',
    78_000,
    292,
    {
      depends: ['ofed-scripts'],
      files: {
        '/etc/infiniband/openib.conf': {
          content:
            '# Start HCA driver upon boot\nONBOOT=yes\n\n# Node description\nNODE_DESC=$(hostname -s)\n\n# Seconds to sleep after openibd start finished and before releasing the shell\nPOST_START_DELAY=0\n\n# Load UCM module\nUCM_LOAD=no\n\n# Load RDMA_CM module\nRDMA_CM_LOAD=yes\n\n# Load RDMA_UCM module\nRDMA_UCM_LOAD=yes\n\n# Increase ib_mad thread priority\nRENICE_IB_MAD=no\n\n# Run sysctl performance tuning script\nRUN_SYSCTL=no\n\n# Load MLX5 modules\nMLX5_LOAD=yes\n\n# Load IPoIB\nIPOIB_LOAD=yes\n',
          conffile: true,
        },
        '/etc/init.d/openibd': {
          content: '#!/bin/bash\n# openibd: start/stop/restart the NVIDIA networking (mlnx-ofed) driver stack\n',
          mode: 0o755,
        },
      },
      units: [{ name: 'openibd.service', content: OPENIBD_UNIT, enable: true }],
    },
  ),
  m('ofed-scripts', '24.10.OFED.24.10.1.1.4-1', 'net', 'MLNX_OFED utilities', 56_000, 180, {
    files: {
      '/usr/sbin/ofed_uninstall.sh': {
        content: '#!/bin/bash\n# Uninstall MLNX_OFED / DOCA-OFED packages\n',
        mode: 0o755,
      },
    },
  }),
  m('mlnx-tools', '24.10.0-1.2410068', 'net', 'Userspace tools to tune NVIDIA networking devices', 74_000, 498, {
    depends: ['python3'],
  }),
  m('rdma-core', RDMA, 'net', 'RDMA core userspace infrastructure and documentation', 70_000, 262, {
    depends: ['udev'],
    files: {
      '/lib/udev/rules.d/60-rdma-persistent-naming.rules':
        '# DOCA-OFED keeps the kernel names (mlx5_N)\nACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_KERNEL"\n',
    },
    triggers: ['man-db'],
  }),
  ml('libibverbs1', RDMA, 'Library for direct userspace use of RDMA (InfiniBand/iWARP)', 61_000, 196, {
    depends: ['ibverbs-providers'],
  }),
  ml('ibverbs-providers', RDMA, 'User space provider drivers for libibverbs', 356_000, 1_388),
  m('ibverbs-utils', RDMA, 'net', 'Examples for the libibverbs library', 60_000, 224, { depends: ['libibverbs1'] }),
  ml('librdmacm1', RDMA, 'Library for managing RDMA connections', 72_000, 170, { depends: ['libibverbs1'] }),
  m('rdmacm-utils', RDMA, 'net', 'Examples for the librdmacm library', 84_000, 356, { depends: ['librdmacm1'] }),
  ml('libibumad3', RDMA, 'InfiniBand Userspace Management Datagram (uMAD) library', 25_000, 78),
  m('infiniband-diags', RDMA, 'net', 'InfiniBand diagnostic programs', 262_000, 1_040, { depends: ['libibumad3'] }),
  m('ibacm', RDMA, 'net', 'InfiniBand Communication Manager Assistant (ACM)', 84_000, 288, {
    depends: ['libibumad3', 'libibverbs1'],
  }),
  m('srptools', RDMA, 'net', 'Tools for Infiniband attached storage (SRP)', 46_000, 160, {
    depends: ['libibumad3', 'libibverbs1'],
  }),
  // rdma-core's debian/control ties the -dev packages to their libraries' exact build
  // (`= ${binary:Version}`), so installing them upgrades jammy's libibverbs1/librdmacm1 too.
  m('libibverbs-dev', RDMA, 'libdevel', 'Development files for the libibverbs library', 654_000, 3_480, {
    multiArch: 'same',
    depends: [`ibverbs-providers (= ${RDMA})`, `libibverbs1 (= ${RDMA})`],
  }),
  m('librdmacm-dev', RDMA, 'libdevel', 'Development files for the librdmacm library', 118_000, 690, {
    multiArch: 'same',
    depends: ['libibverbs-dev', `librdmacm1 (= ${RDMA})`],
  }),
  m('perftest', '24.10.0-0.66.g5b2ee1e.2410068', 'net', 'Infiniband verbs performance tests', 172_000, 812, {
    depends: ['libibverbs1', 'librdmacm1', 'libibumad3'],
  }),
  m('mstflint', '4.30.0-1.2410068', 'net', 'Mellanox firmware burning application', 2_450_000, 11_060),
  m(
    'mlnx-iproute2',
    '6.10.0-1.2410068',
    'net',
    'Networking and traffic control tools (NVIDIA networking features)',
    1_090_000,
    3_610,
  ),
  m(
    'mlnx-ethtool',
    '6.9-1.2410068',
    'net',
    'Display or change ethernet card settings (NVIDIA networking features)',
    225_000,
    742,
  ),
  m('ucx', '1.18.0-1.2410068', 'libs', 'Unified Communication X', 1_620_000, 7_300, {
    depends: ['libibverbs1', 'librdmacm1'],
  }),
];
