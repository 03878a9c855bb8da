/**
 * coreutils 8.32 commands that write files as the transport's writeFileAtomic runs them, with and
 * without sudo: install (-D -d -m -o -g -p -t -T -v, /dev/stdin and /dev/null sources), dd
 * (if=/of=/conv=/status=) and rm (-f silences only missing files); with chown/chmod
 * (owner-commands.ts) and stat (file-info.ts), the set every machine's shell has.
 */
import { posix } from 'node:path';
import { defineCommand, latin1FromBytes, type Command, type ResolvedCommandContext } from 'just-bash';
import { errnoText } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { fail } from '../shell/args.js';
import { effectiveUid } from './exec-context.js';
import { invalidOption, missingOperand, scanArgs } from './arg-loops.js';
import { accounts, ownerKey, q, statCommand } from './file-info.js';
import { applyMode, chmodCommand, chownCommand, parseOwnerSpec } from './owner-commands.js';
import type { Owner } from './perms.js';

/** Source bytes for install/dd: a file, or stdin for /dev/stdin, nothing for /dev/null. */
async function readSource(ctx: ResolvedCommandContext, path: string): Promise<string> {
  if (path === '/dev/stdin' || path === '-') return latin1FromBytes(ctx.stdin);
  if (path === '/dev/null') return '';
  if (path === '/dev/zero') return '';
  const buf = await ctx.fs.readFileBuffer(path);
  return Buffer.from(buf).toString('latin1');
}

