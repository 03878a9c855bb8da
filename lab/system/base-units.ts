/**
 * The systemd units of a fresh jammy server that no modelled package ships (openssh-server,
 * cron, rsyslog and systemd's own daemons), written at the initial boot when absent, with the
 * [Install] links Ubuntu's postinst scripts leave; and the system accounts those daemons run as.
 * Texts follow the jammy packages' unit files, trimmed to the directives the lab acts on.
 */
import type { MachineSystem } from './machine-system.js';

const UNITS: Record<string, { text: string; links: string[] }> = {
  'ssh.service': {
    text: `[Unit]
Description=OpenBSD Secure Shell server
Documentation=man:sshd(8) man:sshd_config(5)
After=network.target auditd.service
ConditionPathExists=!/etc/ssh/sshd_not_to_be_run

[Service]
EnvironmentFile=-/etc/default/ssh
ExecStart=/usr/sbin/sshd -D $SSHD_OPTS
KillMode=process
Restart=on-failure
RestartPreventExitStatus=255
Type=notify
RuntimeDirectory=sshd
RuntimeDirectoryMode=0755

[Install]
WantedBy=multi-user.target
Alias=sshd.service
`,
    links: ['multi-user.target.wants/ssh.service', 'sshd.service'],
  },
  'cron.service': {
    text: `[Unit]
Description=Regular background program processing daemon
Documentation=man:cron(8)
After=remote-fs.target nss-user-lookup.target

[Service]
EnvironmentFile=-/etc/default/cron
ExecStart=/usr/sbin/cron -f -P $EXTRA_OPTS
IgnoreSIGPIPE=false
KillMode=process
Restart=on-failure

[Install]
WantedBy=multi-user.target
`,
    links: ['multi-user.target.wants/cron.service'],
  },
  'rsyslog.service': {
    text: `[Unit]
Description=System Logging Service
Requires=syslog.socket
Documentation=man:rsyslogd(8)
Documentation=man:rsyslog.conf(5)
Documentation=https://www.rsyslog.com/doc/

[Service]
Type=notify
ExecStart=/usr/sbin/rsyslogd -n -iNONE
StandardOutput=null
Restart=on-failure

# Increase the default a bit in order to allow many simultaneous
# files to be monitored, we might need a lot of fds.
LimitNOFILE=16384

[Install]
WantedBy=multi-user.target
Alias=syslog.service
`,
    links: ['multi-user.target.wants/rsyslog.service', 'syslog.service'],
  },
  'systemd-networkd.service': {
    text: `[Unit]
Description=Network Configuration
Documentation=man:systemd-networkd.service(8)
ConditionCapability=CAP_NET_ADMIN
DefaultDependencies=no
After=systemd-networkd.socket systemd-udevd.service network-pre.target systemd-sysusers.service systemd-sysctl.service
Before=network.target multi-user.target shutdown.target
Conflicts=shutdown.target
Wants=systemd-networkd.socket network.target

[Service]
AmbientCapabilities=CAP_NET_ADMIN CAP_NET_BIND_SERVICE CAP_NET_BROADCAST CAP_NET_RAW
BusName=org.freedesktop.network1
ExecStart=!!/lib/systemd/systemd-networkd
Restart=on-failure
RestartSec=0
RuntimeDirectory=systemd/netif
Type=notify
User=systemd-network

[Install]
WantedBy=multi-user.target
Also=systemd-networkd.socket
Alias=dbus-org.freedesktop.network1.service
`,
    links: ['multi-user.target.wants/systemd-networkd.service', 'dbus-org.freedesktop.network1.service'],
  },
  'systemd-resolved.service': {
    text: `[Unit]
Description=Network Name Resolution
Documentation=man:systemd-resolved.service(8)
DefaultDependencies=no
After=systemd-sysusers.service systemd-networkd.service
Before=network.target nss-lookup.target shutdown.target
Conflicts=shutdown.target
Wants=nss-lookup.target

[Service]
BusName=org.freedesktop.resolve1
ExecStart=!!/lib/systemd/systemd-resolved
Restart=always
RestartSec=0
Type=notify
User=systemd-resolve

[Install]
WantedBy=multi-user.target
Alias=dbus-org.freedesktop.resolve1.service
`,
    links: ['multi-user.target.wants/systemd-resolved.service', 'dbus-org.freedesktop.resolve1.service'],
  },
  'systemd-journald.service': {
    text: `[Unit]
Description=Journal Service
Documentation=man:systemd-journald.service(8) man:journald.conf(5)
DefaultDependencies=no
Requires=systemd-journald.socket
After=systemd-journald.socket systemd-journald-dev-log.socket systemd-journald-audit.socket syslog.socket
Before=sysinit.target

[Service]
DeviceAllow=char-* rw
ExecStart=/lib/systemd/systemd-journald
Restart=always
RestartSec=0
Type=notify
`,
    links: [],
  },
  'systemd-udevd.service': {
    text: `[Unit]
Description=Rule-based Manager for Device Events and Files
Documentation=man:systemd-udevd.service(8) man:udev(7)
DefaultDependencies=no
After=systemd-sysusers.service systemd-hwdb-update.service
Before=sysinit.target
ConditionPathIsReadWrite=/sys

[Service]
Type=notify
ExecStart=/lib/systemd/systemd-udevd
KillMode=mixed
Restart=always
RestartSec=0
`,
    links: [],
  },
  'dbus.service': {
    text: `[Unit]
Description=D-Bus System Message Bus
Documentation=man:dbus-daemon(1)
Requires=dbus.socket

[Service]
ExecStart=/usr/bin/dbus-daemon --system --address=systemd: --nofork --nopidfile --systemd-activation --syslog-only
ExecReload=/usr/bin/dbus-send --print-reply --system --type=method_call --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig
OOMScoreAdjust=-900
`,
    links: [],
  },
  'systemd-logind.service': {
    text: `[Unit]
Description=User Login Management
Documentation=man:sd-login(3) man:systemd-logind.service(8) man:logind.conf(5) man:org.freedesktop.login1(5)
Wants=user.slice modprobe@drm.service
After=nss-user-lookup.target user.slice modprobe@drm.service

[Service]
BusName=org.freedesktop.login1
ExecStart=/lib/systemd/systemd-logind
Restart=always
RestartSec=0
Type=notify
`,
    links: [],
  },
};

