/**
 * The writable part of a machine's file system (everything but /proc and /sys): configuration
 * files a fresh Ubuntu 22.04.5 server has, with the same merged-/usr layout (/bin -> usr/bin),
 * so stages that read or write /etc see what they would on the real host.
 */
import type { InitialFiles } from 'just-bash';
import { packageFiles } from '../apt/dpkg-db.js';
import type { Machine } from '../model/types.js';
import { createHash } from 'node:crypto';

export function osRelease(m: Machine): string {
  return [
    `PRETTY_NAME="${m.os.prettyName}"`,
    'NAME="Ubuntu"',
    `VERSION_ID="${m.os.versionId}"`,
    `VERSION="${m.os.version}"`,
    `VERSION_CODENAME=${m.os.codename}`,
    'ID=ubuntu',
    'ID_LIKE=debian',
    'HOME_URL="https://www.ubuntu.com/"',
    'SUPPORT_URL="https://help.ubuntu.com/"',
    'BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"',
    'PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"',
    `UBUNTU_CODENAME=${m.os.codename}`,
    '',
  ].join('\n');
}

/** The management netplan file of `fresh` (installer style, with the deprecated gateway4). */
export function mgmtNetplan(m: Machine): string {
  return [
    '# This is the network config written by the installer',
    'network:',
    '  version: 2',
    '  renderer: networkd',
    '  ethernets:',
    `    ${m.mgmt.ifname}:`,
    '      addresses:',
    `      - ${m.mgmt.address}/24`,
    '      gateway4: 10.0.0.254',
    '      nameservers:',
    '        addresses:',
    '        - 10.0.0.254',
    '',
  ].join('\n');
}

export function baseFiles(m: Machine): InitialFiles {
  const u = m.user;
  return {
    '/usr/lib/os-release': osRelease(m),
    '/etc/lsb-release': `DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=${m.os.versionId}\nDISTRIB_CODENAME=${m.os.codename}\nDISTRIB_DESCRIPTION="${m.os.prettyName}"\n`,
    '/etc/debian_version': 'bookworm/sid\n',
    '/etc/issue': `${m.os.prettyName} \\n \\l\n\n`,
    '/etc/hostname': `${m.hostname}\n`,
    // systemd-machine-id-setup's 128-bit id: unique per machine, stable for a seed.
    '/etc/machine-id': `${createHash('sha256').update(`${m.seed}\u0000${m.hostname}\u0000machine-id`).digest('hex').slice(0, 32)}\n`,
    '/etc/hosts': `127.0.0.1 localhost\n127.0.1.1 ${m.hostname}\n\n# The following lines are desirable for IPv6 capable hosts\n::1     ip6-localhost ip6-loopback\nfe00::0 ip6-localnet\nff00::0 ip6-mcastprefix\nff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n`,
    '/etc/netplan/01-netcfg.yaml': { content: mgmtNetplan(m), mode: 0o600 },
    '/etc/passwd':
      'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nsshd:x:107:65534::/run/sshd:/usr/sbin/nologin\n' +
      `${u.name}:x:${u.uid}:${u.gid}:${u.name}:${u.home}:/bin/bash\n`,
    '/etc/group': `root:x:0:\nadm:x:4:syslog,${u.name}\nsudo:x:27:${u.name}\n${u.name}:x:${u.gid}:\n`,
    '/etc/sudoers.d/90-cloud-init-users': {
      content: `# Created by cloud-init\n${u.name} ALL=(ALL) NOPASSWD:ALL\n`,
      mode: 0o440,
    },
    '/etc/modules': '# /etc/modules: kernel modules to load at boot time.\n',
    '/etc/default/grub':
      'GRUB_DEFAULT=0\nGRUB_TIMEOUT_STYLE=hidden\nGRUB_TIMEOUT=0\nGRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`\nGRUB_CMDLINE_LINUX_DEFAULT=""\nGRUB_CMDLINE_LINUX=""\n',
    [`${u.home}/.bashrc`]:
      '# ~/.bashrc: executed by bash(1) for non-login shells.\ncase $- in\n    *i*) ;;\n      *) return;;\nesac\n',
    [`${u.home}/.profile`]: '# ~/.profile: executed by the command interpreter for login shells.\n',
    '/root/.bashrc': '# ~/.bashrc: executed by bash(1) for non-login shells.\n',
    '/var/log/syslog': '',
    '/tmp/.keep': '',
    // Files of the installed packages (apt/dpkg-db.ts), then what the scenario left on the machine.
    ...packageFiles(m),
    // What the scenario left on the machine (configuration files, logs) overrides the defaults.
    ...Object.fromEntries(
      [...(m.files ?? [])].map(([path, f]) => [path, { content: f.content, mode: f.mode ?? 0o644 }]),
    ),
  };
}

/** Directories and merged-/usr symlinks created after the files. */
export const BASE_DIRS = [
  '/usr/bin',
  '/usr/sbin',
  '/usr/lib',
  '/usr/local/bin',
  '/usr/local/sbin',
  '/etc/modprobe.d',
  '/etc/modules-load.d',
  '/etc/systemd/system',
  '/etc/apt/sources.list.d',
  '/var/lib/dpkg',
  '/var/lib/dpkg/updates',
  '/opt',
  '/srv',
  '/mnt',
  '/run',
];
export const BASE_LINKS: Array<[target: string, path: string]> = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
  ['../usr/lib/os-release', '/etc/os-release'],
];
