import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor, type ApplyOptions } from '../../src/engine/steps.js';
import type { EngineEvent } from '../../src/engine/events.js';
import type { StageDef } from '../../src/engine/types.js';
import type {
  Command,
  Host,
  HostConnectionState,
  RunOptions,
  RunResult,
  WriteFileOptions,
  WriteFileResult,
} from '../../src/transport/types.js';
import { buildCommand } from '../../src/transport/quote.js';

/** A host with files and a log of what ran: enough state for steps to change and checks to see it. */
class StatefulHost implements Host {
  readonly address: string;
  readonly files = new Map<string, string>();
  readonly ran: string[] = [];
  failOn?: RegExp;
  constructor(readonly name: string) {
    this.address = `${name}.test:22`;
  }
  async connect(): Promise<void> {}
  async run(command: Command, options: RunOptions = {}): Promise<RunResult> {
    const { line } = buildCommand(command, options);
    this.ran.push(line);
    options.onStart?.(line);
    const done = (exitCode: number, stdout = '', stderr = ''): RunResult => {
      if (stdout) options.onStdout?.(stdout);
      if (stderr) options.onStderr?.(stderr);
      return {
        commandLine: line,
        exitCode,
        signal: null,
        stdout,
        stderr,
        durationMs: 1,
        timedOut: false,
        cancelled: false,
        truncated: false,
      };
    };
    const argv = 'argv' in command ? command.argv : [];
    if (this.failOn?.test(line))
      return done(3, '', 'Job for demo.service failed.\nSee "systemctl status demo.service" for details.\n');
    if (argv[0] === 'cat' && argv[1] === '--') {
      const f = this.files.get(argv[2]!);
      return f === undefined ? done(1, '', `cat: ${argv[2]}: No such file or directory\n`) : done(0, f);
    }
    if (argv[0] === 'cp') {
      this.files.set(argv[4]!, this.files.get(argv[3]!) ?? '');
      return done(0);
    }
    if (argv[0] === 'rm') {
      this.files.delete(argv[3]!);
      return done(0);
    }
    if (argv[0] === 'touch') {
      this.files.set(argv[1]!, '');
      return done(0);
    }
    return done(0);
  }
  async readFile(path: string): Promise<string> {
    const f = this.files.get(path);
    if (f === undefined) throw new Error(`no ${path}`);
    return f;
  }
  async writeFileAtomic(path: string, content: string, options: WriteFileOptions = {}): Promise<WriteFileResult> {
    const before = this.files.get(path);
    if (before === content) return { changed: false };
    let backupPath: string | undefined;
    if (before !== undefined) {
      backupPath = `${options.backupDir}${path}`;
      this.files.set(backupPath, before);
    }
    this.files.set(path, content);
    return backupPath ? { changed: true, backupPath } : { changed: true };
  }
  onStateChange(_l: (s: HostConnectionState, d?: string) => void): () => void {
    return () => undefined;
  }
  async close(): Promise<void> {}
}

interface Facts {
  conf?: string;
  started: boolean;
}

const CONF = '/etc/demo.conf';
function stage(danger: 'safe' | 'disruptive' = 'safe', order?: 'reverse'): StageDef<Facts> {
  return {
    id: 'os',
    title: 't',
    purpose: 'p',
    probes: [
      { id: 'conf', command: { argv: ['cat', '--', CONF] } },
      { id: 'started', command: { argv: ['cat', '--', '/run/demo.started'] } },
    ],
    collect: ({ results }) => ({
      ...(results.conf?.exitCode === 0 ? { conf: results.conf.stdout } : {}),
      started: results.started?.exitCode === 0,
    }),
    checks: [
      {
        id: 'os.demo',
        title: 'demo configured',
        scope: 'host',
        evaluate: (f, _h, ctx) =>
          f.conf === `value=${ctx.config.qos.priority}\n` && f.started
            ? { status: 'pass', summary: 'configured', evidence: f.conf }
            : { status: 'fail', summary: 'not configured', evidence: f.conf ?? '(no file)', fix: 'apply os.demo' },
      },
    ],
    steps: [
      {
        id: 'os.demo',
        title: 'configure demo',
        danger,
        guards: ['os.demo'],
        ...(order ? { order } : {}),
        plan: (ctx) => ({
          summary: `write ${CONF} and start demo on ${ctx.host}`,
          files: [{ path: CONF, content: `value=${ctx.config.qos.priority}\n`, mode: 0o644 }],
          commands: [{ command: { argv: ['touch', '/run/demo.started'] } }],
        }),
      },
    ],
  };
}

const OPTS: ApplyOptions = { dryRun: false, yes: true, allowReboot: false };

