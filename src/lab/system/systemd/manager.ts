/**
 * The service manager of one machine (systemd 249 as on jammy): units loaded from
 * /etc/systemd/system, /run/systemd/system and /lib/systemd/system (cached until daemon-reload,
 * with the "changed on disk" warning), transient units from systemd-run, the active/sub state
 * machine with Result=, start/stop/restart jobs, enablement through [Install] symlinks, timers
 * on the simulated clock, Restart= with the start rate limit, and what systemd logs to the
 * journal about each of these.
 */
import { posix } from 'node:path';
import { runInLevel } from '../exec-context.js';
import type { MachineSystem } from '../machine-system.js';
import type { ExitStatus } from '../processes.js';
import type { ClockTimer } from '../../util/clock.js';
import {
  parseOutputTarget, runServiceCommand, serviceEnvironment, serviceIdentity, serviceLimits, serviceOutput, type OutputTarget,
} from './exec.js';
import { parseExecLine, parseTimespan, parseUnitFile, unitBool, unitList, unitValue, unitValues, type ExecCommand, type UnitFile } from './unit-file.js';

export type ActiveState = 'active' | 'reloading' | 'inactive' | 'failed' | 'activating' | 'deactivating';

export const UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/lib/systemd/system'];
/** Where transient units live (systemd-run). */
export const TRANSIENT_DIR = '/run/systemd/transient';

export interface ExecRecord {
  /** `ExecStart`, `ExecStartPre` … */
  key: string;
  pid: number;
  raw: string;
  status: ExitStatus;
}

export interface TimerState {
  /** The unit it activates. */
  unit: string;
  onActiveMs: number;
  accuracyMs: number;
  due?: number;
  handle?: ClockTimer;
  lastTrigger?: number;
}

export interface UnitRuntime {
  name: string;
  kind: 'service' | 'timer';
  loadState: 'loaded' | 'not-found' | 'masked';
  file: UnitFile | undefined;
  /** The unit file it was loaded from (FragmentPath). */
  path: string | undefined;
  /** The file's text when loaded: a different text on disk means "changed on disk". */
  text: string | undefined;
  transient: boolean;
  /** Transient: unload when inactive or failed (`--collect`). */
  collect: boolean;
  description: string;
  active: ActiveState;
  sub: string;
  result: string;
  mainPid: number;
  execMain?: ExecRecord & { startAt: number; exitAt?: number };
  /** Commands that ran and ended, for `status` (`Process: 1234 ExecStart=… (code=exited, status=0/SUCCESS)`). */
  ran: ExecRecord[];
  nRestarts: number;
  invocations: number;
  stateChangeAt: number;
  activeEnterAt?: number;
  activeExitAt?: number;
  inactiveEnterAt?: number;
  inactiveExitAt?: number;
  /** Recent start times (StartLimitBurst= within StartLimitIntervalSec=). */
  starts: number[];
  /** Present while the service runs. */
  run?: { stop: AbortController; done: Promise<void> };
  /** Transient service output set by systemd-run -p. */
  output?: { stdout: OutputTarget; stderr: OutputTarget };
  timer?: TimerState;
}

export type JobResult = { ok: true; warnings: string[] } | { ok: false; error: string; warnings: string[] };

/** `foo` → `foo.service`; names with a known suffix stay. */
export function unitName(arg: string): string {
  return /\.(service|timer|target|socket|mount|path|slice|scope|device|swap|automount)$/.test(arg) ? arg : `${arg}.service`;
}

const BOOT_STATIC = ['systemd-journald.service', 'systemd-udevd.service', 'dbus.service', 'systemd-logind.service'];

function exitStatusText(s: ExitStatus): { code: string; status: string } {
  if (s.signal) return { code: 'killed', status: s.signal };
  const n = s.code ?? 0;
  const names: Record<number, string> = { 0: 'SUCCESS', 1: 'FAILURE', 2: 'INVALIDARGUMENT', 3: 'NOTIMPLEMENTED', 4: 'NOPERMISSION', 5: 'NOTINSTALLED', 6: 'NOTCONFIGURED', 7: 'NOTRUNNING', 203: 'EXEC', 217: 'USER' };
  return { code: 'exited', status: `${n}/${names[n] ?? 'n/a'}` };
}

