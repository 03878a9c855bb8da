/**
 * Commands of the os stage (docs/STAGES.md §3.2) that no other part models:
 *
 * - `timedatectl` (systemd 249): status, `show` (`-p NAME[,NAME]`, `--value`, `-a`). `NTP service`
 *   follows /usr/lib/systemd/ntp-units.d — only systemd-timesyncd registers there, so with chrony
 *   it reads `n/a` (CanNTP=no) as on a real jammy server. `System clock synchronized` is the
 *   kernel's flag: set while chronyd or ntpd runs (they reach the lab's NTP source); the lab's
 *   systemd-timesyncd never synchronizes (its default server does not resolve), so a fresh
 *   server says `no`.
 * - `ulimit` (bash 5.1 builtin): the session's limits as pam_limits sets them from
 *   /etc/security/limits.conf and limits.d/*.conf (system/limits.ts) over jammy's defaults
 *   (memlock 8192 KiB, nofile 1024/524288); `*` lines never apply to root. Read when the builtin
 *   runs, so a limits.d file counts from the next command on (a real server: the next login).
 */
import type { ExecResult } from 'just-bash';
import { serviceBackend } from '../apt/services.js';
import { isInstalled } from '../model/packages.js';
import type { Machine } from '../model/types.js';
import { sessionLimits, type Limit } from '../system/limits.js';
import type { Tool } from './types.js';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const two = (n: number): string => String(n).padStart(2, '0');

/** `Mon 2025-01-06 09:00:00` (UTC: the lab's servers run in Etc/UTC). */
function stamp(ms: number): string {
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()]} ${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

interface TimeState {
  canNtp: boolean;
  ntp: boolean;
  synchronized: boolean;
}

function timeState(m: Machine): TimeState {
  const active = (u: string): boolean => serviceBackend().isActive(m, u);
  const timesyncd = isInstalled(m.packages, 'systemd-timesyncd');
  return {
    canNtp: timesyncd,
    ntp: timesyncd && active('systemd-timesyncd.service'),
    synchronized: active('chrony.service') || active('ntp.service'),
  };
}

function timedatectl(args: string[], { machine: m }: { machine: Machine }): ExecResult {
  const opts = args.filter((a) => a.startsWith('-'));
  const words = args.filter((a) => !a.startsWith('-'));
  // `-p NAME` takes the next word as its value.
  const props: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-p' || a === '--property') props.push(...(args[i + 1] ?? '').split(','));
    else if (a.startsWith('--property=')) props.push(...a.slice(11).split(','));
    else if (a.startsWith('-p') && a.length > 2) props.push(...a.slice(2).split(','));
  }
  const verbs = words.filter((w) => !props.includes(w) && !props.some((p) => w.split(',').includes(p)));
  const verb = verbs[0] ?? 'status';
  const now = m.clock.now();
  const t = timeState(m);
  const yn = (b: boolean): string => (b ? 'yes' : 'no');
  if (verb === 'status') {
    const rows: Array<[string, string]> = [
      ['Local time', `${stamp(now)} UTC`],
      ['Universal time', `${stamp(now)} UTC`],
      ['RTC time', stamp(now)],
      ['Time zone', 'Etc/UTC (UTC, +0000)'],
      ['System clock synchronized', yn(t.synchronized)],
      ['NTP service', t.canNtp ? (t.ntp ? 'active' : 'inactive') : 'n/a'],
      ['RTC in local TZ', 'no'],
    ];
    return { stdout: rows.map(([k, v]) => `${k.padStart(25)}: ${v}\n`).join(''), stderr: '', exitCode: 0 };
  }
  if (verb === 'show') {
    const all: Array<[string, string]> = [
      ['Timezone', 'Etc/UTC'],
      ['LocalRTC', 'no'],
      ['CanNTP', yn(t.canNtp)],
      ['NTP', yn(t.ntp)],
      ['NTPSynchronized', yn(t.synchronized)],
      ['TimeUSec', `${stamp(now)} UTC`],
      ['RTCTimeUSec', `${stamp(now)} UTC`],
    ];
    const value = opts.includes('--value');
    const chosen = props.length > 0 ? all.filter(([k]) => props.includes(k)) : all;
    return { stdout: chosen.map(([k, v]) => (value ? `${v}\n` : `${k}=${v}\n`)).join(''), stderr: '', exitCode: 0 };
  }
  if (['set-ntp', 'set-timezone', 'set-time', 'set-local-rtc'].includes(verb)) {
    return {
      stdout: '',
      stderr: `Failed to ${verb.replace('set-', 'set ').replace('timezone', 'time zone')}: Interactive authentication required.\n`,
      exitCode: 1,
    };
  }
  return { stdout: '', stderr: `Unknown command verb ${verb}.\n`, exitCode: 1 };
}

