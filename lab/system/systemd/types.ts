/**
 * The shapes of systemd's unit state in the lab (manager.ts keeps them, render.ts prints them).
 */
import { SIGNALS, type ExitStatus } from '../processes.js';
import type { ClockTimer } from '../../util/clock.js';
import type { OutputTarget } from './exec.js';
import type { UnitFile } from './unit-file.js';

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
  return /\.(service|timer|target|socket|mount|path|slice|scope|device|swap|automount)$/.test(arg)
    ? arg
    : `${arg}.service`;
}

/** `code=exited, status=1/FAILURE`, `code=killed, status=9/KILL` as systemd words an exit. */
export function exitStatusText(s: ExitStatus): { code: string; status: string } {
  if (s.signal) return { code: 'killed', status: `${SIGNALS.indexOf(s.signal)}/${s.signal}` };
  const n = s.code ?? 0;
  const names: Record<number, string> = {
    0: 'SUCCESS',
    1: 'FAILURE',
    2: 'INVALIDARGUMENT',
    3: 'NOTIMPLEMENTED',
    4: 'NOPERMISSION',
    5: 'NOTINSTALLED',
    6: 'NOTCONFIGURED',
    7: 'NOTRUNNING',
    200: 'CHDIR',
    203: 'EXEC',
    209: 'STDOUT',
    210: 'STDERR',
    217: 'USER',
  };
  return { code: 'exited', status: `${n}/${names[n] ?? 'n/a'}` };
}
