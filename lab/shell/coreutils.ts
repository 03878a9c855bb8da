/**
 * Replacements for just-bash built-ins whose output must come from the model or match GNU
 * behaviour: hostname/uname/whoami/id (the machine's identity, root under sudo), which (only
 * installed tools), readlink (GNU canonicalisation over symlinked sysfs paths), and fast paths
 * for `head -c N /dev/zero` and byte-wise `tr` so 10 MB transport tests finish quickly.
 */
import { defineCommand, latin1FromBytes, type Command, type ExecResult, type ResolvedCommandContext } from 'just-bash';
import { errnoText } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { isRoot } from '../tools/types.js';
import { getopt, has } from './args.js';
import { stdinBytes } from './nested.js';
import type { CommandLookup } from './wrappers.js';

const GROUPS = '1000(l20),4(adm),24(cdrom),27(sudo),30(dip),46(plugdev),110(lxd)';

function identityCommands(m: Machine): Command[] {
  const hostname = defineCommand('hostname', async (args) => {
    if (args.includes('-I') || args.includes('--all-ip-addresses')) {
      const addrs = m.netdevs.flatMap((d) => d.addresses.filter((a) => a.scope === 'global').map((a) => a.local));
      return { stdout: `${addrs.join(' ')} \n`, stderr: '', exitCode: 0 };
    }
    if (args.includes('-i')) return { stdout: '127.0.1.1\n', stderr: '', exitCode: 0 };
    if (args.includes('-d')) return { stdout: '\n', stderr: '', exitCode: 0 };
    return { stdout: `${m.hostname}\n`, stderr: '', exitCode: 0 };
  });
  const uname = defineCommand('uname', async (args) => {
    const p = getopt(args, 'asnrvmpio', {
      all: false,
      'kernel-name': false,
      nodename: false,
      'kernel-release': false,
      'kernel-version': false,
      machine: false,
      processor: false,
      'hardware-platform': false,
      'operating-system': false,
    });
    if (p.error)
      return {
        stdout: '',
        stderr: `uname: invalid option -- '${p.error.option}'\nTry 'uname --help' for more information.\n`,
        exitCode: 1,
      };
    const fields: Array<[string, string, string]> = [
      ['s', 'kernel-name', 'Linux'],
      ['n', 'nodename', m.hostname],
      ['r', 'kernel-release', m.os.kernelRelease],
      ['v', 'kernel-version', m.os.kernelVersion],
      ['m', 'machine', 'x86_64'],
      ['p', 'processor', 'x86_64'],
      ['i', 'hardware-platform', 'x86_64'],
      ['o', 'operating-system', 'GNU/Linux'],
    ];
    const all = has(p, 'a', 'all');
    let chosen = fields.filter(([s, l]) => all || has(p, s, l));
    if (chosen.length === 0) chosen = [fields[0] as [string, string, string]];
    return { stdout: `${chosen.map(([, , v]) => v).join(' ')}\n`, stderr: '', exitCode: 0 };
  });
  const whoami = defineCommand('whoami', async (_args, ctx) => ({
    stdout: `${isRoot(ctx) ? 'root' : m.user.name}\n`,
    stderr: '',
    exitCode: 0,
  }));
  const id = defineCommand('id', async (args, ctx) => {
    const root = isRoot(ctx);
    const p = getopt(args, 'ugGnrz');
    const name = has(p, 'n');
    const u = root ? { id: 0, n: 'root' } : { id: m.user.uid, n: m.user.name };
    if (has(p, 'u')) return { stdout: `${name ? u.n : u.id}\n`, stderr: '', exitCode: 0 };
    if (has(p, 'g')) return { stdout: `${name ? u.n : u.id}\n`, stderr: '', exitCode: 0 };
    const groups = root
      ? [[0, 'root']]
      : GROUPS.split(',').map((g) => [Number(g.split('(')[0]), g.slice(g.indexOf('(') + 1, -1)]);
    if (has(p, 'G'))
      return { stdout: `${groups.map(([gid, n]) => (name ? n : gid)).join(' ')}\n`, stderr: '', exitCode: 0 };
    const grp = root ? '0(root)' : GROUPS;
    return { stdout: `uid=${u.id}(${u.n}) gid=${u.id}(${u.n}) groups=${grp}\n`, stderr: '', exitCode: 0 };
  });
  return [hostname, uname, whoami, id];
}

