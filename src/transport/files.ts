/**
 * readFile and writeFileAtomic in terms of `run`, shared by SshHost and LocalHost so both behave the same.
 * Every path is an argv word (quoted by buildCommand); file content only ever travels on stdin.
 */
import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { commandFailed } from './output.js';
import {
  TransportError,
  type Command,
  type RunOptions,
  type RunResult,
  type WriteFileOptions,
  type WriteFileResult,
} from './types.js';

export interface CommandRunner {
  readonly name: string;
  run(command: Command, options?: RunOptions): Promise<RunResult>;
}

export const DEFAULT_BACKUP_ROOT = '/var/lib/l20-setup/backup';

/** A run id for backup folders: `20261129T120000Z`. */
export function backupRunId(date = new Date()): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

function sudoOpt(sudo: boolean | undefined): RunOptions {
  return sudo ? { sudo: true } : {};
}

/** `cat -- PATH`; a non-zero exit becomes a CommandFailedError with the exit code and stderr lines. */
export async function readFileVia(
  host: CommandRunner,
  path: string,
  options: { sudo?: boolean } = {},
): Promise<string> {
  const result = await host.run({ argv: ['cat', '--', path] }, sudoOpt(options.sudo));
  if (result.exitCode !== 0) throw commandFailed(host.name, `reading ${path}`, result);
  return result.stdout;
}

interface FileState {
  exists: boolean;
  mode?: number;
  type?: string;
}

async function statPath(host: CommandRunner, path: string, sudo: boolean | undefined): Promise<FileState> {
  const result = await host.run({ argv: ['stat', '-c', '%a %F', '--', path] }, sudoOpt(sudo));
  if (result.exitCode !== 0) {
    if (/No such file or directory/.test(result.stderr)) return { exists: false };
    throw commandFailed(host.name, `checking ${path}`, result);
  }
  const m = /^([0-7]{1,4}) (.+)$/.exec(result.stdout.trim());
  if (!m || m[1] === undefined || m[2] === undefined) {
    throw new TransportError(
      `${host.name}: unexpected stat output for ${path}: ${JSON.stringify(result.stdout.slice(0, 80))}`,
      host.name,
      result.commandLine,
    );
  }
  return { exists: true, mode: parseInt(m[1], 8), type: m[2] };
}

function checkMode(mode: number): string {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777)
    throw new Error(`invalid file mode ${mode}: use 0 to 0o7777`);
  return mode.toString(8).padStart(4, '0');
}

/**
 * Writes `content` to `path` only when it differs (content, or mode when `mode` is given):
 *   1. `stat -c '%a %F' -- PATH` and `cat -- PATH` read the current state (symlinks are followed);
 *   2. the original is copied to BACKUP_DIR/PATH with `install -D -p -m MODE`;
 *   3. leftovers of an earlier cut-short write (`PATH.l20tmp.*`, found with find -name, the name escaped) are
 *      removed; `install -m MODE /dev/null PATH.l20tmp.RANDOM` creates the temporary file (same directory, final mode),
 *      `dd of=TMP conv=fsync status=none` fills it from stdin (with sudo: `chown --reference=PATH` keeps
 *      the original owner);
 *   4. `mv -f -- TMP PATH` renames it into place atomically; on failure the temporary file is removed.
 */
export async function writeFileAtomicVia(
  host: CommandRunner,
  path: string,
  content: string,
  options: WriteFileOptions,
  defaultBackupDir: string,
): Promise<WriteFileResult> {
  if (path === '' || path.endsWith('/'))
    throw new Error(`writeFileAtomic needs a file path, got ${JSON.stringify(path)}`);
  const sudo = options.sudo;
  let target = path;
  let state = await statPath(host, target, sudo);
  if (state.exists && state.type === 'symbolic link') {
    const link = await host.run({ argv: ['readlink', '-f', '--', target] }, sudoOpt(sudo));
    const resolved = link.stdout.replace(/\n$/, '');
    if (link.exitCode !== 0 || resolved === '') throw commandFailed(host.name, `resolving the link ${path}`, link);
    target = resolved;
    state = await statPath(host, target, sudo);
  }
  if (state.exists && state.type !== 'regular file' && state.type !== 'regular empty file') {
    throw new TransportError(
      `${host.name}: ${target} is a ${state.type ?? 'special file'}, not a regular file`,
      host.name,
    );
  }
  const desiredMode = options.mode ?? state.mode ?? 0o644;
  const modeText = checkMode(desiredMode);

  if (state.exists) {
    const current = await readFileVia(host, target, { sudo });
    if (current === content && state.mode === desiredMode) return { changed: false };
  }

  let backupPath: string | undefined;
  if (state.exists) {
    const backupDir = options.backupDir ?? defaultBackupDir;
    backupPath = posix.join(backupDir, target.startsWith('/') ? target : posix.join('relative', target));
    const backup = await host.run(
      { argv: ['install', '-D', '-p', '-m', checkMode(state.mode ?? 0o600), '--', target, backupPath] },
      sudoOpt(sudo),
    );
    if (backup.exitCode !== 0) throw commandFailed(host.name, `backing up ${target} to ${backupPath}`, backup);
  }

  // A write cut short earlier (a dropped connection, a killed tool) can leave its temporary file beside
  // the target; it is removed before this write makes its own, so none outlives a completed write.
  const leftovers = await host.run(
    {
      script: '[ -d "$1" ] || exit 0\nexec find "$1" -maxdepth 1 -type f -name "$2" -delete\n',
      args: [posix.dirname(target), `${escapeGlob(posix.basename(target))}.l20tmp.*`],
    },
    sudoOpt(sudo),
  );
  if (leftovers.exitCode !== 0)
    throw commandFailed(host.name, `removing earlier temporary files beside ${target}`, leftovers);
  const tmp = `${target}.l20tmp.${randomBytes(6).toString('hex')}`;
  const removeTmp = async () => {
    await host.run({ argv: ['rm', '-f', '--', tmp] }, sudoOpt(sudo)).catch(() => undefined);
  };
  // The temporary file is created empty with its final mode first, so the content is never readable by
  // others, then filled from stdin. `dd` reads fd 0 itself: opening /dev/stdin fails when stdin is a socket.
  const create = await host.run({ argv: ['install', '-m', modeText, '--', '/dev/null', tmp] }, sudoOpt(sudo));
  if (create.exitCode !== 0) {
    await removeTmp();
    throw commandFailed(host.name, `creating ${tmp}`, create);
  }
  const write = await host.run(
    { argv: ['dd', `of=${tmp}`, 'conv=fsync', 'status=none'] },
    { ...sudoOpt(sudo), stdin: content },
  );
  if (write.exitCode !== 0) {
    await removeTmp();
    throw commandFailed(host.name, `writing ${tmp}`, write);
  }
  if (sudo && state.exists) {
    const own = await host.run({ argv: ['chown', `--reference=${target}`, '--', tmp] }, sudoOpt(sudo));
    if (own.exitCode !== 0) {
      await removeTmp();
      throw commandFailed(host.name, `copying the owner of ${target}`, own);
    }
  }
  const move = await host.run({ argv: ['mv', '-f', '--', tmp, target] }, sudoOpt(sudo));
  if (move.exitCode !== 0) {
    await removeTmp();
    throw commandFailed(host.name, `renaming ${tmp} to ${target}`, move);
  }
  return backupPath === undefined ? { changed: true } : { changed: true, backupPath };
}

/** A literal name as a find(1)/fnmatch pattern: the pattern characters are escaped. */
export function escapeGlob(name: string): string {
  return name.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}