export const timedatectlTool: Tool = {
  name: 'timedatectl',
  path: '/usr/bin/timedatectl',
  packages: ['systemd'],
  run: timedatectl,
};

// --- ulimit ---------------------------------------------------------------------------------

/** bash's `ulimit -a` rows: option letter, label, unit, and the value (soft, hard) for this session. */
interface Row {
  opt: string;
  label: string;
  unit: string;
  get: (l: Awaited<ReturnType<typeof sessionLimits>>) => readonly [Limit, Limit];
  /** Divisor from the kernel's unit to bash's. */
  scale: number;
}

const FIXED =
  (soft: Limit, hard: Limit = soft) =>
  (): readonly [Limit, Limit] => [soft, hard];
const NPROC = 4125295;

const ROWS: Row[] = [
  { opt: 'c', label: 'core file size', unit: 'blocks', get: FIXED(0, null), scale: 512 },
  { opt: 'd', label: 'data seg size', unit: 'kbytes', get: FIXED(null), scale: 1024 },
  { opt: 'e', label: 'scheduling priority', unit: '', get: FIXED(0), scale: 1 },
  { opt: 'f', label: 'file size', unit: 'blocks', get: FIXED(null), scale: 512 },
  { opt: 'i', label: 'pending signals', unit: '', get: FIXED(NPROC), scale: 1 },
  { opt: 'l', label: 'max locked memory', unit: 'kbytes', get: (l) => l.memlock, scale: 1024 },
  { opt: 'm', label: 'max memory size', unit: 'kbytes', get: FIXED(null), scale: 1024 },
  { opt: 'n', label: 'open files', unit: '', get: (l) => l.nofile, scale: 1 },
  { opt: 'p', label: 'pipe size', unit: '512 bytes', get: FIXED(4096), scale: 512 },
  { opt: 'q', label: 'POSIX message queues', unit: 'bytes', get: FIXED(819200), scale: 1 },
  { opt: 'r', label: 'real-time priority', unit: '', get: FIXED(0), scale: 1 },
  { opt: 's', label: 'stack size', unit: 'kbytes', get: FIXED(8388608, null), scale: 1024 },
  { opt: 't', label: 'cpu time', unit: 'seconds', get: FIXED(null), scale: 1 },
  { opt: 'u', label: 'max user processes', unit: '', get: FIXED(NPROC), scale: 1 },
  { opt: 'v', label: 'virtual memory', unit: 'kbytes', get: FIXED(null), scale: 1024 },
  { opt: 'x', label: 'file locks', unit: '', get: FIXED(null), scale: 1 },
];

const GROUPS = ['l20', 'adm', 'cdrom', 'sudo', 'dip', 'plugdev', 'lxd'];

