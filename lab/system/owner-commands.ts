/**
 * coreutils 8.32 chown (OWNER[:GROUP], --reference, -R) and chmod (octal and symbolic modes, -R)
 * over the owners perms.ts keeps: only root changes owners, only the owner (or root) modes.
 */
import { posix } from 'node:path';
import { defineCommand, type Command, type ResolvedCommandContext } from 'just-bash';
import { errnoText } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { fail } from '../shell/args.js';
import { invalidOption, missingOperand, scanArgs } from './arg-loops.js';
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

async function walk(
  ctx: ResolvedCommandContext,
  path: string,
  recursive: boolean,
  visit: (p: string) => Promise<void>,
): Promise<void> {
  await visit(path);
  if (!recursive) return;
  const st = await ctx.fs.lstat(path).catch(() => undefined);
  if (!st?.isDirectory) return;
  for (const n of await ctx.fs.readdir(path).catch(() => [] as string[]))
    await walk(ctx, posix.join(path, n), true, visit);
}

/**
 * chown's and chmod's walk over their operands: a missing one is reported as coreutils words it,
 * each existing one (with -R, its tree) goes to `visit` with the name to print for it (the operand
 * as typed, or the path below it). Returns what they wrote to stderr.
 */
async function eachOperand(
  ctx: ResolvedCommandContext,
  cmd: string,
  files: readonly string[],
  recursive: boolean,
  visit: (p: string, shown: string) => Promise<string>,
): Promise<string> {
  let err = '';
  for (const f of files) {
    const path = ctx.fs.resolvePath(ctx.cwd, f);
    if (!(await ctx.fs.exists(path))) {
      err += `${cmd}: cannot access ${q(ctx, f)}: No such file or directory\n`;
      continue;
    }
    await walk(ctx, path, recursive, async (p) => {
      const e = await visit(p, p === path ? f : p);
      err += e;
    });
  }
  return err;
}

export function chownCommand(m: Machine): Command {
  return defineCommand('chown', async (args, ctx) => {
    let recursive = false;
    let reference: string | undefined;
    const rest: string[] = [];
    const bad = scanArgs(args, rest, (a) => {
      if (a === '-R' || a === '--recursive') recursive = true;
      else if (a.startsWith('--reference=')) reference = a.slice(12);
      else if (['-h', '-f', '-v', '-c', '--no-dereference', '--silent', '--quiet'].includes(a)) return undefined;
      else if (a.startsWith('-') && a !== '-') return invalidOption('chown', a.slice(1, 2));
      else rest.push(a);
    });
    if (bad) return bad;
    const acct = await accounts(ctx);
    let want: Owner | undefined;
    if (reference !== undefined) {
      const rp = ctx.fs.resolvePath(ctx.cwd, reference);
      if (!(await ctx.fs.exists(rp)))
        return fail(1, `chown: failed to get attributes of ${q(ctx, reference)}: No such file or directory\n`);
      want = ownerOf(m, await ownerKey(ctx, rp, true));
    }
    const spec = want ? undefined : rest.shift();
    const files = rest;
    if (files.length === 0) return missingOperand('chown', spec && q(ctx, spec));
    const uid = effectiveUid(ctx, m.user.uid);
    const err = await eachOperand(ctx, 'chown', files, recursive, async (p, shown) => {
      const key = await ownerKey(ctx, p, true);
      const cur = ownerOf(m, key);
      const next = want ?? parseOwnerSpec(spec ?? '', acct, cur);
      if (typeof next === 'string') return `chown: ${next.replace(/'([^']*)'$/, (_, x: string) => q(ctx, x))}\n`;
      if (uid !== 0 && (next.uid !== cur.uid || next.uid !== uid || !m.system.files.groupsOf(uid).includes(next.gid))) {
        return `chown: changing ownership of ${q(ctx, shown)}: Operation not permitted\n`;
      }
      m.system.files.set(key, next);
      return '';
    });
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
    const bad = scanArgs(args, rest, (a) => {
      if (a === '-R' || a === '--recursive') recursive = true;
      else if (['-f', '-v', '-c', '--silent', '--quiet'].includes(a)) return undefined;
      else if (/^-[rwxXst]+$/.test(a) && rest.length === 0) rest.push(a);
      else if (a.startsWith('-') && a !== '-' && !/^-[0-7]+$/.test(a)) return invalidOption('chmod', a.slice(1, 2));
      else rest.push(a);
    });
    if (bad) return bad;
    const [spec, ...files] = rest;
    if (spec === undefined || files.length === 0) return missingOperand('chmod', spec && q(ctx, spec));
    const err = await eachOperand(ctx, 'chmod', files, recursive, async (p, shown) => {
      const st = await ctx.fs.stat(p);
      const next = applyMode(spec, st.mode & 0o7777, st.isDirectory);
      if (next === undefined) return `chmod: invalid mode: ${q(ctx, spec)}\n`;
      try {
        await ctx.fs.chmod(p, next);
        return '';
      } catch (e) {
        return `chmod: changing permissions of ${q(ctx, shown)}: ${errnoText(e)}\n`;
      }
    });
    if (/invalid mode/.test(err)) return fail(1, `${err.split('\n')[0]}\nTry 'chmod --help' for more information.\n`);
    return { stdout: '', stderr: err, exitCode: err ? 1 : 0 };
  });
}
