/**
 * Two failure modes of a real server, through the engine (issue 7):
 * - a hung command in an apply step times out with an error that names the host, the command and that
 *   it timed out, and the process is gone from the server;
 * - a host that stops answering (its sshd session processes frozen with SIGSTOP: no RST, no FIN, the TCP
 *   connection simply goes silent) is reported lost within the keepalive bound, while the other host's
 *   checks carry on and pass; b's probe, tried once more over a new connection, fails within its connect
 *   timeout. Figure: `silent host: lost after X s (bound Y s)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { StageDef } from '../../src/engine/types.js';
import { clusterSchema } from '../../src/config/schema.js';
import { SshHost } from '../../src/transport/ssh.js';
import { listProcesses, processTree, startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
const hosts: SshHost[] = [];

beforeAll(async () => {
  sshd = await startSshd();
});
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
});

const config = clusterSchema.parse({
  hosts: [
    { name: 'sshd-l20t-nopw', address: '127.0.0.1', role: 'head' },
    { name: 'sshd-l20t-cli', address: '127.0.0.1', role: 'worker' },
  ],
});

/** One probe per host that takes a while, and one check on it. */
const slowStage: StageDef<{ out: string }> = {
  id: 'os',
  title: 'slow',
  purpose: 'a probe that takes 3 s',
  probes: [{ id: 'slow', command: { script: 'sleep 3; echo done-$(id -un)\n' }, timeoutMs: 60_000 }],
  collect: ({ results }) => ({ out: results.slow?.stdout ?? '' }),
  checks: [
    {
      id: 'os.slow',
      scope: 'host',
      title: 'slow probe answered',
      evaluate: (f) =>
        /^done-/.test(f.out)
          ? { status: 'pass', summary: f.out.trim(), evidence: f.out }
          : { status: 'fail', summary: 'no answer', evidence: f.out },
    },
  ],
};

describe('real sshd: hung commands and silent hosts', () => {
  it('a hung step command times out with the host, the command and "timed out", and is gone from the server', async () => {
    const host = new SshHost(sshd.hostOptions(sshd.users.nopw));
    hosts.push(host);
    const marker = `hung-${process.pid}`;
    const hungStage: StageDef<{ ok: boolean }> = {
      id: 'os',
      title: 'hung',
      purpose: 'a step that hangs',
      probes: [{ id: 'marker', command: { argv: ['true'] } }],
      collect: () => ({ ok: false }),
      checks: [
        {
          id: 'os.hung',
          scope: 'host',
          title: 'never passes',
          evaluate: () => ({ status: 'fail', summary: 'needs the step', evidence: '' }),
        },
      ],
      steps: [
        {
          id: 'os.hang',
          title: 'hangs',
          danger: 'safe',
          guards: ['os.hung'],
          plan: () => ({
            summary: 'hang',
            commands: [
              { command: { argv: ['bash', '-c', `exec -a ${marker} sleep 300`] }, sudo: false, timeoutMs: 1500 },
            ],
          }),
        },
      ],
    };
    const engine = new Engine([host], {
      config: clusterSchema.parse({ hosts: [{ name: host.name, address: '127.0.0.1', role: 'head' }] }),
    });
    const started = Date.now();
    const outcome = await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: false }).applyStage(
      hungStage,
    );
    const step = outcome.steps?.find((s) => s.id === 'os.hang');
    expect(step?.status).toBe('failed');
    expect(step?.error).toMatch(new RegExp(`bash -c 'exec -a ${marker} sleep 300'\` on ${host.name} timed out`));
    expect(Date.now() - started).toBeLessThan(30_000);
    await waitFor(() => !listProcesses().some((p) => p.args.includes(marker)), `${marker} to be gone from the server`);
  }, 60_000);

  it('a silent host is reported lost within the keepalive bound; the other host carries on', async () => {
    const keepalive = { keepaliveIntervalMs: 500, keepaliveCountMax: 3 };
    const a = new SshHost(sshd.hostOptions(sshd.users.nopw, keepalive));
    // A reconnect to the silent host waits out its connect timeout (the probe is tried once more).
    const b = new SshHost(sshd.hostOptions(sshd.users.cli, { ...keepalive, readyTimeoutMs: 3000 }));
    hosts.push(a, b);
    const engine = new Engine([a, b], { config });
    const events: Array<EngineEvent & { at: number }> = [];
    engine.subscribe((e) => events.push({ ...e, at: Date.now() }));
    await Promise.all([a.connect(), b.connect()]);

    const running = engine.runStage(slowStage);
    // Both probes are running on the server; then b's session goes silent.
    await waitFor(() => processTree(sshd.pid).filter((p) => p.args === 'sleep 3').length >= 2, 'both probes to run');
    // This test's own sshd only: other test files run their own servers for the same accounts.
    const session = processTree(sshd.pid).filter((p) => p.args.startsWith(`sshd: ${sshd.users.cli}`));
    expect(session.length).toBeGreaterThan(0);
    // The whole host goes silent for b: its session and the listener (new connections get no answer either).
    // a's connection is already up and its session processes keep running.
    const frozen = [
      ...session.flatMap((p) => processTree(p.pid)).filter((p) => p.args.startsWith('sshd')),
      { pid: sshd.pid },
    ];
    for (const p of frozen) process.kill(p.pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    try {
      const outcome = await running;
      const lost = events.find((e) => e.type === 'host.state' && e.host === b.name && e.state === 'lost');
      expect(lost, 'b reported lost').toBeDefined();
      const after = (lost!.at - stoppedAt) / 1000;
      const bound = (keepalive.keepaliveIntervalMs * (keepalive.keepaliveCountMax + 1)) / 1000 + 1;
      console.log(
        `silent host: lost after ${after.toFixed(1)} s (bound ${bound.toFixed(1)} s: keepalive ${keepalive.keepaliveIntervalMs} ms × ${keepalive.keepaliveCountMax} + 1 interval + 1 s)`,
      );
      expect(after).toBeLessThanOrEqual(bound);
      const ra = outcome.results.find((r) => r.host === a.name);
      const rb = outcome.results.find((r) => r.host === b.name);
      expect(ra).toMatchObject({ status: 'pass', summary: `done-${sshd.users.nopw}` });
      expect(rb?.status).toBe('error');
      expect(rb?.evidence).toMatch(/lost|timed out|keepalive/i);
      // a carried on: its verdict came when its probe ended, not when b's failure was settled.
      const verdictAt = (host: string) => events.find((e) => e.type === 'check.result' && e.result.host === host)!.at;
      expect(verdictAt(a.name)).toBeLessThan(verdictAt(b.name));
    } finally {
      for (const p of frozen) {
        try {
          process.kill(p.pid, 'SIGCONT');
        } catch {
          // gone
        }
      }
    }
  }, 60_000);
});
