/**
 * File ownership and Unix permissions for the writable root file system. just-bash's in-memory
 * file system keeps a mode per file but no owner and checks nothing; this layer keeps owners
 * beside it and refuses what Linux would refuse a non-root user (EACCES on a file or directory
 * without the permission bit, EPERM for chmod/chown of someone else's file), so `echo x >
 * /etc/foo` without sudo fails as on the real host while `sudo install … /etc/foo` works.
 *
 * Each view of the root is made for one effective uid (exec-context.ts): a script level's — the
 * login user's for an SSH command, 0 under sudo and for system services — or the one lab code asks
 * for (`shell.fsAs(0)` for boot, systemd and package scripts).
 */
import { posix } from 'node:path';
import type { FileContent, FsStat, IFileSystem, InMemoryFs } from 'just-bash';
import { vfsError } from '../fs/vfs.js';
import type { ExecLevel } from './exec-context.js';
import { writeLiveDevice } from './live.js';

export interface Owner {
  uid: number;
  gid: number;
}

export interface Account {
  name: string;
  uid: number;
  gid: number;
  home: string;
  /** Supplementary groups. */
  groups: readonly number[];
}

/** Owners of paths in the writable root (keyed by canonical path); unlisted paths use defaults. */
export class FileOwners {
  private readonly owners = new Map<string, Owner>();

  constructor(private readonly user: Account) {}

  /** Who owns `path` (canonical) when nothing recorded otherwise: the user's home is theirs. */
  get(path: string): Owner {
    const o = this.owners.get(path);
    if (o) return o;
    const u = this.user;
    if (
      path === u.home ||
      path.startsWith(`${u.home}/`) ||
      path === `/run/user/${u.uid}` ||
      path.startsWith(`/run/user/${u.uid}/`)
    ) {
      return { uid: u.uid, gid: u.gid };
    }
    return { uid: 0, gid: 0 };
  }

  set(path: string, owner: Owner): void {
    this.owners.set(path, owner);
  }

  /** Forgets `path` and everything below it (rm). */
  drop(path: string): void {
    for (const k of [...this.owners.keys()]) if (k === path || k.startsWith(`${path}/`)) this.owners.delete(k);
  }

  /** Moves the records of `from` and everything below it to `to` (rename). */
  move(from: string, to: string): void {
    const moved: Array<[string, Owner]> = [];
    for (const [k, v] of this.owners)
      if (k === from || k.startsWith(`${from}/`)) moved.push([to + k.slice(from.length), v]);
    this.drop(from);
    this.drop(to);
    for (const [k, v] of moved) this.owners.set(k, v);
  }

  /** The groups a uid belongs to (the modelled login user's, or root's). */
  groupsOf(uid: number): readonly number[] {
    if (uid === 0) return [0];
    if (uid === this.user.uid) return [this.user.gid, ...this.user.groups];
    return [];
  }

  /** The primary gid new files of `uid` get. */
  gidOf(uid: number): number {
    return uid === this.user.uid ? this.user.gid : 0;
  }
}

/** Whether `uid` may read (4), write (2) or search/execute (1) a node with this mode and owner. */
export function mayAccess(
  owners: FileOwners,
  st: { mode: number; isDirectory: boolean },
  owner: Owner,
  uid: number,
  want: 4 | 2 | 1,
): boolean {
  const mode = st.mode & 0o7777;
  if (uid === 0) return want !== 1 || st.isDirectory || (mode & 0o111) !== 0;
  if (owner.uid === uid) return ((mode >> 6) & want) !== 0;
  if (owners.groupsOf(uid).includes(owner.gid)) return ((mode >> 3) & want) !== 0;
  return (mode & want) !== 0;
}

/**
 * The writable root as one effective user sees it: live output devices (live.ts; the level's sinks,
 * none without a level), `/dev/null` discarding, file times from the simulated clock, owners and
 * permission checks. Lab-internal files (`/run/.lab-*`, the interactive shell's bookkeeping) are
 * exempt from the checks.
 */