/** Writes the base units (and their enable links) that are not on the machine yet. */
export async function installBaseUnits(sys: MachineSystem): Promise<void> {
  const fs = sys.shell.fsAs(0);
  await fs.mkdir('/lib/systemd/system', { recursive: true });
  for (const [name, u] of Object.entries(UNITS)) {
    const path = `/lib/systemd/system/${name}`;
    if (await fs.exists(path)) continue;
    await fs.writeFile(path, u.text);
    for (const link of u.links) {
      const at = `/etc/systemd/system/${link}`;
      if (
        await fs.lstat(at).then(
          () => true,
          () => false,
        )
      )
        continue;
      await fs.mkdir(at.slice(0, at.lastIndexOf('/')), { recursive: true });
      await fs.symlink(path, at);
    }
  }
}

/** System accounts of a jammy server (uid → name) besides those in the lab's /etc/passwd. */
export const SYSTEM_ACCOUNTS: ReadonlyArray<[name: string, uid: number, gid: number, home: string]> = [
  ['daemon', 1, 1, '/usr/sbin'],
  ['systemd-network', 100, 102, '/run/systemd'],
  ['systemd-resolve', 101, 103, '/run/systemd'],
  ['messagebus', 102, 105, '/nonexistent'],
  ['systemd-timesync', 103, 106, '/run/systemd'],
  ['syslog', 104, 111, '/home/syslog'],
  ['_apt', 105, 65534, '/nonexistent'],
  ['tss', 106, 112, '/var/lib/tpm'],
  ['sshd', 107, 65534, '/run/sshd'],
  ['_chrony', 113, 121, '/var/lib/chrony'],
  ['_lldpd', 114, 122, '/run/lldpd'],
  ['nobody', 65534, 65534, '/nonexistent'],
];
