/**
 * What systemctl prints about units, in systemd 249's formats (source-derived: systemctl-show.c,
 * time-util.c format_timestamp_relative, bus-print-properties.c): `status`, `show` (bus property
 * order, not argument order; unset timestamps printed empty only when asked for by name), and
 * `list-timers`. Glyphs follow the locale: ●/○/× and tree lines under UTF-8, `*`/`x` and `|-`
 * under LC_ALL=C.
 */
import { rng } from '../../util/prng.js';
import { formatTimespan, parseTimespan, unitBool, unitValue, unitValues } from './unit-file.js';
import { exitStatusText, type UnitRuntime } from './types.js';
import type { MachineSystem } from '../machine-system.js';
import { systemdTime } from '../journal.js';
import { parseUnitLimit, type Limit } from '../limits.js';

export function isUtf8Locale(env: ReadonlyMap<string, string> | Record<string, string>): boolean {
  const get = (k: string): string | undefined => (env instanceof Map ? env.get(k) : (env as Record<string, string>)[k]);
  const loc = get('LC_ALL') || get('LC_CTYPE') || get('LANG') || '';
  return /utf-?8/i.test(loc);
}

/** systemd's format_timestamp_relative. */
export function relativeTime(deltaMs: number): string {
  const future = deltaMs < 0;
  const d = Math.abs(deltaMs) * 1000;
  const S = 1e6;
  const M = 60 * S;
  const H = 60 * M;
  const D = 24 * H;
  const W = 7 * D;
  const f = Math.floor;
  let s: string;
  if (d >= 2 * D && d < W) s = `${f(d / D)} days`;
  else if (d >= W) s = `${f(d / W)} weeks ${f((d % W) / D)} days`;
  else if (d >= 25 * H) s = `1 day ${f((d - D) / H)}h`;
  else if (d >= 6 * H) s = `${f(d / H)}h`;
  else if (d >= H) s = `${f(d / H)}h ${f((d % H) / M)}min`;
  else if (d >= 5 * M) s = `${f(d / M)}min`;
  else if (d >= M) s = `${f(d / M)}min ${f((d % M) / S)}s`;
  else if (d >= S) s = `${f(d / S)}s`;
  else if (d >= 1000) s = `${f(d / 1000)}ms`;
  else if (d > 0) s = `${f(d)}us`;
  else return 'now';
  return future ? `${s} left` : `${s} ago`;
}

export interface UnitFileInfo {
  /** enabled, disabled, static, masked, transient, generated, alias */
  state: string;
}

function glyph(u: UnitRuntime, utf8: boolean): string {
  if (u.active === 'failed') return utf8 ? '×' : 'x';
  if (u.active === 'inactive') return utf8 ? '○' : '*';
  return utf8 ? '●' : '*';
}

function activeLine(u: UnitRuntime, now: number): string {
  const since = (t: number | undefined): string =>
    t === undefined ? '' : ` since ${systemdTime(t)}; ${relativeTime(now - t)}`;
  if (u.active === 'failed') return `failed (Result: ${u.result})${since(u.stateChangeAt)}`;
  if (u.active === 'inactive')
    return `inactive (dead)${u.inactiveEnterAt !== undefined ? since(u.inactiveEnterAt) : ''}`;
  if (u.active === 'active') return `active (${u.sub})${since(u.activeEnterAt)}`;
  return `${u.active} (${u.sub})${since(u.stateChangeAt)}`;
}

/** Deterministic per-process resource figures for status (tasks, memory, CPU). */
function usage(sys: MachineSystem, u: UnitRuntime): { memory: string; cpu: string } {
  const r = rng(sys.machine.seed, sys.machine.hostname, 'unit-usage', u.name, u.invocations);
  const kb = r.int(600, 24000);
  const memory = kb >= 1024 ? `${(kb / 1024).toFixed(1)}M` : `${kb}.0K`;
  return { memory, cpu: `${r.int(2, 900)}ms` };
}

