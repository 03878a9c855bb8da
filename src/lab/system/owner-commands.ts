/**
 * coreutils 8.32 chown (OWNER[:GROUP], --reference, -R) and chmod (octal and symbolic modes, -R)
 * over the owners perms.ts keeps: only root changes owners, only the owner (or root) modes.
 */
import { posix } from 'node:path';
import { defineCommand, type Command, type ResolvedCommandContext } from 'just-bash';
import { errnoText } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { fail } from '../shell/args.js';
import { effectiveUid } from './exec-context.js';
import { accounts, ownerKey, ownerOf, q, type Accounts } from './file-info.js';
import type { Owner } from './perms.js';

/** OWNER[:GROUP] / :GROUP / OWNER: → ids from /etc/passwd and /etc/group (numbers accepted). */
export function parseOwnerSpec(spec: string, acct: Accounts, current: Owner): Owner | string {
  const [u, g] = spec.split(/[:.]/, 2) as [string, string | undefined];
  const byName = (map: Map<number, string>, name: string): number | undefined => {
    if (/^\d+$/.test(name)) return Number(name);
    for (const [id, n] of map) if (n === name) return id;
    return undefined;
  };
  let uid = current.uid;
  let gid = current.gid;
  if (u !== '') {
    const id = byName(acct.users, u);
    if (id === undefined) return `invalid user: '${spec}'`;
    uid = id;
    if (g === '' && spec.includes(':')) gid = id === 0 ? 0 : id;
  }
  if (g !== undefined && g !== '') {
    const id = byName(acct.groups, g);
    if (id === undefined) return `invalid group: '${spec}'`;
    gid = id;
  }
  return { uid, gid };
}

async function walk(ctx: ResolvedCommandContext, path: string, recursive: boolean, visit: (p: string) => Promise<void>): Promise<void> {
  await visit(path);
  if (!recursive) return;
  const st = await ctx.fs.lstat(path).catch(() => undefined);
  if (!st?.isDirectory) return;
  for (const n of await ctx.fs.readdir(path).catch(() => [] as string[])) await walk(ctx, posix.join(path, n), true, visit);
}

export function chownCommand(m: Machine): Command {
  return defineCommand('chown', async (args, ctx) => {
    let recursive = false;
    let reference: string | undefined;
    const rest: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === '--') {
        rest.push(...args.slice(i + 1));
        break;
      }
      if (a === '-R' || a === '--recursive') recursive = true;
      else if (a.startsWith('--reference=')) reference = a.slice(12);
      else if (['-h', '-f', '-v', '-c', '--no-dereference', '--silent', '--quiet'].includes(a)) continue;
      else if (a.startsWith('-') && a !== '-') return fail(1, `chown: invalid option -- '${a.slice(1, 2)}'\nTry 'chown --help' for more information.\n`);
      else rest.push(a);
    }
    const acct = await accounts(ctx);
    let want: Owner | undefined;
    if (reference !== undefined) {
      const rp = ctx.fs.resolvePath(ctx.cwd, reference);
      if (!(await ctx.fs.exists(rp))) return fail(1, `chown: failed to get attributes of ${q(ctx, reference)}: No such file or directory\n`);
      want = ownerOf(m, await ownerKey(ctx, rp, true));
    }
    const spec = want ? undefined : rest.shift();
    const files = rest;
    if (files.length === 0) return fail(1, `chown: missing operand${spec ? ` after ${q(ctx, spec)}` : ''}\nTry 'chown --help' for more information.\n`);
    const uid = effectiveUid(m.user.uid);
    let err = '';
    for (const f of files) {
      const path = ctx.fs.resolvePath(ctx.cwd, f);
      if (!(await ctx.fs.exists(path))) {
        err += `chown: cannot access ${q(ctx, f)}: No such file or directory\n`;
        continue;
      }
      await walk(ctx, path, recursive, async (p) => {
        const key = await ownerKey(ctx, p, true);
        const cur = ownerOf(m, key);
        const next = want ?? parseOwnerSpec(spec ?? '', acct, cur);
        if (typeof next === 'string') {
          err += `chown: ${next.replace(/'([^']*)'$/, (_, x: string) => q(ctx, x))}\n`;
          return;
        }
        if (uid !== 0 && (next.uid !== cur.uid || next.uid !== uid || !m.system.files.groupsOf(uid).includes(next.gid))) {
          err += `chown: changing ownership of ${q(ctx, p === path ? f : p)}: Operation not permitted\n`;
          return;
        }
        m.system.files.set(key, next);
      });
    }
    return { stdout: '', stderr: err, exitCode: err ? 1 : 0 };
  });
}

