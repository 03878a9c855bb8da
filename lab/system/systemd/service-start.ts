/**
 * A service's start job and its life afterwards: the start rate limit, Conflicts=, the
 * execution environment, ExecStartPre/ExecStart/ExecStartPost, oneshot completion with
 * RemainAfterExit=, the moment a simple or notify service counts as started, and what happens
 * when its main process exits (clean exit, failure, Restart= with RestartSec= on the clock).
 */
import type { ExitStatus } from '../processes.js';
import {
  OutputSetupError,
  parseOutputTarget,
  runServiceCommand,
  serviceEnvironment,
  serviceIdentity,
  serviceLimits,
  serviceOutput,
} from './exec.js';
import type { Systemd } from './manager.js';
import { exitStatusText, unitName, type UnitRuntime } from './types.js';
import {
  parseExecLine,
  parseTimespan,
  unitBool,
  unitList,
  unitValue,
  unitValues,
  type ExecCommand,
} from './unit-file.js';

function startLimitHit(sd: Systemd, u: UnitRuntime): boolean {
  const interval = parseTimespan(unitValue(u.file, 'Unit', 'StartLimitIntervalSec') ?? '10s') ?? 10000;
  const burst = Number(unitValue(u.file, 'Unit', 'StartLimitBurst') ?? '5');
  const t = sd.now();
  u.starts = u.starts.filter((s) => t - s < interval);
  if (u.starts.length >= burst) return true;
  u.starts.push(t);
  return false;
}

