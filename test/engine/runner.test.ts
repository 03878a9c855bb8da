import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { StageDef } from '../../src/engine/types.js';
import { FakeHost } from '../helpers/fake-host.js';

interface Facts {
  release: string;
  lines: number;
}

const stage: StageDef<Facts> = {
  id: 'inventory',
  title: 't',
  purpose: 'p',
  probes: [
    { id: 'rel', command: { argv: ['cat', '/etc/release'] } },
    { id: 'lines', command: { script: 'seq 1 3\n' } },
  ],
  collect: ({ results }) => ({
    release: results.rel?.stdout.trim() ?? '',
    lines: (results.lines?.stdout ?? '').trim().split('\n').length,
  }),
  checks: [
    {
      id: 'inventory.release',
      title: 'r',
      scope: 'host',
      evaluate: (f) =>
        f.release === 'good'
          ? { status: 'pass', summary: 'good', evidence: f.release }
          : { status: 'fail', summary: `bad ${f.release}`, evidence: f.release, fix: 'reinstall' },
    },
    {
      id: 'inventory.same',
      title: 's',
      scope: 'pair',
      evaluate: (all) => ({
        status: new Set(all.map((a) => a.facts.release)).size === 1 ? 'pass' : 'fail',
        summary: all.map((a) => `${a.host}=${a.facts.release}`).join(' '),
        evidence: '',
      }),
    },
  ],
};

function host(name: string, release: string) {
  return new FakeHost(name, (line) =>
    line.includes('/etc/release')
      ? { stdout: `${release}\n` }
      : line.includes('bash -s')
        ? { stdout: '1\n2\n3\n' }
        : undefined,
  );
}

describe('Engine', () => {
  it('probes every host, evaluates host and pair checks, and emits events in order', async () => {
    const a = host('a', 'good');
    const b = host('b', 'bad');
    const engine = new Engine([a, b]);
    const events: EngineEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const outcome = await engine.runStage(stage);
    const byId = (h: string | null, id: string) => outcome.results.find((r) => r.host === h && r.id === id);
    expect(byId('a', 'inventory.release')?.status).toBe('pass');
    expect(byId('b', 'inventory.release')?.status).toBe('fail');
    expect(byId('b', 'inventory.release')?.fix).toBe('reinstall');
    expect(byId(null, 'inventory.same')?.summary).toBe('a=good b=bad');
    expect(byId(null, 'inventory.same')?.status).toBe('fail');
    // Every started command exits; output lines are published for the script probe.
    const starts = events.filter((e) => e.type === 'cmd.start');
    const exits = events.filter((e) => e.type === 'cmd.exit');
    expect(starts).toHaveLength(4);
    expect(exits).toHaveLength(4);
    const out = events.filter(
      (e): e is Extract<EngineEvent, { type: 'cmd.output' }> => e.type === 'cmd.output' && e.host === 'a',
    );
    expect(out.flatMap((e) => e.lines)).toEqual(expect.arrayContaining(['1', '2', '3', 'good']));
    // Each output event names the stage and probe of its command, as its cmd.start did.
    for (const e of out)
      expect(starts.find((st) => st.runId === e.runId)).toMatchObject({ stage: e.stage, probe: e.probe });
    expect(out.map((e) => [e.stage, e.probe])).toEqual(
      expect.arrayContaining([
        ['inventory', 'rel'],
        ['inventory', 'lines'],
      ]),
    );
    expect(events[0]).toMatchObject({ type: 'stage.state', stage: 'inventory', state: 'running' });
    expect(events.at(-2)).toMatchObject({ type: 'stage.state', state: 'fail' });
    expect(events.at(-1)).toEqual({ type: 'engine.idle' });
    expect(engine.facts.get('inventory')?.get('a')).toEqual({ release: 'good', lines: 3 });
  });

  it('reports an unreachable host as error on its checks and skips pair checks, while the other host is checked', async () => {
    const a = host('a', 'good');
    const b = host('b', 'good');
    b.connectError = new Error('connect ECONNREFUSED 10.0.0.2:22');
    const outcome = await new Engine([a, b]).runStage(stage);
    expect(outcome.results.find((r) => r.host === 'a')?.status).toBe('pass');
    const bRes = outcome.results.find((r) => r.host === 'b');
    expect(bRes?.status).toBe('error');
    expect(bRes?.evidence).toContain('ECONNREFUSED');
    expect(outcome.results.find((r) => r.host === null)?.status).toBe('skip');
  });

  it('turns a throwing check into an error verdict instead of crashing', async () => {
    const broken: StageDef<Facts> = {
      ...stage,
      checks: [
        {
          id: 'inventory.boom',
          title: 'b',
          scope: 'host',
          evaluate: () => {
            throw new Error('kaboom');
          },
        },
      ],
    };
    const outcome = await new Engine([host('a', 'good')]).runStage(broken);
    expect(outcome.results[0]).toMatchObject({ status: 'error', host: 'a' });
    expect(outcome.results[0]?.evidence).toContain('kaboom');
  });

  it('cancels running commands and settles; whenIdle resolves after', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = new FakeHost('a', () => ({ stdout: 'x\n', gate }));
    const engine = new Engine([slow]);
    const started = new Promise<void>((resolve) => engine.subscribe((e) => e.type === 'cmd.start' && resolve()));
    const run = engine.runStage(stage);
    await started;
    expect(engine.busy).toBe(true);
    engine.cancelAll();
    const outcome = await run;
    await engine.whenIdle();
    expect(engine.busy).toBe(false);
    expect(outcome.results.every((r) => r.status === 'skip' && r.summary.includes('cancelled'))).toBe(true);
    release();
  });

  it('makes control sequences in remote text inert in verdicts', async () => {
    const evil = host('a', 'bad\u001b]52;c;ZXZpbA==\u0007\u001b[2J');
    const outcome = await new Engine([evil]).runStage(stage);
    const r = outcome.results.find((x) => x.id === 'inventory.release')!;
    expect(r.summary).toBe('bad bad');
    expect(r.evidence).not.toMatch(/[\u0000-\u0008\u001b\u007f]/);
  });
});
