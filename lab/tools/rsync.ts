/**
 * rsync 3.2.7 (jammy) copying a tree to another lab machine over ssh (`-e "ssh -i KEY …"`), or
 * locally. The remote side is reached the way ssh would: a route and a cable to the address
 * (model/rdma-path.ts tcpPath, ufw included), then public-key authentication against the remote
 * user's ~/.ssh/authorized_keys, whose `from="…"` option must match the address the connection comes
 * from; `--rsync-path="sudo rsync"` writes as root there. Files are copied with their modes;
 * `--info=progress2` reports the bytes a file stands for (model shards hold a stand-in line with their
 * real size). Error texts from rsync's io.c/main.c and OpenSSH (source-derived).
 */
import { posix } from 'node:path';
import type { ExecResult, IFileSystem } from 'just-bash';
import { isInstalled } from '../model/packages.js';
import { autoNodeIp } from '../model/ray-runtime.js';
import { ipv4Owner, tcpPath } from '../model/rdma-path.js';
import type { Machine } from '../model/types.js';
import { toolIo } from '../system/live.js';
import { standsFor } from './du.js';
import type { Tool } from './types.js';

const VERSION = '3.2.7';
const BPS = 400e6;

interface Spec {
  user?: string;
  host?: string;
  path: string;
}

function spec(s: string): Spec {
  const m = /^(?:([^@:/]+)@)?([^:/]+):(.*)$/.exec(s);
  if (!m) return { path: s };
  return { ...(m[1] ? { user: m[1] } : {}), host: m[2]!, path: m[3] || '.' };
}

/** Every file under `root` (relative paths), directories first. */
async function walk(fs: IFileSystem, root: string, rel = ''): Promise<Array<{ rel: string; dir: boolean }>> {
  const out: Array<{ rel: string; dir: boolean }> = [];
  for (const name of (await fs.readdir(posix.join(root, rel))).sort()) {
    const r = rel ? `${rel}/${name}` : name;
    const st = await fs.stat(posix.join(root, r));
    if (st.isDirectory) {
      out.push({ rel: r, dir: true });
      out.push(...(await walk(fs, root, r)));
    } else out.push({ rel: r, dir: false });
  }
  return out;
}

function keyBlob(pub: string): string | undefined {
  return /^(ssh-\S+)\s+(\S+)/.exec(pub.trim())?.[2];
}

