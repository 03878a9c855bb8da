/**
 * procps-ng 3.3.17 over the machine's process table — ps (`-e`, `-o` lists with `=` headers,
 * `-p`, `-C`, `-u`, `-f`, `aux`, `--no-headers`), pgrep/pkill (comm or `-f` full command line,
 * ERE, `-o`/`-n`, `-x`, `-u`, `-l`/`-a`, `-c`), uptime — and bash's `kill` builtin.
 */
import { defineCommand, type Command, type ExecResult } from 'just-bash';
import type { Machine } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from '../tools/types.js';
import { rng } from '../util/prng.js';
import { SYSTEM_ACCOUNTS } from './base-units.js';
import { effectiveUid } from './exec-context.js';
import { SIGNALS, signalName, type Process } from './processes.js';

const userName = (uid: number, m: Machine): string =>
  uid === 0
    ? 'root'
    : uid === m.user.uid
      ? m.user.name
      : (SYSTEM_ACCOUNTS.find(([, id]) => id === uid)?.[0] ?? String(uid));

function etime(ms: number): string {
  let s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86400);
  s %= 86400;
  const h = Math.floor(s / 3600);
  s %= 3600;
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const mmss = `${p2(Math.floor(s / 60))}:${p2(s % 60)}`;
  if (d > 0) return `${d}-${p2(h)}:${mmss}`;
  return h > 0 ? `${p2(h)}:${mmss}` : mmss;
}

interface Column {
  header: string;
  width: number;
  right: boolean;
  get(p: Process, m: Machine): string;
}

const p2 = (n: number): string => String(n).padStart(2, '0');
const stime = (p: Process, m: Machine): string => {
  const d = new Date(p.startedAt);
  const now = new Date(m.clock.now());
  if (d.toISOString().slice(0, 10) === now.toISOString().slice(0, 10))
    return `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`;
  return `${['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()]}${p2(d.getUTCDate())}`;
};
const mem = (p: Process, m: Machine): { vsz: number; rss: number } => {
  const r = rng(m.seed, m.hostname, 'ps-mem', p.pid, p.comm);
  return { vsz: r.int(2000, 400000), rss: r.int(800, 30000) };
};
const args = (p: Process): string => p.argv.join(' ');

const COLUMNS: Record<string, Column> = {
  pid: { header: 'PID', width: 7, right: true, get: (p) => String(p.pid) },
  ppid: { header: 'PPID', width: 7, right: true, get: (p) => String(p.ppid) },
  uid: { header: 'UID', width: 5, right: true, get: (p) => String(p.uid) },
  euid: { header: 'EUID', width: 5, right: true, get: (p) => String(p.uid) },
  user: { header: 'USER', width: 8, right: false, get: (p, m) => userName(p.uid, m) },
  euser: { header: 'EUSER', width: 8, right: false, get: (p, m) => userName(p.uid, m) },
  comm: { header: 'COMMAND', width: 15, right: false, get: (p) => p.comm },
  ucmd: { header: 'CMD', width: 15, right: false, get: (p) => p.comm },
  args: { header: 'COMMAND', width: 27, right: false, get: args },
  command: { header: 'COMMAND', width: 27, right: false, get: args },
  cmd: { header: 'CMD', width: 27, right: false, get: args },
  etime: { header: 'ELAPSED', width: 11, right: true, get: (p, m) => etime(m.clock.now() - p.startedAt) },
  etimes: {
    header: 'ELAPSED',
    width: 7,
    right: true,
    get: (p, m) => String(Math.floor((m.clock.now() - p.startedAt) / 1000)),
  },
  stat: { header: 'STAT', width: 4, right: false, get: (p) => (p.pid === 1 || p.ppid === 1 ? 'Ss' : 'S') },
  tty: { header: 'TT', width: 8, right: false, get: () => '?' },
  time: { header: 'TIME', width: 8, right: true, get: () => '00:00:00' },
  stime: { header: 'STIME', width: 5, right: false, get: stime },
  vsz: { header: 'VSZ', width: 6, right: true, get: (p, m) => String(mem(p, m).vsz) },
  rss: { header: 'RSS', width: 5, right: true, get: (p, m) => String(mem(p, m).rss) },
};