export function installCommand(m: Machine): Command {
  return defineCommand('install', async (args, ctx) => {
    let makeLeading = false;
    let dirs = false;
    let mode = 0o755;
    let owner: string | undefined;
    let group: string | undefined;
    let targetDir: string | undefined;
    let noTargetDir = false;
    let verbose = false;
    const operands: string[] = [];
    const bad = scanArgs(args, operands, (a, value) => {
      if (a === '-m' || a === '--mode') {
        const v = value() ?? '';
        const parsed = applyMode(v, 0o755, false);
        if (parsed === undefined) return fail(1, `install: invalid mode ${q(ctx, v)}\n`);
        mode = parsed;
      } else if (a.startsWith('--mode=')) mode = applyMode(a.slice(7), 0o755, false) ?? mode;
      else if (a === '-o' || a === '--owner') owner = value();
      else if (a.startsWith('--owner=')) owner = a.slice(8);
      else if (a === '-g' || a === '--group') group = value();
      else if (a.startsWith('--group=')) group = a.slice(8);
      else if (a === '-t' || a === '--target-directory') targetDir = value();
      else if (a.startsWith('--target-directory=')) targetDir = a.slice(19);
      else if (/^-[DdpTvCcbs]+$/.test(a)) {
        if (a.includes('D')) makeLeading = true;
        if (a.includes('d')) dirs = true;
        if (a.includes('T')) noTargetDir = true;
        if (a.includes('v')) verbose = true;
      } else if (/^-m[0-7]+$/.test(a)) mode = parseInt(a.slice(2), 8);
      else if (['--preserve-timestamps', '--compare', '--no-target-directory', '--verbose'].includes(a)) {
        if (a === '--no-target-directory') noTargetDir = true;
        if (a === '--verbose') verbose = true;
      } else if (a.startsWith('-') && a !== '-') return invalidOption('install', a.slice(1, 2));
      else operands.push(a);
    });
    if (bad) return bad;
    const acct = await accounts(ctx);
    const uid = effectiveUid(ctx, m.user.uid);
    let want: Owner | undefined;
    if (owner !== undefined || group !== undefined) {
      const parsed = parseOwnerSpec(`${owner ?? ''}${group !== undefined ? `:${group}` : ''}`, acct, {
        uid,
        gid: m.system.files.gidOf(uid),
      });
      if (typeof parsed === 'string')
        return fail(1, `install: ${parsed.replace(/'([^']*)'$/, (_, x: string) => q(ctx, x))}\n`);
      want = parsed;
    }
    let out = '';
    let err = '';
    const setOwner = async (path: string, shown: string): Promise<void> => {
      if (!want) return;
      const key = await ownerKey(ctx, path, true);
      if (uid !== 0 && (want.uid !== uid || !m.system.files.groupsOf(uid).includes(want.gid))) {
        err += `install: cannot change ownership of ${q(ctx, shown)}: Operation not permitted\n`;
        return;
      }
      m.system.files.set(key, want);
    };
    const mkdirs = async (dir: string, shown: string): Promise<boolean> => {
      try {
        await ctx.fs.mkdir(dir, { recursive: true });
        return true;
      } catch (e) {
        err += `install: cannot create directory ${q(ctx, shown)}: ${errnoText(e)}\n`;
        return false;
      }
    };
    if (dirs) {
      if (operands.length === 0)
        return fail(1, "install: missing operand\nTry 'install --help' for more information.\n");
      for (const d of operands) {
        const path = ctx.fs.resolvePath(ctx.cwd, d);
        if (!(await mkdirs(path, d))) continue;
        await ctx.fs.chmod(path, mode).catch(() => undefined);
        await setOwner(path, d);
        if (verbose) out += `install: creating directory ${q(ctx, d)}\n`;
      }
      return { stdout: out, stderr: err, exitCode: err ? 1 : 0 };
    }
    const sources = targetDir !== undefined ? operands : operands.slice(0, -1);
    const dest = targetDir ?? operands[operands.length - 1];
    if (sources.length === 0 || dest === undefined) {
      return fail(
        1,
        `install: missing destination file operand after ${q(ctx, operands[0] ?? '')}\nTry 'install --help' for more information.\n`,
      );
    }
    const destPath = ctx.fs.resolvePath(ctx.cwd, dest);
    if (makeLeading) {
      const parent = targetDir !== undefined || sources.length > 1 ? destPath : posix.dirname(destPath);
      if (!(await mkdirs(parent, posix.dirname(dest)))) return { stdout: out, stderr: err, exitCode: 1 };
    }
    const destIsDir =
      !noTargetDir &&
      (await ctx.fs.stat(destPath).then(
        (s) => s.isDirectory,
        () => false,
      ));
    if (sources.length > 1 && !destIsDir) return fail(1, `install: target ${q(ctx, dest)} is not a directory\n`);
    for (const src of sources) {
      const srcPath = ctx.fs.resolvePath(ctx.cwd, src);
      let content: string;
      try {
        const st = src === '/dev/stdin' || src === '/dev/null' ? undefined : await ctx.fs.stat(srcPath);
        if (st?.isDirectory) {
          err += `install: omitting directory ${q(ctx, src)}\n`;
          continue;
        }
        content = await readSource(ctx, srcPath);
      } catch (e) {
        err += `install: cannot stat ${q(ctx, src)}: ${errnoText(e)}\n`;
        continue;
      }
      const target = destIsDir ? posix.join(destPath, posix.basename(srcPath)) : destPath;
      const shown = destIsDir ? posix.join(dest, posix.basename(src)) : dest;
      try {
        // install unlinks the destination and creates a new file (new owner: the installer).
        if (
          await ctx.fs.lstat(target).then(
            () => true,
            () => false,
          )
        )
          await ctx.fs.rm(target);
        await ctx.fs.writeFile(target, content, 'binary');
        await ctx.fs.chmod(target, mode);
      } catch (e) {
        err += `install: cannot create regular file ${q(ctx, shown)}: ${errnoText(e)}\n`;
        continue;
      }
      await setOwner(target, shown);
      if (verbose) out += `${q(ctx, src)} -> ${q(ctx, shown)}\n`;
    }
    return { stdout: out, stderr: err, exitCode: err ? 1 : 0 };
  });
}