export function systemFs(
  base: InMemoryFs,
  owners: FileOwners,
  now: () => Date,
  viewUid: number,
  level?: ExecLevel,
): IFileSystem {
  const uidNow = (): number => viewUid;
  const exempt = (p: string): boolean => p.startsWith('/run/.lab-') || p.startsWith('/dev/');

  const canonical = async (p: string): Promise<string> => {
    try {
      return await base.realpath(p);
    } catch {
      // A path that does not exist yet: its parent's canonical path plus its name.
      const parent = posix.dirname(p);
      if (parent === p) return p;
      return posix.join(await canonical(parent), posix.basename(p));
    }
  };
  /** The entry itself in its canonical directory (for operations on a name: rm, symlink, rename). */
  const inCanonicalDir = async (p: string): Promise<string> => {
    const parent = posix.dirname(p);
    return parent === p ? p : posix.join(await canonical(parent), posix.basename(p));
  };
  const statOrUndefined = async (p: string): Promise<FsStat | undefined> => {
    try {
      return await base.stat(p);
    } catch {
      return undefined;
    }
  };
  /** Throws EACCES (naming `shown`, the path the caller used) unless the current uid has `want` on `p`. */
  const check = async (p: string, want: 4 | 2 | 1, op: string, shown = p): Promise<void> => {
    const uid = uidNow();
    if (uid === 0 || exempt(p)) return;
    const st = await statOrUndefined(p);
    if (!st) return;
    const real = await canonical(p);
    if (!mayAccess(owners, st, owners.get(real), uid, want)) throw vfsError('EACCES', op, shown);
  };
  /** Creating or removing an entry needs write and search permission on the directory. */
  const checkParent = async (p: string, op: string): Promise<void> => {
    if (!exempt(p)) await check(posix.dirname(p), 2, op, p);
  };
  /** /tmp's sticky bit: only the owner of an entry (or of the directory) may remove or rename it. */
  const checkSticky = async (p: string, op: string): Promise<void> => {
    const uid = uidNow();
    if (uid === 0 || exempt(p)) return;
    const parent = posix.dirname(p);
    const pst = await statOrUndefined(parent);
    if (!pst || (pst.mode & 0o1000) === 0) return;
    const own = owners.get(await canonical(p));
    const dirOwn = owners.get(await canonical(parent));
    if (own.uid !== uid && dirOwn.uid !== uid) throw vfsError('EPERM', op, p);
  };
  const created = async (p: string): Promise<void> => {
    const uid = uidNow();
    owners.set(await canonical(p), { uid, gid: owners.gidOf(uid) });
  };
  const stamp = (p: string): Promise<void> => base.utimes(p, now(), now()).catch(() => undefined);

  // just-bash's in-memory file system keys entries by path and does not resolve symlinked
  // directories (/lib -> usr/lib) when creating: every write goes to the canonical path.
  const writeLike =
    (op: 'writeFile' | 'appendFile') =>
    async (p: string, content: FileContent, options?: unknown): Promise<void> => {
      if (
        await writeLiveDevice(
          level,
          p,
          content,
          typeof options === 'string' ? options : (options as { encoding?: string } | undefined)?.encoding,
        )
      )
        return;
      if (p === '/dev/null') return;
      const exists = await statOrUndefined(p);
      if (exists) await check(p, 2, 'open');
      else await checkParent(p, 'open');
      const real = await canonical(p);
      await (base[op] as (p: string, c: FileContent, o?: unknown) => Promise<void>)(real, content, options);
      // Writing into an existing file keeps its mode (the in-memory fs would reset it).
      if (exists) await base.chmod(real, exists.mode & 0o7777);
      else await created(real);
      await stamp(real);
    };

  const handlers: Partial<Record<keyof IFileSystem, unknown>> = {
    writeFile: writeLike('writeFile'),
    appendFile: writeLike('appendFile'),
    async readFile(p: string, options?: unknown) {
      await check(p, 4, 'open');
      return base.readFile(p, options as never);
    },
    async readFileBuffer(p: string) {
      await check(p, 4, 'open');
      return base.readFileBuffer(p);
    },
    async readFileBytes(p: string) {
      await check(p, 4, 'open');
      return (base as unknown as { readFileBytes(p: string): Promise<unknown> }).readFileBytes(p);
    },
    async readdir(p: string) {
      await check(p, 4, 'scandir');
      return base.readdir(await canonical(p));
    },
    async readdirWithFileTypes(p: string) {
      await check(p, 4, 'scandir');
      return base.readdirWithFileTypes(await canonical(p));
    },
    async mkdir(p: string, options?: { recursive?: boolean }) {
      const missing: string[] = [];
      for (let cur = p; !(await statOrUndefined(cur)); cur = posix.dirname(cur)) {
        missing.unshift(cur);
        if (!options?.recursive || posix.dirname(cur) === cur) break;
      }
      if (missing[0]) await checkParent(missing[0], 'mkdir');
      const real = await canonical(p);
      if (missing.length === 0 && !options?.recursive) return base.mkdir(real, options);
      await base.mkdir(real, options);
      for (const m of missing) {
        const r = await canonical(m);
        await created(r);
        await stamp(r);
      }
    },
    async rm(p: string, options?: { recursive?: boolean; force?: boolean }) {
      if (await statOrUndefined(p)) {
        await checkParent(p, 'rm');
        await checkSticky(p, 'rm');
      }
      const real = await inCanonicalDir(p);
      await base.rm(real, options);
      owners.drop(real);
    },
    async cp(src: string, dest: string, options?: { recursive?: boolean }) {
      await check(src, 4, 'copyfile');
      if (await statOrUndefined(dest)) await check(dest, 2, 'copyfile');
      else await checkParent(dest, 'copyfile');
      const real = await canonical(dest);
      await base.cp(src, real, options);
      await created(real);
      await stamp(real);
    },
    async mv(src: string, dest: string) {
      await checkParent(src, 'rename');
      await checkSticky(src, 'rename');
      await checkParent(dest, 'rename');
      const from = await inCanonicalDir(src);
      const to = await inCanonicalDir(dest);
      await base.mv(from, to);
      owners.move(from, to);
      await stamp(to);
    },
    async chmod(p: string, mode: number) {
      const uid = uidNow();
      if (uid !== 0 && !exempt(p) && owners.get(await canonical(p)).uid !== uid) throw vfsError('EPERM', 'chmod', p);
      await base.chmod(p, mode);
    },
    async symlink(target: string, link: string) {
      await checkParent(link, 'symlink');
      const real = await inCanonicalDir(link);
      await base.symlink(target, real);
      await created(real);
    },
    async link(existing: string, link: string) {
      await checkParent(link, 'link');
      const real = await inCanonicalDir(link);
      await base.link(existing, real);
      await created(real);
    },
    async utimes(p: string) {
      const uid = uidNow();
      if (uid !== 0 && !exempt(p) && owners.get(await canonical(p)).uid !== uid) await check(p, 2, 'utime');
      await stamp(p);
    },
  };

  // The base's own methods, bound once (a view lives as long as its level, and they are called often).
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(base, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && prop in handlers) return handlers[prop as keyof IFileSystem];
      let value: unknown = bound.get(prop);
      if (value !== undefined) return value;
      value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      value = (value as (...a: unknown[]) => unknown).bind(target);
      bound.set(prop, value);
      return value;
    },
  }) as unknown as IFileSystem;
}
