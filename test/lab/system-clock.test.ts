/**
 * The simulated clock: jumps at 'max' (timers fire in due order inside a jump, idle waits for
 * someone else's jump), scaled real time at numeric speeds, cancellation on close; and the
 * commands that read it over SSH (date, uptime, /proc/uptime).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { LAB_EPOCH_MS, SimClock } from '../../lab/util/clock.js';
import { formatDate } from '../../lab/shell/coreutils.js';
import { closeLab, exec, openLab, text } from './helpers.js';

describe('SimClock', () => {
  test("at 'max' modelled waits jump the clock and fire the timers they pass, in order", async () => {
    const c = new SimClock('max');
    const fired: Array<[string, number]> = [];
    c.at(LAB_EPOCH_MS + 5000, () => fired.push(['b', c.now()]));
    c.at(LAB_EPOCH_MS + 2000, () => fired.push(['a', c.now()]));
    c.at(LAB_EPOCH_MS + 60_000, () => fired.push(['late', c.now()]));
    expect(await c.sleep(10_000)).toBe(true);
    expect(c.now()).toBe(LAB_EPOCH_MS + 10_000);
    expect(fired).toEqual([
      ['a', LAB_EPOCH_MS + 2000],
      ['b', LAB_EPOCH_MS + 5000],
    ]);
    expect(c.activeTimers).toBe(1);
    c.close();
    expect(c.activeTimers).toBe(0);
  });

  test('date +%s.%N prints whole nanoseconds even when the clock has sub-millisecond fractions', () => {
    // (doubles near 1.7e12 ms keep about a microsecond of the fraction: the last digits are float noise)
    expect(formatDate(LAB_EPOCH_MS + 1234.5678, '%s.%N')).toMatch(
      new RegExp(`^${Math.floor((LAB_EPOCH_MS + 1234) / 1000)}\\.23456\\d{4}$`),
    );
    expect(formatDate(LAB_EPOCH_MS + 0.25, '%s.%N')).toMatch(/^\d+\.000250\d{3}$/);
  });

  test('a NaN or infinite wait is refused loudly and leaves the clock where it was', async () => {
    const c = new SimClock('max');
    await expect(c.sleep(Infinity)).rejects.toThrow(/a wait of Infinity ms/);
    await expect(c.advance(Number.NaN)).rejects.toThrow(/a jump of NaN ms/);
    expect(c.now()).toBe(LAB_EPOCH_MS);
    expect(new Date(c.now()).toISOString()).toMatch(/^\d{4}-/);
    c.close();
  });

  test("at 'max' idle() waits for jumps made elsewhere; a chain of idles follows one advance", async () => {
    const c = new SimClock('max');
    let ticks = 0;
    const loop = (async () => {
      while (await c.idle(1000)) ticks++;
    })();
    await c.advance(3500);
    expect(ticks).toBe(3);
    expect(c.now()).toBe(LAB_EPOCH_MS + 3500);
    c.close();
    await loop;
    expect(c.activeWaits).toBe(0);
  });

  test('at a numeric speed the clock runs with real time and timers fire after the scaled delay', async () => {
    const c = new SimClock(1000);
    const t0 = Date.now();
    const fired = new Promise<number>((resolve) => c.at(c.now() + 50_000, () => resolve(Date.now() - t0)));
    const realMs = await fired;
    expect(realMs).toBeGreaterThanOrEqual(40);
    expect(realMs).toBeLessThan(5000);
    expect(c.now() - LAB_EPOCH_MS).toBeGreaterThanOrEqual(50_000);
    const ac = new AbortController();
    const waiting = c.sleep(3_600_000, ac.signal);
    ac.abort();
    expect(await waiting).toBe(false);
    c.close();
  });
});

describe('time over SSH', () => {
  let lab: Lab;
  let host: LabHost;
  let conn: Client;
  beforeAll(async () => {
    ({ lab, host, conn } = await openLab());
  });
  afterAll(() => closeLab(lab, conn));

  test('date, uptime and /proc/uptime read the simulated clock; both hosts share it', async () => {
    const r = text(await exec(conn, 'date +%s.%N; date -Is; date -u; date +%F_%T; uptime; cat /proc/uptime'));
    const [epoch, iso, plain, ft, up, procUp] = r.out.trimEnd().split('\n');
    expect(Number(epoch)).toBeGreaterThanOrEqual(LAB_EPOCH_MS / 1000);
    expect(Number(epoch)).toBeLessThan(LAB_EPOCH_MS / 1000 + 60);
    expect(epoch).toMatch(/^\d{10}\.\d{9}$/);
    expect(iso).toMatch(/^2025-01-06T09:00:\d\d\+00:00$/);
    expect(plain).toMatch(/^Mon Jan {2}6 09:00:\d\d UTC 2025$/);
    expect(ft).toMatch(/^2025-01-06_09:00:\d\d$/);
    expect(up).toMatch(/^ 09:00:\d\d up 10 min, {2}1 user, {2}load average: 0\.08, 0\.05, 0\.01$/);
    expect(Number(procUp?.split(' ')[0])).toBeGreaterThanOrEqual(600);
    expect(host.machine.clock).toBe(lab.hosts[1]?.machine.clock);
    await host.machine.clock.advance(2 * 3600_000);
    expect(text(await exec(conn, 'uptime; uptime -p; uptime -s')).out).toMatch(
      /^ 11:00:\d\d up {2}2:10, {2}1 user, .*\nup 2 hours, 10 minutes\n2025-01-06 08:50:00\n$/,
    );
  });
});