describe('StepExecutor', () => {
  it('applies a needed step, verifies, and a second apply changes nothing', async () => {
    const hosts = [new StatefulHost('n1'), new StatefulHost('n2')];
    hosts[0]!.files.set(CONF, 'value=7\n');
    const engine = new Engine(hosts, { runId: 'RUN1' });
    const events: EngineEvent[] = [];
    engine.subscribe((e) => events.push(e));
    const first = await new StepExecutor(engine, OPTS).applyStage(stage());
    expect(first.changed).toBe(2);
    expect(first.steps?.map((s) => [s.host, s.status])).toEqual([
      ['n1', 'applied'],
      ['n2', 'applied'],
    ]);
    expect(first.results.every((r) => r.status === 'pass')).toBe(true);
    // The previous version is kept in the run's backup directory.
    expect(hosts[0]!.files.get(`/var/lib/l20-setup/backup/RUN1${CONF}`)).toBe('value=7\n');
    expect(first.steps?.[0]?.diff).toContain('-value=7\n+value=3');
    expect(events.some((e) => e.type === 'step.result' && e.result.status === 'applied')).toBe(true);

    const second = await new StepExecutor(engine, OPTS).applyStage(stage());
    expect(second.changed).toBe(0);
    expect(second.steps?.every((s) => s.status === 'skipped' && /nothing to do/.test(s.summary))).toBe(true);
  });

  it('a file holding terminal control sequences shows inert in the plan diff and the applied diff', async () => {
    const hosts = [new StatefulHost('n1')];
    // The host's current file is its output: an OSC 52 clipboard write and a title change must not reach a terminal.
    hosts[0]!.files.set(CONF, 'value=7\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]2;PWNED\x07\u202e\n');
    const engine = new Engine(hosts, { runId: 'RUN1' });
    const plan = await new StepExecutor(engine, { ...OPTS, dryRun: true }).applyStage(stage());
    const applied = await new StepExecutor(engine, OPTS).applyStage(stage());
    for (const diff of [plan.steps?.[0]?.diff, applied.steps?.[0]?.diff]) {
      expect(diff).toContain('-value=7');
      expect(diff).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
      expect(diff).not.toContain('PWNED\x07');
    }
  });

  it('plan shows commands and a unified diff and changes nothing', async () => {
    const hosts = [new StatefulHost('n1')];
    const engine = new Engine(hosts);
    const out = await new StepExecutor(engine, { ...OPTS, dryRun: true }).applyStage(stage());
    const step = out.steps?.[0];
    expect(step?.status).toBe('planned');
    expect(step?.commands).toEqual([
      'sudo install -D -m 0644 -o root -g root /dev/stdin /etc/demo.conf',
      'sudo touch /run/demo.started',
    ]);
    expect(step?.diff).toContain('--- /dev/null\n+++ /etc/demo.conf');
    expect(step?.diff).toContain('+value=3');
    expect(hosts[0]!.files.has(CONF)).toBe(false);
    expect(out.changed).toBe(0);
  });

  it('a failing command rolls the step back on that host and says why', async () => {
    const hosts = [new StatefulHost('n1')];
    hosts[0]!.files.set(CONF, 'old\n');
    hosts[0]!.failOn = /touch/;
    const out = await new StepExecutor(new Engine(hosts, { runId: 'R' }), OPTS).applyStage(stage());
    const step = out.steps?.[0];
    expect(step?.status).toBe('failed');
    expect(step?.error).toMatch(/sudo touch \/run\/demo.started` on n1 exited 3/);
    expect(step?.error).toContain('Job for demo.service failed.');
    expect(step?.error).toContain(`restored ${CONF}`);
    expect(hosts[0]!.files.get(CONF)).toBe('old\n');
    expect(out.results.find((r) => r.id === 'os.demo')?.status).toBe('fail');
  });

  it('a disruptive step needs --yes or the confirmation callback, which names the hosts', async () => {
    const hosts = [new StatefulHost('n1'), new StatefulHost('n2')];
    const engine = new Engine(hosts);
    const refused = await new StepExecutor(engine, { ...OPTS, yes: false }).applyStage(stage('disruptive'));
    expect(refused.steps?.every((s) => s.status === 'skipped' && /needs confirmation/.test(s.summary))).toBe(true);
    expect(hosts[0]!.files.has(CONF)).toBe(false);

    const asked: string[][] = [];
    const ok = await new StepExecutor(engine, {
      ...OPTS,
      yes: false,
      confirm: async (_s, _step, names, plans) => {
        asked.push([...names]);
        expect(plans.every((p) => p.diff.includes('+value=3'))).toBe(true);
        return true;
      },
    }).applyStage(stage('disruptive'));
    expect(asked).toEqual([['n1', 'n2']]);
    expect(ok.changed).toBe(2);
  });

  it('runs node 2 first for a reverse-ordered step', async () => {
    const hosts = [new StatefulHost('n1'), new StatefulHost('n2')];
    const engine = new Engine(hosts);
    const starts: string[] = [];
    engine.subscribe((e) => {
      if (e.type === 'step.start') starts.push(e.host);
    });
    await new StepExecutor(engine, OPTS).applyStage(stage('safe', 'reverse'));
    expect(starts).toEqual(['n2', 'n1']);
  });
});

describe('StepExecutor.applyStages', () => {
  /** A test-only stage (no steps) that fails while the conf pins a value a later stage removes. */
  const tests: StageDef<Facts> = {
    id: 'rdma-link',
    title: 't',
    purpose: 'p',
    probes: [{ id: 'conf', command: { argv: ['cat', '--', CONF] } }],
    collect: ({ results }) => ({
      ...(results.conf?.exitCode === 0 ? { conf: results.conf.stdout } : {}),
      started: true,
    }),
    checks: [
      {
        id: 'rdma-link.pinned',
        title: 'p',
        scope: 'host',
        evaluate: (f) =>
          f.conf?.includes('pinned')
            ? { status: 'fail', summary: 'a pinned value breaks the link test', evidence: f.conf }
            : { status: 'pass', summary: 'ok', evidence: f.conf ?? '(no file: nothing pinned)' },
      },
    ],
  };

  it('does not stop at a stage whose failure no step of its own guards, and re-checks it at the end', async () => {
    const hosts = [new StatefulHost('n1')];
    hosts[0]!.files.set(CONF, 'pinned\n');
    const engine = new Engine(hosts);
    const fixer = { ...stage(), id: 'nccl' as const };
    const run = await new StepExecutor(engine, OPTS).applyStages([tests, fixer]);
    expect(run.stoppedAfter).toBeUndefined();
    expect(run.outcomes.map((o) => [o.stage, o.results.every((r) => r.status === 'pass')])).toEqual([
      ['rdma-link', true],
      ['nccl', true],
    ]);
  });

  it('stops at a stage that cannot fix a check its own steps guard, and names what did not run', async () => {
    const hosts = [new StatefulHost('n1')];
    hosts[0]!.failOn = /touch/;
    const run = await new StepExecutor(new Engine(hosts), OPTS).applyStages([stage(), { ...tests, checks: [] }]);
    expect(run.stoppedAfter).toBe('os');
    expect(run.notRun).toEqual(['rdma-link']);
    expect(run.outcomes).toHaveLength(1);
  });
});

/** A host whose session can be reported lost, and whose fresh connections can be made to fail. */
class LosingHost extends StatefulHost {
  private readonly listeners = new Set<(s: HostConnectionState, d?: string) => void>();
  freshFails = false;
  override onStateChange(l: (s: HostConnectionState, d?: string) => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  lose(): void {
    for (const l of this.listeners) l('lost', 'connection reset');
  }
  async probeFreshConnection(): Promise<void> {
    if (this.freshFails) throw new Error('connect ETIMEDOUT');
  }
}

describe('steps with their own procedure and a lost connection', () => {
  /** A procedure that loses its session on the first run (failing), and applies on the next. */
  function procedureStage(host: LosingHost, calls: { n: number }): StageDef<Facts> {
    return {
      ...stage(),
      steps: [
        {
          id: 'os.demo',
          title: 'armed change',
          danger: 'safe',
          guards: ['os.demo'],
          async execute(ctx) {
            calls.n++;
            const proof = await ctx.probeFreshConnection('n1');
            if (calls.n === 1) {
              host.lose();
              return [
                {
                  id: 'os.demo',
                  stage: 'os',
                  host: 'n1',
                  status: 'failed',
                  danger: 'safe',
                  summary: 'armed change',
                  commands: [],
                  diff: '',
                  changed: false,
                  error: `session lost; proof ${proof.ok}`,
                },
              ];
            }
            host.files.set(CONF, 'value=3\n');
            host.files.set('/run/demo.started', '');
            return [
              {
                id: 'os.demo',
                stage: 'os',
                host: 'n1',
                status: 'applied',
                danger: 'safe',
                summary: 'armed change',
                commands: [],
                diff: '',
                changed: true,
              },
            ];
          },
        },
      ],
    };
  }

  it('a procedure whose session dropped while fresh connections worked is probed again and resumed once', async () => {
    const host = new LosingHost('n1');
    const calls = { n: 0 };
    const engine = new Engine([host]);
    const notes: string[] = [];
    engine.subscribe((e) => {
      if (e.type === 'step.note') notes.push(e.line);
    });
    const out = await new StepExecutor(engine, OPTS).applyStage(procedureStage(host, calls));
    expect(calls.n).toBe(2);
    expect(out.steps?.map((s) => s.status)).toEqual(['applied']);
    expect(notes.some((n) => /was lost; probing again and resuming/.test(n))).toBe(true);
    expect(out.results.every((r) => r.status === 'pass')).toBe(true);
  });

  it('a procedure whose fresh connection failed (the path was cut) is left to its own rollback, not run again', async () => {
    const host = new LosingHost('n1');
    host.freshFails = true;
    const calls = { n: 0 };
    const out = await new StepExecutor(new Engine([host]), OPTS).applyStage(procedureStage(host, calls));
    expect(calls.n).toBe(1);
    expect(out.steps?.map((s) => [s.status, s.error])).toEqual([['failed', 'session lost; proof false']]);
  });
});
