/**
 * jammy packages the stages and the tutorial install (os, nic-stack inbox, nccl build tools,
 * tutorial extras). Versions are the jammy / jammy-updates ones (packages.ubuntu.com); sizes are
 * the amd64 .deb and Installed-Size figures rounded. Unit files follow the Debian packaging of
 * each daemon; postinst messages are what those scripts print on a fresh jammy server.
 */
import { lib, pkg, unit } from './archive-build.js';
import type { ArchivePackage } from './archive-types.js';

const U = 'jammy/universe';
const M = 'jammy/main';
const UPD = 'jammy-updates/main jammy-security/main';
const UPD_U = 'jammy-updates/universe jammy-security/universe';

const CHRONY_UNIT = unit({
  Unit: [
    'Description=chrony, an NTP client/server',
    'Documentation=man:chronyd(8) man:chronyc(1) man:chrony.conf(5)',
    'Conflicts=openntpd.service ntp.service ntpsec.service',
    'Wants=time-sync.target',
    'Before=time-sync.target',
    'After=network.target',
    'ConditionCapability=CAP_SYS_TIME',
  ],
  Service: [
    'Type=forking',
    'PIDFile=/run/chrony/chronyd.pid',
    'EnvironmentFile=-/etc/default/chrony',
    'ExecStart=!/usr/sbin/chronyd $DAEMON_OPTS',
    'ExecStartPost=-/usr/lib/chrony/chrony-helper update-daemon',
    'PrivateTmp=yes',
    'ProtectHome=yes',
    'ProtectSystem=full',
  ],
  Install: ['Alias=chronyd.service', 'WantedBy=multi-user.target'],
});

const CHRONY_CONF = `# Welcome to the chrony configuration file. See chrony.conf(5) for more
# information about usable directives.

# Include configuration files found in /etc/chrony/conf.d.
confdir /etc/chrony/conf.d

# This will use (up to):
# - 4 sources from ntp.ubuntu.com which some are ipv6 enabled
# - 2 sources from 2.ubuntu.pool.ntp.org which is ipv6 enabled as well
# - 1 source from [01].ubuntu.pool.ntp.org each (ipv4 only atm)
# This means by default, up to 6 dual-stack and up to 2 additional IPv4-only
# sources will be used.
# At the same time it retains some protection against one of the entries being
# down (compare to just using one of the lines). See (LP: #1754358) for the
# discussion.
#
# About using servers from the NTP Pool Project in general see (LP: #104525).
# Approved by Ubuntu Technical Board on 2011-02-08.
# See http://www.pool.ntp.org/join.html for more information.
pool ntp.ubuntu.com        iburst maxsources 4
pool 0.ubuntu.pool.ntp.org iburst maxsources 1
pool 1.ubuntu.pool.ntp.org iburst maxsources 1
pool 2.ubuntu.pool.ntp.org iburst maxsources 2

# Use time sources from DHCP.
sourcedir /run/chrony-dhcp

# Use NTP sources found in /etc/chrony/sources.d.
sourcedir /etc/chrony/sources.d

# This directive specify the location of the file containing ID/key pairs for
# NTP authentication.
keyfile /etc/chrony/chrony.keys

# This directive specify the file into which chronyd will store the rate
# information.
driftfile /var/lib/chrony/chrony.drift

# Save NTS keys and cookies.
ntsdumpdir /var/lib/chrony

# Uncomment the following line to turn logging on.
#log tracking measurements statistics

# Log files location.
logdir /var/log/chrony

# Stop bad estimates upsetting machine clock.
maxupdateskew 100.0

# This directive enables kernel synchronisation (every 11 minutes) of the
# real-time clock. Note that it can't be used along with the 'rtcfile' directive.
rtcsync

# Step the system clock instead of slewing it if the adjustment is larger than
# one second, but only in the first three clock updates.
makestep 1 3

# Get TAI-UTC offset and leap seconds from the system tz database.
# This directive must be commented out when using time sources serving
# leap-smeared time.
leapsectz right/UTC
`;