/** Runs the start job; true when the unit reached active (or, for oneshots, finished well). */
export async function startService(sd: Systemd, u: UnitRuntime): Promise<boolean> {
  const sys = sd.sys;
  if (startLimitHit(sd, u)) {
    sd.log(u.name, `${u.name}: Start request repeated too quickly.`);
    sd.log(u.name, `${u.name}: Failed with result 'start-limit-hit'.`);
    sd.log(u.name, `Failed to start ${u.description}.`);
    u.result = 'start-limit-hit';
    sd.setState(u, 'failed', 'failed');
    sd.collect(u);
    return false;
  }
  for (const c of unitList(u.file, 'Unit', 'Conflicts')) {
    const other = sd.units.get(unitName(c));
    if (other && (other.active === 'active' || other.active === 'activating')) await sd.stop(other.name);
  }
  u.invocations++;
  u.ran = [];
  u.result = 'success';
  u.mainPid = 0;
  const type = sd.serviceType(u);
  sd.setState(u, 'activating', type === 'oneshot' ? 'start' : 'start-pre');
  if (!sd.startOrder.includes(u.name)) sd.startOrder.push(u.name);
  if (
    type === 'oneshot' ||
    type === 'notify' ||
    type === 'forking' ||
    unitValues(u.file, 'Service', 'ExecStartPre').length > 0
  )
    sd.log(u.name, `Starting ${u.description}...`);

  const fail = (result: string, failedToStart: boolean): false => {
    u.result = result;
    sd.log(u.name, `${u.name}: Failed with result '${result}'.`);
    if (failedToStart) sd.log(u.name, `Failed to start ${u.description}.`);
    sd.setState(u, 'failed', 'failed');
    sd.collect(u);
    return false;
  };

  const id = await serviceIdentity(sys, u.file);
  if (!id) {
    sd.log(u.name, `${u.name}: Failed to determine user credentials: No such process`);
    sd.log(
      u.name,
      `${u.name}: Failed at step USER spawning ${unitValues(u.file, 'Service', 'ExecStart')[0] ?? ''}: No such process`,
    );
    sd.log(u.name, `${u.name}: Main process exited, code=exited, status=217/USER`);
    return fail('exit-code', true);
  }
  let env: Record<string, string>;
  try {
    env = await serviceEnvironment(sys, u.name, u.file, id, u.invocations);
  } catch (e) {
    sd.log(u.name, `${u.name}: ${(e as Error).message}`);
    return fail('resources', true);
  }
  const cmds = (key: string): ExecCommand[] =>
    unitValues(u.file, 'Service', key)
      .map((l) => parseExecLine(l, env))
      .filter((c): c is ExecCommand => c !== undefined);
  const out = u.output ?? {
    stdout: parseOutputTarget(unitValue(u.file, 'Service', 'StandardOutput'), { kind: 'journal' }),
    stderr: parseOutputTarget(unitValue(u.file, 'Service', 'StandardError'), { kind: 'inherit' }),
  };
  let current = { ident: u.name.replace(/\.service$/, ''), pid: 0 };
  let output: Awaited<ReturnType<typeof serviceOutput>>;
  try {
    output = await serviceOutput(
      sys,
      u.name,
      out.stdout,
      out.stderr,
      () => current.ident,
      () => current.pid,
    );
  } catch (e) {
    if (!(e instanceof OutputSetupError)) throw e;
    const exe =
      unitValues(u.file, 'Service', 'ExecStart')
        .map((l) => parseExecLine(l, env))
        .find((c) => c !== undefined)?.argv[0] ?? '';
    // A simple service counts as started once forked: the child's failure comes after the job.
    const simple = type === 'simple';
    if (simple) {
      sd.setState(u, 'active', 'running');
      sd.log(u.name, `Started ${u.description}.`);
    }
    sd.log(u.name, `${u.name}: ${e.message}`);
    sd.log(u.name, `${u.name}: Failed at step ${e.step} spawning ${exe}: No such file or directory`);
    sd.log(
      u.name,
      `${u.name}: Main process exited, code=exited, status=${e.step === 'STDOUT' ? '209/STDOUT' : '210/STDERR'}`,
    );
    fail('exit-code', !simple);
    return simple;
  }
  const limits = serviceLimits(u.file);
  const cwd = unitValue(u.file, 'Service', 'WorkingDirectory')?.replace(/^-/, '').replace(/^~$/, id.home) ?? '/';
  const stop = new AbortController();
  let finished!: () => void;
  u.run = { stop, done: new Promise<void>((r) => (finished = r)) };

  /** Runs one control command to its end; false when it failed (and the failure counts). */
  const control = async (key: string, c: ExecCommand): Promise<ExitStatus> => {
    const st = await runServiceCommand(sys, {
      unit: u.name,
      command: c,
      env,
      id,
      limits,
      output,
      cwd,
      stop: stop.signal,
      started: (p) => (current = { ident: p.comm, pid: p.pid }),
    });
    u.ran.push({ key, pid: current.pid, raw: c.raw, status: st });
    return st;
  };
  const failedStatus = (st: ExitStatus): boolean => st.signal !== null || st.code !== 0;
  const logExit = (who: string, st: ExitStatus): void => {
    const t = exitStatusText(st);
    sd.log(u.name, `${u.name}: ${who} process exited, code=${t.code}, status=${t.status}`);
  };
  const finish = (): void => {
    output.flush();
    u.run = undefined;
    finished();
  };

  for (const c of cmds('ExecStartPre')) {
    const st = await control('ExecStartPre', c);
    if (failedStatus(st) && !c.ignoreFailure) {
      logExit('Control', st);
      finish();
      return fail(stop.signal.aborted ? 'signal' : 'exit-code', true);
    }
  }

  const main = cmds('ExecStart');
  if (type === 'oneshot') {
    u.execMain = undefined;
    for (const c of main) {
      const startAt = sd.now();
      const st = await control('ExecStart', c);
      u.execMain = { key: 'ExecStart', pid: current.pid, raw: c.raw, status: st, startAt, exitAt: sd.now() };
      if (failedStatus(st) && !c.ignoreFailure) {
        logExit('Main', st);
        finish();
        return fail(st.signal ? 'signal' : 'exit-code', true);
      }
    }
    for (const c of cmds('ExecStartPost')) await control('ExecStartPost', c);
    finish();
    if (unitBool(u.file, 'Service', 'RemainAfterExit', false)) {
      sd.setState(u, 'active', 'exited');
    } else {
      sd.log(u.name, `${u.name}: Deactivated successfully.`);
      sd.setState(u, 'inactive', 'dead');
    }
    sd.log(u.name, `Finished ${u.description}.`);
    sd.collect(u);
    return true;
  }

  const first = main[0];
  if (!first) {
    finish();
    sd.log(u.name, `${u.name}: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing.`);
    return fail('resources', true);
  }
  let readyResolve!: (ok: boolean) => void;
  const ready = new Promise<boolean>((r) => (readyResolve = r));
  const startAt = sd.now();
  // simple/exec services are started once forked, notify ones once they say so; the state
  // changes right then, before the program's first output reaches the journal.
  const becomeActive = (): void => {
    if (!u.run || u.active !== 'activating') return;
    sd.setState(u, 'active', 'running');
    sd.log(u.name, `Started ${u.description}.`);
    readyResolve(true);
  };
  const mainRun = runServiceCommand(sys, {
    unit: u.name,
    command: first,
    env,
    id,
    limits,
    output,
    cwd,
    stop: stop.signal,
    started: (p) => {
      current = { ident: p.comm, pid: p.pid };
      u.mainPid = p.pid;
      u.execMain = { key: 'ExecStart', pid: p.pid, raw: first.raw, status: { code: null, signal: null }, startAt };
      if (type !== 'notify') becomeActive();
    },
    ready: () => {
      if (type === 'notify') becomeActive();
    },
  });
  void mainRun.then(async (st) => {
    if (u.execMain) Object.assign(u.execMain, { status: st, exitAt: sd.now() });
    u.mainPid = 0;
    readyResolve(false);
    finish();
    await mainExited(sd, u, st, stop.signal.aborted);
  });
  const isReady = await ready;
  if (!isReady) return u.active === 'inactive' || u.active === 'active';
  for (const c of cmds('ExecStartPost')) await control('ExecStartPost', c);
  return true;
}

