/**
 * A minimal Ubuntu 22.04.5 server's dpkg database (jammy / jammy-updates versions of late 2024).
 * Deliberately absent on `fresh`: chrony, jq, lldpd, python3-venv (stage `os` installs them),
 * rdma-core and friends (stage `nic-stack`), any NVIDIA driver (stage `gpu-driver`).
 */
import type { InstalledPackage } from './types.js';

const BASE: Array<[name: string, version: string, arch: string]> = [
  ['adduser', '3.118ubuntu5', 'all'],
  ['apt', '2.4.13', 'amd64'],
  ['base-files', '12ubuntu4.7', 'amd64'],
  ['base-passwd', '3.5.52build1', 'amd64'],
  ['bash', '5.1-6ubuntu1.1', 'amd64'],
  ['bsdutils', '1:2.37.2-4ubuntu3.4', 'amd64'],
  ['ca-certificates', '20240203~22.04.1', 'all'],
  ['coreutils', '8.32-4.1ubuntu1.2', 'amd64'],
  ['cron', '3.0pl1-137ubuntu3', 'amd64'],
  ['curl', '7.81.0-1ubuntu1.18', 'amd64'],
  ['dash', '0.5.11+git20210903+057cd650a4ed-3build1', 'amd64'],
  ['dbus', '1.12.20-2ubuntu4.1', 'amd64'],
  ['debconf', '1.5.79ubuntu1', 'all'],
  ['dmidecode', '3.3-3ubuntu0.2', 'amd64'],
  ['dpkg', '1.21.1ubuntu2.3', 'amd64'],
  ['e2fsprogs', '1.46.5-2ubuntu1.2', 'amd64'],
  ['ethtool', '1:5.16-1ubuntu0.1', 'amd64'],
  ['findutils', '4.8.0-1ubuntu3', 'amd64'],
  ['gpg', '2.2.27-3ubuntu2.1', 'amd64'],
  ['grep', '3.7-1build1', 'amd64'],
  ['grub-efi-amd64-signed', '1.187.6+2.06-2ubuntu14.4', 'amd64'],
  ['gzip', '1.10-4ubuntu4.1', 'amd64'],
  ['hostname', '3.23ubuntu2', 'amd64'],
  ['init', '1.62', 'amd64'],
  ['initramfs-tools', '0.140ubuntu13.4', 'all'],
  ['iproute2', '5.15.0-1ubuntu2', 'amd64'],
  ['iptables', '1.8.7-1ubuntu5.2', 'amd64'],
  ['iputils-ping', '3:20211215-1', 'amd64'],
  ['kmod', '29-1ubuntu1', 'amd64'],
  ['less', '590-1ubuntu0.22.04.3', 'amd64'],
  ['libc6', '2.35-0ubuntu3.8', 'amd64'],
  ['linux-base', '4.5ubuntu9+22.04.1', 'all'],
  ['linux-firmware', '20220329.git681281e4-0ubuntu3.36', 'all'],
  ['linux-generic', '5.15.0.126.125', 'amd64'],
  ['linux-headers-5.15.0-126', '5.15.0-126.136', 'all'],
  ['linux-headers-5.15.0-126-generic', '5.15.0-126.136', 'amd64'],
  ['linux-headers-generic', '5.15.0.126.125', 'amd64'],
  ['linux-image-5.15.0-126-generic', '5.15.0-126.136', 'amd64'],
  ['linux-image-generic', '5.15.0.126.125', 'amd64'],
  ['linux-modules-5.15.0-126-generic', '5.15.0-126.136', 'amd64'],
  ['linux-modules-extra-5.15.0-126-generic', '5.15.0-126.136', 'amd64'],
  ['locales', '2.35-0ubuntu3.8', 'all'],
  ['login', '1:4.8.1-2ubuntu2.2', 'amd64'],
  ['lsb-release', '11.1.0ubuntu4', 'all'],
  ['mount', '2.37.2-4ubuntu3.4', 'amd64'],
  ['netbase', '6.3', 'all'],
  ['netplan.io', '0.106.1-7ubuntu0.22.04.4', 'amd64'],
  ['openssh-client', '1:8.9p1-3ubuntu0.10', 'amd64'],
  ['openssh-server', '1:8.9p1-3ubuntu0.10', 'amd64'],
  ['openssl', '3.0.2-0ubuntu1.18', 'amd64'],
  ['passwd', '1:4.8.1-2ubuntu2.2', 'amd64'],
  ['pci.ids', '0.0~2022.01.22-1ubuntu0.1', 'all'],
  ['pciutils', '1:3.7.0-6', 'amd64'],
  ['procps', '2:3.3.17-6ubuntu2.1', 'amd64'],
  ['python3', '3.10.6-1~22.04.1', 'amd64'],
  ['python3-yaml', '5.4.1-1ubuntu1', 'amd64'],
  ['rsync', '3.2.7-0ubuntu0.22.04.2', 'amd64'],
  ['rsyslog', '8.2112.0-2ubuntu2.2', 'amd64'],
  ['sed', '4.8-1ubuntu2', 'amd64'],
  ['sudo', '1.9.9-1ubuntu2.4', 'amd64'],
  ['systemd', '249.11-0ubuntu3.12', 'amd64'],
  ['systemd-sysv', '249.11-0ubuntu3.12', 'amd64'],
  ['systemd-timesyncd', '249.11-0ubuntu3.12', 'amd64'],
  ['tar', '1.34+dfsg-1ubuntu0.1.22.04.2', 'amd64'],
  ['tzdata', '2024a-0ubuntu0.22.04.1', 'all'],
  ['udev', '249.11-0ubuntu3.12', 'amd64'],
  ['ufw', '0.36.1-4ubuntu0.1', 'all'],
  ['util-linux', '2.37.2-4ubuntu3.4', 'amd64'],
  ['vim-tiny', '2:8.2.3995-1ubuntu2.21', 'amd64'],
  ['wget', '1.21.2-2ubuntu1.1', 'amd64'],
];

export function jammyBasePackages(): Map<string, InstalledPackage> {
  return new Map(BASE.map(([name, version, arch]) => [name, { name, version, arch, status: 'ii ' }]));
}

/** A package is usable when dpkg has it unpacked and configured (`ii`/`hi`). */
export function isInstalled(packages: ReadonlyMap<string, InstalledPackage>, name: string): boolean {
  const p = packages.get(name);
  return p !== undefined && p.status[1] === 'i';
}