async function ulimit(args: string[], env: Parameters<Tool['run']>[1]): Promise<ExecResult> {
  const user = env.root ? 'root' : env.machine.user.name;
  const limits = await sessionLimits(env.ctx.fs, user, env.root ? ['root'] : GROUPS);
  let hard = false;
  let all = false;
  const picked: Row[] = [];
  let newValue: string | undefined;
  for (const a of args) {
    if (a.startsWith('-')) {
      for (const c of a.slice(1)) {
        if (c === 'H') hard = true;
        else if (c === 'S') hard = false;
        else if (c === 'a') all = true;
        else {
          const row = ROWS.find((r) => r.opt === c);
          if (!row)
            return {
              stdout: '',
              stderr: `bash: ulimit: -${c}: invalid option\nulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPT] [limit]\n`,
              exitCode: 2,
            };
          picked.push(row);
        }
      }
    } else newValue = a;
  }
  const fmt = (r: Row): string => {
    const pair = r.get(limits);
    const v = pair[hard ? 1 : 0];
    return v === null ? 'unlimited' : String(Math.floor(v / r.scale));
  };
  // bash's printone(): description in 20 columns, `(unit, -x) ` right-aligned in 16, the value.
  const described = (r: Row): string =>
    `${r.label.padEnd(20)} ${`(${r.unit ? `${r.unit}, ` : ''}-${r.opt}) `.padStart(16)}${fmt(r)}\n`;
  if (all) return { stdout: ROWS.map(described).join(''), stderr: '', exitCode: 0 };
  const rows = picked.length > 0 ? picked : [ROWS.find((r) => r.opt === 'f') as Row];
  if (newValue !== undefined) {
    const row = rows[0] as Row;
    const [, hardNow] = row.get(limits);
    const wanted = newValue === 'unlimited' ? null : Number(newValue) * row.scale;
    if (newValue !== 'unlimited' && !/^\d+$/.test(newValue))
      return { stdout: '', stderr: `bash: ulimit: ${newValue}: invalid number\n`, exitCode: 1 };
    const above = hardNow !== null && (wanted === null || wanted > hardNow);
    if (above && !env.root)
      return {
        stdout: '',
        stderr: `bash: ulimit: ${row.label}: cannot modify limit: Operation not permitted\n`,
        exitCode: 1,
      };
    // The lab does not carry limits between commands; an allowed change succeeds silently.
    return { stdout: '', stderr: '', exitCode: 0 };
  }
  return {
    stdout: rows.map((r) => (rows.length > 1 ? described(r) : `${fmt(r)}\n`)).join(''),
    stderr: '',
    exitCode: 0,
  };
}

export const ulimitTool: Tool = { name: 'ulimit', path: '/usr/bin/ulimit', run: ulimit };

// --- umask ----------------------------------------------------------------------------------

/**
 * bash's `umask` builtin. Ubuntu's defaults: 0002 for users (USERGROUPS_ENAB), 0022 for root. Setting
 * one validates it as bash does and succeeds; the lab does not mask the modes of files created after it
 * (scripts that care, like the tool's own, chmod explicitly), which the README notes.
 */
function umask(args: string[], env: Parameters<Tool['run']>[1]): ExecResult {
  const current = env.root ? 0o022 : 0o002;
  const symbolic = args[0] === '-S';
  const rest = symbolic ? args.slice(1) : args;
  if (rest.length === 0) {
    if (!symbolic) return { stdout: `${current.toString(8).padStart(4, '0')}\n`, stderr: '', exitCode: 0 };
    const who = (shift: number) => {
      const bits = (~current >> shift) & 7;
      return `${bits & 4 ? 'r' : ''}${bits & 2 ? 'w' : ''}${bits & 1 ? 'x' : ''}`;
    };
    return { stdout: `u=${who(6)},g=${who(3)},o=${who(0)}\n`, stderr: '', exitCode: 0 };
  }
  const value = rest[0]!;
  if (/^[0-7]{1,4}$/.test(value) || /^[ugoa]*[-+=][rwx]*(,[ugoa]*[-+=][rwx]*)*$/.test(value))
    return { stdout: '', stderr: '', exitCode: 0 };
  return {
    stdout: '',
    stderr: /^\d+$/.test(value)
      ? `bash: umask: ${value}: octal number out of range\n`
      : `bash: umask: \`${value[0]}': invalid symbolic mode character\n`,
    exitCode: 1,
  };
}

export const umaskTool: Tool = { name: 'umask', path: '/usr/bin/umask', run: umask };

export const OS_TOOLS: readonly Tool[] = [timedatectlTool, ulimitTool, umaskTool];