export { exitStatusText };

export class Systemd {
  readonly units = new Map<string, UnitRuntime>();
  /** Order in which units were started this boot (shutdown stops them in reverse). */
  private startOrder: string[] = [];

  constructor(private readonly sys: MachineSystem) {}

  private now(): number {
    return this.sys.now();
  }

  private log(unit: string | undefined, message: string, at = this.now()): void {
    this.sys.journal.add({ at, boot: this.sys.boot.count, ident: 'systemd', pid: 1, ...(unit ? { unit } : {}), message });
  }

  private async readUnitText(name: string): Promise<{ path: string; text: string; masked: boolean } | undefined> {
    return runInLevel({ transformNext: false, uid: 0 }, async () => {
      const fs = this.sys.shell.fs;
      for (const dir of [...UNIT_DIRS, TRANSIENT_DIR]) {
        const path = `${dir}/${name}`;
        try {
          const st = await fs.lstat(path);
          if (st.isSymbolicLink && posix.resolve(dir, await fs.readlink(path)) === '/dev/null') return { path, text: '', masked: true };
          if (!(await fs.exists(path))) continue;
          return { path, text: await fs.readFile(path), masked: false };
        } catch {
          // not in this directory
        }
      }
      return undefined;
    });
  }

  private fresh(name: string): UnitRuntime {
    return {
      name, kind: name.endsWith('.timer') ? 'timer' : 'service', loadState: 'not-found', file: undefined, path: undefined, text: undefined,
      transient: false, collect: false, description: name, active: 'inactive', sub: 'dead', result: 'success', mainPid: 0, ran: [],
      nRestarts: 0, invocations: 0, stateChangeAt: 0, starts: [],
    };
  }

  /** The unit as systemd knows it: cached, or loaded from disk now; not-found ones are not kept. */
  async load(arg: string): Promise<UnitRuntime> {
    const name = unitName(arg);
    const cached = this.units.get(name);
    if (cached) return cached;
    const u = this.fresh(name);
    const found = await this.readUnitText(name);
    if (found) this.applyFile(u, found);
    if (u.loadState !== 'not-found') this.units.set(name, u);
    return u;
  }

  private applyFile(u: UnitRuntime, found: { path: string; text: string; masked: boolean }): void {
    u.path = found.path;
    u.text = found.text;
    if (found.masked) {
      u.loadState = 'masked';
      u.file = undefined;
      return;
    }
    u.loadState = 'loaded';
    u.file = parseUnitFile(found.text);
    u.description = unitValue(u.file, 'Unit', 'Description') ?? u.name;
    if (u.kind === 'timer' && !u.timer) {
      const onActive = parseTimespan(unitValue(u.file, 'Timer', 'OnActiveSec') ?? '') ?? 0;
      u.timer = {
        unit: unitValue(u.file, 'Timer', 'Unit') ?? u.name.replace(/\.timer$/, '.service'),
        onActiveMs: onActive, accuracyMs: parseTimespan(unitValue(u.file, 'Timer', 'AccuracySec') ?? '1min') ?? 60000,
      };
    }
  }

  /** The "changed on disk" warning systemctl prints for a unit whose file differs from what is loaded. */
  async changedOnDisk(u: UnitRuntime): Promise<string | undefined> {
    if (u.transient || u.loadState === 'not-found') return undefined;
    const found = await this.readUnitText(u.name);
    if (found?.text === u.text) return undefined;
    return `Warning: The unit file, source configuration file or drop-ins of ${u.name} changed on disk. Run 'systemctl daemon-reload' to reload units.`;
  }

  /** daemon-reload: every non-transient unit is read again; vanished inactive ones are dropped. */
  async reload(): Promise<void> {
    for (const u of [...this.units.values()]) {
      if (u.transient) continue;
      const found = await this.readUnitText(u.name);
      if (!found) {
        if (u.active === 'inactive' || u.active === 'failed') this.units.delete(u.name);
        else {
          u.loadState = 'not-found';
          u.text = undefined;
        }
        continue;
      }
      this.applyFile(u, found);
    }
    this.log(undefined, 'Reloading.');
  }