const LLDPD_UNIT = unit({
  Unit: [
    'Description=LLDP daemon',
    'Documentation=man:lldpd(8)',
    'After=network.target',
    'RequiresMountsFor=/run/lldpd',
  ],
  Service: [
    'Type=notify',
    'NotifyAccess=main',
    'EnvironmentFile=-/etc/default/lldpd',
    'ExecStartPre=/usr/bin/mkdir -p /run/lldpd/chroot',
    'ExecStart=/usr/sbin/lldpd $DAEMON_ARGS $LLDPD_OPTIONS',
    'Restart=on-failure',
    'PrivateTmp=yes',
    'ProtectHome=yes',
    'ProtectSystem=full',
  ],
  Install: ['WantedBy=multi-user.target'],
});

const NTP_UNIT = unit({
  Unit: [
    'Description=Network Time Service',
    'Documentation=man:ntpd(8)',
    'After=network.target',
    'Conflicts=systemd-timesyncd.service',
  ],
  Service: ['Type=forking', 'PrivateTmp=true', 'ExecStart=/usr/lib/ntp/ntp-systemd-wrapper', 'PIDFile=/run/ntpd.pid'],
  Install: ['WantedBy=multi-user.target'],
});

/**
 * rdma-core's udev rule: NAME_FALLBACK renames mlx5_N to rocep<bus>s<slot>f<fn> when the device
 * is (re-)registered — at the next boot or driver reload, never for devices already present.
 */
export const RDMA_NAMING_RULE = `# SPDX-License-Identifier: (GPL-2.0 OR Linux-OpenIB)
# Copyright (c) 2019, Mellanox Technologies. All rights reserved. See COPYING file
#
# Rename modes:
# NAME_FALLBACK - Try to name devices in the following order:
#                 by-pci -> by-guid -> kernel
# NAME_KERNEL - leave name as kernel provided
# NAME_PCI - based on PCI/slot/function location
# NAME_GUID - based on system image GUID
#
# The stable names are combination of device type technology and rename mode.
# Infiniband - ib*
# RoCE - roce*
# iWARP - iw*
# OPA - opa*
# Default (unknown protocol) - rdma*
#
ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK"
`;

const RDMA = '39.0-1';
const PERFTEST = '4.4+0.37-1';
const MPI = '4.1.2-2ubuntu1';
const PY = '3.10.12-1~22.04.7';
const GCC = '11.4.0-1ubuntu1~22.04';

/** adduser's messages for `adduser --system --group --home H --no-create-home NAME` (adduser 3.118). */
function systemUser(name: string, uid: number, gid: number, home: string): string[] {
  return [
    `Adding group \`${name}' (GID ${gid}) ...`,
    'Done.',
    `Adding system user \`${name}' (UID ${uid}) ...`,
    `Adding new user \`${name}' (UID ${uid}) with group \`${name}' ...`,
    `Not creating home directory \`${home}'.`,
  ];
}

