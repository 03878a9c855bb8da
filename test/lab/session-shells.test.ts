/**
 * sshd's session shells in the lab, as OpenSSH's transport relies on them on a real host: each session's shell
 * has a pid of its own and leads its own process group, so `kill -TERM -- -PID` from another session ends it
 * (the client sees the exit signal); a command that ends by draining stdin (`… && exec cat >/dev/null`) starts at
 * once and holds the session until the client's EOF, as a real sshd runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, ClientChannel } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { stdinDrain } from '../../lab/server.js';
import { closeLab, collect, openExec, openLab, sh } from './helpers.js';

let lab: Lab;
let c: Client;

beforeAll(async () => {
  ({ lab, conn: c } = await openLab({ speed: 'max', hosts: 1 }));
});
afterAll(async () => {
  await closeLab(lab, c);
});

/** The first line a channel prints, as soon as it is there. */
function firstLine(ch: ClientChannel): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        ch.off('data', onData);
        resolve(out.slice(0, out.indexOf('\n')));
      }
    };
    ch.on('data', onData);
  });
}

describe('session shells', () => {
  it('each session has its own $$', async () => {
    const [a, b] = await Promise.all([sh(c, 'echo $$'), sh(c, 'echo $$')]);
    expect(a.out).toMatch(/^\d+\n$/);
    expect(b.out).toMatch(/^\d+\n$/);
    expect(a.out).not.toBe(b.out);
  });

  it('kill -TERM -- -PID from another session ends the session: the client gets the exit signal', async () => {
    const ch = await openExec(c, 'echo $$; sleep 30; echo not-reached');
    const done = collect(ch);
    ch.end();
    const pid = Number(await firstLine(ch));
    const kill = await sh(c, `kill -TERM -- -${pid}; echo sent=$?`);
    expect(kill.out).toBe('sent=0\n');
    const r = await done;
    expect(r.signal).toBe('SIGTERM');
    expect(r.stdout.toString()).not.toContain('not-reached');
    // It is gone: a second kill finds no such process group, as bash says.
    const again = await sh(c, `kill -TERM -- -${pid}`);
    expect([again.code, again.err]).toEqual([1, `bash: kill: (-${pid}) - No such process\n`]);
  });

  it('a stdin drain: the first part runs at once, the session ends at EOF with exit 0', async () => {
    const ch = await openExec(c, 'echo l20-ready && exec cat >/dev/null');
    const done = collect(ch);
    // Printed with stdin still open (a lab that waited for EOF would print nothing until then).
    expect(await firstLine(ch)).toBe('l20-ready');
    ch.write('discarded\n');
    ch.end();
    const r = await done;
    expect([r.code, r.signal, r.stdout.toString()]).toEqual([0, null, 'l20-ready\n']);
  });

  it('after && the drain runs only when the first part succeeded', async () => {
    const ch = await openExec(c, 'false && exec cat >/dev/null');
    const r = await collect(ch); // no EOF sent: it must end by itself
    expect(r.code, `exit signal ${r.signal}; stderr: ${r.stderr.toString()}`).toBe(1);
  });

  it('an exit status that arrived before the test listened is still the result', async () => {
    // A short command's exit can come in the same read as the exec's success, before any caller's listener.
    const ch = await openExec(c, 'exit 3');
    await new Promise((resolve) => ch.once('exit', resolve));
    const r = await collect(ch);
    expect([r.code, r.signal]).toEqual([3, null]);
  });

  it('only a final `cat >/dev/null` is a drain, and only when the first part does not read stdin itself', () => {
    expect(stdinDrain('echo ok && exec cat >/dev/null')).toEqual({ first: 'echo ok', always: false });
    expect(stdinDrain('echo ok; cat > /dev/null')).toEqual({ first: 'echo ok', always: true });
    expect(stdinDrain('read x && cat >/dev/null')).toBeUndefined();
    expect(stdinDrain('bash -s && cat >/dev/null')).toBeUndefined();
    expect(stdinDrain('cat >/dev/null && echo ok')).toBeUndefined();
    expect(stdinDrain('cat >/dev/null')).toBeUndefined();
  });
});
