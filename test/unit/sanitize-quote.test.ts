import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { collapseCarriageReturns, LineSplitter, sanitize } from '../../src/util/sanitize.js';
import { spawn, spawnSync } from 'node:child_process';
import {
  buildCommand,
  insideSudoWrapper,
  quoteArgv,
  quoteWord,
  SUDO_WRAPPER_ARGV,
  SUDO_WRAPPER_SCRIPT,
  withoutSudoWrapper,
} from '../../src/transport/quote.js';
import { isAlive, listProcesses, waitFor } from '../helpers/processes.js';

/** The wrapper as it appears in every sudo line. */
const WRAPPER = `bash -c 'trap "trap - TERM HUP INT; kill -TERM 0" TERM HUP INT; "$@" <&0 & wait $!' l20`;

describe('sanitize', () => {
  it('removes OSC (title, clipboard), CSI (clear, cursor moves), C1 controls and bidi overrides', () => {
    const evil =
      'a\u001b]0;pwned\u0007b\u001b]52;c;ZXZpbA==\u001b\\c\u001b[2J\u001b[3J\u001b[10;5Hd\u009b31me\u202ef\u0000g\u0007h';
    expect(sanitize(evil)).toBe('abcdefgh');
  });
  it('keeps tabs and text, collapses carriage-return progress', () => {
    expect(sanitize('x\ty')).toBe('x\ty');
    expect(collapseCarriageReturns('10%\r50%\r100%')).toBe('100%');
    expect(collapseCarriageReturns('abcdef\rXY')).toBe('XYcdef');
  });
  it('splits lines across chunks, holding the partial line', () => {
    const s = new LineSplitter();
    expect(s.push('one\ntw')).toEqual(['one']);
    expect(s.push('o\nthr')).toEqual(['two']);
    expect(s.flush()).toEqual(['thr']);
  });
});

describe('quoting', () => {
  it('shows sudo lines without the wrapper, as an operator reads them (the exact line is what is sent and logged)', () => {
    const line = buildCommand({ argv: ['id', '-u'] }, { sudo: true }).line;
    expect(line).toContain("bash -c 'trap");
    expect(withoutSudoWrapper(line)).toBe('sudo -n -- env LC_ALL=C id -u');
    expect(withoutSudoWrapper('env LC_ALL=C id -u')).toBe('env LC_ALL=C id -u');
  });

  const hostile = ["'; touch /tmp/x; '", '$(id)', '`id`', 'a b', 'new\nline', '"q"', '\\', '*', '~', '-n', '', 'ünï'];
  it('round-trips every word through a real POSIX shell unchanged', () => {
    for (const w of hostile) {
      const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${quoteWord(w)}`], { encoding: 'utf8' });
      expect(out).toBe(w);
    }
  });
  it('leaves safe words bare and refuses NUL', () => {
    expect(quoteArgv(['ip', '-j', 'addr', 'show'])).toBe('ip -j addr show');
    expect(() => quoteWord('a\0b')).toThrow(/NUL/);
  });
  it('builds sudo and script lines with quoted env values', () => {
    expect(buildCommand({ argv: ['uname', '-r'] }).line).toBe('LC_ALL=C uname -r');
    const s = buildCommand({ script: 'echo hi' }, { sudo: true, env: { NCCL_DEBUG: 'INFO x' } });
    expect(s.line).toBe(`sudo -n -- ${WRAPPER} env LC_ALL=C NCCL_DEBUG='INFO x' bash -s --`);
    expect(s.stdin).toBe('echo hi');
    expect(() => buildCommand({ argv: ['x'] }, { env: { 'A;B': '1' } })).toThrow(/invalid environment variable name/);
    const pw = buildCommand({ argv: ['id'] }, { sudo: true }, 'secret');
    expect(pw.line).not.toContain('secret');
    expect(String(pw.stdin)).toBe('secret\n');
  });
});

describe('sudo lines: the wrapper that takes a cancel to the whole process group (issue 7)', () => {
  it('puts the wrapper between sudo and the command, in both sudo forms, and finds the command inside again', () => {
    expect(quoteArgv(SUDO_WRAPPER_ARGV)).toBe(WRAPPER);
    expect(buildCommand({ argv: ['id', '-u'] }, { sudo: true }).line).toBe(`sudo -n -- ${WRAPPER} env LC_ALL=C id -u`);
    const pw = buildCommand({ argv: ['dd', 'of=/etc/x'] }, { sudo: true, stdin: 'data' }, 'secret');
    expect(pw.line).toBe(`sudo -k -S -p '' -- ${WRAPPER} env LC_ALL=C dd of=/etc/x`);
    expect(String(pw.stdin)).toBe('secret\ndata');
    expect(buildCommand({ argv: ['id'] }).line).toBe('LC_ALL=C id'); // no sudo, no wrapper
    expect(insideSudoWrapper([...SUDO_WRAPPER_ARGV, 'env', 'LC_ALL=C', 'id'])).toEqual(['env', 'LC_ALL=C', 'id']);
    expect(insideSudoWrapper(['bash', '-c', 'echo other', 'l20', 'id'])).toBeUndefined();
    expect(insideSudoWrapper(SUDO_WRAPPER_ARGV)).toBeUndefined();
  });

  // The wrapper run by this machine's bash, without sudo: what it does to stdin, exit status and signals.
  const wrapped = (...argv: string[]) => ['-c', SUDO_WRAPPER_SCRIPT, 'l20', ...argv];

  it("passes stdin through byte for byte and exits with the command's own status", () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const cat = spawnSync('bash', wrapped('bash', '-c', 'cat; exit 7'), { input: bytes });
    expect(cat.status).toBe(7);
    expect(Buffer.compare(cat.stdout, bytes)).toBe(0);
    const script = spawnSync('bash', wrapped('bash', '-s', '--', 'a b'), {
      input: 'read -r line; echo "$1|$line"; exit 3\nnext line\n',
      encoding: 'utf8',
    });
    expect({ status: script.status, stdout: script.stdout, stderr: script.stderr }).toEqual({
      status: 3,
      stdout: 'a b|next line\n',
      stderr: '',
    });
    // A command killed by a signal reads as 128+n (the shell convention), not as the wrapper dying of it.
    const killed = spawnSync('bash', wrapped('bash', '-c', 'kill -KILL $$'));
    expect({ status: killed.status, signal: killed.signal }).toEqual({ status: 137, signal: null });
  });

  it('a TERM to the wrapper alone (as sudo relays it) ends the command and everything it started', async () => {
    const sleeps = ['sleep 371', 'sleep 372'];
    // Its own process group (detached), as under sshd: the wrapper signals its whole group.
    const child = spawn('bash', wrapped('bash', '-c', 'sleep 371 & sleep 372; wait'), {
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<string | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    await waitFor(() => listProcesses().filter((p) => sleeps.includes(p.args)).length === 2, 'both sleeps to run');
    const started = listProcesses().filter((p) => sleeps.includes(p.args) || p.args.startsWith('bash -c sleep 371 &'));
    expect(started).toHaveLength(3);

    try {
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toBe('SIGTERM');
      await waitFor(() => started.every((p) => !isAlive(p.pid)), 'the sleeps and their bash to exit', 10_000);
    } finally {
      // When it fails, the sleeps must not outlive the test (the group is the wrapper's own).
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone: the expected case
      }
    }
  });
});
