/**
 * apt-get, dpkg-query and apt-mark against the `fresh` lab over SSH: installs change what the
 * machine has (dpkg status, commands, files, units), removals and conflicts take things away,
 * holds and non-root callers are refused as apt refuses them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { closeLab, openLabPair, sh } from './helpers.js';

let lab: Lab;
let n1: Client;
let n2: Client;
const run = (c: Client, cmd: string) => sh(c, `LC_ALL=C ${cmd}`);
const STATUS = "dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\\n'";

beforeAll(async () => {
  ({ lab, n1, n2 } = await openLabPair());
});

afterAll(() => closeLab(lab, n1, n2));

describe('apt-get install', () => {
  test('lldpd: the jammy transcript, then dpkg says ii and lldpcli exists', async () => {
    expect((await run(n1, 'command -v lldpcli')).code).toBe(1);
    const r = await run(n1, 'sudo DEBIAN_FRONTEND=noninteractive apt-get install -y lldpd');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'Reading package lists...',
      'Building dependency tree...',
      'Reading state information...',
    ]);
    expect(r.out).toContain(
      'The following additional packages will be installed:\n  libevent-2.1-7 libsensors-config libsensors5 libsnmp-base libsnmp40\n',
    );
    expect(r.out).toContain('Suggested packages:\n  lm-sensors snmp-mibs-downloader snmpd\n');
    expect(r.out).toContain(
      'The following NEW packages will be installed:\n  libevent-2.1-7 libsensors-config libsensors5 libsnmp-base libsnmp40 lldpd\n',
    );
    expect(r.out).toContain('0 upgraded, 6 newly installed, 0 to remove and 0 not upgraded.\n');
    expect(r.out).toMatch(/^Need to get \d+(\.\d)? [kM]B of archives\.$/m);
    expect(r.out).toContain(
      'Get:6 http://archive.ubuntu.com/ubuntu jammy/universe amd64 lldpd amd64 1.0.13-1 [188 kB]\n',
    );
    expect(r.out).toMatch(/^Fetched \d+(\.\d)? [kM]B in \d+s \(\d+(\.\d)? [kM]B\/s\)$/m);
    expect(r.out).toContain('Selecting previously unselected package libevent-2.1-7:amd64.\n');
    expect(r.out).toMatch(
      /\(Reading database \.\.\. \r[^\n]*\r\(Reading database \.\.\. \d+ files and directories currently installed\.\)\n/,
    );
    expect(r.out).toContain('Preparing to unpack .../5-lldpd_1.0.13-1_amd64.deb ...\nUnpacking lldpd (1.0.13-1) ...\n');
    expect(r.out).toContain('Preparing to unpack .../2-libsensors5_1%3a3.6.0-7ubuntu1_amd64.deb ...\n');
    expect(r.out).toContain('Setting up lldpd (1.0.13-1) ...\n');
    expect(r.out).toContain(
      'Created symlink /etc/systemd/system/multi-user.target.wants/lldpd.service → /lib/systemd/system/lldpd.service.\n',
    );
    expect(r.out).toContain('Processing triggers for man-db (2.10.2-1) ...\n');
    // Dependencies are configured before what depends on them.
    expect(r.out.indexOf('Setting up libsnmp40:amd64')).toBeLessThan(r.out.indexOf('Setting up lldpd'));
    expect(r.err).toBe('');

    expect(await run(n1, `${STATUS} lldpd libsnmp40`)).toEqual({
      out: 'ii  libsnmp40 5.9.1+dfsg-1ubuntu2.6\nii  lldpd 1.0.13-1\n',
      err: '',
      code: 0,
    });
    expect((await run(n1, 'command -v lldpcli >/dev/null && which lldpcli')).out).toBe('/usr/sbin/lldpcli\n');
    expect((await run(n1, 'readlink /etc/systemd/system/multi-user.target.wants/lldpd.service')).out).toBe(
      '/lib/systemd/system/lldpd.service\n',
    );
    expect((await run(n1, 'grep ExecStart= /lib/systemd/system/lldpd.service')).out).toBe(
      'ExecStart=/usr/sbin/lldpd $DAEMON_ARGS $LLDPD_OPTIONS\n',
    );
    expect((await run(n1, 'systemctl is-active lldpd')).out).toBe('active\n');
    // Only the requested package is manual; the rest are dependencies.
    expect((await run(n1, 'apt-mark showauto')).out).toBe(
      'libevent-2.1-7\nlibsensors-config\nlibsensors5\nlibsnmp-base\nlibsnmp40\n',
    );
    // The other host is untouched.
    expect((await run(n2, 'command -v lldpcli')).code).toBe(1);
  });

  test('a second install is a no-op: already the newest version', async () => {
    const r = await run(n1, 'sudo apt-get install -y lldpd iproute2');
    expect(r.out).toBe(
      'Reading package lists...\nBuilding dependency tree...\nReading state information...\n' +
        'lldpd is already the newest version (1.0.13-1).\niproute2 is already the newest version (5.15.0-1ubuntu2).\n' +
        '0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n',
    );
    expect(r.code).toBe(0);
  });

  test('ibv_devices exists only after rdma-core and ibverbs-utils; the naming rule comes with rdma-core', async () => {
    expect((await run(n2, 'command -v ibv_devices')).code).toBe(1);
    expect((await run(n2, 'ls /lib/udev/rules.d/60-rdma-persistent-naming.rules')).code).not.toBe(0);
    const r = await run(n2, 'sudo apt-get install -y rdma-core ibverbs-utils rdmacm-utils infiniband-diags perftest');
    expect(r.code).toBe(0);
    // apt wraps its lists before column 77 (80 minus its margin).
    expect(r.out).toContain(
      'The following NEW packages will be installed:\n  ibverbs-providers ibverbs-utils infiniband-diags libibmad5 libibnetdisc5\n  libibumad3 libibverbs1 librdmacm1 perftest rdma-core rdmacm-utils\n',
    );
    expect((await run(n2, 'which ibv_devices ib_write_bw ibstat')).out).toBe(
      '/usr/bin/ibv_devices\n/usr/bin/ib_write_bw\n/usr/sbin/ibstat\n',
    );
    expect((await run(n2, 'tail -n 1 /lib/udev/rules.d/60-rdma-persistent-naming.rules')).out).toBe(
      'ACTION=="add", SUBSYSTEM=="infiniband", PROGRAM="rdma_rename %k NAME_FALLBACK"\n',
    );
    expect((await run(n2, 'dpkg -S 60-rdma-persistent-naming.rules')).out).toBe(
      'rdma-core: /lib/udev/rules.d/60-rdma-persistent-naming.rules\n',
    );
  });

  test('unknown packages, non-root callers and a busy lock are refused with exit 100', async () => {
    expect(await run(n1, 'sudo apt-get install -y no-such-pkg')).toEqual({
      out: 'Reading package lists...\nBuilding dependency tree...\nReading state information...\n',
      err: 'E: Unable to locate package no-such-pkg\n',
      code: 100,
    });
    expect(await run(n1, 'apt-get install -y jq')).toEqual({
      out: '',
      err: 'E: Could not open lock file /var/lib/dpkg/lock-frontend - open (13: Permission denied)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), are you root?\n',
      code: 100,
    });
    const upd = await run(n1, 'apt-get update');
    expect(upd.code).toBe(100);
    expect(upd.err).toContain('E: Could not open lock file /var/lib/apt/lists/lock - open (13: Permission denied)\n');
    expect((await run(n1, 'apt-get frobnicate')).err).toBe('E: Invalid operation frobnicate\n');
    expect((await run(n1, 'apt-get --bogus install jq')).err).toBe(
      'E: Command line option --bogus is not understood in combination with the other options\n',
    );
    expect((await run(n1, `${STATUS} jq`)).code).toBe(1);
  });

  test('without -y apt asks, and with no answer on stdin it aborts', async () => {
    const r = await sh(n1, 'sudo apt-get install jq', '');
    expect(r.out).toMatch(
      /The following NEW packages will be installed:\n {2}jq libjq1 libonig5\n0 upgraded, 3 newly installed, 0 to remove and 0 not upgraded\.\n.*Do you want to continue\? \[Y\/n\] Abort\.\n$/s,
    );
    expect(r.code).toBe(1);
    expect((await run(n1, `${STATUS} jq`)).err).toBe('dpkg-query: no packages found matching jq\n');
    const yes = await sh(n1, 'sudo apt-get install jq', 'y\n');
    expect(yes.code).toBe(0);
    expect((await run(n1, `${STATUS} jq`)).out).toBe('ii  jq 1.6-2.1ubuntu3\n');
  });
});

describe('conflicts, holds, removal', () => {
  test('chrony replaces systemd-timesyncd and synchronizes the clock', async () => {
    expect((await run(n1, 'systemctl is-active systemd-timesyncd')).out).toBe('active\n');
    expect((await run(n1, 'timedatectl show -p NTPSynchronized --value')).out).toBe('no\n');
    const r = await run(n1, 'sudo apt-get install -y chrony');
    expect(r.out).toContain(
      'The following packages will be REMOVED:\n  systemd-timesyncd\nThe following NEW packages will be installed:\n  chrony\n',
    );
    expect(r.out).toContain('0 upgraded, 1 newly installed, 1 to remove and 0 not upgraded.\n');
    expect(r.out).toContain(
      'Get:1 http://archive.ubuntu.com/ubuntu jammy-updates/main amd64 chrony amd64 4.2-2ubuntu2.1 [290 kB]\n',
    );
    expect(r.out).toMatch(
      /Removing systemd-timesyncd \(249\.11-0ubuntu3\.12\) \.\.\.\n.*Selecting previously unselected package chrony\.\n/s,
    );
    expect(r.out).toContain(
      'Created symlink /etc/systemd/system/chronyd.service → /lib/systemd/system/chrony.service.\nCreated symlink /etc/systemd/system/multi-user.target.wants/chrony.service → /lib/systemd/system/chrony.service.\n',
    );
    // Removed, not purged: its conffile keeps dpkg's record (rc).
    expect((await run(n1, `${STATUS} chrony systemd-timesyncd`)).out).toBe(
      'ii  chrony 4.2-2ubuntu2.1\nrc  systemd-timesyncd 249.11-0ubuntu3.12\n',
    );
    expect((await run(n1, 'timedatectl show -p NTPSynchronized --value')).out).toBe('yes\n');
    expect((await run(n1, 'timedatectl')).out).toContain(
      'System clock synchronized: yes\n              NTP service: n/a\n',
    );
    // The postinst enabled and started the unit; timesyncd's went with its package.
    expect(
      (await run(n1, 'systemctl is-active chrony; systemctl is-enabled chrony; systemctl is-active systemd-timesyncd'))
        .out,
    ).toBe('active\nenabled\ninactive\n');
    expect((await run(n1, 'pgrep -c chronyd')).out).toBe('2\n');
    expect((await run(n1, 'which chronyc')).out).toBe('/usr/bin/chronyc\n');
  });

  test('a held package blocks a conflicting install until --allow-change-held-packages', async () => {
    expect(await run(n1, 'sudo apt-mark hold chrony')).toEqual({ out: 'chrony set on hold.\n', err: '', code: 0 });
    expect((await run(n1, 'sudo apt-mark hold chrony')).out).toBe('chrony was already set on hold.\n');
    expect((await run(n1, 'apt-mark showhold')).out).toBe('chrony\n');
    expect((await run(n1, `${STATUS} chrony`)).out).toBe('hi  chrony 4.2-2ubuntu2.1\n');
    expect((await run(n1, 'apt-mark unhold chrony')).err).toBe(
      'dpkg: error: requested operation requires superuser privilege\nE: Executing dpkg failed. Are you root?\n',
    );

    const refused = await run(n1, 'sudo apt-get install -y ntp');
    expect(refused.out).toContain('The following packages will be REMOVED:\n  chrony\n');
    expect(refused.out).toContain('The following held packages will be changed:\n  chrony\n');
    expect(refused.err).toBe('E: Held packages were changed and -y was used without --allow-change-held-packages.\n');
    expect(refused.code).toBe(100);
    expect((await run(n1, `${STATUS} chrony`)).out).toBe('hi  chrony 4.2-2ubuntu2.1\n');

    const forced = await run(n1, 'sudo apt-get install -y --allow-change-held-packages ntp');
    expect(forced.code).toBe(0);
    expect(forced.out).toContain('Removing chrony (4.2-2ubuntu2.1) ...\n');
    // chrony leaves its conffiles behind (rc) until purged.
    expect((await run(n1, `${STATUS} chrony ntp`)).out).toBe(
      'rc  chrony 4.2-2ubuntu2.1\nii  ntp 1:4.2.8p15+dfsg-1ubuntu2\n',
    );
    expect((await run(n1, 'test -f /etc/chrony/chrony.conf && echo kept')).out).toBe('kept\n');
    expect((await run(n1, 'timedatectl show -p NTPSynchronized --value')).out).toBe('yes\n');
    // Removing it cleared the selection: nothing is held any more.
    expect(await run(n1, 'sudo apt-mark unhold chrony')).toEqual({
      out: 'chrony was already not on hold.\n',
      err: '',
      code: 0,
    });
    expect((await run(n1, 'apt-mark showhold')).out).toBe('');
  });

  test('purge removes the files, the command and the unit; the dependencies become auto-removable', async () => {
    const r = await run(n1, 'sudo apt-get purge -y lldpd');
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      "The following packages were automatically installed and are no longer required:\n  libevent-2.1-7 libsensors-config libsensors5 libsnmp-base libsnmp40\nUse 'sudo apt autoremove' to remove them.\n",
    );
    expect(r.out).toContain(
      'The following packages will be REMOVED:\n  lldpd*\n0 upgraded, 0 newly installed, 1 to remove and 0 not upgraded.\n',
    );
    expect(r.out).toMatch(/^After this operation, \d+ kB disk space will be freed\.$/m);
    expect(r.out).toContain('Removing lldpd (1.0.13-1) ...\nPurging configuration files for lldpd (1.0.13-1) ...\n');
    expect((await run(n1, `${STATUS} lldpd`)).err).toBe('dpkg-query: no packages found matching lldpd\n');
    expect((await run(n1, 'systemctl is-active lldpd')).out).toBe('inactive\n');
    expect(await run(n1, 'which lldpcli')).toEqual({ out: '', err: '', code: 1 });
    expect((await run(n1, 'lldpcli show neighbors')).code).toBe(127);
    expect(
      (
        await run(
          n1,
          'ls /lib/systemd/system/lldpd.service /etc/default/lldpd /etc/systemd/system/multi-user.target.wants/lldpd.service 2>&1 | grep -c "No such file"',
        )
      ).out,
    ).toBe('3\n');
    const auto = await run(n1, 'sudo apt-get autoremove -y');
    expect(auto.out).toContain(
      'The following packages will be REMOVED:\n  libevent-2.1-7 libsensors-config libsensors5 libsnmp-base libsnmp40\n',
    );
    expect((await run(n1, 'apt-mark showauto')).out).not.toContain('libsnmp40');
  });

  test('remove of something not installed, and of something unknown', async () => {
    const r = await run(n2, 'sudo apt-get remove -y htop');
    expect(r.out).toContain(
      "Package 'htop' is not installed, so not removed\n0 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.\n",
    );
    expect((await run(n2, 'sudo apt-get remove -y nope-nope')).code).toBe(100);
  });
});

describe('apt-cache, dpkg', () => {
  test('apt-cache policy: the jammy table', async () => {
    expect((await run(n2, 'apt-cache policy nvidia-driver-580-server-open')).out).toBe(
      'nvidia-driver-580-server-open:\n  Installed: (none)\n  Candidate: 580.126.09-0ubuntu0.22.04.1\n  Version table:\n' +
        '     580.126.09-0ubuntu0.22.04.1 500\n        500 http://archive.ubuntu.com/ubuntu jammy-updates/restricted amd64 Packages\n' +
        '     580.95.05-0ubuntu0.22.04.1 500\n        500 http://security.ubuntu.com/ubuntu jammy-security/restricted amd64 Packages\n',
    );
    expect((await run(n2, 'apt-cache policy iproute2')).out).toBe(
      'iproute2:\n  Installed: 5.15.0-1ubuntu2\n  Candidate: 5.15.0-1ubuntu2\n  Version table:\n' +
        ' *** 5.15.0-1ubuntu2 500\n        500 http://archive.ubuntu.com/ubuntu jammy/main amd64 Packages\n        100 /var/lib/dpkg/status\n',
    );
    expect(await run(n2, 'apt-cache policy doca-ofed')).toEqual({
      out: '',
      err: 'N: Unable to locate package doca-ofed\n',
      code: 0,
    });
  });

  test('dpkg -l: legend, header and rows sized to the database', async () => {
    const r = await run(n2, 'dpkg -l rdma-core sudo');
    const lines = r.out.split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'Desired=Unknown/Install/Remove/Purge/Hold',
      '| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend',
      '|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)',
    ]);
    expect(lines[3]).toMatch(/^\|\|\/ Name {2,}Version {2,}Architecture Description$/);
    expect(lines[4]).toMatch(/^\+\+\+-=+-=+-=+-=+$/);
    expect(lines[5]).toMatch(/^ii {2}rdma-core +39\.0-1 +amd64 +RDMA core userspace infrastructure and documentation$/);
    expect(lines[6]).toMatch(
      /^ii {2}sudo +1\.9\.9-1ubuntu2\.4 +amd64 +Provide limited super user privileges to specific users$/,
    );
    // Columns line up with the header.
    expect(lines[5]?.indexOf('39.0-1')).toBe(lines[3]?.indexOf('Version'));
    expect((await run(n2, 'dpkg -l nothing-like-this')).err).toBe(
      'dpkg-query: no packages found matching nothing-like-this\n',
    );
  });

  test('the DOCA repository appears only after dpkg -i doca-host and apt-get update', async () => {
    const deb = 'doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb';
    expect((await run(n2, 'sudo apt-get install -y doca-ofed')).err).toBe('E: Unable to locate package doca-ofed\n');
    expect((await run(n2, `dpkg -i /tmp/${deb}`)).err).toBe(
      'dpkg: error: requested operation requires superuser privilege\n',
    );
    expect((await run(n2, `sudo dpkg -i /tmp/${deb}`)).err).toBe(
      `dpkg: error: cannot access archive '/tmp/${deb}': No such file or directory\n`,
    );
    await run(n2, `touch /tmp/${deb}`);
    const i = await run(n2, `cd /tmp && sudo dpkg -i ${deb}`);
    expect(i.out).toMatch(
      /^Selecting previously unselected package doca-host\.\n\(Reading database .*\nPreparing to unpack doca-host_2\.9\.1-018000-24\.10-ubuntu2204_amd64\.deb \.\.\.\nUnpacking doca-host \(2\.9\.1-018000-24\.10-ubuntu2204\) \.\.\.\nSetting up doca-host \(2\.9\.1-018000-24\.10-ubuntu2204\) \.\.\.\n$/s,
    );
    expect((await run(n2, 'cat /etc/apt/sources.list.d/doca.list')).out).toBe(
      'deb [signed-by=/etc/apt/trusted.gpg.d/GPG-KEY-Mellanox.pub] file:/usr/share/doca-host-2.9.1-018000-24.10-ubuntu2204/repo ./\n',
    );
    // Not yet: apt has no index for the new source.
    expect((await run(n2, 'sudo apt-get install -y doca-ofed')).err).toBe('E: Unable to locate package doca-ofed\n');
    const upd = await run(n2, 'sudo apt-get update');
    expect(upd.out).toContain(
      'Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease\nGet:2 http://archive.ubuntu.com/ubuntu jammy-updates InRelease [128 kB]\n',
    );
    expect(upd.out).toContain(
      'Get:5 file:/usr/share/doca-host-2.9.1-018000-24.10-ubuntu2204/repo ./ InRelease [1991 B]\n',
    );
    expect(upd.out).toMatch(/Fetched [\d.]+ MB in \d+s \([\d.]+ [kM]B\/s\)\nReading package lists\.\.\.\n$/);
    const again = await run(n2, 'sudo apt-get update');
    expect(again.out).toBe(
      'Hit:1 http://archive.ubuntu.com/ubuntu jammy InRelease\nHit:2 http://archive.ubuntu.com/ubuntu jammy-updates InRelease\nHit:3 http://archive.ubuntu.com/ubuntu jammy-backports InRelease\nHit:4 http://security.ubuntu.com/ubuntu jammy-security InRelease\nHit:5 file:/usr/share/doca-host-2.9.1-018000-24.10-ubuntu2204/repo ./ InRelease\nReading package lists...\n',
    );
    expect((await run(n2, 'apt-cache policy doca-ofed')).out).toContain('  Candidate: 2.9.1-018000-24.10-ubuntu2204\n');
    const inst = await run(n2, 'sudo apt-get install -y doca-ofed');
    expect(inst.code).toBe(0);
    // DOCA's rdma-core sorts above jammy's: the inbox packages are upgraded in place.
    expect(inst.out).toContain('Unpacking rdma-core (2410mlnx54-1.2410068) over (39.0-1) ...\n');
    expect(inst.out).toContain('Building initial module for 5.15.0-126-generic\n');
    expect((await run(n2, `${STATUS} doca-ofed rdma-core mlnx-ofed-kernel-dkms`)).out).toBe(
      'ii  doca-ofed 2.9.1-018000-24.10-ubuntu2204\nii  mlnx-ofed-kernel-dkms 24.10.OFED.24.10.1.1.4.1-1\nii  rdma-core 2410mlnx54-1.2410068\n',
    );
    expect((await run(n2, 'which ofed_info')).out).toBe('/usr/bin/ofed_info\n');
  });
});
