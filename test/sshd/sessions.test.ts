/**
 * Real OpenSSH, MaxSessions 10: 50 commands queued at once all run, each with its own output, and never more
 * than 10 at a time (issue 7). Two independent witnesses count concurrency: the commands themselves (a counter
 * under flock) and sshd's log ("Starting session" / "Close session" per channel).
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { startSshd, waitFor, type Sshd } from '../helpers/sshd.js';

let sshd: Sshd;
let dir: string;
const hosts: SshHost[] = [];

beforeAll(async () => {
  sshd = await startSshd();
  dir = mkdtempSync(join(tmpdir(), 'l20-sessions-'));
  chmodSync(dir, 0o1777); // written by the remote user
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Counts itself in and out of $D/now under flock, appending the count after each entry to $D/$TAG.peaks,
 * prints its own number and in between either sleeps 0.2 s or, with $W set, waits (at most 10 s) until $W
 * commands are in at once — a barrier, so "were W running together" does not depend on how fast a loaded
 * machine starts them.
 */
const COUNTED = `
exec 9>>"$D/lock"
flock 9; n=$(( $(cat "$D/now" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$D/now"; echo "$n" >> "$D/$TAG.peaks"; flock -u 9
echo "command $1"
if [ -n "\${W:-}" ]; then
  end=$((SECONDS + 10))
  while flock 9; c=$(cat "$D/now"); flock -u 9; [ "$c" -lt "$W" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.05; done
else
  sleep 0.2
fi
flock 9; n=$(( $(cat "$D/now") - 1 )); echo "$n" > "$D/now"; flock -u 9
`;

/** Sessions `user` started, and the most sshd had open at once, replaying its log (one connection per test). */
function peakSessionsInLog(log: string, user: string): { started: number; peak: number } {
  let open = 0;
  let peak = 0;
  let started = 0;
  for (const line of log.split('\n')) {
    if (line.startsWith(`Starting session: command for ${user} from 127.0.0.1`)) {
      started++;
      peak = Math.max(peak, ++open);
    } else if (line.startsWith(`Close session: user ${user} from 127.0.0.1`)) {
      open--;
    }
  }
  return { started, peak };
}

async function runFifty(host: SshHost, tag: string): Promise<number[]> {
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) =>
      host.run({ argv: ['bash', '-c', COUNTED, '_', String(i)] }, { env: { D: dir, TAG: tag } }),
    ),
  );
  results.forEach((r, i) => {
    expect(r).toMatchObject({ exitCode: 0, stdout: `command ${i}\n`, stderr: '', timedOut: false, cancelled: false });
  });
  const peaks = readFileSync(join(dir, `${tag}.peaks`), 'utf8')
    .trim()
    .split('\n')
    .map(Number);
  expect(peaks).toHaveLength(50);
  expect(readFileSync(join(dir, 'now'), 'utf8').trim()).toBe('0');
  return peaks;
}

describe('real sshd: 50 queued commands under MaxSessions 10', () => {
  it('runs all 50 with their own output, at most 10 at once', async () => {
    const refusals: string[] = [];
    const host = new SshHost(
      sshd.hostOptions(sshd.users.nopw, {
        debug: (m) => {
          if (m.startsWith('Inbound: CHANNEL_OPEN_FAILURE')) refusals.push(m);
        },
      }),
    );
    hosts.push(host);
    await host.connect();
    const logBefore = sshd.readLog().length;
    const peaks = await runFifty(host, 'default');
    expect(Math.max(...peaks)).toBeLessThanOrEqual(10);
    expect(Math.max(...peaks)).toBeGreaterThanOrEqual(5); // they did run side by side
    const log = peakSessionsInLog(sshd.readLog().slice(logBefore), sshd.users.nopw);
    expect(log.started).toBe(50);
    expect(log.peak).toBeLessThanOrEqual(10);
  });

  it('still runs 10 at once after sshd refused opens that raced our closes (the limit does not ratchet down)', async () => {
    // A poller opens its next channel the moment its last one closed; sshd may not have freed that session yet
    // and refuses. Such refusals are transient and must not lower the limit for the rest of the connection.
    const refusals: string[] = [];
    const host = new SshHost(
      sshd.hostOptions(sshd.users.nopw, {
        debug: (m) => {
          if (m.startsWith('Inbound: CHANNEL_OPEN_FAILURE')) refusals.push(m);
        },
      }),
    );
    hosts.push(host);
    await host.connect();
    const logBefore = sshd.readLog().length;
    const poll = async () => {
      for (let k = 0; k < 15; k++) expect((await host.run({ argv: ['sleep', '0.05'] })).exitCode).toBe(0);
    };
    await Promise.all(Array.from({ length: 10 }, poll));
    expect(refusals.length).toBeGreaterThan(0); // the race did happen
    await waitFor(() => {
      const log = sshd.readLog().slice(logBefore);
      return (log.match(/^Close session: /gm)?.length ?? 0) === 150;
    }, 'sshd to close all 150 sessions');

    // One wave of 10 commands that each wait until 10 are in: all 10 must get to run together (with the
    // limit lowered to 9 the tenth would start only once the others gave up waiting, and the peak is 9).
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        host.run({ argv: ['bash', '-c', COUNTED, '_', String(i)] }, { env: { D: dir, TAG: 'after-races', W: '10' } }),
      ),
    );
    expect(results.map((r) => r.exitCode)).toEqual(Array(10).fill(0));
    const counts = readFileSync(join(dir, 'after-races.peaks'), 'utf8').trim().split('\n').map(Number);
    expect(Math.max(...counts)).toBe(10);
  });

  it('adapts when the client allows more sessions than the server: refused channels wait and retry', async () => {
    const refusals: string[] = [];
    const debug = (m: string) => {
      if (m.startsWith('Inbound: CHANNEL_OPEN_FAILURE')) refusals.push(m);
    };
    const host = new SshHost(sshd.hostOptions(sshd.users.nopw, { maxSessions: 25, debug }));
    hosts.push(host);
    await host.connect();
    const logBefore = sshd.readLog().length;
    const peaks = await runFifty(host, 'client25');
    expect(Math.max(...peaks)).toBeLessThanOrEqual(10);
    const log = peakSessionsInLog(sshd.readLog().slice(logBefore), sshd.users.nopw);
    expect(log.started).toBe(50);
    expect(log.peak).toBeLessThanOrEqual(10);
    expect(refusals.length).toBeGreaterThan(0); // sshd did refuse channels past its MaxSessions
  });
});
