/**
 * The os stage's probes (docs/STAGES.md §3.2, checks/os/probes.ts) against the lab over SSH, before and
 * after what its apply steps do: base packages, chrony, the memlock limits file, holds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import { osStage } from '../../checks/os/index.js';
import { closeLab, exec, openLab, openLabPair, sh, text, withLabTarget } from './helpers.js';

let lab: Lab;
let n1: Client;
let n2: Client;
const run = (c: Client, cmd: string) => sh(c, `LC_ALL=C ${cmd}`);
const PACKAGES =
  "dpkg-query -W '-f=${db:Status-Abbrev} ${Package} ${Version}\\n' chrony pciutils ethtool iproute2 jq curl python3-venv lldpd ibutils ifenslave ntp";

beforeAll(async () => {
  ({ lab, n1, n2 } = await openLabPair());
});

afterAll(() => closeLab(lab, n1, n2));

describe('os probes on fresh', () => {
  test('sudo, hostname, holds', async () => {
    expect(await run(n1, 'sudo -n true')).toEqual({ out: '', err: '', code: 0 });
    expect((await run(n1, 'hostname')).out).toBe('l20-n1\n');
    expect((await run(n2, 'hostname')).out).toBe('l20-n2\n');
    expect(await run(n1, 'apt-mark showhold')).toEqual({ out: '', err: '', code: 0 });
  });

  test('packages: the base tools a minimal server has, the rest missing', async () => {
    const r = await run(n1, PACKAGES);
    expect(r.out).toBe(
      'ii  curl 7.81.0-1ubuntu1.18\nii  ethtool 1:5.16-1ubuntu0.1\nii  iproute2 5.15.0-1ubuntu2\nii  pciutils 1:3.7.0-6\n',
    );
    expect(r.err).toBe(
      ['chrony', 'jq', 'python3-venv', 'lldpd', 'ibutils', 'ifenslave', 'ntp']
        .map((p) => `dpkg-query: no packages found matching ${p}\n`)
        .join(''),
    );
    expect(r.code).toBe(1);
  });

  test('time: systemd-timesyncd runs but never synchronizes', async () => {
    expect(await run(n1, 'timedatectl show -p NTPSynchronized --value')).toEqual({ out: 'no\n', err: '', code: 0 });
    expect((await run(n1, 'timedatectl show')).out).toMatch(
      /^Timezone=Etc\/UTC\nLocalRTC=no\nCanNTP=yes\nNTP=yes\nNTPSynchronized=no\nTimeUSec=Mon 2025-01-06 \d\d:\d\d:\d\d UTC\nRTCTimeUSec=Mon 2025-01-06 \d\d:\d\d:\d\d UTC\n$/,
    );
    const status = (await run(n1, 'timedatectl')).out;
    expect(status).toMatch(
      /^ {15}Local time: Mon 2025-01-06 \d\d:\d\d:\d\d UTC\n {11}Universal time: Mon 2025-01-06 \d\d:\d\d:\d\d UTC\n {17}RTC time: Mon 2025-01-06 \d\d:\d\d:\d\d\n {16}Time zone: Etc\/UTC \(UTC, \+0000\)\nSystem clock synchronized: no\n {14}NTP service: active\n {10}RTC in local TZ: no\n$/,
    );
    expect(await run(n1, 'timedatectl show -p NTP,CanNTP')).toEqual({ out: 'CanNTP=yes\nNTP=yes\n', err: '', code: 0 });
    expect((await run(n1, 'timedatectl set-ntp true')).err).toBe(
      'Failed to set ntp: Interactive authentication required.\n',
    );
  });

  test('memlock: 8192 KiB until a limits.d file says unlimited; root is not covered by *', async () => {
    expect(await run(n1, "bash -lc 'ulimit -l'")).toEqual({ out: '8192\n', err: '', code: 0 });
    expect((await run(n1, 'ulimit -n; ulimit -Hn')).out).toBe('1024\n524288\n');
    expect((await run(n1, 'ulimit -a')).out).toContain(
      'max locked memory       (kbytes, -l) 8192\nmax memory size         (kbytes, -m) unlimited\nopen files                      (-n) 1024\npipe size            (512 bytes, -p) 8\n',
    );
    expect((await run(n1, 'ulimit -l unlimited')).err).toBe(
      'bash: ulimit: max locked memory: cannot modify limit: Operation not permitted\n',
    );

    const conf = '# l20-setup\n* soft memlock unlimited\n* hard memlock unlimited\n';
    const write = (path: string, content: string) =>
      exec(n1, `sudo bash -c 'mkdir -p /etc/security/limits.d && cat > ${path}'`, { stdin: content });
    const w = text(await write('/etc/security/limits.d/90-l20-memlock.conf', conf));
    expect(w.code).toBe(0);
    expect(await run(n1, "bash -lc 'ulimit -l'")).toEqual({ out: 'unlimited\n', err: '', code: 0 });
    expect((await run(n1, 'ulimit -Hl')).out).toBe('unlimited\n');
    expect((await run(n1, "sudo bash -lc 'ulimit -l'")).out).toBe('8192\n');
    // A later file with a lower soft limit wins for the user, by name order.
    await write('/etc/security/limits.d/95-lower.conf', 'l20 soft memlock 65536\n');
    expect((await run(n1, "bash -lc 'ulimit -l'")).out).toBe('65536\n');
    expect((await run(n2, "bash -lc 'ulimit -l'")).out).toBe('8192\n');
  });
});

describe('os probes after the apply steps', () => {
  test('install-base, then chrony synchronizes and holds are listed', async () => {
    expect((await run(n2, 'sudo apt-get update')).code).toBe(0);
    const inst = await run(
      n2,
      'sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chrony pciutils ethtool iproute2 jq curl python3-venv lldpd',
    );
    expect(inst.code).toBe(0);
    expect(inst.out).toContain('pciutils is already the newest version (1:3.7.0-6).\n');
    expect(inst.out).toContain(
      'The following NEW packages will be installed:\n  chrony jq libevent-2.1-7 libjq1 libonig5 libsensors-config libsensors5\n  libsnmp-base libsnmp40 lldpd python3-distutils python3-lib2to3\n  python3-pip-whl python3-setuptools-whl python3-venv python3.10-venv\n',
    );
    const r = await run(n2, PACKAGES);
    expect(r.out).toBe(
      'ii  chrony 4.2-2ubuntu2.1\nii  curl 7.81.0-1ubuntu1.18\nii  ethtool 1:5.16-1ubuntu0.1\nii  iproute2 5.15.0-1ubuntu2\nii  jq 1.6-2.1ubuntu3\n' +
        'ii  lldpd 1.0.13-1\nii  pciutils 1:3.7.0-6\nii  python3-venv 3.10.6-1~22.04.1\n',
    );
    expect((await run(n2, 'timedatectl show -p NTPSynchronized --value')).out).toBe('yes\n');
    expect(await run(n2, 'sudo apt-mark hold linux-generic linux-image-generic linux-headers-generic')).toEqual({
      out: 'linux-generic set on hold.\nlinux-image-generic set on hold.\nlinux-headers-generic set on hold.\n',
      err: '',
      code: 0,
    });
    expect((await run(n2, 'apt-mark showhold')).out).toBe(
      'linux-generic\nlinux-headers-generic\nlinux-image-generic\n',
    );
  });
});

describe('os probes on the ready and tutorial scenarios', () => {
  test('ready: every os check passes', async () => {
    const { lab: ready, conn: c } = await openLab({ scenario: 'ready', hosts: 1 });
    const r = (cmd: string) => run(c, cmd);
    try {
      const pk = await r(PACKAGES);
      for (const p of ['chrony', 'pciutils', 'ethtool', 'iproute2', 'jq', 'curl', 'python3-venv', 'lldpd'])
        expect(pk.out).toMatch(new RegExp(`^ii  ${p} `, 'm'));
      expect(pk.out).not.toMatch(/ (ibutils|ifenslave|ntp) /);
      expect((await r('timedatectl show -p NTPSynchronized --value')).out).toBe('yes\n');
      expect((await r('systemctl is-active chrony lldpd')).out).toBe('active\nactive\n');
      expect((await r("bash -lc 'ulimit -l'")).out).toBe('unlimited\n');
      const held = (await r('apt-mark showhold')).out.split('\n');
      for (const k of [
        'linux-generic',
        'linux-headers-generic',
        'linux-image-generic',
        'nvidia-driver-580-server-open',
      ])
        expect(held).toContain(k);
      // What install-base pulled in is marked automatic, as apt marks it.
      expect((await r('apt-mark showauto')).out).toContain('libsnmp40\n');
      expect((await r("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' systemd-timesyncd")).out).toBe(
        'rc  systemd-timesyncd\n',
      );
    } finally {
      await closeLab(ready, c);
    }
  });

  test('tutorial: ntp instead of chrony, ifenslave with ifupdown, ibutils; no memlock, nothing held', async () => {
    const { lab: tut, conn: c } = await openLab({ scenario: 'tutorial', hosts: 1 });
    const r = (cmd: string) => run(c, cmd);
    try {
      const pk = await r(PACKAGES);
      expect(pk.out).toMatch(/^ii {2}ibutils 1\.5\.7\+0\.2\.gbd7e502-3\n/m);
      expect(pk.out).toMatch(/^ii {2}ifenslave 2\.13~ubuntu1\n/m);
      expect(pk.out).toMatch(/^ii {2}ntp 1:4\.2\.8p15\+dfsg-1ubuntu2\n/m);
      expect(pk.err).toContain('dpkg-query: no packages found matching chrony\n');
      expect((await r("dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' ifupdown")).out).toBe('ii  ifupdown\n');
      expect((await r('timedatectl show -p NTPSynchronized --value')).out).toBe('yes\n');
      expect((await r("bash -lc 'ulimit -l'")).out).toBe('8192\n');
      expect((await r('apt-mark showhold')).out).toBe('');
    } finally {
      await closeLab(tut, c);
    }
  });
});

describe('the os stage against the lab', () => {
  test('fresh fails packages, time sync and memlock; applying fixes them; a second apply changes nothing', () =>
    withLabTarget({ scenario: 'fresh' }, async (t) => {
      const engine = new Engine(t.hosts, { config: t.config });
      const status = (o: StageOutcome): string[] =>
        o.results.filter((r) => r.host === 'l20-n1').map((r) => `${r.id} ${r.status}`);
      const before = await engine.runStage(osStage, {});
      expect(status(before)).toEqual([
        'os.sudo pass',
        'os.packages fail',
        'os.time-sync fail',
        'os.memlock fail',
        'os.holds warn',
      ]);
      const exec = new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: false });
      const first = await exec.applyStage(osStage);
      expect((first.steps ?? []).filter((s) => s.changed && s.host === 'l20-n1').map((s) => s.id)).toEqual([
        'os.install-base',
        'os.memlock',
        'os.holds',
      ]);
      expect(first.results.filter((r) => r.status !== 'pass').map((r) => `${r.host}:${r.id} ${r.summary}`)).toEqual([]);
      const second = await exec.applyStage(osStage);
      expect(second.changed).toBe(0);
    }));
});
