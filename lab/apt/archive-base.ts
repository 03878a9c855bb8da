/**
 * Archive entries for the packages a fresh server already has (model/packages.ts): same versions,
 * so `apt-get install iproute2` says `is already the newest version` and `apt-cache policy` shows
 * `***`. Pockets follow the version strings (`…ubuntu0.22.04.N`, `~22.04` → jammy-updates).
 * The few with files the stages read ship them here: ufw's state files (ufw status), the
 * systemd-timesyncd unit (replaced by chrony), PAM's limits.conf (ulimit -l), apt's sources.list.
 */
import { renderUserRules } from '../tools/ufw.js';
import { jammyBasePackages } from '../model/packages.js';
import { pkg, unit } from './archive-build.js';
import type { ArchivePackage, PackageFile } from './archive-types.js';
import { JAMMY_SOURCES_LIST } from './repos.js';

const SYNOPSIS: Record<string, [section: string, description: string]> = {
  adduser: ['admin', 'add and remove users and groups'],
  apt: ['admin', 'commandline package manager'],
  'base-files': ['admin', 'Debian base system miscellaneous files'],
  'base-passwd': ['admin', 'Debian base system master password and group files'],
  bash: ['shells', 'GNU Bourne Again SHell'],
  bsdutils: ['utils', 'basic utilities from 4.4BSD-Lite'],
  'ca-certificates': ['misc', 'Common CA certificates'],
  coreutils: ['utils', 'GNU core utilities'],
  cron: ['admin', 'process scheduling daemon'],
  curl: ['web', 'command line tool for transferring data with URL syntax'],
  dash: ['shells', 'POSIX-compliant shell'],
  dbus: ['admin', 'simple interprocess messaging system (daemon and utilities)'],
  debconf: ['admin', 'Debian configuration management system'],
  dmidecode: ['utils', 'SMBIOS/DMI table decoder'],
  dpkg: ['admin', 'Debian package management system'],
  e2fsprogs: ['admin', 'ext2/ext3/ext4 file system utilities'],
  ethtool: ['net', 'display or change Ethernet device settings'],
  findutils: ['utils', 'utilities for finding files--find, xargs'],
  gpg: ['utils', 'GNU Privacy Guard -- minimalist public key operations'],
  grep: ['utils', 'GNU grep, egrep and fgrep'],
  'grub-efi-amd64-signed': ['admin', 'GRand Unified Bootloader, version 2 (EFI-AMD64 version, signed)'],
  gzip: ['utils', 'GNU compression utilities'],
  hostname: ['admin', 'utility to set/show the host name or domain name'],
  init: ['metapackages', 'metapackage ensuring an init system is installed'],
  'initramfs-tools': ['utils', 'generic modular initramfs generator (automation)'],
  iproute2: ['net', 'networking and traffic control tools'],
  iptables: ['net', 'administration tools for packet filtering and NAT'],
  'iputils-ping': ['net', 'Tools to test the reachability of network hosts'],
  kmod: ['admin', 'tools for managing Linux kernel modules'],
  less: ['text', 'pager program similar to more'],
  libc6: ['libs', 'GNU C Library: Shared libraries'],
  'linux-base': ['kernel', 'Linux image base package'],
  'linux-firmware': ['misc', 'Firmware for Linux kernel drivers'],
  'linux-generic': ['kernel', 'Complete Generic Linux kernel and headers'],
  'linux-headers-5.15.0-126': ['devel', 'Header files related to Linux kernel version 5.15.0'],
  'linux-headers-5.15.0-126-generic': ['devel', 'Linux kernel headers for version 5.15.0 on 64 bit x86 SMP'],
  'linux-headers-generic': ['kernel', 'Generic Linux kernel headers'],
  'linux-image-5.15.0-126-generic': ['kernel', 'Signed kernel image generic'],
  'linux-image-generic': ['kernel', 'Generic Linux kernel image'],
  'linux-modules-5.15.0-126-generic': ['kernel', 'Linux kernel extra modules for version 5.15.0 on 64 bit x86 SMP'],
  'linux-modules-extra-5.15.0-126-generic': [
    'kernel',
    'Linux kernel extra modules for version 5.15.0 on 64 bit x86 SMP',
  ],
  locales: ['localization', 'GNU C Library: National Language (locale) data [support]'],
  login: ['admin', 'system login tools'],
  'lsb-release': ['misc', 'Linux Standard Base version reporting utility'],
  mount: ['admin', 'tools for mounting and manipulating filesystems'],
  netbase: ['admin', 'Basic TCP/IP networking system'],
  'netplan.io': ['net', 'YAML network configuration abstraction for various backends'],
  'openssh-client': ['net', 'secure shell (SSH) client, for secure access to remote machines'],
  'openssh-server': ['net', 'secure shell (SSH) server, for secure access from remote machines'],
  openssl: ['utils', 'Secure Sockets Layer toolkit - cryptographic utility'],
  passwd: ['admin', 'change and administer password and group data'],
  'pci.ids': ['misc', 'PCI ID Repository'],
  pciutils: ['admin', 'PCI utilities'],
  procps: ['admin', '/proc file system utilities'],
  python3: ['python', 'interactive high-level object-oriented language (default python3 version)'],
  'python3-yaml': ['python', 'YAML parser and emitter for Python3'],
  rsyslog: ['admin', 'reliable system and kernel logging daemon'],
  sed: ['utils', 'GNU stream editor for filtering/transforming text'],
  sudo: ['admin', 'Provide limited super user privileges to specific users'],
  systemd: ['admin', 'system and service manager'],
  'systemd-sysv': ['admin', 'system and service manager - SysV links'],
  'systemd-timesyncd': ['admin', 'minimalistic service to synchronize local time with NTP servers'],
  tar: ['utils', 'GNU version of the tar archiving utility'],
  tzdata: ['localization', 'time zone and daylight-saving time data'],
  udev: ['admin', '/dev/ and hotplug management daemon'],
  ufw: ['admin', 'program for managing a Netfilter firewall'],
  'util-linux': ['utils', 'miscellaneous system utilities'],
  'vim-tiny': ['editors', 'Vi IMproved - enhanced vi editor - compact version'],
  wget: ['web', 'retrieves files from the web'],
};