/** Whether `authorized_keys` admits `blob` from `fromIp` (OpenSSH's from="pattern" with * wildcards). */
function authorized(authorizedKeys: string, blob: string, fromIp: string): boolean {
  for (const line of authorizedKeys.split('\n')) {
    if (!line.includes(blob)) continue;
    const from = /(?:^|,)from="([^"]*)"/.exec(line)?.[1];
    if (from === undefined) return true;
    const ok = from
      .split(',')
      .some((p) => new RegExp(`^${p.replace(/\./g, '\\.').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(fromIp));
    if (ok) return true;
  }
  return false;
}

const closed = (code: number, why: string): string =>
  `rsync: connection unexpectedly closed (0 bytes received so far) [sender]\nrsync error: ${why} (code ${code}) at io.c(231) [sender=${VERSION}]\n`;

export const rsync: Tool = {
  name: 'rsync',
  path: '/usr/bin/rsync',
  packages: ['rsync'],
  async run(args, env): Promise<ExecResult> {
    const io = toolIo(env.ctx, env.machine.clock);
    const m = env.machine;
    let rsh = 'ssh';
    let rsyncPath = 'rsync';
    let progress = false;
    let del = false;
    const operands: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === '-e' || a === '--rsh') rsh = args[++i] ?? 'ssh';
      else if (a.startsWith('--rsh=')) rsh = a.slice(6);
      else if (a.startsWith('--rsync-path=')) rsyncPath = a.slice(13);
      else if (a === '--rsync-path') rsyncPath = args[++i] ?? 'rsync';
      else if (a === '--info=progress2' || a === '--progress' || a === '-P') progress = true;
      else if (a === '--delete') del = true;
      else if (/^-[avzhrltpgoDHAXSP]+$/.test(a) || a === '--partial') continue;
      else if (a === '--version')
        return { stdout: `rsync  version ${VERSION}  protocol version 31\n`, stderr: '', exitCode: 0 };
      else if (a.startsWith('-'))
        return {
          stdout: '',
          stderr: `rsync: ${a}: unknown option\nrsync error: syntax or usage error (code 1) at main.c(1795) [client=${VERSION}]\n`,
          exitCode: 1,
        };
      else operands.push(a);
    }
    if (operands.length !== 2)
      return {
        stdout: '',
        stderr: `rsync error: syntax or usage error (code 1) at main.c(1795) [client=${VERSION}]\n`,
        exitCode: 1,
      };
    const src = spec(operands[0]!);
    const dst = spec(operands[1]!);
    if (src.host)
      return { stdout: '', stderr: 'l20-lab: rsync: pulling from a remote host is not modelled\n', exitCode: 1 };
    const home = env.ctx.env.get('HOME') ?? m.user.home;
    const localUser = env.root ? 'root' : m.user.name;
    const srcRoot = env.ctx.fs.resolvePath(env.ctx.cwd, src.path);

    let target: Machine = m;
    let targetUid = env.root ? 0 : m.user.uid;
    if (dst.host) {
      const words = rsh.split(/\s+/);
      const keyArg = words.indexOf('-i') >= 0 ? words[words.indexOf('-i') + 1] : undefined;
      const port = words.indexOf('-p') >= 0 ? Number(words[words.indexOf('-p') + 1]) : 22;
      const ip = dst.host;
      const owner = ipv4Owner(env.cluster, ip)?.machine ?? env.cluster.machines.find((x) => x.mgmt.address === ip);
      const path = tcpPath(env.cluster, m, ip, port);
      if (!owner || !path.ok) {
        const why =
          !path.ok && path.reason === 'filtered'
            ? 'Connection timed out'
            : !path.ok && path.reason === 'noroute'
              ? 'Network is unreachable'
              : 'No route to host';
        if (!path.ok && path.reason === 'filtered') await io.sleep(130_000);
        await io.err(`ssh: connect to host ${ip} port ${port}: ${why}\r\n${closed(255, 'unexplained error')}`);
        return io.result(255);
      }
      const user = dst.user ?? localUser;
      const keyPath = keyArg ? keyArg.replace(/^~(?=\/)/, home) : posix.join(home, '.ssh/id_ed25519');
      let pub = '';
      try {
        pub = await env.ctx.fs.readFile(`${keyPath}.pub`);
        await env.ctx.fs.readFile(keyPath);
      } catch {
        await io.err(`Warning: Identity file ${keyArg ?? keyPath} not accessible: No such file or directory.\n`);
      }
      const remoteHome = user === 'root' ? '/root' : owner.user.name === user ? owner.user.home : `/home/${user}`;
      const keys = await owner.system.shell
        .fsAs(0)
        .readFile(posix.join(remoteHome, '.ssh/authorized_keys'))
        .catch(() => '');
      const blob = keyBlob(pub);
      const from = autoNodeIp(m, ip);
      if (!blob || !authorized(keys, blob, from)) {
        await io.err(`${user}@${ip}: Permission denied (publickey,password).\r\n${closed(255, 'unexplained error')}`);
        return io.result(255);
      }
      if (!isInstalled(owner.packages, 'rsync')) {
        await io.err(
          `bash: line 1: rsync: command not found\n${closed(127, 'remote command not found').replace('(code 127) at io.c(231)', '(code 127) at io.c(235)')}`,
        );
        return io.result(12);
      }
      target = owner;
      targetUid = rsyncPath.startsWith('sudo ') ? 0 : user === 'root' ? 0 : owner.user.uid;
    }
    const srcIsDir = await env.ctx.fs
      .stat(srcRoot)
      .then((s) => s.isDirectory)
      .catch(() => undefined);
    if (srcIsDir === undefined) {
      await io.err(
        `rsync: [sender] link_stat "${srcRoot}" failed: No such file or directory (2)\nrsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1333) [sender=${VERSION}]\n`,
      );
      return io.result(23);
    }
    // `dir/` copies the contents; `dir` copies the directory itself into the destination.
    const base = srcIsDir && !src.path.endsWith('/') ? posix.basename(srcRoot) : '';
    const entries: Array<{ rel: string; dir: boolean }> = srcIsDir
      ? await walk(env.ctx.fs, srcRoot)
      : [{ rel: '', dir: false }];
    const dstRoot = posix.join(
      target === m
        ? env.ctx.fs.resolvePath(env.ctx.cwd, dst.path)
        : dst.path.startsWith('/')
          ? dst.path
          : posix.join(target.user.home, dst.path),
      base,
    );
    // The receiver writes as the remote user (root behind `--rsync-path='sudo rsync'`).
    const tfs = target === m ? env.ctx.fs : target.system.shell.fsAs(targetUid);
    let bytes = 0;
    let files = 0;
    const write = async (): Promise<void> => {
      await tfs.mkdir(dstRoot, { recursive: true });
      if (del && srcIsDir) {
        // --delete: what the receiver has and the sender does not goes away (deepest first).
        const want = new Set(entries.map((e) => e.rel));
        for (const e of (await walk(tfs, dstRoot)).reverse())
          if (!want.has(e.rel)) await tfs.rm(posix.join(dstRoot, e.rel), { recursive: true, force: true });
      }
      for (const e of entries) {
        const from = e.rel ? posix.join(srcRoot, e.rel) : srcRoot;
        const to = e.rel ? posix.join(dstRoot, e.rel) : dstRoot;
        if (e.dir) {
          await tfs.mkdir(to, { recursive: true });
          continue;
        }
        const content = await env.ctx.fs.readFile(from);
        const mode = (await env.ctx.fs.stat(from)).mode & 0o7777;
        await tfs.writeFile(to, content);
        await tfs.chmod(to, mode).catch(() => undefined);
        bytes += standsFor(content);
        files++;
      }
    };
    try {
      await write();
    } catch (e) {
      await io.err(
        `rsync: [receiver] mkstemp "${dstRoot}" failed: Permission denied (13)\nrsync error: some files/attrs were not transferred (see previous errors) (code 23) at main.c(1333) [sender=${VERSION}]\n`,
      );
      void e;
      return io.result(23);
    }
    const secs = bytes / BPS;
    if (!(await io.sleep(secs * 1000))) return io.result(20);
    if (progress) {
      const t = Math.round(secs);
      await io.out(
        `\r${bytes.toLocaleString('en-US').padStart(15)} 100%  ${(BPS / 2 ** 20).toFixed(2)}MB/s    ${Math.floor(t / 3600)}:${String(Math.floor(t / 60) % 60).padStart(2, '0')}:${String(t % 60).padStart(2, '0')} (xfr#${files}, to-chk=0/${entries.length + 1})\n`,
      );
    }
    m.revision++;
    target.revision++;
    return io.result(0);
  },
};