  private setState(u: UnitRuntime, active: ActiveState, sub: string): void {
    const t = this.now();
    const wasActive = u.active === 'active' || u.active === 'reloading';
    const isActive = active === 'active' || active === 'reloading';
    if (u.active === 'inactive' || u.active === 'failed') {
      if (active !== 'inactive' && active !== 'failed') u.inactiveExitAt = t;
    }
    if (!wasActive && isActive) u.activeEnterAt = t;
    if (wasActive && !isActive) u.activeExitAt = t;
    if ((active === 'inactive' || active === 'failed') && u.active !== 'inactive' && u.active !== 'failed') u.inactiveEnterAt = t;
    u.active = active;
    u.sub = sub;
    u.stateChangeAt = t;
  }

  private serviceType(u: UnitRuntime): string {
    return unitValue(u.file, 'Service', 'Type') ?? (unitValues(u.file, 'Service', 'ExecStart').length === 0 ? 'oneshot' : 'simple');
  }

  /** Unloads a transient unit that is done, and a transient service no loaded timer refers to. */
  private collect(u: UnitRuntime): void {
    if (!u.transient) return;
    const idle = u.active === 'inactive' || (u.active === 'failed' && u.collect);
    if (!idle) return;
    if (u.kind === 'service' && [...this.units.values()].some((t) => t.timer?.unit === u.name && t.active === 'active')) return;
    this.units.delete(u.name);
    // An unloaded transient unit leaves nothing behind: `systemctl start` of it finds no unit.
    if (u.path?.startsWith(`${TRANSIENT_DIR}/`)) {
      const path = u.path;
      void runInLevel({ transformNext: false, uid: 0 }, () => this.sys.shell.fs.rm(path, { force: true })).catch(() => undefined);
    }
    if (u.kind === 'timer' && u.timer) {
      const svc = this.units.get(u.timer.unit);
      if (svc) this.collect(svc);
    }
  }

  /** A transient unit defined by systemd-run (written under /run/systemd/transient). */
  async addTransient(name: string, text: string, opts: { collect: boolean; output?: { stdout: OutputTarget; stderr: OutputTarget } }): Promise<UnitRuntime> {
    const path = `${TRANSIENT_DIR}/${name}`;
    await runInLevel({ transformNext: false, uid: 0 }, async () => {
      await this.sys.shell.fs.mkdir(TRANSIENT_DIR, { recursive: true });
      await this.sys.shell.fs.writeFile(path, text);
    });
    const u = this.fresh(name);
    this.applyFile(u, { path, text, masked: false });
    u.transient = true;
    u.collect = opts.collect;
    if (opts.output) u.output = opts.output;
    this.units.set(name, u);
    return u;
  }

  /** `systemctl start`: resolves when the start job is done (oneshot finished, daemon started). */
  async start(arg: string, opts: { noBlock?: boolean } = {}): Promise<JobResult> {
    const u = await this.load(arg);
    const warnings: string[] = [];
    const w = await this.changedOnDisk(u);
    if (w) warnings.push(w);
    if (u.loadState === 'not-found') return { ok: false, error: `Failed to start ${u.name}: Unit ${u.name} not found.`, warnings };
    if (u.loadState === 'masked') return { ok: false, error: `Failed to start ${u.name}: Unit ${u.name} is masked.`, warnings };
    if (u.kind === 'timer') {
      this.startTimer(u);
      return { ok: true, warnings };
    }
    if (u.active === 'active' || u.active === 'activating' || u.active === 'reloading') return { ok: true, warnings };
    const job = this.startService(u);
    if (opts.noBlock) {
      void job;
      return { ok: true, warnings };
    }
    const ok = await job;
    if (ok) return { ok: true, warnings };
    const why = u.result === 'start-limit-hit'
      ? `Job for ${u.name} failed.\nSee "systemctl status ${u.name}" and "journalctl -xeu ${u.name}" for details.`
      : `Job for ${u.name} failed because the control process exited with error code.\nSee "systemctl status ${u.name}" and "journalctl -xeu ${u.name}" for details.`;
    return { ok: false, error: why, warnings };
  }