/** GNU readlink: -f (all but the last component must exist), -e (all), -m (none). */
async function canonicalize(
  ctx: ResolvedCommandContext,
  path: string,
  mode: 'f' | 'e' | 'm',
): Promise<string | undefined> {
  const todo = ctx.fs
    .resolvePath(ctx.cwd, path)
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  const done: string[] = [];
  let hops = 0;
  while (todo.length > 0) {
    const name = todo.shift() as string;
    if (name === '..') {
      done.pop();
      continue;
    }
    const candidate = `/${[...done, name].join('/')}`;
    let st;
    try {
      st = await ctx.fs.lstat(candidate);
    } catch {
      if (mode === 'm' || (mode === 'f' && todo.length === 0)) {
        done.push(name);
        continue;
      }
      return undefined;
    }
    if (st.isSymbolicLink) {
      if (++hops > 40) return undefined;
      const target = await ctx.fs.readlink(candidate);
      if (target.startsWith('/')) done.length = 0;
      todo.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
      continue;
    }
    if (!st.isDirectory && todo.length > 0 && mode !== 'm') return undefined;
    done.push(name);
  }
  return `/${done.join('/')}`;
}

const readlink = defineCommand('readlink', async (args, ctx) => {
  const p = getopt(args, 'femnqsvz', {
    canonicalize: false,
    'canonicalize-existing': false,
    'canonicalize-missing': false,
    'no-newline': false,
    quiet: false,
    silent: false,
    verbose: false,
    zero: false,
  });
  if (p.error)
    return {
      stdout: '',
      stderr: `readlink: invalid option -- '${p.error.option}'\nTry 'readlink --help' for more information.\n`,
      exitCode: 1,
    };
  if (p.operands.length === 0)
    return {
      stdout: '',
      stderr: "readlink: missing operand\nTry 'readlink --help' for more information.\n",
      exitCode: 1,
    };
  const mode = has(p, 'f', 'canonicalize')
    ? 'f'
    : has(p, 'e', 'canonicalize-existing')
      ? 'e'
      : has(p, 'm', 'canonicalize-missing')
        ? 'm'
        : undefined;
  const end = has(p, 'z', 'zero') ? '\0' : has(p, 'n', 'no-newline') && p.operands.length === 1 ? '' : '\n';
  let out = '';
  let err = '';
  let code = 0;
  for (const op of p.operands) {
    let r: string | undefined;
    if (mode) r = await canonicalize(ctx, op, mode);
    else {
      try {
        r = await ctx.fs.readlink(ctx.fs.resolvePath(ctx.cwd, op));
      } catch {
        r = undefined;
      }
    }
    if (r === undefined) {
      code = 1;
      if (has(p, 'v', 'verbose')) err += `readlink: ${op}: No such file or directory\n`;
    } else out += r + end;
  }
  return { stdout: out, stderr: err, exitCode: code };
});

function parseCount(s: string): number | undefined {
  const m = /^(\d+)(b|kB|K|KiB|MB|M|MiB|GB|G|GiB)?$/.exec(s);
  if (!m) return undefined;
  const mult: Record<string, number> = {
    b: 512,
    kB: 1000,
    K: 1024,
    KiB: 1024,
    MB: 1e6,
    M: 1 << 20,
    MiB: 1 << 20,
    GB: 1e9,
    G: 1 << 30,
    GiB: 1 << 30,
  };
  return Number(m[1]) * (m[2] ? (mult[m[2]] ?? 1) : 1);
}

/** `head -c N /dev/zero`: the in-memory /dev/zero is empty, so generate the bytes here. */
const head = defineCommand('head', async (args, ctx) => {
  const devices = args.filter((a) => a === '/dev/zero');
  const cIdx = args.findIndex((a) => a === '-c' || a.startsWith('-c') || a.startsWith('--bytes='));
  if (devices.length === 1 && args.length <= 3 && cIdx >= 0) {
    const a = args[cIdx] as string;
    const raw = a === '-c' ? args[cIdx + 1] : a.startsWith('--bytes=') ? a.slice(8) : a.slice(2);
    const n = raw === undefined ? undefined : parseCount(raw);
    if (n !== undefined) return { stdout: '\0'.repeat(n), stderr: '', exitCode: 0, stdoutKind: 'bytes' };
  }
  return ctx.origCommand ? ctx.origCommand(args) : { stdout: '', stderr: 'head: not available\n', exitCode: 1 };
});

/**
 * Several `-e PATTERN` (GNU grep: a line matches if any of them does) joined into one pattern with GNU's own
 * alternation, `\|` in a basic and `|` in an extended regex: just-bash's grep keeps only the last `-e`.
 * Fixed strings (-F) are left as they are. Undefined when there is nothing to join.
 */