const UFW_CONF = `# /etc/ufw/ufw.conf
#

# Set to yes to start on boot. If setting this remotely, be sure to add a rule
# to allow your remote connection before starting ufw. Eg: 'ufw allow 22/tcp'
ENABLED=no

# Please use the 'ufw' command to set the loglevel. Eg: 'ufw logging medium'.
# See 'man ufw' for details.
LOGLEVEL=low
`;

const UFW_DEFAULT = `# /etc/default/ufw
#

# Set to yes to apply rules to support IPv6 (no means only IPv6 on loopback
# accepted). You will need to 'disable' and then 'enable' the firewall for
# the changes to take affect.
IPV6=yes

# Set the default input policy to ACCEPT, DROP, or REJECT. Please note that if
# you change this you will most likely want to adjust your rules.
DEFAULT_INPUT_POLICY="DROP"

# Set the default output policy to ACCEPT, DROP, or REJECT. Please note that if
# you change this you will most likely want to adjust your rules.
DEFAULT_OUTPUT_POLICY="ACCEPT"

# Set the default forward policy to ACCEPT, DROP or REJECT.  Please note that
# if you change this you will most likely want to adjust your rules
DEFAULT_FORWARD_POLICY="DROP"

# Set the default application policy to ACCEPT, DROP, REJECT or SKIP. Please
# note that setting this to ACCEPT may be a security risk. See 'man ufw' for
# details
DEFAULT_APPLICATION_POLICY="SKIP"

# By default, ufw only touches its own chains. Set this to 'yes' to have ufw
# manage the built-in chains too. Warning: setting this to 'yes' will break
# non-ufw managed firewall rules
MANAGE_BUILTINS=no

IPT_SYSCTL=/etc/ufw/sysctl.conf

IPT_MODULES=""
`;

const TIMESYNCD_UNIT = unit({
  Unit: [
    'Description=Network Time Synchronization',
    'Documentation=man:systemd-timesyncd.service(8)',
    'ConditionCapability=CAP_SYS_TIME',
    'ConditionVirtualization=!container',
    'DefaultDependencies=no',
    'After=systemd-sysusers.service',
    'Before=time-set.target sysinit.target shutdown.target',
    'Conflicts=shutdown.target',
    'Wants=time-set.target',
  ],
  Service: [
    'AmbientCapabilities=CAP_SYS_TIME',
    'BusName=org.freedesktop.timesync1',
    'CapabilityBoundingSet=CAP_SYS_TIME',
    'ExecStart=!!/lib/systemd/systemd-timesyncd',
    'LockPersonality=yes',
    'MemoryDenyWriteExecute=yes',
    'NoNewPrivileges=yes',
    'PrivateDevices=yes',
    'PrivateTmp=yes',
    'ProtectHome=yes',
    'ProtectSystem=strict',
    'Restart=always',
    'RestartSec=0',
    'RuntimeDirectory=systemd/timesync',
    'StateDirectory=systemd/timesync',
    'Type=notify',
    'User=systemd-timesync',
    'WatchdogSec=3min',
  ],
  Install: ['WantedBy=sysinit.target', 'Alias=dbus-org.freedesktop.timesync1.service'],
});

