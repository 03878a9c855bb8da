/**
 * The session log keeps every event and every output line, in order, and never queues without bound: while
 * more than its mark waits for the disk, whenWritable hands out a promise (the engine holds commands' output
 * back on it) that settles once the log has caught up.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SessionLog } from '../../src/engine/session-log.js';
import type { EngineEvent } from '../../src/engine/events.js';
import { clean } from '../../src/util/sanitize.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function newLog(): SessionLog {
  const dir = mkdtempSync(join(tmpdir(), 'l20-log-'));
  dirs.push(dir);
  return new SessionLog(dir, 'test-run');
}

function read(log: SessionLog): Array<Record<string, unknown>> {
  return readFileSync(log.path, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const output = (n: number, lines: string[]): EngineEvent => ({
  type: 'cmd.output',
  host: 'a',
  runId: `r${n}`,
  stage: 'inventory',
  probe: 'p',
  stream: 'stdout',
  lines: lines.map(clean),
});

describe('session log', () => {
  it('asks output to wait while a burst is queued, settles once written, and keeps every line in order', async () => {
    const log = newLog();
    // 40 MB in 2,000-line events, as fast as they come: far more than the log lets wait.
    let waits = 0;
    let n = 0;
    for (let e = 0; e < 800; e++) {
      const lines = Array.from({ length: 2000 }, () => `${n++}`.padStart(20, '.'));
      log.record(output(e, lines));
      const wait = log.whenWritable();
      if (wait) {
        waits++;
        await wait;
        // Settled means caught up: below the mark again.
        expect(log.whenWritable()).toBeUndefined();
      }
    }
    await log.close();
    expect(waits).toBeGreaterThan(0);
    const events = read(log);
    expect(events).toHaveLength(800);
    const all = events.flatMap((e) => e.lines as string[]);
    expect(all).toHaveLength(1_600_000);
    expect(all.every((l, i) => Number(l.replace(/^\.+/, '')) === i)).toBe(true);
    expect(events.map((e) => e.runId)).toEqual(Array.from({ length: 800 }, (_, i) => `r${i}`));
  });

  it('writes an event larger than its buffers whole, between its neighbours, with non-ASCII text intact', async () => {
    const log = newLog();
    log.record({ type: 'stage.state', stage: 'inventory', state: 'running' });
    const huge = Array.from({ length: 100_000 }, (_, i) => `größe ${i} ✓ ${'x'.repeat(40)}`); // ~5 MB of JSON
    log.record(output(1, huge));
    log.record(output(2, ['after']));
    log.record({ type: 'engine.idle' });
    await log.close();
    const events = read(log);
    expect(events.map((e) => e.type)).toEqual(['stage.state', 'cmd.output', 'cmd.output', 'engine.idle']);
    expect(events[1]!.lines).toEqual(huge);
    expect(events[2]!.lines).toEqual(['after']);
  });

  it("joins a command's output that arrives while a write runs into one record, and nothing else", async () => {
    const log = newLog();
    const chunk = (stream: 'stdout' | 'stderr', runId: string, lines: string[]): EngineEvent => ({
      ...(output(0, lines) as Extract<EngineEvent, { type: 'cmd.output' }>),
      runId,
      stream,
    });
    log.record(chunk('stdout', 'r1', ['first'])); // the disk is idle: written at once, on its own
    for (let i = 0; i < 1000; i++) log.record(chunk('stdout', 'r1', [`out ${i}`]));
    log.record(chunk('stderr', 'r1', ['err 0']));
    log.record(chunk('stderr', 'r1', ['err 1']));
    log.record(chunk('stdout', 'r2', ['other run']));
    log.record({ type: 'engine.idle' });
    log.record(chunk('stdout', 'r2', ['after idle']));
    await log.close();
    const events = read(log);
    expect(events.map((e) => [e.type, e.runId, e.stream, (e.lines as string[] | undefined)?.length])).toEqual([
      ['cmd.output', 'r1', 'stdout', 1],
      ['cmd.output', 'r1', 'stdout', 1000],
      ['cmd.output', 'r1', 'stderr', 2],
      ['cmd.output', 'r2', 'stdout', 1],
      ['engine.idle', undefined, undefined, undefined],
      ['cmd.output', 'r2', 'stdout', 1],
    ]);
    expect(events[1]!.lines).toEqual(Array.from({ length: 1000 }, (_, i) => `out ${i}`));
    expect(events[2]!.lines).toEqual(['err 0', 'err 1']);
    expect(String(events[1]!.t) <= String(events[2]!.t)).toBe(true);
  });

  it('records nothing after close and never holds output once closed', async () => {
    const log = newLog();
    log.record(output(1, ['kept']));
    await log.close();
    log.record(output(2, ['dropped']));
    expect(log.whenWritable()).toBeUndefined();
    expect(read(log).map((e) => e.lines)).toEqual([['kept']]);
  });
});
