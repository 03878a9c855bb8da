import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/transport/local.js';
import { CommandFailedError } from '../../src/transport/types.js';
import { waitFor } from './helpers/ssh-server.js';
import { processRunning } from '../../src/util/process-running.js';

let dir: string;
const host = new LocalHost({ name: 'here', killGraceMs: 500 });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'l20-local-test-'));
});
afterAll(async () => {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('LocalHost', () => {
  it('runs through /bin/sh -c with the same command line as SSH', async () => {
    const r = await host.run({ argv: ['sh', '-c', 'echo out; echo err >&2; exit 5'] }, { env: { A: 'b c' } });
    expect(r).toMatchObject({
      exitCode: 5,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
      timedOut: false,
      cancelled: false,
    });
    expect(r.commandLine).toBe("LC_ALL=C A='b c' sh -c 'echo out; echo err >&2; exit 5'");
    expect((await host.run({ argv: ['wc', '-c'] }, { stdin: 'abc' })).stdout.trim()).toBe('3');
    expect((await host.run({ script: 'echo "$1"', args: ['x y'] })).stdout).toBe('x y\n');
    expect((await host.run({ argv: ['cat'] })).stdout).toBe(''); // stdin is closed, not inherited
  });

  it('streams multi-byte output intact and keeps the tail when truncating', async () => {
    const text = 'ü€😀 line\n'.repeat(200_000);
    const file = join(dir, 'big.txt');
    writeFileSync(file, text);
    const chunks: string[] = [];
    const r = await host.run({ argv: ['cat', '--', file] }, { onStdout: (c) => chunks.push(c) });
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    expect(sha(r.stdout)).toBe(sha(text));
    expect(sha(chunks.join(''))).toBe(sha(text));
    const t = await host.run({ argv: ['cat', '--', file] }, { maxBufferBytes: 101 });
    expect(t.truncated).toBe(true);
    expect(text.endsWith(t.stdout)).toBe(true);
  });

  it('times out by killing the whole process group', async () => {
    const pidFile = join(dir, 'bg.pid');
    const r = await host.run(
      { argv: ['sh', '-c', 'sleep 30 & echo $! > "$1"; wait', 'sh', pidFile] },
      { timeoutMs: 300 },
    );
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBeNull();
    expect(r.signal).toBe('SIGTERM');
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !processRunning(pid), 5000, 'the background child to exit');
  });

  it('cancels through an AbortSignal', async () => {
    const pidFile = join(dir, 'cancel.pid');
    const controller = new AbortController();
    const r = await host.run(
      { argv: ['sh', '-c', 'echo $$ > "$1"; echo started; exec sleep 30', 'sh', pidFile] },
      { signal: controller.signal, onStdout: (c) => (c.includes('started') ? controller.abort() : undefined) },
    );
    expect(r.cancelled).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => !processRunning(pid), 5000, 'the process to exit');
    expect((await host.run({ argv: ['true'] }, { signal: AbortSignal.abort() })).cancelled).toBe(true);
  });

  it('readFile and writeFileAtomic behave as over SSH', async () => {
    const work = mkdtempSync(join(dir, 'files-'));
    const file = join(work, 'a b.conf');
    const backupDir = join(work, 'bk');
    expect(await host.writeFileAtomic(file, 'one\n', { backupDir, mode: 0o600 })).toEqual({ changed: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await host.writeFileAtomic(file, 'one\n', { backupDir })).toEqual({ changed: false });
    const r = await host.writeFileAtomic(file, 'two\n', { backupDir });
    expect(r).toEqual({ changed: true, backupPath: join(backupDir, file) });
    expect(readFileSync(join(backupDir, file), 'utf8')).toBe('one\n');
    expect(await host.readFile(file)).toBe('two\n');
    expect(readdirSync(work).sort()).toEqual(['a b.conf', 'bk']);
    const err = await host.readFile(join(work, 'nope')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CommandFailedError);
    expect((err as CommandFailedError).exitCode).toBe(1);
  });

  it('writeFileAtomic removes the temporary files of an earlier cut-short write, and only those', async () => {
    // Glob characters in the name must match literally: 'a[1].conf' must not touch 'a1.conf.l20tmp.*'.
    const file = join(dir, 'a[1]*.conf');
    const leftover = `${file}.l20tmp.0123456789ab`;
    const other = join(dir, 'a1x.conf.l20tmp.0123456789ab');
    const unrelated = join(dir, 'a[1]*.conf.bak');
    for (const f of [leftover, other, unrelated]) writeFileSync(f, 'half');
    expect(await host.writeFileAtomic(file, 'whole\n', { backupDir: join(dir, 'bk3') })).toEqual({ changed: true });
    expect(readFileSync(file, 'utf8')).toBe('whole\n');
    expect(existsSync(leftover)).toBe(false);
    expect(existsSync(other)).toBe(true);
    expect(existsSync(unrelated)).toBe(true);
    expect(readdirSync(dir).filter((n) => n.startsWith('a[1]*.conf.l20tmp.'))).toEqual([]);
  });

  it('never lets an argv word change the command (canary)', async () => {
    const canary = join(dir, 'canary');
    const word = `'; touch ${canary}; echo '`;
    const r = await host.run({ argv: ['printf', '%s', word] });
    expect(r.stdout).toBe(word);
    const odd = join(dir, "it's $(touch canary) & `id`; rm -rf x.conf");
    await host.writeFileAtomic(odd, 'x', { backupDir: join(dir, 'bk2') });
    expect(readFileSync(odd, 'utf8')).toBe('x');
    expect(existsSync(canary)).toBe(false);
    expect(existsSync('canary')).toBe(false);
  });
});