/** The main process of a running service ended (by itself, or because the unit is stopping). */
async function mainExited(sd: Systemd, u: UnitRuntime, st: ExitStatus, stopping: boolean): Promise<void> {
  for (const p of sd.sys.processes.list()) if (p.unit === u.name) sd.sys.processes.signal(p.pid, 'KILL', 0);
  if (stopping) return;
  // systemd counts SIGHUP, SIGINT, SIGTERM and SIGPIPE as a clean exit of a service.
  const failed = st.signal !== null ? !['HUP', 'INT', 'TERM', 'PIPE'].includes(st.signal) : st.code !== 0;
  if (!failed) {
    sd.log(u.name, `${u.name}: Deactivated successfully.`);
    sd.setState(u, 'inactive', 'dead');
    sd.collect(u);
    return;
  }
  const t = exitStatusText(st);
  sd.log(u.name, `${u.name}: Main process exited, code=${t.code}, status=${t.status}`);
  u.result = st.signal ? 'signal' : 'exit-code';
  sd.log(u.name, `${u.name}: Failed with result '${u.result}'.`);
  const restart = unitValue(u.file, 'Service', 'Restart') ?? 'no';
  if (restart === 'always' || restart === 'on-failure' || (restart === 'on-abnormal' && st.signal !== null)) {
    sd.setState(u, 'activating', 'auto-restart');
    const delay = parseTimespan(unitValue(u.file, 'Service', 'RestartSec') ?? '100ms') ?? 100;
    if (!(await sd.sys.machine.clock.idle(delay))) return;
    if (u.sub !== 'auto-restart') return;
    u.nRestarts++;
    sd.log(u.name, `${u.name}: Scheduled restart job, restart counter is at ${u.nRestarts}.`);
    sd.log(u.name, `Stopped ${u.description}.`);
    sd.setState(u, 'inactive', 'dead');
    await startService(sd, u);
    return;
  }
  sd.setState(u, 'failed', 'failed');
  sd.collect(u);
}
