/**
 * One runStages pass reads each host once: a probe command an earlier stage of the pass ran on a host is not
 * run again, its result is reused and marked (cmd.start reusedFrom); a cluster run in between, a result that
 * was not complete, or a separate run (runStage) runs it anew.
 */
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { ProbeDef, StageDef, StageId } from '../../src/engine/types.js';
import { FakeHost } from '../helpers/fake-host.js';

interface Facts {
  text: string;
}

const LINKS: ProbeDef = { id: 'links', command: { argv: ['ip', '-j', 'link', 'show'] } };
const DMESG: ProbeDef = { id: 'dmesg', command: { argv: ['dmesg'] }, sudo: true };

function stage(id: StageId, probes: ProbeDef[], cluster?: StageDef<Facts>['cluster']): StageDef<Facts> {
  return {
    id,
    title: id,
    purpose: id,
    probes,
    collect: ({ results }) => ({
      text: probes.map((p) => `${p.id}=${results[p.id]?.stdout.trim()}/${results[p.id]?.exitCode}`).join(' '),
    }),
    ...(cluster ? { cluster } : {}),
    checks: [
      {
        id: `${id}.read`,
        title: 'r',
        scope: 'host',
        evaluate: (f) => ({ status: 'pass', summary: f.text, evidence: f.text }),
      },
      ...(cluster
        ? [
            {
              id: `${id}.pair`,
              title: 'p',
              scope: 'pair' as const,
              evaluate: () => ({ status: 'pass' as const, summary: 'ok', evidence: 'both hosts read' }),
            },
          ]
        : []),
    ],
  };
}

/** A host whose `ip -j link show` answers with a counter: how many times it really ran. */
function countingHost(name: string, over: Partial<Record<string, () => { stdout?: string; exitCode?: number }>> = {}) {
  let links = 0;
  return new FakeHost(name, (line) => {
    if (line.includes('ip -j link show')) return over.links?.() ?? { stdout: `${name} links #${++links}\n` };
    if (line.includes('dmesg')) return { stdout: `${name} kernel ok\n` };
    if (line.includes('touch')) return { stdout: '' };
    return undefined;
  });
}

const ran = (h: FakeHost, what: string) => h.ran.filter((l) => l.includes(what)).length;
const summaries = (outcomes: Awaited<ReturnType<Engine['runStages']>>, host: string) =>
  outcomes.map((o) => o.results.find((r) => r.host === host)?.summary);