export const UBUNTU_PACKAGES: readonly ArchivePackage[] = [
  // --- stage os ---------------------------------------------------------------------------
  pkg('chrony', '4.2-2ubuntu2', M, 'net', 'Versatile implementation of the Network Time Protocol', 289_622, 652, {
    depends: ['adduser', 'iproute2', 'tzdata', 'ucf'],
    suggests: ['dnsutils', 'networkd-dispatcher'],
    conflicts: ['time-daemon'],
    provides: ['time-daemon'],
    files: {
      '/etc/chrony/chrony.conf': { content: CHRONY_CONF, conffile: true },
      '/etc/default/chrony': {
        content:
          '# This is a configuration file for /etc/init.d/chrony and\n# /lib/systemd/system/chrony.service; it allows you to pass various options to\n# the chrony daemon without editing the init script or service file.\n\n# Options to pass to chrony.\nDAEMON_OPTS="-F 1"\n',
        conffile: true,
      },
    },
    units: [{ name: 'chrony.service', content: CHRONY_UNIT, enable: true, start: true }],
    setup: [
      '',
      'Creating config file /etc/chrony/chrony.conf with new version',
      '',
      'Creating config file /etc/chrony/chrony.keys with new version',
      'dpkg-statoverride: warning: --update given but /var/log/chrony does not exist',
    ],
    triggers: ['man-db', 'dbus'],
  }),
  pkg('chrony', '4.2-2ubuntu2.1', UPD, 'net', 'Versatile implementation of the Network Time Protocol', 290_138, 652, {
    depends: ['adduser', 'iproute2', 'tzdata', 'ucf'],
    suggests: ['dnsutils', 'networkd-dispatcher'],
    conflicts: ['time-daemon'],
    provides: ['time-daemon'],
    files: { '/etc/chrony/chrony.conf': { content: CHRONY_CONF, conffile: true } },
    units: [{ name: 'chrony.service', content: CHRONY_UNIT, enable: true, start: true }],
    setup: [
      '',
      'Creating config file /etc/chrony/chrony.conf with new version',
      '',
      'Creating config file /etc/chrony/chrony.keys with new version',
      'dpkg-statoverride: warning: --update given but /var/log/chrony does not exist',
    ],
    triggers: ['man-db', 'dbus'],
  }),
  pkg('jq', '1.6-2.1ubuntu3', M, 'utils', 'lightweight and flexible command-line JSON processor', 52_482, 102, {
    depends: ['libjq1 (= 1.6-2.1ubuntu3)'],
    triggers: ['man-db'],
  }),
  lib(
    'libjq1',
    '1.6-2.1ubuntu3',
    M,
    'lightweight and flexible command-line JSON processor - shared library',
    133_022,
    375,
    { depends: ['libonig5'] },
  ),
  lib('libonig5', '6.9.7.1-2build1', M, 'regular expressions library', 172_202, 625),
  pkg(
    'python3-venv',
    '3.10.6-1~22.04.1',
    'jammy-updates/universe',
    'python',
    'venv module for python3 (default python3 version)',
    1_038,
    6,
    {
      depends: [`python3.10-venv (>= 3.10.6-1~)`, 'python3 (= 3.10.6-1~22.04.1)', 'python3-distutils'],
    },
  ),
  pkg(
    'python3.10-venv',
    PY,
    UPD_U,
    'python',
    'Interactive high-level object-oriented language (pyvenv binary, version 3.10)',
    5_716,
    28,
    {
      depends: ['python3-pip-whl', 'python3-setuptools-whl'],
      triggers: ['man-db'],
    },
  ),
  pkg(
    'python3-pip-whl',
    '22.0.2+dfsg-1ubuntu0.5',
    UPD_U,
    'python',
    'Python package installer (pip wheel)',
    1_679_660,
    1_856,
    { arch: 'all' },
  ),
  pkg(
    'python3-setuptools-whl',
    '59.6.0-1.2ubuntu0.22.04.2',
    UPD_U,
    'python',
    'Python Distutils Enhancements (wheel package)',
    788_628,
    857,
    { arch: 'all' },
  ),
  pkg('python3-distutils', '3.10.8-1~22.04', UPD, 'python', 'distutils package for Python 3.x', 139_174, 592, {
    arch: 'all',
    depends: ['python3-lib2to3'],
  }),
  pkg(
    'python3-lib2to3',
    '3.10.8-1~22.04',
    UPD,
    'python',
    'Interactive high-level object-oriented language (lib2to3)',
    77_552,
    418,
    { arch: 'all' },
  ),
  pkg('python3-pip', '22.0.2+dfsg-1ubuntu0.5', UPD_U, 'python', 'Python package installer', 1_305_818, 6_848, {
    arch: 'all',
    depends: ['ca-certificates', 'python3-distutils', 'python3-setuptools', 'python3-wheel', 'python3-pip-whl'],
    recommends: ['build-essential', 'python3-dev'],
    triggers: ['man-db'],
  }),
  pkg(
    'python3-setuptools',
    '59.6.0-1.2ubuntu0.22.04.2',
    UPD,
    'python',
    'Python3 Distutils Enhancements',
    340_254,
    1_849,
    { arch: 'all', depends: ['python3-pkg-resources'] },
  ),
  pkg(
    'python3-pkg-resources',
    '59.6.0-1.2ubuntu0.22.04.2',
    UPD,
    'python',
    'Package Discovery and Resource Access using pkg_resources',
    132_922,
    583,
    { arch: 'all' },
  ),
  pkg('python3-wheel', '0.37.1-2ubuntu0.22.04.1', UPD_U, 'python', 'built-package format for Python', 32_014, 130, {
    arch: 'all',
  }),
  pkg(
    'python3-dev',
    '3.10.6-1~22.04.1',
    'jammy-updates/main',
    'python',
    'header files and a static library for Python (default)',
    26_012,
    32,
    { depends: ['python3.10-dev', 'libpython3-dev'] },
  ),
  pkg('python3.10-dev', PY, UPD, 'python', 'Header files and a static library for Python (v3.10)', 508_828, 1_902, {
    depends: ['libpython3.10-dev'],
  }),
  lib(
    'libpython3-dev',
    '3.10.6-1~22.04.1',
    'jammy-updates/main',
    'header files and a static library for Python (default)',
    7_342,
    24,
    { depends: ['libpython3.10-dev'] },
  ),
  lib('libpython3.10-dev', PY, UPD, 'Header files and a static library for Python (v3.10)', 4_762_948, 21_498),
  pkg('lldpd', '1.0.13-1', U, 'net', 'implementation of IEEE 802.1ab (LLDP)', 188_306, 545, {
    depends: ['adduser', 'libevent-2.1-7', 'libsnmp40'],
    suggests: ['snmpd'],
    files: {
      '/etc/default/lldpd': {
        content:
          '# Uncomment to start SNMP subagent and enable CDP, SONMP and EDP protocol\n#DAEMON_ARGS="-x -c -s -e"\n',
        conffile: true,
      },
    },
    units: [{ name: 'lldpd.service', content: LLDPD_UNIT, enable: true, start: true }],
    setup: systemUser('_lldpd', 114, 121, '/run/lldpd'),
    triggers: ['man-db', 'libc-bin'],
  }),
  lib('libevent-2.1-7', '2.1.12-stable-1build3', M, 'Asynchronous event notification library', 148_074, 427),
  lib(
    'libsnmp40',
    '5.9.1+dfsg-1ubuntu2.6',
    UPD,
    'SNMP (Simple Network Management Protocol) library',
    1_062_822,
    3_866,
    { depends: ['libsnmp-base', 'libsensors5'] },
  ),
  pkg(
    'libsnmp-base',
    '5.9.1+dfsg-1ubuntu2.6',
    UPD,
    'libs',
    'SNMP configuration script, MIBs and documentation',
    1_569_438,
    4_148,
    { arch: 'all', suggests: ['snmp-mibs-downloader'] },
  ),
  lib('libsensors5', '1:3.6.0-7ubuntu1', M, 'library to read temperature/voltage/fan sensors', 26_322, 114, {
    depends: ['libsensors-config'],
    suggests: ['lm-sensors'],
  }),
  pkg('libsensors-config', '1:3.6.0-7ubuntu1', M, 'utils', 'lm-sensors configuration files', 5_274, 33, {
    arch: 'all',
  }),

  // --- stage nic-stack (inbox) --------------------------------------------------------------
  pkg('rdma-core', RDMA, M, 'net', 'RDMA core userspace infrastructure and documentation', 61_664, 249, {
    depends: ['udev'],
    files: {
      '/lib/udev/rules.d/60-rdma-persistent-naming.rules': RDMA_NAMING_RULE,
      '/etc/rdma/modules/rdma.conf': {
        content:
          '# These modules are loaded by the system if any RDMA devices is installed\n# iSCSI over RDMA client support\nib_iser\n\n# iSCSI over RDMA target support\nib_isert\n\n# SCSI RDMA Protocol target driver\nib_srpt\n\n# User access to RDMA verbs (supports libibverbs)\nib_uverbs\n\n# User access to RDMA connection management (supports librdmacm)\nrdma_ucm\n\n# RDS over RDMA support\n# rds_rdma\n\n# NFS over RDMA client support\nxprtrdma\n\n# NFS over RDMA server support\nsvcrdma\n',
        conffile: true,
      },
    },
    units: [
      {
        name: 'rdma-ndd.service',
        content: unit({
          Unit: [
            'Description=RDMA Node Description Daemon',
            'Documentation=man:rdma-ndd',
            'StopWhenUnneeded=yes',
            'DefaultDependencies=no',
            'Before=rdma-hw.target',
            'After=systemd-udevd.service',
          ],
          Service: ['Type=notify', 'Restart=always', 'ExecStart=/usr/sbin/rdma-ndd --systemd'],
        }),
      },
    ],
    triggers: ['man-db', 'initramfs-tools'],
  }),
  lib('libibverbs1', RDMA, M, 'Library for direct userspace use of RDMA (InfiniBand/iWARP)', 60_098, 188, {
    depends: ['ibverbs-providers'],
  }),
  lib('ibverbs-providers', RDMA, M, 'User space provider drivers for libibverbs', 339_644, 1_325),
  pkg('ibverbs-utils', RDMA, M, 'net', 'Examples for the libibverbs library', 57_766, 216, {
    depends: ['libibverbs1'],
    triggers: ['man-db'],
  }),
  lib('librdmacm1', RDMA, M, 'Library for managing RDMA connections', 70_646, 163, { depends: ['libibverbs1'] }),
  pkg('rdmacm-utils', RDMA, M, 'net', 'Examples for the librdmacm library', 81_846, 349, {
    depends: ['librdmacm1'],
    triggers: ['man-db'],
  }),
  lib('libibumad3', RDMA, M, 'InfiniBand Userspace Management Datagram (uMAD) library', 24_602, 76),
  lib('libibmad5', RDMA, M, 'Infiniband Management Datagram (MAD) library', 40_590, 120, { depends: ['libibumad3'] }),
  lib('libibnetdisc5', RDMA, M, 'InfiniBand diagnostics library', 27_802, 81, { depends: ['libibmad5'] }),
  pkg('infiniband-diags', RDMA, U, 'net', 'InfiniBand diagnostic programs', 254_082, 1_018, {
    depends: ['libibmad5', 'libibnetdisc5', 'libibumad3'],
    triggers: ['man-db'],
  }),
  pkg('perftest', PERFTEST, U, 'net', 'Infiniband verbs performance tests', 158_494, 771, {
    depends: ['libibverbs1', 'librdmacm1', 'libibumad3'],
    triggers: ['man-db'],
  }),
  pkg('libibverbs-dev', RDMA, M, 'libdevel', 'Development files for the libibverbs library', 637_418, 3_396, {
    depends: ['libibverbs1', 'ibverbs-providers', 'libnl-3-dev', 'libnl-route-3-dev'],
    multiArch: 'same',
  }),
  pkg('libnl-3-dev', '3.5.0-0.1', M, 'libdevel', 'development library and headers for libnl-3', 101_906, 605, {
    multiArch: 'same',
  }),
  pkg(
    'libnl-route-3-dev',
    '3.5.0-0.1',
    M,
    'libdevel',
    'development library and headers for libnl-route-3',
    183_802,
    1_279,
    { multiArch: 'same', depends: ['libnl-3-dev'] },
  ),

  // --- nccl build tools -----------------------------------------------------------------------
  pkg('openmpi-bin', MPI, U, 'net', 'high performance message passing library -- binaries', 97_266, 402, {
    depends: ['libopenmpi3 (= 4.1.2-2ubuntu1)', 'openmpi-common'],
    suggests: ['gfortran', 'openmpi-doc'],
    triggers: ['man-db'],
  }),
  pkg('openmpi-common', MPI, U, 'net', 'high performance message passing library -- common files', 164_814, 1_227, {
    arch: 'all',
  }),
  lib('libopenmpi3', MPI, U, 'high performance message passing library -- shared library', 2_503_278, 10_028, {
    depends: ['libfabric1', 'libhwloc15', 'libpmix2', 'libucx0', 'libibverbs1'],
  }),
  pkg(
    'libopenmpi-dev',
    MPI,
    U,
    'libdevel',
    'high performance message passing library -- header files',
    918_702,
    6_596,
    {
      depends: ['libopenmpi3 (= 4.1.2-2ubuntu1)', 'openmpi-bin', 'libhwloc-dev', 'libevent-dev', 'libibverbs-dev'],
      multiArch: 'same',
    },
  ),
  lib('libfabric1', '1.11.0-3', U, 'libfabric communication library', 558_322, 2_400, {
    depends: ['librdmacm1', 'libibverbs1'],
  }),
  lib('libhwloc15', '2.7.0-2ubuntu1', M, 'Hierarchical view of the machine - shared libs', 159_642, 461),
  pkg(
    'libhwloc-dev',
    '2.7.0-2ubuntu1',
    M,
    'libdevel',
    'Hierarchical view of the machine - static libs and headers',
    236_626,
    1_176,
    { depends: ['libhwloc15', 'libibverbs-dev'], multiArch: 'same' },
  ),
  lib('libpmix2', '4.1.2-2ubuntu1', U, 'Process Management Interface (Exascale) library', 634_334, 2_524),
  lib('libucx0', '1.12.1~rc2-1', U, 'Unified Communication X library', 1_041_594, 3_714, {
    depends: ['libibverbs1', 'librdmacm1'],
  }),
  pkg(
    'libevent-dev',
    '2.1.12-stable-1build3',
    M,
    'libdevel',
    'Asynchronous event notification library (development files)',
    278_462,
    1_617,
    { multiArch: 'same', depends: ['libevent-2.1-7'] },
  ),
  pkg('build-essential', '12.9ubuntu3', M, 'devel', 'Informational list of build-essential packages', 4_744, 21, {
    depends: ['libc6-dev', 'gcc', 'g++', 'make', 'dpkg-dev'],
  }),
  pkg('gcc', '4:11.2.0-1ubuntu1', M, 'devel', 'GNU C compiler', 5_112, 51, {
    depends: ['gcc-11'],
    provides: ['c-compiler'],
    triggers: ['man-db'],
  }),
  pkg('gcc-11', GCC, UPD, 'devel', 'GNU C compiler', 20_465_578, 56_152, {
    depends: ['cpp-11', 'binutils', 'libgcc-11-dev'],
    triggers: ['man-db'],
  }),
  pkg('cpp-11', GCC, UPD, 'interpreters', 'GNU C preprocessor', 10_236_498, 27_624),
  lib('libgcc-11-dev', GCC, UPD, 'GCC support library (development files)', 2_516_354, 9_624),
  pkg('g++', '4:11.2.0-1ubuntu1', M, 'devel', 'GNU C++ compiler', 1_136, 14, { depends: ['g++-11', 'gcc'] }),
  pkg('g++-11', GCC, UPD, 'devel', 'GNU C++ compiler', 11_430_262, 31_208, {
    depends: ['gcc-11', 'libstdc++-11-dev'],
    triggers: ['man-db'],
  }),
  lib('libstdc++-11-dev', GCC, UPD, 'GNU Standard C++ Library v3 (development files)', 2_128_190, 18_724),
  pkg('make', '4.3-4.1build1', M, 'devel', 'utility for directing compilation', 180_476, 414, { triggers: ['man-db'] }),
  pkg('dpkg-dev', '1.21.1ubuntu2.3', UPD, 'utils', 'Debian package development tools', 922_644, 3_316, {
    arch: 'all',
    depends: ['binutils', 'patch', 'make'],
    triggers: ['man-db'],
  }),
  pkg('binutils', '2.38-4ubuntu2.6', UPD, 'devel', 'GNU assembler, linker and binary utilities', 3_194, 103, {
    depends: ['binutils-x86-64-linux-gnu'],
    triggers: ['man-db'],
  }),
  pkg(
    'binutils-x86-64-linux-gnu',
    '2.38-4ubuntu2.6',
    UPD,
    'devel',
    'GNU binary utilities, for x86-64-linux-gnu target',
    2_328_442,
    10_460,
  ),
  pkg('patch', '2.7.6-7build2', M, 'vcs', 'Apply a diff file to an original', 109_406, 299, { triggers: ['man-db'] }),
  pkg(
    'libc6-dev',
    '2.35-0ubuntu3.8',
    UPD,
    'libdevel',
    'GNU C Library: Development Libraries and Header Files',
    2_100_186,
    12_800,
    { multiArch: 'same', depends: ['linux-libc-dev', 'libcrypt-dev'] },
  ),
  pkg('linux-libc-dev', '5.15.0-126.136', UPD, 'devel', 'Linux Kernel Headers for development', 1_343_946, 6_524, {
    multiArch: 'same',
  }),
  pkg('libcrypt-dev', '1:4.4.27-1', M, 'libdevel', 'libcrypt development files', 112_214, 333, { multiArch: 'same' }),
  pkg('dkms', '2.8.7-2ubuntu2.2', UPD, 'kernel', 'Dynamic Kernel Module Support Framework', 70_148, 207, {
    arch: 'all',
    depends: ['kmod', 'gcc | c-compiler', 'dpkg-dev', 'make', 'patch', 'lsb-release'],
    recommends: ['fakeroot', 'sudo', 'linux-headers-generic'],
    triggers: ['man-db'],
  }),
  pkg('fakeroot', '1.28-1ubuntu1', M, 'utils', 'tool for simulating superuser privileges', 60_408, 248, {
    depends: ['libfakeroot'],
    triggers: ['man-db'],
  }),
  lib('libfakeroot', '1.28-1ubuntu1', M, 'tool for simulating superuser privileges - shared libraries', 31_450, 128),
  pkg(
    'ubuntu-drivers-common',
    '1:0.9.6.2~0.22.04.8',
    'jammy-updates/main',
    'admin',
    'Detect and install additional Ubuntu driver packages',
    62_782,
    408,
    {
      depends: ['pciutils', 'python3', 'python3-apt', 'python3-xkit'],
      triggers: ['man-db'],
    },
  ),
  pkg('python3-apt', '2.4.0ubuntu4', UPD, 'python', 'Python 3 interface to libapt-pkg', 167_710, 1_052),
  pkg(
    'python3-xkit',
    '0.5.0ubuntu5',
    M,
    'python',
    'library for the manipulation of xorg.conf files (Python 3)',
    18_048,
    77,
    { arch: 'all' },
  ),

  // --- the tutorial's package list -----------------------------------------------------------
  pkg(
    'ntp',
    '1:4.2.8p15+dfsg-1ubuntu2',
    U,
    'net',
    'Network Time Protocol daemon and utility programs',
    647_234,
    1_838,
    {
      depends: ['adduser', 'lsb-base', 'netbase', 'libopts25', 'sntp'],
      suggests: ['ntp-doc'],
      conflicts: ['time-daemon'],
      provides: ['time-daemon'],
      files: {
        '/etc/ntp.conf': {
          content:
            '# /etc/ntp.conf, configuration for ntpd; see ntp.conf(5) for help\n\ndriftfile /var/lib/ntp/ntp.drift\n\nleapfile /usr/share/zoneinfo/leap-seconds.list\n\npool 0.ubuntu.pool.ntp.org iburst\npool 1.ubuntu.pool.ntp.org iburst\npool 2.ubuntu.pool.ntp.org iburst\npool 3.ubuntu.pool.ntp.org iburst\n\npool ntp.ubuntu.com\n\nrestrict -4 default kod notrap nomodify nopeer noquery limited\nrestrict -6 default kod notrap nomodify nopeer noquery limited\n\nrestrict 127.0.0.1\nrestrict ::1\n\nrestrict source notrap nomodify noquery\n',
          conffile: true,
        },
      },
      units: [{ name: 'ntp.service', content: NTP_UNIT, enable: true, start: true }],
      setup: [
        'Created symlink /etc/systemd/system/network-pre.target.wants/ntp-systemd-netif.path → /lib/systemd/system/ntp-systemd-netif.path.',
      ],
      triggers: ['man-db'],
    },
  ),
  lib('libopts25', '1:5.18.16-4', U, 'automated option processing library based on autogen', 59_468, 179),
  pkg('sntp', '1:4.2.8p15+dfsg-1ubuntu2', U, 'net', 'Network Time Protocol - sntp client', 76_138, 185, {
    depends: ['libopts25'],
  }),
  pkg(
    'ifenslave',
    '2.13~ubuntu1',
    U,
    'net',
    'configure network interfaces for parallel routing (bonding)',
    12_598,
    46,
    { arch: 'all', depends: ['iproute2', 'ifupdown'] },
  ),
  pkg('ifupdown', '0.8.36+nmu1ubuntu3', U, 'admin', 'high level tools to configure network interfaces', 59_734, 216, {
    depends: ['adduser', 'iproute2', 'lsb-base'],
    recommends: ['isc-dhcp-client'],
    files: {
      '/etc/network/interfaces':
        '# interfaces(5) file used by ifup(8) and ifdown(8)\n# Include files from /etc/network/interfaces.d:\nsource /etc/network/interfaces.d/*\n',
    },
    units: [
      {
        name: 'networking.service',
        content: unit({
          Unit: [
            'Description=Raise network interfaces',
            'Documentation=man:interfaces(5)',
            'DefaultDependencies=no',
            'Requires=ifupdown-pre.service',
            'Wants=network.target',
            'After=local-fs.target network-pre.target apparmor.service systemd-sysctl.service systemd-modules-load.service ifupdown-pre.service',
            'Before=network.target shutdown.target network-online.target',
            'Conflicts=shutdown.target',
          ],
          Service: [
            'Type=oneshot',
            'EnvironmentFile=-/etc/default/networking',
            'ExecStart=/sbin/ifup -a --read-environment',
            'ExecStop=/sbin/ifdown -a --read-environment --exclude=lo',
            'RemainAfterExit=true',
            'TimeoutStartSec=5min',
          ],
          Install: ['WantedBy=multi-user.target', 'WantedBy=network-online.target'],
        }),
        enable: true,
        start: true,
      },
    ],
    triggers: ['man-db'],
  }),
  pkg(
    'isc-dhcp-client',
    '4.4.1-2.3ubuntu2.4',
    UPD,
    'net',
    'DHCP client for automatically obtaining an IP address',
    246_046,
    1_116,
    { triggers: ['man-db'] },
  ),
  pkg('ibutils', '1.5.7+0.2.gbd7e502-3', U, 'net', 'InfiniBand network utilities', 343_350, 1_547, {
    depends: ['libibdm1', 'libopensm9', 'libosmcomp5', 'libosmvendor5', 'libtcl8.6'],
    triggers: ['man-db'],
  }),
  lib('libibdm1', '1.5.7+0.2.gbd7e502-3', U, 'InfiniBand network diagnostic library', 420_550, 1_738, {
    depends: ['libopensm9'],
  }),
  lib('libopensm9', '3.3.24-1', U, 'InfiniBand subnet manager library', 100_902, 345, {
    depends: ['libosmcomp5', 'libibumad3'],
  }),
  lib('libosmcomp5', '3.3.24-1', U, 'InfiniBand subnet manager - component library', 24_154, 84),
  lib('libosmvendor5', '3.3.24-1', U, 'InfiniBand subnet manager - vendor library', 19_682, 72, {
    depends: ['libibumad3'],
  }),
  lib(
    'libtcl8.6',
    '8.6.12+dfsg-1build1',
    M,
    'Tcl (the Tool Command Language) v8.6 - run-time library files',
    990_018,
    4_092,
    { depends: ['tzdata'] },
  ),
  pkg('net-tools', '1.60+git20181103.0eebece-1ubuntu5', M, 'net', 'NET-3 networking toolkit', 204_172, 804, {
    triggers: ['man-db'],
  }),
  pkg('htop', '3.0.5-7build2', M, 'utils', 'interactive processes viewer', 128_306, 342, {
    depends: ['libnl-3-200', 'libnl-genl-3-200'],
    suggests: ['lm-sensors', 'lsof', 'strace'],
    triggers: ['man-db', 'hicolor-icon-theme', 'mailcap'],
  }),
  pkg('tmux', '3.2a-4ubuntu0.2', UPD, 'admin', 'terminal multiplexer', 428_542, 1_047, { triggers: ['man-db'] }),
];