  private startLimitHit(u: UnitRuntime): boolean {
    const interval = parseTimespan(unitValue(u.file, 'Unit', 'StartLimitIntervalSec') ?? '10s') ?? 10000;
    const burst = Number(unitValue(u.file, 'Unit', 'StartLimitBurst') ?? '5');
    const t = this.now();
    u.starts = u.starts.filter((s) => t - s < interval);
    if (u.starts.length >= burst) return true;
    u.starts.push(t);
    return false;
  }

  /** Runs the start job; true when the unit reached active (or, for oneshots, finished well). */
  private async startService(u: UnitRuntime): Promise<boolean> {
    const sys = this.sys;
    if (this.startLimitHit(u)) {
      this.log(u.name, `${u.name}: Start request repeated too quickly.`);
      this.log(u.name, `${u.name}: Failed with result 'start-limit-hit'.`);
      this.log(u.name, `Failed to start ${u.description}.`);
      u.result = 'start-limit-hit';
      this.setState(u, 'failed', 'failed');
      this.collect(u);
      return false;
    }
    for (const c of unitList(u.file, 'Unit', 'Conflicts')) {
      const other = this.units.get(unitName(c));
      if (other && (other.active === 'active' || other.active === 'activating')) await this.stop(other.name);
    }
    u.invocations++;
    u.ran = [];
    u.result = 'success';
    u.mainPid = 0;
    const type = this.serviceType(u);
    this.setState(u, 'activating', type === 'oneshot' ? 'start' : 'start-pre');
    if (!this.startOrder.includes(u.name)) this.startOrder.push(u.name);
    if (type === 'oneshot' || type === 'notify' || type === 'forking' || unitValues(u.file, 'Service', 'ExecStartPre').length > 0) this.log(u.name, `Starting ${u.description}...`);

    const fail = (result: string, failedToStart: boolean): false => {
      u.result = result;
      this.log(u.name, `${u.name}: Failed with result '${result}'.`);
      if (failedToStart) this.log(u.name, `Failed to start ${u.description}.`);
      this.setState(u, 'failed', 'failed');
      this.collect(u);
      return false;
    };

    const id = await serviceIdentity(sys, u.file);
    if (!id) {
      this.log(u.name, `${u.name}: Failed to determine user credentials: No such process`);
      this.log(u.name, `${u.name}: Failed at step USER spawning ${unitValues(u.file, 'Service', 'ExecStart')[0] ?? ''}: No such process`);
      this.log(u.name, `${u.name}: Main process exited, code=exited, status=217/USER`);
      return fail('exit-code', true);
    }
    let env: Record<string, string>;
    try {
      env = await serviceEnvironment(sys, u.name, u.file, id, u.invocations);
    } catch (e) {
      this.log(u.name, `${u.name}: ${(e as Error).message}`);
      return fail('resources', true);
    }
    const cmds = (key: string): ExecCommand[] => unitValues(u.file, 'Service', key).map((l) => parseExecLine(l, env)).filter((c): c is ExecCommand => c !== undefined);
    const out = u.output ?? {
      stdout: parseOutputTarget(unitValue(u.file, 'Service', 'StandardOutput'), { kind: 'journal' }),
      stderr: parseOutputTarget(unitValue(u.file, 'Service', 'StandardError'), { kind: 'inherit' }),
    };
    let current = { ident: u.name.replace(/\.service$/, ''), pid: 0 };
    const output = await serviceOutput(sys, u.name, out.stdout, out.stderr, () => current.ident, () => current.pid);
    const limits = serviceLimits(u.file);
    const cwd = unitValue(u.file, 'Service', 'WorkingDirectory')?.replace(/^-/, '').replace(/^~$/, id.home) ?? '/';
    const stop = new AbortController();
    let finished!: () => void;
    u.run = { stop, done: new Promise<void>((r) => (finished = r)) };

    /** Runs one control command to its end; false when it failed (and the failure counts). */
    const control = async (key: string, c: ExecCommand): Promise<ExitStatus> => {
      const st = await runServiceCommand(sys, {
        unit: u.name, command: c, env, id, limits, output, cwd, stop: stop.signal,
        started: (p) => (current = { ident: p.comm, pid: p.pid }),
      });
      u.ran.push({ key, pid: current.pid, raw: c.raw, status: st });
      return st;
    };
    const failedStatus = (st: ExitStatus): boolean => st.signal !== null || st.code !== 0;
    const logExit = (who: string, st: ExitStatus): void => {
      const t = exitStatusText(st);
      this.log(u.name, `${u.name}: ${who} process exited, code=${t.code}, status=${t.status}`);
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
        const startAt = this.now();
        const st = await control('ExecStart', c);
        u.execMain = { key: 'ExecStart', pid: current.pid, raw: c.raw, status: st, startAt, exitAt: this.now() };
        if (failedStatus(st) && !c.ignoreFailure) {
          logExit('Main', st);
          finish();
          return fail(st.signal ? 'signal' : 'exit-code', true);
        }
      }
      for (const c of cmds('ExecStartPost')) await control('ExecStartPost', c);
      finish();
      if (unitBool(u.file, 'Service', 'RemainAfterExit', false)) {
        this.setState(u, 'active', 'exited');
      } else {
        this.log(u.name, `${u.name}: Deactivated successfully.`);
        this.setState(u, 'inactive', 'dead');
      }
      this.log(u.name, `Finished ${u.description}.`);
      this.collect(u);
      return true;
    }