export function renderStatus(
  sys: MachineSystem,
  u: UnitRuntime,
  fileState: string,
  utf8: boolean,
  lines: number,
): string {
  const now = sys.machine.clock.now();
  const out: string[] = [];
  out.push(`${glyph(u, utf8)} ${u.name}${u.description !== u.name ? ` - ${u.description}` : ''}`);
  if (u.loadState === 'masked') out.push(`     Loaded: masked (Reason: Unit ${u.name} is masked.)`);
  else if (u.transient) out.push(`     Loaded: loaded (${u.path}; transient)`, '  Transient: yes');
  else out.push(`     Loaded: loaded (${u.path}; ${fileState}; vendor preset: enabled)`);
  out.push(`     Active: ${activeLine(u, now)}`);
  if (u.kind === 'timer' && u.timer) {
    const t = u.timer;
    out.push(`    Trigger: ${t.due !== undefined ? `${systemdTime(t.due)}; ${relativeTime(now - t.due)}` : 'n/a'}`);
    out.push(`   Triggers: ${utf8 ? '●' : '*'} ${t.unit}`);
  }
  const docs = unitValues(u.file, 'Unit', 'Documentation')
    .flatMap((d) => d.split(/\s+/))
    .filter((d) => d !== '');
  docs.forEach((d, i) => out.push(`${i === 0 ? '       Docs: ' : '             '}${d}`));
  // A oneshot's ExecStart shows as both a Process: line and Main PID:, as systemd prints it.
  for (const r of u.ran) {
    const t = exitStatusText(r.status);
    out.push(`    Process: ${r.pid} ${r.key}=${r.raw} (code=${t.code}, status=${t.status})`);
  }
  if (u.mainPid !== 0) {
    const p = sys.processes.get(u.mainPid);
    out.push(`   Main PID: ${u.mainPid} (${p?.comm ?? 'n/a'})`);
  } else if (u.execMain && u.execMain.exitAt !== undefined) {
    const t = exitStatusText(u.execMain.status);
    out.push(`   Main PID: ${u.execMain.pid} (code=${t.code}, status=${t.status})`);
  }
  const procs = sys.processes.list().filter((p) => p.unit === u.name);
  const use = usage(sys, u);
  if (procs.length > 0) {
    out.push(`      Tasks: ${procs.length} (limit: 629145)`, `     Memory: ${use.memory}`, `        CPU: ${use.cpu}`);
    out.push(`     CGroup: /system.slice/${u.name}`);
    procs.forEach((p, i) => {
      const last = i === procs.length - 1;
      const branch = utf8 ? (last ? '└─' : '├─') : last ? '`-' : '|-';
      out.push(`             ${branch}${p.pid} ${p.argv.join(' ')}`);
    });
  } else if (u.invocations > 0 && u.kind === 'service') out.push(`        CPU: ${use.cpu}`);
  let text = `${out.join('\n')}\n`;
  const entries = sys.journal.entries.filter((e) => e.unit === u.name).slice(-lines);
  if (lines > 0 && entries.length > 0) text += `\n${entries.map((e) => sys.journal.short(e)).join('\n')}\n`;
  return text;
}

const usec = (ms: number | undefined): string => (ms === undefined ? '' : systemdTime(ms));
const limitText = (l: Limit): string => (l === null ? 'infinity' : String(l));

