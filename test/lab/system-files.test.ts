/**
 * File owners and permissions in the lab, through the real transport: writeFileAtomic with and
 * without sudo (stat, cat, install -D -p, install -m /dev/null, dd, chown --reference, mv -f,
 * rm -f), what a non-root user may not write, and the coreutils that report owners and modes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CommandFailedError, type Host } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { runScript, type TextResult } from './helpers.js';

let t: LabTarget;
let h: Host;

beforeAll(async () => {
  t = await labTarget({ speed: 'max' });
  h = t.hosts[0] as Host;
});

afterAll(() => t.close());

const sh = (script: string, sudo = false): Promise<TextResult> => runScript(h, script, sudo ? { sudo: true } : {});

describe('permissions and writeFileAtomic', () => {
  test('a root-owned file written with sudo: created, unchanged on a rewrite, backed up on a change', async () => {
    const path = '/etc/l20-setup/test.conf';
    expect(
      await h.writeFileAtomic(path, 'a=1\n', { sudo: true, mode: 0o640, backupDir: '/var/lib/l20-setup/backup/t1' }),
    ).toEqual({ changed: true });
    expect((await sh(`stat -c '%a %U %G %F' ${path}; cat ${path}`, true)).out).toBe(
      '640 root root regular file\na=1\n',
    );
    expect(
      await h.writeFileAtomic(path, 'a=1\n', { sudo: true, mode: 0o640, backupDir: '/var/lib/l20-setup/backup/t1' }),
    ).toEqual({ changed: false });
    expect(await h.writeFileAtomic(path, 'a=2\n', { sudo: true, backupDir: '/var/lib/l20-setup/backup/t2' })).toEqual({
      changed: true,
      backupPath: `/var/lib/l20-setup/backup/t2${path}`,
    });
    expect(
      (
        await sh(
          `cat /var/lib/l20-setup/backup/t2${path}; stat -c '%a %U' ${path}; cat ${path}; ls /etc/l20-setup`,
          true,
        )
      ).out,
    ).toBe('a=1\n640 root\na=2\ntest.conf\n');
    // 0640 root:root: the login user may not read it.
    expect(await sh(`cat ${path}`)).toEqual({ out: '', err: `cat: ${path}: Permission denied\n`, code: 1 });
  });

  test('without sudo, /etc is not writable and nothing is left behind', async () => {
    await expect(h.writeFileAtomic('/etc/l20-nosudo.conf', 'x\n')).rejects.toBeInstanceOf(CommandFailedError);
    await expect(h.writeFileAtomic('/etc/l20-nosudo.conf', 'x\n')).rejects.toThrow(/Permission denied/);
    expect((await sh('ls /etc | grep -c l20-nosudo')).out).toBe('0\n');
  });

  test("sudo keeps the owner of a user's file", async () => {
    expect(await h.writeFileAtomic('/home/l20/notes.txt', 'one\n')).toEqual({ changed: true });
    expect((await sh("stat -c '%a %U' /home/l20/notes.txt")).out).toBe('644 l20\n');
    expect((await h.writeFileAtomic('/home/l20/notes.txt', 'two\n', { sudo: true })).changed).toBe(true);
    expect((await sh("stat -c '%a %U %G' /home/l20/notes.txt; cat /home/l20/notes.txt")).out).toBe(
      '644 l20 l20\ntwo\n',
    );
  });

  test('what a non-root user may not do, as the tools word it', async () => {
    expect(await sh('echo x > /etc/motd.lab')).toEqual({
      out: '',
      err: 'bash: /etc/motd.lab: Permission denied\n',
      code: 1,
    });
    expect((await sh('mkdir /opt/l20; echo $?')).out).toBe('1\n');
    expect((await sh('mkdir /opt/l20')).err).toBe("mkdir: cannot create directory '/opt/l20': Permission denied\n");
    expect(await sh('rm -f /etc/hostname')).toEqual({
      out: '',
      err: "rm: cannot remove '/etc/hostname': Permission denied\n",
      code: 1,
    });
    expect(await sh('chmod 777 /etc/hostname')).toEqual({
      out: '',
      err: "chmod: changing permissions of '/etc/hostname': Operation not permitted\n",
      code: 1,
    });
    expect(await sh('chown l20 /etc/hostname')).toEqual({
      out: '',
      err: "chown: changing ownership of '/etc/hostname': Operation not permitted\n",
      code: 1,
    });
    expect(await sh('install -D -m 644 /dev/null /var/lib/l20/x')).toEqual({
      out: '',
      err: "install: cannot create directory '/var/lib/l20': Permission denied\n",
      code: 1,
    });
    // The classic mistake: the redirection runs as the user, not under sudo.
    expect((await sh('sudo echo x > /etc/l20-mistake')).err).toBe('bash: /etc/l20-mistake: Permission denied\n');
    expect((await sh('echo x | sudo tee /etc/l20-right >/dev/null; cat /etc/l20-right')).out).toBe('x\n');
  });

  test('install, chown, chmod, stat and dd as root', async () => {
    const r = await h.run(
      { argv: ['install', '-D', '-m', '600', '-o', 'root', '-g', 'root', '/dev/stdin', '/etc/l20-setup/secret'] },
      { sudo: true, stdin: 'k=v\n' },
    );
    expect(r.exitCode).toBe(0);
    expect((await sh("stat -c '%a %A %U:%G %s %F' /etc/l20-setup/secret", true)).out).toBe(
      '600 -rw------- root:root 4 regular file\n',
    );
    expect(
      (
        await sh(
          'chown l20:l20 /etc/l20-setup/secret && chmod u+x,g+r /etc/l20-setup/secret && stat -c "%a %U %G" /etc/l20-setup/secret',
          true,
        )
      ).out,
    ).toBe('740 l20 l20\n');
    expect((await sh("install -m 0644 /dev/null /tmp/empty && stat -c '%a %F' /tmp/empty /dev/null /tmp")).out).toBe(
      '644 regular empty file\n666 character special file\n1777 directory\n',
    );
    expect((await sh('printf abc | dd of=/tmp/dd.out conv=fsync status=none; cat /tmp/dd.out')).out).toBe('abc');
    expect((await sh('printf abcdef | dd of=/tmp/dd2.out; echo')).err).toMatch(
      /^0\+1 records in\n0\+1 records out\n6 bytes copied, [0-9.e-]+ s, [0-9.]+ [kMG]?B\/s\n$/,
    );
    expect(await sh('stat -c %a /nope')).toEqual({
      out: '',
      err: "stat: cannot statx '/nope': No such file or directory\n",
      code: 1,
    });
    expect((await sh('stat /etc/hostname')).out).toMatch(
      /^ {2}File: \/etc\/hostname\n {2}Size: 7 +\tBlocks: 1 +IO Block: 4096 +regular file\n.*\nAccess: \(0644\/-rw-r--r--\) +Uid: \( {4}0\/ {4}root\) +Gid: \( {4}0\/ {4}root\)\n/s,
    );
  });
});