/** /etc/security/limits.conf of libpam-modules: nothing but the documentation comments. */
export const LIMITS_CONF = `# /etc/security/limits.conf
#
#Each line describes a limit for a user in the form:
#
#<domain>        <type>  <item>  <value>
#
#Where:
#<domain> can be:
#        - a user name
#        - a group name, with @group syntax
#        - the wildcard *, for default entry
#        - the wildcard %, can be also used with %group syntax,
#                 for maxlogin limit
#        - NOTE: group and wildcard limits are not applied to root.
#          To apply a limit to the root user, <domain> must be
#          the literal username root.
#
#<type> can have the two values:
#        - "soft" for enforcing the soft limits
#        - "hard" for enforcing hard limits
#
#<item> can be one of the following:
#        - core - limits the core file size (KB)
#        - data - max data size (KB)
#        - fsize - maximum filesize (KB)
#        - memlock - max locked-in-memory address space (KB)
#        - nofile - max number of open file descriptors
#        - rss - max resident set size (KB)
#        - stack - max stack size (KB)
#        - cpu - max CPU time (MIN)
#        - nproc - max number of processes
#        - as - address space limit (KB)
#        - maxlogins - max number of logins for this user
#        - maxsyslogins - max number of logins on the system
#        - priority - the priority to run user process with
#        - locks - max number of file locks the user can hold
#        - sigpending - max number of pending signals
#        - msgqueue - max memory used by POSIX message queues (bytes)
#        - nice - max nice priority allowed to raise to values: [-20, 19]
#        - rtprio - max realtime priority
#        - chroot - change root to directory (Debian-specific)
#
#<domain>      <type>  <item>         <value>
#

#*               soft    core            0
#root            hard    core            100000
#*               hard    rss             10000
#@student        hard    nproc           20
#@faculty        soft    nproc           20
#@faculty        hard    nproc           50
#ftp             hard    nproc           0
#ftp             -       chroot          /ftp
#@student        -       maxlogins       4

# End of file
`;

const FILES: Record<string, Record<string, PackageFile | string>> = {
  ufw: {
    '/etc/ufw/ufw.conf': { content: UFW_CONF, conffile: true },
    '/etc/default/ufw': { content: UFW_DEFAULT, conffile: true },
    '/etc/ufw/user.rules': { content: renderUserRules([], false), mode: 0o640 },
    '/etc/ufw/user6.rules': { content: renderUserRules([], true), mode: 0o640 },
  },
};

/**
 * Files of a fresh install that no package in the lab's dpkg database owns: the installer's
 * sources.list and libpam-modules' limits.conf (libpam-modules is not in the minimal list).
 */
export const SYSTEM_FILES: Record<string, PackageFile> = {
  '/etc/apt/sources.list': { content: JAMMY_SOURCES_LIST },
  '/etc/security/limits.conf': { content: LIMITS_CONF },
};

function pocket(version: string): string {
  if (/ubuntu\d+\.\d|~22\.04|\.22\.04|ubuntu0\./.test(version)) return 'jammy-updates/main jammy-security/main';
  return 'jammy/main';
}

/** One archive entry per base package, at the version the fresh server has installed. */
export function basePackages(): ArchivePackage[] {
  return [...jammyBasePackages().values()].map((p) => {
    const [section, description] = SYNOPSIS[p.name] ?? ['misc', p.name];
    const extra: Partial<ArchivePackage> = { arch: p.arch === 'all' ? 'all' : 'amd64', priority: 'important' };
    if (p.name === 'libc6') extra.multiArch = 'same';
    if (p.name === 'systemd-timesyncd') {
      Object.assign(extra, {
        provides: ['time-daemon'],
        conflicts: ['time-daemon'],
        files: {
          '/etc/systemd/timesyncd.conf': {
            content:
              '#  This file is part of systemd.\n#\n# See timesyncd.conf(5) for details.\n\n[Time]\n#NTP=\n#FallbackNTP=ntp.ubuntu.com\n#RootDistanceMaxSec=5\n#PollIntervalMinSec=32\n#PollIntervalMaxSec=2048\n',
            conffile: true,
          },
        },
        units: [{ name: 'systemd-timesyncd.service', content: TIMESYNCD_UNIT, enable: true, start: true }],
      });
    }
    const files = FILES[p.name];
    if (files) extra.files = files;
    return pkg(p.name, p.version, pocket(p.version), section, description, 120_000, 400, extra);
  });
}
