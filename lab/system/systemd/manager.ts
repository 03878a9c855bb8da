/**
 * The service manager of one machine (systemd 249 as on jammy): units loaded from
 * /etc/systemd/system, /run/systemd/system and /lib/systemd/system (cached until daemon-reload,
 * with the "changed on disk" warning), transient units from systemd-run, the active/sub state
 * machine with Result=, start/stop/restart jobs, enablement through [Install] symlinks, timers
 * on the simulated clock, Restart= with the start rate limit, and what systemd logs to the
 * journal about each of these.
 */
import { posix } from 'node:path';
import type { MachineSystem } from '../machine-system.js';
import {
  runServiceCommand,
  serviceEnvironment,
  serviceIdentity,
  serviceLimits,
  serviceOutput,
  type OutputTarget,
} from './exec.js';
import { bootUnits } from './boot-units.js';
import { startService } from './service-start.js';
import { TRANSIENT_DIR, UNIT_DIRS, unitName, type ActiveState, type JobResult, type UnitRuntime } from './types.js';
import { parseExecLine, parseTimespan, parseUnitFile, unitValue, unitValues } from './unit-file.js';

export class Systemd {
  readonly units = new Map<string, UnitRuntime>();
  /** Order in which units were started this boot (shutdown stops them in reverse). */
  startOrder: string[] = [];

  constructor(readonly sys: MachineSystem) {}

  now(): number {
    return this.sys.now();
  }

  log(unit: string | undefined, message: string, at = this.now()): void {
    this.sys.journal.add({
      at,
      boot: this.sys.boot.count,
      ident: 'systemd',
      pid: 1,
      ...(unit ? { unit } : {}),
      message,
    });
  }

  private async readUnitText(name: string): Promise<{ path: string; text: string; masked: boolean } | undefined> {
    const fs = this.sys.shell.fsAs(0);
    for (const dir of [...UNIT_DIRS, TRANSIENT_DIR]) {
      const path = `${dir}/${name}`;
      try {
        const st = await fs.lstat(path);
        if (st.isSymbolicLink && posix.resolve(dir, await fs.readlink(path)) === '/dev/null')
          return { path, text: '', masked: true };
        if (!(await fs.exists(path))) continue;
        return { path, text: await fs.readFile(path), masked: false };
      } catch {
        // not in this directory
      }
    }
    return undefined;
  }