export function ddCommand(): Command {
  return defineCommand('dd', async (args, ctx) => {
    const opts: Record<string, string> = {};
    for (const a of args) {
      const eq = a.indexOf('=');
      if (eq < 0) return fail(1, `dd: unrecognized operand ${q(ctx, a)}\nTry 'dd --help' for more information.\n`);
      opts[a.slice(0, eq)] = a.slice(eq + 1);
    }
    const conv = (opts.conv ?? '').split(',');
    const oflag = (opts.oflag ?? '').split(',');
    let data: string;
    try {
      data =
        opts.if !== undefined
          ? await readSource(ctx, ctx.fs.resolvePath(ctx.cwd, opts.if))
          : latin1FromBytes(ctx.stdin);
    } catch (e) {
      return fail(1, `dd: failed to open ${q(ctx, opts.if ?? '')}: ${errnoText(e)}\n`);
    }
    const bs = Number((opts.bs ?? '512').replace(/[kK]$/, '000').replace(/M$/, '000000'));
    if (opts.count !== undefined) data = data.slice(0, Number(opts.count) * bs);
    let stdout = '';
    if (opts.of !== undefined) {
      const path = ctx.fs.resolvePath(ctx.cwd, opts.of);
      try {
        if (oflag.includes('append')) await ctx.fs.appendFile(path, data, 'binary');
        else if (conv.includes('notrunc') && (await ctx.fs.exists(path))) {
          const old = Buffer.from(await ctx.fs.readFileBuffer(path)).toString('latin1');
          await ctx.fs.writeFile(path, data + old.slice(data.length), 'binary');
        } else await ctx.fs.writeFile(path, data, 'binary');
      } catch (e) {
        return fail(1, `dd: failed to open ${q(ctx, opts.of)}: ${errnoText(e)}\n`);
      }
    } else stdout = data;
    let stderr = '';
    if (opts.status !== 'none') {
      const full = Math.floor(data.length / bs);
      const part = data.length % bs ? 1 : 0;
      const secs = 0.000042 + data.length / 2e9;
      const rate = data.length / secs;
      const unit = (n: number, k: number, names: string[]): string => {
        let i = 0;
        while (n >= k && i < names.length - 1) {
          n /= k;
          i++;
        }
        return `${n >= 100 || i === 0 ? Math.round(n) : n.toPrecision(2)} ${names[i]}`;
      };
      const size =
        data.length >= 1000
          ? ` (${unit(data.length, 1000, ['B', 'kB', 'MB', 'GB'])}, ${unit(data.length, 1024, ['B', 'KiB', 'MiB', 'GiB'])})`
          : '';
      if (opts.status !== 'noxfer') stderr = `${full}+${part} records in\n${full}+${part} records out\n`;
      if (opts.status !== 'noxfer')
        stderr += `${data.length} bytes${size} copied, ${secs.toPrecision(2)} s, ${unit(rate, 1000, ['B/s', 'kB/s', 'MB/s', 'GB/s'])}\n`;
    }
    return { stdout, stderr, exitCode: 0, stdoutKind: 'bytes' };
  });
}

/**
 * rm: `-f` silences only missing files, as in coreutils — a directory the user may not write
 * still fails (`Permission denied`), which just-bash's rm would swallow.
 */
export function rmCommand(): Command {
  return defineCommand('rm', async (args, ctx) => {
    let force = false;
    let recursive = false;
    let dirs = false;
    let verbose = false;
    const files: string[] = [];
    const bad = scanArgs(args, files, (a) => {
      if (a === '--force') force = true;
      else if (a === '--recursive') recursive = true;
      else if (a === '--dir') dirs = true;
      else if (a === '--verbose') verbose = true;
      else if (/^-[frRdviI]+$/.test(a)) {
        if (a.includes('f')) force = true;
        if (/[rR]/.test(a)) recursive = true;
        if (a.includes('d')) dirs = true;
        if (a.includes('v')) verbose = true;
      } else if (a.startsWith('-') && a !== '-') return invalidOption('rm', a.slice(1, 2));
      else files.push(a);
    });
    if (bad) return bad;
    if (files.length === 0) return force ? { stdout: '', stderr: '', exitCode: 0 } : missingOperand('rm');
    let out = '';
    let err = '';
    for (const f of files) {
      const path = ctx.fs.resolvePath(ctx.cwd, f);
      if (/(^|\/)\.\.?$/.test(f)) {
        err += `rm: refusing to remove '.' or '..' directory: skipping ${q(ctx, f)}\n`;
        continue;
      }
      const st = await ctx.fs.lstat(path).catch(() => undefined);
      if (!st) {
        if (!force) err += `rm: cannot remove ${q(ctx, f)}: No such file or directory\n`;
        continue;
      }
      if (st.isDirectory && !recursive) {
        const empty = (await ctx.fs.readdir(path).catch(() => ['x'])).length === 0;
        if (!dirs || !empty) {
          err += `rm: cannot remove ${q(ctx, f)}: Is a directory\n`;
          continue;
        }
      }
      try {
        await ctx.fs.rm(path, { recursive, force: true });
        if (verbose) out += `removed ${st.isDirectory ? 'directory ' : ''}${q(ctx, f)}\n`;
      } catch (e) {
        err += `rm: cannot remove ${q(ctx, f)}: ${errnoText(e)}\n`;
      }
    }
    return { stdout: out, stderr: err, exitCode: err ? 1 : 0 };
  });
}

export function fileCommands(m: Machine): Command[] {
  return [statCommand(m), chownCommand(m), chmodCommand(), installCommand(m), ddCommand(), rmCommand()];
}