function render(procs: Process[], m: Machine, cols: Array<{ col: Column; header: string }>, headers: boolean): string {
  // Right-aligned columns are always padded; a left-aligned last column is not.
  const cell = (c: Column, v: string, last: boolean): string =>
    c.right ? v.padStart(c.width) : last ? v : v.padEnd(c.width);
  let out = '';
  if (headers && cols.some((c) => c.header !== ''))
    out += `${cols
      .map((c, i) => cell(c.col, c.header, i === cols.length - 1))
      .join(' ')
      .trimEnd()}\n`;
  for (const p of procs)
    out += `${cols.map((c, i) => cell(c.col, c.col.get(p, m), i === cols.length - 1)).join(' ')}\n`;
  return out;
}

function psRun(argv: string[], m: Machine, uid: number): ExecResult {
  const sys = m.system;
  // ps is a process too while it runs.
  const self = sys.processes.spawn({ argv: ['ps', ...argv], uid, ppid: 1 });
  try {
    let all = false;
    let full = false;
    let bsd = false;
    let headers = true;
    const fmt: string[] = [];
    const pids: number[] = [];
    const names: string[] = [];
    const users: string[] = [];
    for (let i = 0; i < argv.length; i++) {
      const a = argv[i] as string;
      if (a === '--no-headers' || a === '--no-heading') headers = false;
      else if (a === '-o' || a === '--format' || a === 'o') fmt.push(...(argv[++i] ?? '').split(/[,\s]+/));
      else if (a.startsWith('-o') && a.length > 2) fmt.push(...a.slice(2).split(','));
      else if (a.startsWith('--format=')) fmt.push(...a.slice(9).split(','));
      else if (a === '-p' || a === '--pid') pids.push(...(argv[++i] ?? '').split(',').map(Number));
      else if (a === '-C') names.push(...(argv[++i] ?? '').split(','));
      else if (a === '-u' || a === '-U' || a === '--user') users.push(...(argv[++i] ?? '').split(','));
      else if (/^-[eAfFlywH]+o?$/.test(a)) {
        if (/[eA]/.test(a)) all = true;
        if (/[fF]/.test(a)) full = true;
        // `-eo pid,args`: a bundled -o takes the next word.
        if (a.endsWith('o')) fmt.push(...(argv[++i] ?? '').split(/[,\s]+/));
      } else if (/^[auxwf]+$/.test(a)) {
        bsd = true;
        all = true;
      } else if (/^\d+$/.test(a)) pids.push(Number(a));
      else
        return fail(
          1,
          `error: unsupported option (BSD syntax)\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n`,
        );
    }
    let procs = sys.processes.list();
    if (pids.length > 0) procs = procs.filter((p) => pids.includes(p.pid));
    else if (names.length > 0) procs = procs.filter((p) => names.includes(p.comm));
    else if (users.length > 0)
      procs = procs.filter((p) => users.includes(userName(p.uid, m)) || users.includes(String(p.uid)));
    else if (!all) procs = procs.filter((p) => p.pid === self.pid);
    let cols: Array<{ col: Column; header: string }>;
    if (fmt.length > 0) {
      cols = [];
      for (const f of fmt.filter((x) => x !== '')) {
        const eq = f.indexOf('=');
        const key = eq >= 0 ? f.slice(0, eq) : f;
        const col = COLUMNS[key];
        if (!col)
          return fail(
            1,
            `error: unknown user-defined format specifier "${key}"\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n`,
          );
        cols.push({ col, header: eq >= 0 ? f.slice(eq + 1) : col.header });
      }
      if (cols.every((c) => c.header === '')) headers = false;
    } else if (bsd) {
      const pct = { header: '%CPU', width: 4, right: true, get: () => '0.0' };
      const pmem = { header: '%MEM', width: 4, right: true, get: () => '0.0' };
      const start = { header: 'START', width: 5, right: false, get: stime };
      const t = { header: 'TIME', width: 6, right: true, get: () => '0:00' };
      cols = [
        COLUMNS.user,
        COLUMNS.pid,
        pct,
        pmem,
        COLUMNS.vsz,
        COLUMNS.rss,
        { ...COLUMNS.tty, header: 'TTY' },
        COLUMNS.stat,
        start,
        t,
        COLUMNS.command,
      ].map((c) => ({ col: c as Column, header: (c as Column).header }));
    } else if (full) {
      const c = { header: 'C', width: 2, right: true, get: () => '0' };
      const uid = { ...(COLUMNS.user as Column), header: 'UID' };
      cols = [
        uid,
        COLUMNS.pid,
        COLUMNS.ppid,
        c,
        COLUMNS.stime,
        { ...COLUMNS.tty, header: 'TTY' },
        COLUMNS.time,
        COLUMNS.cmd,
      ].map((x) => ({ col: x as Column, header: (x as Column).header }));
    } else {
      cols = [COLUMNS.pid, { ...COLUMNS.tty, header: 'TTY' }, COLUMNS.time, COLUMNS.ucmd].map((x) => ({
        col: x as Column,
        header: (x as Column).header,
      }));
    }
    return ok(render(procs, m, cols, headers));
  } finally {
    sys.processes.exit(self.pid, { code: 0, signal: null });
  }
}