/** Applies a chmod mode (octal or symbolic, comma-separated clauses) to `mode`. */
export function applyMode(spec: string, mode: number, isDir: boolean): number | undefined {
  if (/^[0-7]{1,4}$/.test(spec)) return parseInt(spec, 8);
  let m = mode;
  for (const clause of spec.split(',')) {
    const c = /^([ugoa]*)([-+=])([rwxXst]*|[ugo])$/.exec(clause);
    if (!c) return undefined;
    const who = c[1] === '' || c[1] === 'a' ? 'ugo' : (c[1] as string);
    let bits = 0;
    for (const p of c[3] as string) {
      if (p === 'r') bits |= 0o444;
      if (p === 'w') bits |= 0o222;
      if (p === 'x' || (p === 'X' && (isDir || (mode & 0o111) !== 0))) bits |= 0o111;
      if (p === 's') bits |= 0o6000;
      if (p === 't') bits |= 0o1000;
    }
    let mask = 0;
    if (who.includes('u')) mask |= 0o4700;
    if (who.includes('g')) mask |= 0o2070;
    if (who.includes('o')) mask |= 0o1007;
    const eff = bits & mask;
    if (c[2] === '+') m |= eff;
    else if (c[2] === '-') m &= ~eff;
    else m = (m & ~mask) | eff;
  }
  return m;
}

export function chmodCommand(): Command {
  return defineCommand('chmod', async (args, ctx) => {
    let recursive = false;
    const rest: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === '--') {
        rest.push(...args.slice(i + 1));
        break;
      }
      if (a === '-R' || a === '--recursive') recursive = true;
      else if (['-f', '-v', '-c', '--silent', '--quiet'].includes(a)) continue;
      else if (/^-[rwxXst]+$/.test(a) && rest.length === 0) rest.push(a);
      else if (a.startsWith('-') && a !== '-' && !/^-[0-7]+$/.test(a)) return fail(1, `chmod: invalid option -- '${a.slice(1, 2)}'\nTry 'chmod --help' for more information.\n`);
      else rest.push(a);
    }
    const [spec, ...files] = rest;
    if (spec === undefined || files.length === 0) return fail(1, `chmod: missing operand${spec ? ` after ${q(ctx, spec)}` : ''}\nTry 'chmod --help' for more information.\n`);
    let err = '';
    for (const f of files) {
      const path = ctx.fs.resolvePath(ctx.cwd, f);
      if (!(await ctx.fs.exists(path))) {
        err += `chmod: cannot access ${q(ctx, f)}: No such file or directory\n`;
        continue;
      }
      await walk(ctx, path, recursive, async (p) => {
        const st = await ctx.fs.stat(p);
        const next = applyMode(spec, st.mode & 0o7777, st.isDirectory);
        if (next === undefined) {
          err += `chmod: invalid mode: ${q(ctx, spec)}\n`;
          return;
        }
        try {
          await ctx.fs.chmod(p, next);
        } catch (e) {
          err += `chmod: changing permissions of ${q(ctx, p === path ? f : p)}: ${errnoText(e)}\n`;
        }
      });
    }
    if (/invalid mode/.test(err)) return fail(1, `${err.split('\n')[0]}\nTry 'chmod --help' for more information.\n`);
    return { stdout: '', stderr: err, exitCode: err ? 1 : 0 };
  });
}