describe('probes shared within one pass', () => {
  it('runs a command once per host for the whole pass; later stages get its result, shown as reused', async () => {
    const a = countingHost('a');
    const b = countingHost('b');
    const engine = new Engine([a, b]);
    const events: EngineEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const outcomes = await engine.runStages([
      stage('inventory', [LINKS]),
      stage('os', [LINKS, DMESG]),
      stage('nic-stack', [DMESG, LINKS]),
    ]);
    expect([ran(a, 'ip -j link'), ran(b, 'ip -j link'), ran(a, 'dmesg'), ran(b, 'dmesg')]).toEqual([1, 1, 1, 1]);
    expect(summaries(outcomes, 'a')).toEqual([
      'links=a links #1/0',
      'links=a links #1/0 dmesg=a kernel ok/0',
      'dmesg=a kernel ok/0 links=a links #1/0',
    ]);
    expect(summaries(outcomes, 'b')).toEqual([
      'links=b links #1/0',
      'links=b links #1/0 dmesg=b kernel ok/0',
      'dmesg=b kernel ok/0 links=b links #1/0',
    ]);

    // Every stage still shows its commands: a start (marked where reused), the output, an exit.
    const starts = events.filter(
      (e): e is Extract<EngineEvent, { type: 'cmd.start' }> => e.type === 'cmd.start' && e.host === 'a',
    );
    expect(starts.map((s) => [s.stage, s.probe, s.reusedFrom])).toEqual([
      ['inventory', 'links', undefined],
      ['os', 'links', 'inventory/links'],
      ['os', 'dmesg', undefined],
      ['nic-stack', 'dmesg', 'os/dmesg'],
      ['nic-stack', 'links', 'inventory/links'],
    ]);
    for (const s of starts.filter((x) => x.reusedFrom)) {
      const out = events
        .filter(
          (e): e is Extract<EngineEvent, { type: 'cmd.output' }> => e.type === 'cmd.output' && e.runId === s.runId,
        )
        .flatMap((e) => e.lines);
      expect(out.length, `${s.stage}/${s.probe} output shown`).toBe(1);
      expect(events.find((e) => e.type === 'cmd.exit' && e.runId === s.runId)).toMatchObject({
        exitCode: 0,
        durationMs: 0,
      });
      expect(s.commandLine).toContain(s.probe === 'links' ? 'ip -j link show' : 'dmesg');
    }
    // The pass is one busy period: idle once, at the end.
    expect(events.filter((e) => e.type === 'engine.idle')).toHaveLength(1);
    expect(events.at(-1)).toEqual({ type: 'engine.idle' });
  });

  it('runs it again after a cluster run (it may change what the probes read)', async () => {
    const a = countingHost('a');
    const b = countingHost('b');
    const touching: StageDef<Facts>['cluster'] = async (ctx) => {
      await Promise.all(ctx.hosts.map((h) => ctx.run(h, 'touch', { argv: ['touch', '/tmp/x'] })));
      return undefined;
    };
    const outcomes = await new Engine([a, b]).runStages([
      stage('inventory', [LINKS]),
      stage('rdma-link', [LINKS], touching),
      stage('os', [LINKS]),
    ]);
    expect(ran(a, 'ip -j link')).toBe(2);
    expect(summaries(outcomes, 'a')).toEqual(['links=a links #1/0', 'links=a links #1/0', 'links=a links #2/0']);
  });

  it('keeps them across a cluster run that says it only reads (the clock read of the os stage)', async () => {
    const a = countingHost('a');
    const reading: StageDef<Facts>['cluster'] = async (ctx) => {
      await Promise.all(ctx.hosts.map((h) => ctx.run(h, 'clock', { argv: ['date', '+%s'] }, { readsOnly: true })));
      return undefined;
    };
    await new Engine([a, countingHost('b')]).runStages([
      stage('inventory', [LINKS]),
      stage('os', [LINKS], reading),
      stage('nic-stack', [LINKS]),
    ]);
    expect(ran(a, 'date')).toBe(1);
    expect(ran(a, 'ip -j link')).toBe(1);
  });

  it('shares only complete answers: a non-zero exit is shared, a timed-out one is run again', async () => {
    let n = 0;
    const a = countingHost('a', { links: () => ({ stdout: `fail #${++n}\n`, exitCode: 1 }) });
    await new Engine([a]).runStages([stage('inventory', [LINKS]), stage('os', [LINKS])]);
    expect(ran(a, 'ip -j link')).toBe(1); // exit 1 is an answer

    /** Its first `ip -j link show` times out (the transport's result for a command past its timeout). */
    class FirstTimesOut extends FakeHost {
      override async run(...args: Parameters<FakeHost['run']>) {
        const r = await super.run(...args);
        return ran(this, 'ip -j link') === 1 && r.commandLine.includes('ip -j link')
          ? { ...r, exitCode: null, signal: 'TERM', stdout: '', timedOut: true }
          : r;
      }
    }
    const b = new FirstTimesOut('b', (line) => (line.includes('ip -j link') ? { stdout: 'links\n' } : undefined));
    const outcomes = await new Engine([b]).runStages([
      stage('inventory', [LINKS]),
      stage('os', [LINKS]),
      stage('nic-stack', [LINKS]),
    ]);
    expect(ran(b, 'ip -j link')).toBe(2); // the second stage ran it again, the third reused that
    expect(summaries(outcomes, 'b')).toEqual(['links=/null', 'links=links/0', 'links=links/0']);
  });

  it('a cancelled pass stops: the stages not reached are not run', async () => {
    const slow = new FakeHost('c', (line) =>
      line.includes('ip -j link') ? { stdout: 'late\n', gate: new Promise(() => undefined) } : undefined,
    );
    const engine = new Engine([slow]);
    const pass = engine.runStages([stage('inventory', [LINKS]), stage('os', [LINKS, DMESG])]);
    await new Promise<void>((r) => setImmediate(r));
    engine.cancelAll();
    const outcomes = await pass;
    expect(outcomes.map((o) => [o.stage, o.results.map((r) => r.status)])).toEqual([['inventory', ['skip']]]);
    expect(slow.ran).toHaveLength(1);
  });

  it('separate runs are not a pass: each reads the host again', async () => {
    const b = countingHost('b');
    const engine = new Engine([b]);
    await engine.runStage(stage('inventory', [LINKS]));
    await engine.runStage(stage('os', [LINKS]));
    expect(ran(b, 'ip -j link')).toBe(2);
  });

  it('keys on everything that makes the reading: the host, the command, sudo', async () => {
    const a = countingHost('a');
    const asRoot: ProbeDef = { ...LINKS, id: 'links-root', sudo: true };
    const other: ProbeDef = { id: 'links-all', command: { argv: ['ip', '-j', 'link', 'show', 'up'] } };
    await new Engine([a]).runStages([
      stage('inventory', [LINKS]),
      stage('os', [asRoot, other]),
      stage('nic-stack', [LINKS, asRoot, other]),
    ]);
    expect(a.ran.filter((l) => l.includes('ip -j link show'))).toHaveLength(3);
  });
});
