/**
 * Streaming output through the real SSH transport: a command's output leaves while the command
 * runs (in order with the rest of the script, also under sudo and bash -s), cancelling stops it,
 * and a command piped onward delivers its output when it ends (the documented limit).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Host } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { waitFor } from './helpers.js';

let t: LabTarget;
let host: Host;

beforeAll(async () => {
  t = await labTarget({ speed: 'max' });
  host = t.hosts[0] as Host;
});

afterAll(() => t.close());

interface Chunk {
  at: number;
  text: string;
}

async function timed(
  command: Parameters<Host['run']>[0],
  opts: Parameters<Host['run']>[1] = {},
): Promise<{ chunks: Chunk[]; end: number; result: Awaited<ReturnType<Host['run']>> }> {
  const chunks: Chunk[] = [];
  const result = await host.run(command, { ...opts, onStdout: (text) => chunks.push({ at: Date.now(), text }) });
  return { chunks, end: Date.now(), result };
}

describe('streaming output', () => {
  test('lines of a running script arrive in separate chunks before it exits', async () => {
    const { chunks, end, result } = await timed({
      script: 'for i in 1 2 3; do echo "line $i"; sleep 0.4; done\necho done\n',
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('line 1\nline 2\nline 3\ndone\n');
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    // The first line left about 1.2 s (three sleeps) before the command ended.
    expect(end - (chunks[0] as Chunk).at).toBeGreaterThan(800);
    expect((chunks[0] as Chunk).text).toBe('line 1\n');
  });

  test('streams under sudo and env, in order with buffered constructs', async () => {
    const script = [
      'echo 1',
      'x=$(echo 2); echo "$x"',
      'f() { echo 3; }; f',
      'echo 4 | cat',
      '{ echo 5; } > /tmp/five; cat /tmp/five',
      'echo err >&2',
      'x=$(echo 7; echo sub-err >&2); echo "$x" >/dev/null',
      'sleep 0.4',
      'echo 6',
    ].join('\n');
    const { chunks, end, result } = await timed({ script: `${script}\n` }, { sudo: true });
    expect(result.stdout).toBe('1\n2\n3\n4\n5\n6\n');
    // The substitution's stderr is kept (it leaves when the script ends, after the live lines).
    expect(result.stderr).toBe('err\nsub-err\n');
    const five = chunks.findIndex((c) => c.text.includes('5'));
    expect(five).toBeGreaterThanOrEqual(0);
    expect(end - (chunks[five] as Chunk).at).toBeGreaterThan(250);
  });

  test('cancelling a streaming command stops it', async () => {
    const ac = new AbortController();
    const chunks: string[] = [];
    const machine = t.lab.hosts[0]?.machine;
    const running = host.run(
      { script: 'for i in $(seq 1 100); do echo "tick $i"; sleep 0.2; done\n' },
      {
        signal: ac.signal,
        onStdout: (c) => {
          chunks.push(c);
          if (chunks.join('').includes('tick 2\n')) ac.abort();
        },
      },
    );
    const r = await running;
    expect(r.cancelled).toBe(true);
    expect(r.stdout).toMatch(/^tick 1\ntick 2\n/);
    await waitFor(() => machine?.clock.activeWaits === 0, 'the remote loop to stop');
    expect(r.stdout).not.toContain('tick 50');
  });

  test('a streaming command piped into another delivers when it ends', async () => {
    const { chunks, result } = await timed({ script: 'for i in 1 2 3; do echo "line $i"; sleep 0.2; done | cat\n' });
    expect(result.stdout).toBe('line 1\nline 2\nline 3\n');
    expect(chunks.length).toBe(1);
  });

  test("a detached step's log grows while it runs (systemd-run, StandardOutput=append:)", async () => {
    const fs = t.lab.hosts[0]?.machine.system.shell.fs;
    const log = '/var/log/l20-setup/run1/step.log';
    expect((await host.run({ argv: ['mkdir', '-p', '/var/log/l20-setup/run1'] }, { sudo: true })).exitCode).toBe(0);
    const r = await host.run(
      {
        argv: [
          'systemd-run',
          '--unit=l20-step-run1',
          '--collect',
          '-p',
          `StandardOutput=append:${log}`,
          '-p',
          'StandardError=inherit',
          '/bin/sh',
          '-c',
          'for i in 1 2 3; do echo "step $i"; sleep 0.4; done; echo "oops" >&2',
        ],
      },
      { sudo: true },
    );
    expect(r.stderr).toBe('Running as unit: l20-step-run1.service\n');
    const read = (): Promise<string> => (fs ? fs.readFile(log) : Promise.resolve(''));
    let seen = '';
    await waitFor(() => {
      void read().then((s) => (seen = s));
      return seen.startsWith('step 1\n');
    }, 'the first line in the log');
    expect(seen).not.toContain('step 3');
    await waitFor(
      () => {
        void read().then((s) => (seen = s));
        return seen.endsWith('oops\n');
      },
      'the step to finish',
      20_000,
    );
    expect(seen).toBe('step 1\nstep 2\nstep 3\noops\n');

    const noDir = await host.run(
      {
        argv: [
          'systemd-run',
          '--unit=l20-step-nodir',
          '-p',
          'StandardOutput=append:/var/log/missing/x.log',
          '/bin/true',
        ],
      },
      { sudo: true },
    );
    expect(noDir.exitCode).toBe(0);
    const status = await host.run({ argv: ['journalctl', '-u', 'l20-step-nodir', '-o', 'cat', '-q'] });
    expect(status.stdout).toContain(
      'l20-step-nodir.service: Failed to set up standard output: No such file or directory\nl20-step-nodir.service: Failed at step STDOUT spawning /bin/true: No such file or directory\n',
    );
  });

  test('a lab tool writes while it runs: journalctl -f follows a unit', async () => {
    const ac = new AbortController();
    let seen = '';
    const follow = host.run(
      { argv: ['journalctl', '-f', '-o', 'cat', '-u', 'demo.service'] },
      {
        sudo: true,
        signal: ac.signal,
        onStdout: (c) => (seen += c),
      },
    );
    await waitFor(() => seen.includes('-- Journal begins at'), 'journalctl to start following');
    const started = await host.run(
      { argv: ['systemd-run', '--unit=demo', '/bin/sh', '-c', 'echo hello from demo'] },
      { sudo: true },
    );
    expect(started.stderr).toBe('Running as unit: demo.service\n');
    await waitFor(() => seen.includes('hello from demo'), 'the unit output to stream', 20_000);
    ac.abort();
    const r = await follow;
    expect(r.cancelled).toBe(true);
    expect(seen).toMatch(/Started \/bin\/sh -c echo hello from demo\.\nhello from demo\n/);
  });
});
