/**
 * Reading file metadata as coreutils 8.32 prints it: stat (`-c`/`--printf` formats, `-t`, the
 * default layout, jammy's statx error wording) over the file system's modes and the owners
 * perms.ts keeps, and the account names from /etc/passwd and /etc/group.
 */
import { posix } from 'node:path';
import { defineCommand, type Command, type ExecResult, type FsStat, type ResolvedCommandContext } from 'just-bash';
import { errnoText } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { invalidOption, missingOperand, scanArgs } from './arg-loops.js';
import type { Owner } from './perms.js';

/** gnulib's quoting in the C locale and in UTF-8 ones. */
export function q(ctx: ResolvedCommandContext, s: string): string {
  const loc = ctx.env.get('LC_ALL') || ctx.env.get('LC_MESSAGES') || ctx.env.get('LANG') || '';
  return /utf-?8/i.test(loc) ? `‘${s}’` : `'${s}'`;
}

const CHAR_DEVICES: Record<string, [number, number]> = {
  '/dev/null': [1, 3],
  '/dev/zero': [1, 5],
  '/dev/full': [1, 7],
  '/dev/random': [1, 8],
  '/dev/urandom': [1, 9],
};

export interface Accounts {
  users: Map<number, string>;
  groups: Map<number, string>;
}

export async function accounts(ctx: ResolvedCommandContext): Promise<Accounts> {
  const users = new Map<number, string>([[0, 'root']]);
  const groups = new Map<number, string>([[0, 'root']]);
  const read = (p: string): Promise<string> => ctx.fs.readFile(p).catch(() => '');
  for (const line of (await read('/etc/passwd')).split('\n')) {
    const f = line.split(':');
    if (f.length > 3) users.set(Number(f[2]), f[0] as string);
  }
  for (const line of (await read('/etc/group')).split('\n')) {
    const f = line.split(':');
    if (f.length > 2) groups.set(Number(f[2]), f[0] as string);
  }
  return { users, groups };
}

/** The canonical path owners are keyed by (a symlink itself when `follow` is false). */
export async function ownerKey(ctx: ResolvedCommandContext, path: string, follow: boolean): Promise<string> {
  if (follow) return ctx.fs.realpath(path).catch(() => path);
  const dir = await ctx.fs.realpath(posix.dirname(path)).catch(() => posix.dirname(path));
  return posix.join(dir, posix.basename(path));
}

export function ownerOf(m: Machine, key: string): Owner {
  return m.system.files.get(key);
}

function fileType(path: string, st: FsStat): string {
  if (CHAR_DEVICES[path]) return 'character special file';
  if (st.isSymbolicLink) return 'symbolic link';
  if (st.isDirectory) return 'directory';
  return st.size === 0 ? 'regular empty file' : 'regular file';
}

function modeString(path: string, st: FsStat): string {
  const t = CHAR_DEVICES[path] ? 'c' : st.isSymbolicLink ? 'l' : st.isDirectory ? 'd' : '-';
  const m = st.mode & 0o7777;
  const bits = (shift: number, special: number, ch: string): string => {
    const r = m & (4 << shift) ? 'r' : '-';
    const w = m & (2 << shift) ? 'w' : '-';
    const xOn = (m & (1 << shift)) !== 0;
    const x = m & special ? (xOn ? ch : ch.toUpperCase()) : xOn ? 'x' : '-';
    return r + w + x;
  };
  return t + bits(6, 0o4000, 's') + bits(3, 0o2000, 's') + bits(0, 0o1000, 't');
}