export function joinGrepPatterns(args: readonly string[]): string[] | undefined {
  const patterns: string[] = [];
  const rest: string[] = [];
  let extended = false;
  let fixed = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (a === '--regexp' || a === '-e') patterns.push(args[++i] ?? '');
    else if (a.startsWith('--regexp=')) patterns.push(a.slice('--regexp='.length));
    else if (/^-[A-Za-z]+e$/.test(a)) {
      // `-ve PATTERN`: the flags, then -e's pattern.
      rest.push(a.slice(0, -1));
      patterns.push(args[++i] ?? '');
    } else rest.push(a);
    if (/^-[A-Za-z]*E/.test(a) || a === '--extended-regexp') extended = true;
    if (/^-[A-Za-z]*F/.test(a) || a === '--fixed-strings') fixed = true;
  }
  if (patterns.length < 2 || fixed) return undefined;
  return ['-e', patterns.join(extended ? '|' : '\\|'), ...rest];
}

const grep = defineCommand('grep', async (args, ctx) => {
  if (!ctx.origCommand) return { stdout: '', stderr: 'grep: not available\n', exitCode: 2 };
  return ctx.origCommand(joinGrepPatterns(args) ?? args);
});

/** Expands a simple tr SET (escapes, octal, ranges) to bytes; undefined when it needs the full tr. */
function expandSet(set: string): number[] | undefined {
  const out: number[] = [];
  const esc: Record<string, number> = { n: 10, t: 9, r: 13, a: 7, b: 8, f: 12, v: 11, '\\': 92 };
  const chars: number[] = [];
  for (let i = 0; i < set.length; i++) {
    const c = set.charCodeAt(i);
    if (c > 255 || set[i] === '[') return undefined;
    if (set[i] === '\\' && i + 1 < set.length) {
      const oct = /^[0-7]{1,3}/.exec(set.slice(i + 1));
      if (oct) {
        chars.push(parseInt(oct[0], 8) & 0xff);
        i += oct[0].length;
        continue;
      }
      const e = esc[set[i + 1] as string];
      chars.push(e ?? set.charCodeAt(i + 1));
      i++;
      continue;
    }
    chars.push(c);
  }
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as number;
    if (chars[i + 1] === 45 && i + 2 < chars.length) {
      const to = chars[i + 2] as number;
      if (to < c) return undefined;
      for (let x = c; x <= to; x++) out.push(x);
      i += 2;
    } else out.push(c);
  }
  return out;
}

const tr = defineCommand('tr', async (args, ctx): Promise<ExecResult> => {
  const orig = (): Promise<ExecResult> =>
    ctx.origCommand
      ? ctx.origCommand(args)
      : Promise.resolve({ stdout: '', stderr: 'tr: not available\n', exitCode: 1 });
  const del = args[0] === '-d';
  const sets = del ? args.slice(1) : args;
  if ((del && sets.length !== 1) || (!del && sets.length !== 2) || sets.some((s) => s.startsWith('-'))) return orig();
  const s1 = expandSet(sets[0] as string);
  const s2 = del ? [] : expandSet(sets[1] as string);
  if (!s1 || !s2 || (!del && s2.length === 0)) return orig();
  const map = new Int16Array(256).map((_, i) => i);
  s1.forEach((c, i) => {
    map[c] = del ? -1 : (s2[Math.min(i, s2.length - 1)] as number);
  });
  const input = Buffer.from(stdinBytes(ctx), 'latin1');
  const outBuf = Buffer.allocUnsafe(input.length);
  let n = 0;
  for (let i = 0; i < input.length; i++) {
    const v = map[input[i] as number] as number;
    if (v >= 0) outBuf[n++] = v;
  }
  return { stdout: outBuf.subarray(0, n).toString('latin1'), stderr: '', exitCode: 0, stdoutKind: 'bytes' };
});

/**
 * `cat FILE…` reporting the errno the model raises (a down port's `carrier` reads EINVAL as on
 * Linux); option forms go to the built-in cat.
 */
const cat = defineCommand('cat', async (args, ctx) => {
  const files = args[0] === '--' ? args.slice(1) : args;
  if (files.length === 0 || files.some((a) => a.startsWith('-'))) {
    return ctx.origCommand ? ctx.origCommand(args) : { stdout: '', stderr: 'cat: not available\n', exitCode: 1 };
  }
  let out = '';
  let err = '';
  for (const f of files) {
    try {
      const path = ctx.fs.resolvePath(ctx.cwd, f);
      if ((await ctx.fs.stat(path)).isDirectory) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
      out += ctx.fs.readFileBytes
        ? latin1FromBytes(await ctx.fs.readFileBytes(path))
        : Buffer.from(await ctx.fs.readFileBuffer(path)).toString('latin1');
    } catch (e) {
      err += `cat: ${f}: ${errnoText(e)}\n`;
    }
  }
  return { stdout: out, stderr: err, exitCode: err ? 1 : 0, stdoutKind: 'bytes' };
});