    const first = main[0];
    if (!first) {
      finish();
      this.log(u.name, `${u.name}: Service has no ExecStart=, ExecStop=, or SuccessAction=. Refusing.`);
      return fail('resources', true);
    }
    let readyResolve!: (ok: boolean) => void;
    const ready = new Promise<boolean>((r) => (readyResolve = r));
    const startAt = this.now();
    // simple/exec services are started once forked, notify ones once they say so; the state
    // changes right then, before the program's first output reaches the journal.
    const becomeActive = (): void => {
      if (!u.run || u.active !== 'activating') return;
      this.setState(u, 'active', 'running');
      this.log(u.name, `Started ${u.description}.`);
      readyResolve(true);
    };
    const mainRun = runServiceCommand(sys, {
      unit: u.name, command: first, env, id, limits, output, cwd, stop: stop.signal,
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
      if (u.execMain) Object.assign(u.execMain, { status: st, exitAt: this.now() });
      u.mainPid = 0;
      readyResolve(false);
      finish();
      await this.mainExited(u, st, stop.signal.aborted);
    });
    const isReady = await ready;
    if (!isReady) return u.active === 'inactive' || u.active === 'active';
    for (const c of cmds('ExecStartPost')) await control('ExecStartPost', c);
    return true;
  }

  /** The main process of a running service ended (by itself, or because the unit is stopping). */
  private async mainExited(u: UnitRuntime, st: ExitStatus, stopping: boolean): Promise<void> {
    for (const p of this.sys.processes.list()) if (p.unit === u.name) this.sys.processes.signal(p.pid, 'KILL', 0);
    if (stopping) return;
    // systemd counts SIGHUP, SIGINT, SIGTERM and SIGPIPE as a clean exit of a service.
    const failed = st.signal !== null ? !['HUP', 'INT', 'TERM', 'PIPE'].includes(st.signal) : st.code !== 0;
    if (!failed) {
      this.log(u.name, `${u.name}: Deactivated successfully.`);
      this.setState(u, 'inactive', 'dead');
      this.collect(u);
      return;
    }
    const t = exitStatusText(st);
    this.log(u.name, `${u.name}: Main process exited, code=${t.code}, status=${t.status}`);
    u.result = st.signal ? 'signal' : 'exit-code';
    this.log(u.name, `${u.name}: Failed with result '${u.result}'.`);
    const restart = unitValue(u.file, 'Service', 'Restart') ?? 'no';
    if (restart === 'always' || restart === 'on-failure' || (restart === 'on-abnormal' && st.signal !== null)) {
      this.setState(u, 'activating', 'auto-restart');
      const delay = parseTimespan(unitValue(u.file, 'Service', 'RestartSec') ?? '100ms') ?? 100;
      if (!(await this.sys.machine.clock.idle(delay))) return;
      if (u.sub !== 'auto-restart') return;
      u.nRestarts++;
      this.log(u.name, `${u.name}: Scheduled restart job, restart counter is at ${u.nRestarts}.`);
      this.log(u.name, `Stopped ${u.description}.`);
      this.setState(u, 'inactive', 'dead');
      await this.startService(u);
      return;
    }
    this.setState(u, 'failed', 'failed');
    this.collect(u);
  }

  /** `systemctl stop`: ExecStop=, then SIGTERM to the unit's processes, waiting for the main one. */
  async stop(arg: string): Promise<JobResult> {
    const u = await this.load(arg);
    if (u.loadState === 'not-found') return { ok: false, error: `Failed to stop ${u.name}: Unit ${u.name} not loaded.`, warnings: [] };
    const warnings: string[] = [];
    const w = await this.changedOnDisk(u);
    if (w) warnings.push(w);
    if (u.kind === 'timer') {
      this.stopTimer(u);
      return { ok: true, warnings };
    }
    if (u.active === 'inactive' || u.active === 'failed') return { ok: true, warnings };
    if (u.sub === 'auto-restart') {
      this.setState(u, 'inactive', 'dead');
      this.collect(u);
      return { ok: true, warnings };
    }
    this.log(u.name, `Stopping ${u.description}...`);
    this.setState(u, 'deactivating', 'stop');
    const stopCmds = unitValues(u.file, 'Service', 'ExecStop');
    if (stopCmds.length > 0) {
      const id = await serviceIdentity(this.sys, u.file);
      if (id) {
        const env = { ...(await serviceEnvironment(this.sys, u.name, u.file, id, u.invocations).catch(() => ({}))), MAINPID: String(u.mainPid) };
        const output = await serviceOutput(this.sys, u.name, { kind: 'journal' }, { kind: 'inherit' }, () => u.name.replace(/\.service$/, ''), () => u.mainPid);
        for (const line of stopCmds) {
          const c = parseExecLine(line, env);
          if (!c) continue;
          const never = new AbortController();
          const st = await runServiceCommand(this.sys, { unit: u.name, command: c, env, id, limits: serviceLimits(u.file), output, cwd: '/', stop: never.signal });
          u.ran.push({ key: 'ExecStop', pid: 0, raw: c.raw, status: st });
        }
        output.flush();
      }
    }
    if (u.run) {
      const run = u.run;
      for (const p of this.sys.processes.list()) if (p.unit === u.name) this.sys.processes.signal(p.pid, 'TERM', 0);
      run.stop.abort();
      await run.done;
    }
    for (const p of this.sys.processes.list()) if (p.unit === u.name) this.sys.processes.signal(p.pid, 'KILL', 0);
    this.log(u.name, `${u.name}: Deactivated successfully.`);
    this.log(u.name, `Stopped ${u.description}.`);
    this.setState(u, 'inactive', 'dead');
    this.collect(u);
    return { ok: true, warnings };
  }

  async restart(arg: string): Promise<JobResult> {
    const u = await this.load(arg);
    if (u.loadState === 'not-found') return { ok: false, error: `Failed to restart ${u.name}: Unit ${u.name} not found.`, warnings: [] };
    if (u.active !== 'inactive' && u.active !== 'failed') await this.stop(u.name);
    return this.start(u.name);
  }

  /** reset-failed: failed units go back to inactive (transient ones are unloaded). */
  resetFailed(name?: string): void {
    for (const u of [...this.units.values()]) {
      if (name !== undefined && u.name !== unitName(name)) continue;
      if (u.active !== 'failed') continue;
      u.result = 'success';
      this.setState(u, 'inactive', 'dead');
      if (u.transient) this.units.delete(u.name);
    }
  }

  private startTimer(u: UnitRuntime): void {
    const t = u.timer;
    if (!t || u.active === 'active') return;
    t.due = this.now() + t.onActiveMs;
    t.handle = this.sys.machine.clock.at(t.due, () => this.fireTimer(u));
    this.setState(u, 'active', 'waiting');
    this.log(u.name, `Started ${u.description}.`);
  }

  private fireTimer(u: UnitRuntime): void {
    const t = u.timer;
    if (!t || u.active !== 'active') return;
    t.lastTrigger = this.now();
    t.due = undefined;
    t.handle = undefined;
    // Only OnActiveSec=: nothing left to elapse; the timer ends once it has fired.
    this.setState(u, 'inactive', 'dead');
    void this.start(t.unit).then(() => this.collect(u));
  }

  private stopTimer(u: UnitRuntime): void {
    const t = u.timer;
    if (!t) return;
    t.handle?.cancel();
    t.handle = undefined;
    t.due = undefined;
    if (u.active === 'active') {
      this.setState(u, 'inactive', 'dead');
      this.log(u.name, `${u.name}: Deactivated successfully.`);
      this.log(u.name, `Stopped ${u.description}.`);
    }
    this.collect(u);
  }

  /** Active timers (list-timers). */
  timers(all: boolean): UnitRuntime[] {
    return [...this.units.values()].filter((u) => u.kind === 'timer' && (all || u.active === 'active'));
  }

  /** Units enabled by [Install] symlinks in /etc/systemd/system/*.wants|*.requires. */
  async enabledUnits(): Promise<string[]> {
    return runInLevel({ transformNext: false, uid: 0 }, async () => {
      const fs = this.sys.shell.fs;
      const out: string[] = [];
      let dirs: string[] = [];
      try {
        dirs = (await fs.readdir('/etc/systemd/system')).filter((d) => /\.(wants|requires)$/.test(d)).sort();
      } catch {
        return out;
      }
      for (const d of dirs) {
        for (const n of (await fs.readdir(`/etc/systemd/system/${d}`).catch(() => [] as string[])).sort()) if (!out.includes(n)) out.push(n);
      }
      return out;
    });
  }

  /**
   * Starts what a boot starts: core static units, then enabled ones ordered by After=. `cold`: the
   * lab's initial boot — oneshots are recorded as having run at boot (the scenario set their
   * effects), daemons start.
   */
  async bootUnits(cold: boolean): Promise<void> {
    const names = [...BOOT_STATIC, ...(await this.enabledUnits()).filter((n) => !BOOT_STATIC.includes(n))];
    const loaded: UnitRuntime[] = [];
    for (const n of names) {
      const u = await this.load(n);
      if (u.loadState === 'loaded') loaded.push(u);
    }
    let step = 0;
    for (const u of orderByAfter(loaded)) {
      if (u.active !== 'inactive' && u.active !== 'failed') continue;
      // The initial boot happened minutes ago: its events carry boot-time stamps.
      if (cold) this.sys.pinTime(this.sys.boot.at + 4200 + 137 * step++);
      if (cold && u.kind === 'service' && this.serviceType(u) === 'oneshot') {
        const at = this.sys.now();
        this.log(u.name, `Starting ${u.description}...`, at);
        u.invocations++;
        if (unitBool(u.file, 'Service', 'RemainAfterExit', false)) this.setState(u, 'active', 'exited');
        else this.log(u.name, `${u.name}: Deactivated successfully.`, at);
        this.log(u.name, `Finished ${u.description}.`, at);
        for (const k of ['stateChangeAt', 'activeEnterAt', 'inactiveExitAt'] as const) if (u[k] !== undefined) u[k] = at;
        continue;
      }
      try {
        await this.start(u.name);
      } finally {
        if (cold) this.sys.pinTime(undefined);
      }
    }
    this.sys.pinTime(undefined);
  }

  /** Shutdown: every running unit stops, newest first; transient units are gone afterwards. */
  async shutdown(): Promise<void> {
    for (const name of [...this.startOrder].reverse()) {
      const u = this.units.get(name);
      if (u && (u.active === 'active' || u.active === 'activating')) await this.stop(name);
    }
    for (const u of this.units.values()) u.timer?.handle?.cancel();
    this.units.clear();
    this.startOrder = [];
  }
}

/** Orders units so that each comes after the units its After= names (stable otherwise). */
function orderByAfter(units: UnitRuntime[]): UnitRuntime[] {
  const out: UnitRuntime[] = [];
  const seen = new Set<string>();
  const byName = new Map(units.map((u) => [u.name, u]));
  const visit = (u: UnitRuntime, depth: number): void => {
    if (seen.has(u.name) || depth > 50) return;
    seen.add(u.name);
    for (const a of unitList(u.file, 'Unit', 'After')) {
      const dep = byName.get(a);
      if (dep) visit(dep, depth + 1);
    }
    out.push(u);
  };
  for (const u of units) visit(u, 0);
  return out;
}