  private fresh(name: string): UnitRuntime {
    return {
      name,
      kind: name.endsWith('.timer') ? 'timer' : 'service',
      loadState: 'not-found',
      file: undefined,
      path: undefined,
      text: undefined,
      transient: false,
      collect: false,
      description: name,
      active: 'inactive',
      sub: 'dead',
      result: 'success',
      mainPid: 0,
      ran: [],
      nRestarts: 0,
      invocations: 0,
      stateChangeAt: 0,
      starts: [],
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
        onActiveMs: onActive,
        accuracyMs: parseTimespan(unitValue(u.file, 'Timer', 'AccuracySec') ?? '1min') ?? 60000,
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

  setState(u: UnitRuntime, active: ActiveState, sub: string): void {
    const t = this.now();
    const wasActive = u.active === 'active' || u.active === 'reloading';
    const isActive = active === 'active' || active === 'reloading';
    if (u.active === 'inactive' || u.active === 'failed') {
      if (active !== 'inactive' && active !== 'failed') u.inactiveExitAt = t;
    }
    if (!wasActive && isActive) u.activeEnterAt = t;
    if (wasActive && !isActive) u.activeExitAt = t;
    if ((active === 'inactive' || active === 'failed') && u.active !== 'inactive' && u.active !== 'failed')
      u.inactiveEnterAt = t;
    u.active = active;
    u.sub = sub;
    u.stateChangeAt = t;
  }

  serviceType(u: UnitRuntime): string {
    return (
      unitValue(u.file, 'Service', 'Type') ??
      (unitValues(u.file, 'Service', 'ExecStart').length === 0 ? 'oneshot' : 'simple')
    );
  }

  /** Unloads a transient unit that is done, and a transient service no loaded timer refers to. */
  collect(u: UnitRuntime): void {
    if (!u.transient) return;
    const idle = u.active === 'inactive' || (u.active === 'failed' && u.collect);
    if (!idle) return;
    if (u.kind === 'service' && [...this.units.values()].some((t) => t.timer?.unit === u.name && t.active === 'active'))
      return;
    this.units.delete(u.name);
    // An unloaded transient unit leaves nothing behind: `systemctl start` of it finds no unit.
    if (u.path?.startsWith(`${TRANSIENT_DIR}/`)) {
      const path = u.path;
      void this.sys.shell
        .fsAs(0)
        .rm(path, { force: true })
        .catch(() => undefined);
    }
    if (u.kind === 'timer' && u.timer) {
      const svc = this.units.get(u.timer.unit);
      if (svc) this.collect(svc);
    }
  }

  /** A transient unit defined by systemd-run (written under /run/systemd/transient). */
  async addTransient(
    name: string,
    text: string,
    opts: { collect: boolean; output?: { stdout: OutputTarget; stderr: OutputTarget } },
  ): Promise<UnitRuntime> {
    const path = `${TRANSIENT_DIR}/${name}`;
    const fs = this.sys.shell.fsAs(0);
    await fs.mkdir(TRANSIENT_DIR, { recursive: true });
    await fs.writeFile(path, text);
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
    if (u.loadState === 'not-found')
      return { ok: false, error: `Failed to start ${u.name}: Unit ${u.name} not found.`, warnings };
    if (u.loadState === 'masked')
      return { ok: false, error: `Failed to start ${u.name}: Unit ${u.name} is masked.`, warnings };
    if (u.kind === 'timer') {
      this.startTimer(u);
      return { ok: true, warnings };
    }
    if (u.active === 'active' || u.active === 'activating' || u.active === 'reloading') return { ok: true, warnings };
    const job = startService(this, u);
    if (opts.noBlock) {
      void job;
      return { ok: true, warnings };
    }
    const ok = await job;
    if (ok) return { ok: true, warnings };
    const why =
      u.result === 'start-limit-hit'
        ? `Job for ${u.name} failed.\nSee "systemctl status ${u.name}" and "journalctl -xeu ${u.name}" for details.`
        : `Job for ${u.name} failed because the control process exited with error code.\nSee "systemctl status ${u.name}" and "journalctl -xeu ${u.name}" for details.`;
    return { ok: false, error: why, warnings };
  }

  /** `systemctl stop`: ExecStop=, then SIGTERM to the unit's processes, waiting for the main one. */
  async stop(arg: string): Promise<JobResult> {
    const u = await this.load(arg);
    if (u.loadState === 'not-found')
      return { ok: false, error: `Failed to stop ${u.name}: Unit ${u.name} not loaded.`, warnings: [] };
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
        const env = {
          ...(await serviceEnvironment(this.sys, u.name, u.file, id, u.invocations).catch(() => ({}))),
          MAINPID: String(u.mainPid),
        };
        const output = await serviceOutput(
          this.sys,
          u.name,
          { kind: 'journal' },
          { kind: 'inherit' },
          () => u.name.replace(/\.service$/, ''),
          () => u.mainPid,
        );
        for (const line of stopCmds) {
          const c = parseExecLine(line, env);
          if (!c) continue;
          const never = new AbortController();
          const st = await runServiceCommand(this.sys, {
            unit: u.name,
            command: c,
            env,
            id,
            limits: serviceLimits(u.file),
            output,
            cwd: '/',
            stop: never.signal,
          });
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
    if (u.loadState === 'not-found')
      return { ok: false, error: `Failed to restart ${u.name}: Unit ${u.name} not found.`, warnings: [] };
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

  /** Starts what a boot starts (boot-units.ts). */
  bootUnits(cold: boolean): Promise<void> {
    return bootUnits(this, cold);
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
