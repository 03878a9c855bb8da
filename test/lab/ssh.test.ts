/**
 * The lab's SSH behaviour as a client sees it: key auth, host key facts, exec semantics (stdin,
 * exit codes, sudo/env/bash -s), MaxSessions, keepalive, large output, and aborting.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Client } from 'ssh2';
import { startLab, type Lab, type LabHost } from '../../lab/index.js';
import { SCENARIOS } from '../../lab/scenarios/index.js';
import { closeLab, collect, connect, end, exec, openExec, openLab, text, waitFor } from './helpers.js';
import { generateEd25519 } from '../../src/util/ssh-keys.js';
import { buildCommand, quoteArgv, SUDO_WRAPPER_ARGV } from '../../src/transport/quote.js';

let lab: Lab;
let host: LabHost;
let conn: Client;

beforeAll(async () => {
  ({ lab, host, conn } = await openLab());
});

afterAll(() => closeLab(lab, conn));

describe('lab SSH server', () => {
  test('describes its hosts and keys', () => {
    expect(SCENARIOS).toContain('fresh');
    expect(lab.hosts.map((h) => h.name)).toEqual(['l20-n1', 'l20-n2']);
    for (const h of lab.hosts) {
      expect(h.address).toBe('127.0.0.1');
      expect(h.port).toBeGreaterThan(0);
      expect(h.user).toBe('l20');
      expect(h.hostKeyType).toBe('ssh-ed25519');
      const digest = createHash('sha256').update(h.hostKeyBlob).digest('base64').replace(/=+$/, '');
      expect(h.hostKeyFingerprint).toBe(`SHA256:${digest}`);
      expect(h.hostKeyBlob.subarray(4, 15).toString()).toBe('ssh-ed25519');
    }
    expect(lab.hosts[0]?.port).not.toBe(lab.hosts[1]?.port);
    expect(lab.clientPublicKey).toMatch(/^ssh-ed25519 AAAA\S+ l20-setup-lab$/);
    expect(lab.clientPrivateKey).toContain('BEGIN OPENSSH PRIVATE KEY');
  });

  test('refuses other keys and other users', async () => {
    const other = generateEd25519();
    await expect(connect(lab, host, { privateKey: other.private })).rejects.toThrow(/authentication/i);
    await expect(connect(lab, host, { username: 'root' })).rejects.toThrow(/authentication/i);
  });

  test('rejects unknown scenarios with the list of known ones', async () => {
    await expect(startLab({ scenario: 'nope' })).rejects.toThrow(/unknown lab scenario "nope".*fresh/);
  });

  test('runs a command line with exit status and both streams', async () => {
    const r = text(await exec(conn, 'echo out; echo err >&2; exit 7'));
    expect(r).toEqual({ out: 'out\n', err: 'err\n', code: 7 });
    expect(text(await exec(conn, 'true')).code).toBe(0);
    expect(text(await exec(conn, 'false')).code).toBe(1);
    expect(text(await exec(conn, 'printf "%s-%s\\n" a b; seq 3 | tr "\\n" ,')).out).toBe('a-b\n1,2,3,');
  });

  test("unknown commands exit 127 with bash's message", async () => {
    const r = text(await exec(conn, 'frobnicate --now'));
    expect(r.code).toBe(127);
    expect(r.err).toBe('bash: frobnicate: command not found\n');
  });

  test('the session environment is the modelled login', async () => {
    const r = text(await exec(conn, 'echo "$SSH_CONNECTION"; echo "$USER $HOME $LANG"; pwd; hostname'));
    const [sshConn, ids, pwd, hostname] = r.out.trimEnd().split('\n');
    expect(sshConn).toMatch(/^10\.0\.0\.100 \d+ 10\.0\.0\.1 22$/);
    expect(ids).toBe('l20 /home/l20 C.UTF-8');
    expect(pwd).toBe('/home/l20');
    expect(hostname).toBe('l20-n1');
  });

  test('stdin reaches the command; bash -s runs a script with positional args', async () => {
    expect(text(await exec(conn, 'cat', { stdin: 'hello\nworld\n' })).out).toBe('hello\nworld\n');
    const r = text(await exec(conn, 'bash -s -- one "two words"', { stdin: 'echo "n=$# 1=$1 2=$2"\nexit 3\n' }));
    expect(r).toEqual({ out: 'n=2 1=one 2=two words\n', err: '', code: 3 });
    expect(text(await exec(conn, 'sh -s', { stdin: 'echo from sh\n' })).out).toBe('from sh\n');
  });

  test('sudo -n -- env LC_ALL=C bash -s -- a b runs as root with $1/$2', async () => {
    const script =
      'echo "$1 $2 $#"; echo "LC_ALL=$LC_ALL"; whoami; id -u; echo "ssh=${SSH_CONNECTION:-unset} home=$HOME"\n';
    const r = text(await exec(conn, 'sudo -n -- env LC_ALL=C bash -s -- a b', { stdin: script }));
    expect(r.code).toBe(0);
    expect(r.out).toBe('a b 2\nLC_ALL=C\nroot\n0\nssh=unset home=/root\n');
  });

  test('sudo -S reads a password line first; prefix assignments and env work', async () => {
    const r = text(
      await exec(conn, "sudo -S -p '' -- bash -s -- x", { stdin: 'secret\necho "got $1 as $(whoami)"\n' }),
    );
    expect(r).toEqual({ out: 'got x as root\n', err: '', code: 0 });
    expect(text(await exec(conn, 'LC_ALL=C env | grep ^LC_ALL=')).out).toBe('LC_ALL=C\n');
    expect(text(await exec(conn, "env FOO=bar bash -c 'echo $FOO'")).out).toBe('bar\n');
    expect(text(await exec(conn, 'sudo -n nosuchcmd'))).toEqual({
      out: '',
      err: 'sudo: nosuchcmd: command not found\n',
      code: 1,
    });
  });

  test("the transport's sudo lines (a bash wrapper that passes a cancel on) run the command inside as before", async () => {
    const script = buildCommand(
      { script: 'echo "$1|$2|$#|$(whoami)|LC_ALL=$LC_ALL|${SSH_CONNECTION:-unset}"; exit 3\n', args: ['a', 'b c'] },
      { sudo: true },
    );
    expect(script.line).toContain(`sudo -n -- ${quoteArgv(SUDO_WRAPPER_ARGV)} env LC_ALL=C bash -s -- a 'b c'`);
    expect(text(await exec(conn, script.line, { stdin: String(script.stdin) }))).toEqual({
      out: 'a|b c|2|root|LC_ALL=C|unset\n',
      err: '',
      code: 3,
    });

    // sudo -S: the password line goes to sudo, the rest of stdin to the command.
    const content = 'line one\nsecret-looking line\n\nlast, no newline';
    const dd = buildCommand(
      { argv: ['dd', 'of=/root/l20-wrapped', 'status=none'] },
      { sudo: true, stdin: content },
      'pw',
    );
    expect(text(await exec(conn, dd.line, { stdin: String(dd.stdin) }))).toEqual({ out: '', err: '', code: 0 });
    expect(text(await exec(conn, buildCommand({ argv: ['cat', '/root/l20-wrapped'] }, { sudo: true }).line))).toEqual({
      out: content,
      err: '',
      code: 0,
    });

    // sudo records the command it ran: the wrapper with the command as its arguments.
    const env = text(await exec(conn, buildCommand({ argv: ['printenv', 'SUDO_COMMAND'] }, { sudo: true }).line));
    expect(env.out).toMatch(/^\/usr\/bin\/bash -c trap .* l20 env LC_ALL=C printenv SUDO_COMMAND\n$/);
    const missing = text(await exec(conn, buildCommand({ argv: ['no-such-tool'] }, { sudo: true }).line));
    expect(missing).toMatchObject({ out: '', code: 127 });
    expect(missing.err).toMatch(/^env: .no-such-tool.: No such file or directory\n$/); // env's own message, not bash's
  });

  test('an interactive login shell works with and without a pty', async () => {
    const withPty = await new Promise<ReturnType<typeof collect>>((resolve, reject) =>
      conn.shell({ term: 'xterm', rows: 24, cols: 80 }, (err, ch) => {
        if (err) return reject(err);
        const done = collect(ch);
        ch.write('cd /tmp\rpwd\rexit 4\r');
        resolve(done);
      }),
    );
    const p = await withPty;
    const out = p.stdout.toString();
    expect(out).toContain('l20@l20-n1:~$ cd /tmp\r\n');
    // Typed-ahead lines are echoed at once, as a terminal does; pwd's output follows the next prompt.
    expect(out).toContain('pwd\r\nexit 4\r\n');
    expect(out).toMatch(/l20@l20-n1:\/tmp\$ \/tmp\r\n/);
    expect(p.code).toBe(4);
    const noPty = await new Promise<ReturnType<typeof collect>>((resolve, reject) =>
      conn.shell(false, (err, ch) => {
        if (err) return reject(err);
        const done = collect(ch);
        ch.end('echo a\ncd /etc\npwd\nfalse\n');
        resolve(done);
      }),
    );
    const q = await noPty;
    expect(q.stdout.toString()).toBe('a\n/etc\n');
    expect(q.code).toBe(1);
  });

  test('a client that never sends EOF still gets its command run', async () => {
    const r = text(await exec(conn, 'echo no-eof', { eof: false }));
    expect(r).toEqual({ out: 'no-eof\n', err: '', code: 0 });
  });

  test('10 MB of output arrives intact', async () => {
    const r = await exec(conn, "head -c 10485760 /dev/zero | tr '\\0' a");
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBe(10485760);
    expect(r.stdout.every((b) => b === 0x61)).toBe(true);
    const s = await exec(conn, 'seq 1 2000000');
    expect(s.code).toBe(0);
    const lines = s.stdout.toString().split('\n');
    expect(lines.length).toBe(2000001);
    expect(lines[1999999]).toBe('2000000');
  });

  test('the 11th concurrent session channel is refused and counted', async () => {
    const c = await connect(lab, host);
    const before = host.stats();
    const chans = await Promise.all(Array.from({ length: 10 }, () => openExec(c, 'cat')));
    await expect(openExec(c, 'echo eleven')).rejects.toThrow();
    const after = host.stats();
    expect(after.refusedChannels - before.refusedChannels).toBe(1);
    expect(after.channelOpens - before.channelOpens).toBe(10);
    expect(after.maxConcurrentSessions).toBeGreaterThanOrEqual(10);
    const results = chans.map((ch) => collect(ch));
    for (const ch of chans) ch.end('x');
    expect((await Promise.all(results)).map((r) => r.stdout.toString())).toEqual(Array(10).fill('x'));
    // Channels are free again once closed.
    expect(text(await exec(c, 'echo again')).out).toBe('again\n');
    await end(c);
  });
});

describe('real-time behaviour (speed 1)', () => {
  let slow: Lab;
  let slowConn: Client;
  beforeAll(async () => {
    ({ lab: slow, conn: slowConn } = await openLab({ hosts: 1, speed: 1 }));
  });
  afterAll(() => closeLab(slow, slowConn));

  test('keepalive requests are answered', async () => {
    const h = slow.hosts[0] as LabHost;
    // keepaliveCountMax bounds the stall a loaded CI machine may cause; unanswered keepalives would
    // still drop the connection after 10 × 50 ms.
    const c = await connect(slow, h, { keepaliveInterval: 50, keepaliveCountMax: 10 });
    let closed = false;
    c.on('close', () => {
      closed = true;
    });
    let sent = 0;
    const proto = (c as unknown as { _protocol?: { ping?: () => void } })._protocol;
    if (proto?.ping) {
      const ping = proto.ping.bind(proto);
      proto.ping = () => {
        sent++;
        ping();
      };
    }
    // ~20 keepalives go out during the command.
    expect(text(await exec(c, 'sleep 1; echo ok')).out).toBe('ok\n');
    expect(sent).toBeGreaterThan(5);
    expect(closed).toBe(false);
    await end(c);
  });

  test('closing the channel aborts sleep 30 quickly', async () => {
    const h = slow.hosts[0] as LabHost;
    const started = Date.now();
    const ch = await openExec(slowConn, 'sleep 30; echo late');
    const done = collect(ch);
    ch.end();
    await waitFor(() => h.machine.clock.activeWaits > 0, 'sleep to start');
    ch.close();
    await done;
    await waitFor(() => h.machine.clock.activeWaits === 0, 'sleep to be aborted', 5000);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  test('a signal aborts the command and is reported as exit-signal', async () => {
    const h = slow.hosts[0] as LabHost;
    const ch = await openExec(slowConn, 'echo before; sleep 30; echo after');
    const done = collect(ch);
    // No EOF: ssh2 (like OpenSSH) sends signals only while the channel's write side is open.
    await waitFor(() => h.machine.clock.activeWaits > 0, 'sleep to start');
    ch.signal('TERM');
    const r = await done;
    // ssh2's client reports the exit-signal name with the SIG prefix.
    expect(r.signal).toBe('SIGTERM');
    expect(r.code).toBeNull();
    // Output is delivered when a command finishes (no streaming yet): nothing after the signal.
    expect(r.stdout.toString()).not.toContain('after');
    expect(h.machine.clock.activeWaits).toBe(0);
  });
});