function human(ms: number): string {
  const d = new Date(ms);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const frac = String((ms % 1000) * 1e6).padStart(9, '0');
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${frac} +0000`;
}

function inode(path: string): number {
  let h = 2166136261;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619) >>> 0;
  return 100000 + (h % 3000000);
}

function unescapePrintf(s: string): string {
  return s.replace(/\\(n|t|\\|"|0[0-7]{0,3})/g, (_, c: string) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : c === '\\' ? '\\' : c === '"' ? '"' : String.fromCharCode(parseInt(c, 8)),
  );
}

export function statCommand(m: Machine): Command {
  return defineCommand('stat', async (args, ctx): Promise<ExecResult> => {
    let format: string | undefined;
    let printf = false;
    let follow = false;
    let terse = false;
    const files: string[] = [];
    const bad = scanArgs(args, files, (a, value) => {
      if (a === '-c' || a === '--format') format = value();
      else if (a.startsWith('--format=')) format = a.slice(9);
      else if (a === '--printf') {
        format = value();
        printf = true;
      } else if (a.startsWith('--printf=')) {
        format = a.slice(9);
        printf = true;
      } else if (a === '-L' || a === '--dereference') follow = true;
      else if (a === '-t' || a === '--terse') terse = true;
      else if (/^-c./.test(a)) format = a.slice(2);
      else if (a.startsWith('-') && a !== '-') return invalidOption('stat', a.replace(/^-+/, '').slice(0, 1));
      else files.push(a);
    });
    if (bad) return bad;
    if (files.length === 0) return missingOperand('stat');
    const acct = await accounts(ctx);
    let out = '';
    let err = '';
    for (const f of files) {
      const path = ctx.fs.resolvePath(ctx.cwd, f);
      let st: FsStat;
      try {
        st = follow ? await ctx.fs.stat(path) : await ctx.fs.lstat(path);
      } catch (e) {
        err += `stat: cannot statx ${q(ctx, f)}: ${errnoText(e)}\n`;
        continue;
      }
      const real = await ownerKey(ctx, path, follow);
      const own = path.startsWith('/proc') || path.startsWith('/sys') ? { uid: 0, gid: 0 } : ownerOf(m, real);
      const mode = CHAR_DEVICES[path] ? 0o666 : st.mode & 0o7777;
      const size = CHAR_DEVICES[path] ? 0 : st.size;
      const mtime = st.mtime.getTime();
      const uname = acct.users.get(own.uid) ?? String(own.uid);
      const gname = acct.groups.get(own.gid) ?? String(own.gid);
      const target = st.isSymbolicLink ? await ctx.fs.readlink(path).catch(() => '') : '';
      const fields: Record<string, string> = {
        a: mode.toString(8),
        A: modeString(path, { ...st, mode }),
        F: fileType(path, { ...st, size }),
        U: uname,
        G: gname,
        u: String(own.uid),
        g: String(own.gid),
        n: f,
        N: st.isSymbolicLink ? `'${f}' -> '${target}'` : `'${f}'`,
        s: String(size),
        Y: String(Math.floor(mtime / 1000)),
        y: human(mtime),
        X: String(Math.floor(mtime / 1000)),
        x: human(mtime),
        Z: String(Math.floor(mtime / 1000)),
        z: human(mtime),
        W: '0',
        w: '-',
        i: String(inode(real)),
        h: st.isDirectory ? '2' : '1',
        b: String(Math.ceil(size / 512)),
        B: '512',
        o: '4096',
        d: '64768',
        D: 'fd00',
        m: '/',
        t: CHAR_DEVICES[path] ? (CHAR_DEVICES[path] as [number, number])[0].toString(16) : '0',
        T: CHAR_DEVICES[path] ? (CHAR_DEVICES[path] as [number, number])[1].toString(16) : '0',
        '%': '%',
      };
      if (format !== undefined) {
        const fmt = printf ? unescapePrintf(format) : format;
        out += fmt.replace(/%([a-zA-Z%])/g, (all, c: string) => fields[c] ?? all) + (printf ? '' : '\n');
      } else if (terse) {
        out += `${f} ${size} ${fields.b} ${mode.toString(16)} ${own.uid} ${own.gid} fd00 ${fields.i} ${fields.h} 0 0 ${fields.X} ${fields.Y} ${fields.Z} 0 4096\n`;
      } else {
        out += `  File: ${st.isSymbolicLink ? `${f} -> ${target}` : f}\n`;
        out += `  Size: ${String(size).padEnd(10)}\tBlocks: ${String(fields.b).padEnd(10)} IO Block: 4096   ${fields.F}\n`;
        out += `Device: fd00h/64768d\tInode: ${String(fields.i).padEnd(11)} Links: ${fields.h}\n`;
        out += `Access: (${mode.toString(8).padStart(4, '0')}/${fields.A})  Uid: (${String(own.uid).padStart(5)}/${uname.padStart(8)})   Gid: (${String(own.gid).padStart(5)}/${gname.padStart(8)})\n`;
        out += `Access: ${fields.x}\nModify: ${fields.y}\nChange: ${fields.z}\n Birth: -\n`;
      }
    }
    return { stdout: out, stderr: err, exitCode: err ? 1 : 0 };
  });
}