/** Unit properties in bus order: [name, value or undefined when unset]. */
export function unitProperties(
  sys: MachineSystem,
  u: UnitRuntime,
  fileState: string,
): Array<[string, string | undefined]> {
  const f = u.file;
  const props: Array<[string, string | undefined]> = [];
  if (u.kind === 'service') {
    const type =
      unitValue(f, 'Service', 'Type') ??
      (unitValues(f, 'Service', 'ExecStart').length === 0 && f ? 'oneshot' : 'simple');
    const em = u.execMain;
    const ems = em && em.exitAt !== undefined ? exitStatusText(em.status) : undefined;
    const memlock = parseUnitLimit(unitValue(f, 'Service', 'LimitMEMLOCK') ?? '8M', true) ?? [8388608, 8388608];
    const nofile = parseUnitLimit(unitValue(f, 'Service', 'LimitNOFILE') ?? '524288', false) ?? [524288, 524288];
    const nofileSoft = unitValue(f, 'Service', 'LimitNOFILE') === undefined ? 1024 : nofile[0];
    props.push(
      ['Type', type],
      ['Restart', unitValue(f, 'Service', 'Restart') ?? 'no'],
      ['NotifyAccess', type === 'notify' ? 'main' : 'none'],
      ['RestartUSec', formatTimespan(parseTimespan(unitValue(f, 'Service', 'RestartSec') ?? '100ms') ?? 100)],
      ['TimeoutStartUSec', type === 'oneshot' ? 'infinity' : '1min 30s'],
      ['TimeoutStopUSec', '1min 30s'],
      ['RemainAfterExit', unitBool(f, 'Service', 'RemainAfterExit', false) ? 'yes' : 'no'],
      ['MainPID', String(u.mainPid)],
      ['ControlPID', '0'],
      ['Result', u.result],
      ['NRestarts', String(u.nRestarts)],
      ['ExecMainStartTimestamp', usec(em?.startAt)],
      ['ExecMainExitTimestamp', usec(em?.exitAt)],
      ['ExecMainPID', String(em?.pid ?? 0)],
      ['ExecMainCode', ems ? (ems.code === 'exited' ? '1' : '2') : '0'],
      ['ExecMainStatus', ems ? String(em?.status.code ?? 15) : '0'],
    );
    for (const line of unitValues(f, 'Service', 'ExecStart')) {
      const path =
        line
          .replace(/^[-@+!:]+/, '')
          .trim()
          .split(/\s+/)[0] ?? '';
      props.push([
        'ExecStart',
        `{ path=${path} ; argv[]=${line.replace(/^[-@+!:]+/, '').trim()} ; ignore_errors=${line.startsWith('-') ? 'yes' : 'no'} ; start_time=[${em ? systemdTime(em.startAt) : 'n/a'}] ; stop_time=[${em?.exitAt !== undefined ? systemdTime(em.exitAt) : 'n/a'}] ; pid=${em?.pid ?? 0} ; code=${ems?.code ?? '(null)'} ; status=${em?.status.code ?? 0}/${em?.status.code ?? 0} }`,
      ]);
    }
    props.push(
      ['LimitNOFILE', limitText(nofile[1])],
      ['LimitNOFILESoft', limitText(nofileSoft)],
      ['LimitMEMLOCK', limitText(memlock[1])],
      ['LimitMEMLOCKSoft', limitText(memlock[0])],
      ['User', unitValue(f, 'Service', 'User')],
    );
  } else if (u.timer) {
    const t = u.timer;
    props.push(
      ['Unit', t.unit],
      ['NextElapseUSecRealtime', usec(t.due)],
      ['NextElapseUSecMonotonic', t.due !== undefined ? formatTimespan(t.due - sys.boot.at) : '0'],
      ['LastTriggerUSec', usec(t.lastTrigger)],
      ['Result', u.result],
      ['AccuracyUSec', formatTimespan(t.accuracyMs)],
    );
  }
  props.push(
    ['Id', u.name],
    ['Names', u.name],
    ['Description', u.description],
    ['LoadState', u.loadState],
    ['ActiveState', u.active],
    ['SubState', u.sub],
    ['FragmentPath', u.path ?? ''],
    ['UnitFileState', fileState],
    ['UnitFilePreset', u.transient || u.loadState !== 'loaded' ? '' : 'enabled'],
    ['StateChangeTimestamp', usec(u.stateChangeAt || undefined)],
    ['InactiveExitTimestamp', usec(u.inactiveExitAt)],
    ['ActiveEnterTimestamp', usec(u.activeEnterAt)],
    ['ActiveExitTimestamp', usec(u.activeExitAt)],
    ['InactiveEnterTimestamp', usec(u.inactiveEnterAt)],
    ['CanStart', u.loadState === 'loaded' ? 'yes' : 'no'],
    ['Transient', u.transient ? 'yes' : 'no'],
  );
  return props;
}

/**
 * `systemctl show`: without -p, the set properties; with -p, those named (unset ones print empty),
 * always in bus order. `--value` prints values only.
 */
export function renderShow(
  props: Array<[string, string | undefined]>,
  wanted: readonly string[],
  valueOnly: boolean,
): string {
  let out = '';
  for (const [name, value] of props) {
    if (wanted.length > 0 ? !wanted.includes(name) : value === undefined || value === '') continue;
    out += valueOnly ? `${value ?? ''}\n` : `${name}=${value ?? ''}\n`;
  }
  return out;
}

/** `systemctl list-timers`. */
export function renderTimers(
  sys: MachineSystem,
  timers: UnitRuntime[],
  fixed: Array<{ next: number; last?: number; unit: string; activates: string }>,
): string {
  const now = sys.machine.clock.now();
  const rows = [
    ...timers.map((u) => ({
      next: u.timer?.due,
      last: u.timer?.lastTrigger,
      unit: u.name,
      activates: u.timer?.unit ?? '',
    })),
    ...fixed,
  ].sort((a, b) => (a.next ?? Infinity) - (b.next ?? Infinity));
  const cells = rows.map((r) => [
    r.next !== undefined ? systemdTime(r.next) : 'n/a',
    r.next !== undefined ? relativeTime(now - r.next) : 'n/a',
    r.last !== undefined ? systemdTime(r.last) : 'n/a',
    r.last !== undefined ? relativeTime(now - r.last) : 'n/a',
    r.unit,
    r.activates,
  ]);
  const head = ['NEXT', 'LEFT', 'LAST', 'PASSED', 'UNIT', 'ACTIVATES'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]): string =>
    c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i] as number))).join(' ');
  let out = `${line(head)}\n${cells.map(line).join('\n')}${cells.length > 0 ? '\n' : ''}`;
  out += `\n${rows.length} timers listed.\nPass --all to see loaded but inactive timers, too.\n`;
  return out;
}