function whichCommand(lookup: CommandLookup): Command {
  return defineCommand('which', async (args, ctx) => {
    const names = args.filter((a) => !a.startsWith('-'));
    let out = '';
    let code = names.length === 0 ? 1 : 0;
    for (const n of names) {
      const path = await lookup.lookup(n, ctx);
      if (path && !path.startsWith('builtin:')) out += `${path}\n`;
      else code = 1;
    }
    return { stdout: out, stderr: '', exitCode: code };
  });
}

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** GNU date's `+FORMAT` conversions for a UTC instant (the lab's machines run in UTC). */
export function formatDate(ms: number, fmt: string): string {
  const d = new Date(ms);
  const Y = d.getUTCFullYear();
  const mo = d.getUTCMonth();
  const day = d.getUTCDate();
  const H = d.getUTCHours();
  const M = d.getUTCMinutes();
  const S = d.getUTCSeconds();
  const wd = d.getUTCDay();
  const yday = Math.floor((Date.UTC(Y, mo, day) - Date.UTC(Y, 0, 1)) / 86400000) + 1;
  const isoWeek = (): [number, number] => {
    const t = new Date(Date.UTC(Y, mo, day));
    const dow = (wd + 6) % 7;
    t.setUTCDate(t.getUTCDate() - dow + 3);
    const firstThursday = new Date(Date.UTC(t.getUTCFullYear(), 0, 4));
    const week =
      1 +
      Math.round(((t.getTime() - firstThursday.getTime()) / 86400000 - 3 + ((firstThursday.getUTCDay() + 6) % 7)) / 7);
    return [t.getUTCFullYear(), week];
  };
  const conv = (c: string): [string, number, string] | undefined => {
    // [value, natural width, default pad character]
    switch (c) {
      case 'a':
        return [(DAY_NAMES[wd] as string).slice(0, 3), 0, ''];
      case 'A':
        return [DAY_NAMES[wd] as string, 0, ''];
      case 'b':
      case 'h':
        return [(MONTH_NAMES[mo] as string).slice(0, 3), 0, ''];
      case 'B':
        return [MONTH_NAMES[mo] as string, 0, ''];
      case 'c':
        return [formatDate(ms, '%a %b %e %H:%M:%S %Y'), 0, ''];
      case 'C':
        return [String(Math.floor(Y / 100)), 2, '0'];
      case 'd':
        return [String(day), 2, '0'];
      case 'D':
        return [formatDate(ms, '%m/%d/%y'), 0, ''];
      case 'e':
        return [String(day), 2, ' '];
      case 'F':
        return [formatDate(ms, '%Y-%m-%d'), 0, ''];
      case 'g':
        return [String(isoWeek()[0] % 100), 2, '0'];
      case 'G':
        return [String(isoWeek()[0]), 0, ''];
      case 'H':
        return [String(H), 2, '0'];
      case 'I':
        return [String(H % 12 || 12), 2, '0'];
      case 'j':
        return [String(yday), 3, '0'];
      case 'k':
        return [String(H), 2, ' '];
      case 'l':
        return [String(H % 12 || 12), 2, ' '];
      case 'm':
        return [String(mo + 1), 2, '0'];
      case 'M':
        return [String(M), 2, '0'];
      case 'n':
        return ['\n', 0, ''];
      // The clock has sub-millisecond fractions at real-time speeds: nanoseconds are a 9-digit integer.
      case 'N':
        return [String(Math.floor((ms % 1000) * 1_000_000)).padStart(9, '0'), 0, ''];
      case 'p':
        return [H < 12 ? 'AM' : 'PM', 0, ''];
      case 'P':
        return [H < 12 ? 'am' : 'pm', 0, ''];
      case 'r':
        return [formatDate(ms, '%I:%M:%S %p'), 0, ''];
      case 'R':
        return [formatDate(ms, '%H:%M'), 0, ''];
      case 's':
        return [String(Math.floor(ms / 1000)), 0, ''];
      case 'S':
        return [String(S), 2, '0'];
      case 't':
        return ['\t', 0, ''];
      case 'T':
        return [formatDate(ms, '%H:%M:%S'), 0, ''];
      case 'u':
        return [String(wd || 7), 0, ''];
      case 'V':
        return [String(isoWeek()[1]), 2, '0'];
      case 'w':
        return [String(wd), 0, ''];
      case 'U':
        return [String(Math.floor((yday + 6 - wd) / 7)), 2, '0'];
      case 'W':
        return [String(Math.floor((yday + 6 - ((wd + 6) % 7)) / 7)), 2, '0'];
      case 'x':
        return [formatDate(ms, '%m/%d/%y'), 0, ''];
      case 'X':
        return [formatDate(ms, '%H:%M:%S'), 0, ''];
      case 'y':
        return [String(Y % 100), 2, '0'];
      case 'Y':
        return [String(Y), 0, ''];
      case 'z':
        return ['+0000', 0, ''];
      case 'Z':
        return ['UTC', 0, ''];
      case '%':
        return ['%', 0, ''];
      default:
        return undefined;
    }
  };
  return fmt.replace(/%([-_0^#]?)(:{0,3})([a-zA-Z%])/g, (all, flag: string, colons: string, c: string) => {
    if (c === 'z' && colons) return colons === ':' ? '+00:00' : colons === '::' ? '+00:00:00' : '+00';
    const v = conv(c);
    if (!v) return all;
    let [text, , pad] = v;
    const width = v[1];
    if (flag === '-') return text;
    if (flag === '_') pad = ' ';
    if (flag === '0') pad = '0';
    if (flag === '^') text = text.toUpperCase();
    return width > 0 && pad ? text.padStart(width, pad) : text;
  });
}

/**
 * `date` reads the simulated clock (millisecond precision, so `+%s.%N` moves between calls);
 * given a date to show (-d, -r, -f, -s) it is the built-in date.
 */
function dateCommand(m: Machine): Command {
  return defineCommand('date', async (args, ctx) => {
    const explicit = args.some((a) => /^(-[dfrs]|--(date|file|reference|set)(=|$))/.test(a));
    if (explicit)
      return ctx.origCommand ? ctx.origCommand(args) : { stdout: '', stderr: 'date: not available\n', exitCode: 1 };
    const now = m.clock.now();
    let fmt = '%a %b %e %H:%M:%S %Z %Y';
    for (const a of args) {
      if (a.startsWith('+')) fmt = a.slice(1);
      else if (a === '-u' || a === '--utc' || a === '--universal') continue;
      else if (a === '-R' || a === '--rfc-email') fmt = '%a, %d %b %Y %H:%M:%S %z';
      else if (/^(-I|--iso-8601)/.test(a)) {
        const spec = a.replace(/^(-I|--iso-8601=?)/, '') || 'date';
        const iso: Record<string, string> = {
          date: '%Y-%m-%d',
          d: '%Y-%m-%d',
          hours: '%Y-%m-%dT%H%:z',
          h: '%Y-%m-%dT%H%:z',
          minutes: '%Y-%m-%dT%H:%M%:z',
          m: '%Y-%m-%dT%H:%M%:z',
          seconds: '%Y-%m-%dT%H:%M:%S%:z',
          s: '%Y-%m-%dT%H:%M:%S%:z',
          ns: '%Y-%m-%dT%H:%M:%S,%N%:z',
          n: '%Y-%m-%dT%H:%M:%S,%N%:z',
        };
        const f = iso[spec];
        if (!f)
          return {
            stdout: '',
            stderr: `date: invalid argument ‘${spec}’ for ‘--iso-8601’\nValid arguments are:\n  - ‘hours’\n  - ‘minutes’\n  - ‘date’\n  - ‘seconds’\n  - ‘ns’\nTry 'date --help' for more information.\n`,
            exitCode: 1,
          };
        fmt = f;
      } else if (/^--rfc-3339=/.test(a)) {
        const spec = a.slice(11);
        fmt = spec === 'date' ? '%Y-%m-%d' : spec === 'ns' ? '%Y-%m-%d %H:%M:%S.%N%:z' : '%Y-%m-%d %H:%M:%S%:z';
      } else
        return {
          stdout: '',
          stderr: `date: invalid option -- '${a.replace(/^-+/, '').slice(0, 1)}'\nTry 'date --help' for more information.\n`,
          exitCode: 1,
        };
    }
    return { stdout: `${formatDate(now, fmt)}\n`, stderr: '', exitCode: 0 };
  });
}

export function coreutilCommands(m: Machine, lookup: CommandLookup): Command[] {
  return [...identityCommands(m), readlink, head, tr, cat, grep, dateCommand(m), whichCommand(lookup)];
}
