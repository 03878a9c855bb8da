/**
 * The process table over SSH: ps's formats, pgrep/pkill matching and signals, bash's kill with
 * its errors, and /proc/<pid> entries, for processes the model spawns.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { closeLab, openLab, sh, type TextResult } from './helpers.js';

let lab: Lab;
let host: LabHost;
let conn: Client;
const run = (command: string): Promise<TextResult> => sh(conn, command);

beforeAll(async () => {
  ({ lab, host, conn } = await openLab());
});

afterAll(() => closeLab(lab, conn));

describe('processes', () => {
  test('ps formats', async () => {
    const eo = (await run('ps -eo pid,args')).out.split('\n');
    expect(eo[0]).toBe('    PID COMMAND');
    expect(eo[1]).toBe('      1 /sbin/init');
    expect(eo).toContain('      2 [kthreadd]');
    expect(eo.some((l) => / \/usr\/sbin\/sshd -D$/.test(l))).toBe(true);
    expect(eo.at(-2)).toMatch(/^ +\d+ ps -eo pid,args$/);
    const ef = (await run('ps -ef')).out.split('\n');
    expect(ef[0]).toBe('UID          PID    PPID  C STIME TTY          TIME CMD');
    expect(ef[1]).toMatch(/^root {11}1 {7}0 {2}0 08:50 \? {8}00:00:00 \/sbin\/init$/);
    expect((await run('ps aux | head -1')).out).toBe(
      'USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n',
    );
    expect((await run('ps -o user=,comm= -p 1')).out).toBe('root     systemd\n');
    expect((await run('ps -C cron -o pid=')).out).toMatch(/^ +\d+\n$/);
    expect((await run('ps -o bogus')).code).toBe(1);
  });

  test('pgrep, pkill and kill on model processes', async () => {
    const sys = host.machine.system;
    const server = sys.processes.spawn({
      argv: ['/usr/bin/ib_write_bw', '-d', 'rocep26s0f0', '-D', '10'],
      uid: host.machine.user.uid,
    });
    let termed = false;
    const stubborn = sys.processes.spawn({
      argv: ['/opt/l20/bin/stubborn-worker'],
      onSignal: (sig) => (termed = sig === 'TERM'),
    });
    expect(await run('pgrep ib_write_bw')).toEqual({ out: `${server.pid}\n`, err: '', code: 0 });
    expect((await run('pgrep -a ib_write')).out).toBe(`${server.pid} /usr/bin/ib_write_bw -d rocep26s0f0 -D 10\n`);
    expect((await run('pgrep -x ib_write')).code).toBe(1);
    expect((await run('pgrep -u l20 -l .')).out).toBe(`${server.pid} ib_write_bw\n`);
    expect(await run('pgrep stubborn-worker-long')).toEqual({
      out: '',
      code: 1,
      err: "pgrep: pattern that searches for process name longer than 15 characters will result in zero matches\nTry `pgrep -f' option to match against the complete command line.\n",
    });
    expect((await run(`cat /proc/${server.pid}/cmdline | tr '\\0' ' '; echo; cat /proc/${server.pid}/comm`)).out).toBe(
      '/usr/bin/ib_write_bw -d rocep26s0f0 -D 10 \nib_write_bw\n',
    );
    expect((await run(`grep -E '^(Name|PPid|Uid):' /proc/${server.pid}/status`)).out).toBe(
      'Name:\tib_write_bw\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n',
    );
    expect((await run(`head -1 /proc/${server.pid}/limits; grep 'Max locked' /proc/${server.pid}/limits`)).out).toBe(
      'Limit                     Soft Limit           Hard Limit           Units     \nMax locked memory         8388608              8388608              bytes     \n',
    );

    expect(await run(`kill ${stubborn.pid}`)).toEqual({
      out: '',
      err: `bash: kill: (${stubborn.pid}) - Operation not permitted\n`,
      code: 1,
    });
    expect(await run(`sudo kill ${stubborn.pid}`)).toEqual({ out: '', err: '', code: 0 });
    expect(termed).toBe(true);
    expect(await run(`kill -0 ${server.pid}`)).toEqual({ out: '', err: '', code: 0 });
    expect(await run('pkill -f "ib_write_bw -d rocep26s0f0"')).toEqual({ out: '', err: '', code: 0 });
    expect(await server.exited).toEqual({ code: null, signal: 'TERM' });
    expect(await run(`kill ${server.pid}`)).toEqual({
      out: '',
      err: `bash: kill: (${server.pid}) - No such process\n`,
      code: 1,
    });
    expect((await run('pkill -f no-such-thing')).code).toBe(1);
    expect(await run('sudo kill -KILL $(pgrep -f stubborn)')).toEqual({ out: '', err: '', code: 0 });
    expect(sys.processes.get(stubborn.pid)).toBeUndefined();
    expect((await run('kill -l 9; kill -s BOGUS 1')).out).toBe('KILL\n');
  });
});