export const ps: Tool = {
  name: 'ps',
  path: '/usr/bin/ps',
  packages: ['procps'],
  run: (a, { machine, ctx }) => psRun(a, machine, effectiveUid(ctx, machine.user.uid)),
};

interface Match {
  procs: Process[];
  error?: ExecResult;
}

function matchProcesses(
  tool: string,
  argv: string[],
  m: Machine,
  signal: { value?: string },
): Match & { list?: 'name' | 'full'; count?: boolean; echo?: boolean; delim?: string } {
  let full = false;
  let oldest = false;
  let newest = false;
  let exact = false;
  let list: 'name' | 'full' | undefined;
  let count = false;
  let echo = false;
  let invert = false;
  let ignoreCase = false;
  let delim = '\n';
  const users: string[] = [];
  const parents: number[] = [];
  const patterns: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--signal') signal.value = argv[++i];
    else if (a.startsWith('--signal=')) signal.value = a.slice(9);
    else if (a === '-u' || a === '-U' || a === '--euid' || a === '--uid') users.push(...(argv[++i] ?? '').split(','));
    else if (a === '-P' || a === '--parent') parents.push(...(argv[++i] ?? '').split(',').map(Number));
    else if (a === '-d' || a === '--delimiter') delim = argv[++i] ?? '\n';
    else if (tool === 'pkill' && /^-[A-Z0-9]+$/.test(a) && signalName(a.slice(1))) signal.value = a.slice(1);
    else if (/^-[a-zA-Z]+$/.test(a)) {
      for (const c of a.slice(1)) {
        if (c === 'f') full = true;
        else if (c === 'o') oldest = true;
        else if (c === 'n') newest = true;
        else if (c === 'x') exact = true;
        else if (c === 'l') list = 'name';
        else if (c === 'a') list = 'full';
        else if (c === 'c') count = true;
        else if (c === 'e') echo = true;
        else if (c === 'v') invert = true;
        else if (c === 'i') ignoreCase = true;
        else
          return {
            procs: [],
            error: fail(2, `${tool}: invalid option -- '${c}'\nUsage:\n ${tool} [options] <pattern>\n`),
          };
      }
    } else if (a === '--full') full = true;
    else if (a === '--oldest') oldest = true;
    else if (a === '--newest') newest = true;
    else if (a === '--exact') exact = true;
    else if (a === '--count') count = true;
    else patterns.push(a);
  }
  if (patterns.length > 1)
    return {
      procs: [],
      error: fail(2, `${tool}: only one pattern can be provided\nTry \`${tool} --help' for more information.\n`),
    };
  const pattern = patterns[0];
  if (pattern === undefined && users.length === 0 && parents.length === 0) {
    return {
      procs: [],
      error: fail(2, `${tool}: no matching criteria specified\nTry \`${tool} --help' for more information.\n`),
    };
  }
  let warn = '';
  if (pattern !== undefined && !full && pattern.replace(/[\\^$]/g, '').length > 15 && !/[[.*+?(|]/.test(pattern)) {
    warn = `${tool}: pattern that searches for process name longer than 15 characters will result in zero matches\nTry \`${tool} -f' option to match against the complete command line.\n`;
  }
  let re: RegExp | undefined;
  try {
    if (pattern !== undefined) re = new RegExp(exact ? `^(${pattern})$` : pattern, ignoreCase ? 'i' : '');
  } catch {
    return { procs: [], error: fail(2, `${tool}: invalid regular expression\n`) };
  }
  let procs = m.system.processes.list().filter((p) => {
    const hay = full ? args(p) : p.comm;
    let hit =
      (re ? re.test(hay) : true) &&
      (users.length === 0 || users.includes(userName(p.uid, m)) || users.includes(String(p.uid))) &&
      (parents.length === 0 || parents.includes(p.ppid));
    if (invert) hit = !hit;
    // Kernel threads have no command line to match with -f.
    return hit && !(full && p.argv[0]?.startsWith('['));
  });
  if (oldest || newest) {
    const sorted = [...procs].sort((a, b) => a.startedAt - b.startedAt || a.pid - b.pid);
    const pick = oldest ? sorted[0] : sorted[sorted.length - 1];
    procs = pick ? [pick] : [];
  }
  const result: Match & { list?: 'name' | 'full'; count?: boolean; echo?: boolean; delim?: string } = {
    procs,
    count,
    echo,
    delim,
  };
  if (list) result.list = list;
  if (warn) result.error = { stdout: '', stderr: warn, exitCode: procs.length > 0 ? 0 : 1 };
  return result;
}

export const pgrep: Tool = {
  name: 'pgrep',
  path: '/usr/bin/pgrep',
  packages: ['procps'],
  run(argv, { machine: m }) {
    const r = matchProcesses('pgrep', argv, m, {});
    if (r.error && r.error.exitCode === 2) return r.error;
    const warn = r.error?.stderr ?? '';
    if (r.count) return { stdout: `${r.procs.length}\n`, stderr: warn, exitCode: r.procs.length > 0 ? 0 : 1 };
    const lines = r.procs.map((p) =>
      r.list === 'full' ? `${p.pid} ${args(p)}` : r.list === 'name' ? `${p.pid} ${p.comm}` : String(p.pid),
    );
    const out = lines.length > 0 ? `${lines.join(r.delim ?? '\n')}\n` : '';
    return { stdout: out, stderr: warn, exitCode: r.procs.length > 0 ? 0 : 1 };
  },
};

export const pkill: Tool = {
  name: 'pkill',
  path: '/usr/bin/pkill',
  packages: ['procps'],
  run(argv, { machine: m, ctx }) {
    const sig: { value?: string } = {};
    const r = matchProcesses('pkill', argv, m, sig);
    if (r.error && r.error.exitCode === 2) return r.error;
    const name = signalName(sig.value ?? 'TERM');
    if (!name) return fail(2, `pkill: Unknown signal "${sig.value}".\n`);
    const uid = effectiveUid(ctx, m.user.uid);
    let out = '';
    let err = r.error?.stderr ?? '';
    for (const p of r.procs) {
      const res = m.system.processes.signal(p.pid, name, uid);
      if (res === 'EPERM') err += `pkill: killing pid ${p.pid} failed: Operation not permitted\n`;
      else if (r.echo) out += `${p.comm} killed (pid ${p.pid})\n`;
    }
    if (r.count) out = `${r.procs.length}\n`;
    return { stdout: out, stderr: err, exitCode: r.procs.length > 0 ? 0 : 1 };
  },
};

/** bash's kill builtin. */
export function killCommand(m: Machine): Command {
  return defineCommand('kill', async (argv, ctx) => {
    const usage =
      'bash: kill: usage: kill [-s sigspec | -n signum | -sigspec] pid | jobspec ... or kill -l [sigspec]\n';
    if (argv.length === 0) return fail(2, usage);
    let sig = 'TERM';
    let i = 0;
    const a0 = argv[0] as string;
    if (a0 === '-l' || a0 === '-L') {
      if (argv[1] !== undefined) {
        const n = signalName(argv[1]);
        return n
          ? ok(`${/^\d+$/.test(argv[1]) ? n : SIGNALS.indexOf(n)}\n`)
          : fail(1, `bash: kill: ${argv[1]}: invalid signal specification\n`);
      }
      const rows: string[] = [];
      for (let n = 1; n < SIGNALS.length; n++) rows.push(`${String(n).padStart(2)}) SIG${SIGNALS[n]}`);
      return ok(
        `${rows
          .map((r, k) => `${r.padEnd(16)}${(k + 1) % 5 === 0 ? '\n' : '\t'}`)
          .join('')
          .trimEnd()}\n`,
      );
    }
    if (a0 === '-s' || a0 === '-n') {
      const n = signalName(argv[1] ?? '');
      if (!n) return fail(1, `bash: kill: ${argv[1] ?? ''}: invalid signal specification\n`);
      sig = n;
      i = 2;
    } else if ((a0.startsWith('-') && a0 !== '--' && !/^-\d+$/.test(a0)) || (/^-\d+$/.test(a0) && argv.length > 1)) {
      const n = signalName(a0.slice(1));
      if (!n) return fail(1, `bash: kill: ${a0.slice(1)}: invalid signal specification\n`);
      sig = n;
      i = 1;
    }
    if (argv[i] === '--') i++;
    const targets = argv.slice(i);
    if (targets.length === 0) return fail(2, usage);
    const uid = effectiveUid(ctx, m.user.uid);
    let err = '';
    for (const t of targets) {
      if (!/^-?\d+$/.test(t)) {
        err += `bash: kill: ${t}: arguments must be process or job IDs\n`;
        continue;
      }
      // -PID is the process group PID leads: a session shell's (sessions.ts), else that process alone.
      const pid = Math.abs(Number(t));
      const r = m.system.sessions.signal(pid, sig, uid) ?? m.system.processes.signal(pid, sig, uid);
      if (r === 'ESRCH') err += `bash: kill: (${t}) - No such process\n`;
      else if (r === 'EPERM') err += `bash: kill: (${t}) - Operation not permitted\n`;
    }
    return { stdout: '', stderr: err, exitCode: err ? 1 : 0 };
  });
}

/** procps uptime: ` 09:10:00 up 10 min,  1 user,  load average: 0.08, 0.05, 0.01`. */
export const uptime: Tool = {
  name: 'uptime',
  path: '/usr/bin/uptime',
  packages: ['procps'],
  run(argv, { machine: m }) {
    const up = Math.floor(m.system.uptimeMs() / 1000);
    const days = Math.floor(up / 86400);
    const hours = Math.floor((up % 86400) / 3600);
    const mins = Math.floor((up % 3600) / 60);
    if (argv.includes('-s') || argv.includes('--since')) {
      const d = new Date(m.system.boot.at);
      return ok(`${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 19)}\n`);
    }
    if (argv.includes('-p') || argv.includes('--pretty')) {
      const parts: string[] = [];
      if (days > 0) parts.push(`${days} day${days > 1 ? 's' : ''}`);
      if (hours > 0) parts.push(`${hours} hour${hours > 1 ? 's' : ''}`);
      if (mins > 0 || parts.length === 0) parts.push(`${mins} minute${mins === 1 ? '' : 's'}`);
      return ok(`up ${parts.join(', ')}\n`);
    }
    const now = new Date(m.clock.now());
    let s = ` ${p2(now.getUTCHours())}:${p2(now.getUTCMinutes())}:${p2(now.getUTCSeconds())} up `;
    if (days > 0) s += `${days} day${days > 1 ? 's' : ''}, `;
    s += hours > 0 ? `${String(hours).padStart(2)}:${p2(mins)}, ` : `${mins} min, `;
    s += ' 1 user,  load average: 0.08, 0.05, 0.01\n';
    return ok(s);
  },
};

export const PROC_TOOLS: readonly Tool[] = [ps, pgrep, pkill, uptime];
