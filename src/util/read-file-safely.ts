/**
 * Every local file the tool reads on the operator's say-so (keys, known_hosts, ssh_config and its Includes,
 * the inventory, doctor and lint inputs) goes through here. A path can name anything: a FIFO blocks open(2)
 * and read(2) for ever (and a synchronous read does so on the event loop, deaf to SIGTERM and Ctrl-C),
 * /dev/zero and /dev/urandom never end, a directory fails with a bare EISDIR. So the file is opened with
 * O_NONBLOCK (a FIFO's open returns at once), the opened descriptor is fstat'ed (no race with a rename),
 * anything but a regular file is refused by name, and at most the kind's cap is read.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { escapeInvisible } from './sanitize.js';

/** Largest file accepted per kind, in bytes: far above any real one, far below what hurts. */
export const FILE_CAPS = {
  /** An OpenSSH private key is under 4 KiB (RSA 16384 bits is ~13 KiB). */
  'SSH key': 64 * 1024,
  /** ~100k hosts of ed25519 entries. */
  known_hosts: 16 * 1024 * 1024,
  'ssh config': 4 * 1024 * 1024,
  inventory: 4 * 1024 * 1024,
  /** Pasted command outputs and logs. */
  'doctor input': 64 * 1024 * 1024,
  'lint input': 64 * 1024 * 1024,
} as const;

export type FileKind = keyof typeof FILE_CAPS;

/** Why a path was not read: what it is instead of a file, or that it is too big. Carries the path. */
export class FileRefusedError extends Error {
  constructor(
    readonly path: string,
    /** The reason without the path, e.g. "is a FIFO, not a file". */
    readonly reason: string,
    readonly kind: FileKind,
  ) {
    // The path is the user's and may hold controls: named exactly, but inert.
    super(`${escapeInvisible(path)} ${reason}`);
    this.name = 'FileRefusedError';
  }
}

function whatItIs(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function notAFile(path: string, st: Stats, kind: FileKind): FileRefusedError {
  return new FileRefusedError(path, `is ${whatItIs(st)}, not a file: give the path of the ${kind} file`, kind);
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / 1024 / 1024} MiB` : `${bytes / 1024} KiB`;
}

let nullDeviceRdev: number | undefined;

/** The null device reads as an empty file, as OpenSSH reads it (`UserKnownHostsFile /dev/null` is common). */
function isNullDevice(st: Stats): boolean {
  if (!st.isCharacterDevice()) return false;
  try {
    nullDeviceRdev ??= statSync('/dev/null').rdev;
  } catch {
    return false;
  }
  return st.rdev === nullDeviceRdev;
}

/** Refuses a non-regular or too big file; returns the most bytes to read (one more than the cap, to see growth). */
function admit(path: string, st: Stats, kind: FileKind): number {
  const cap = FILE_CAPS[kind];
  if (isNullDevice(st)) return 0;
  if (!st.isFile()) throw notAFile(path, st, kind);
  if (st.size > cap) throw tooBig(path, kind);
  return cap + 1;
}

function tooBig(path: string, kind: FileKind): FileRefusedError {
  return new FileRefusedError(path, `is larger than ${sizeText(FILE_CAPS[kind])}, more than any ${kind} file`, kind);
}

/** O_NONBLOCK: open(2) on a FIFO with no writer returns at once instead of waiting for one. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** open(2) of a socket fails ENXIO; say what the path is rather than pass on a bare errno. */
function refusedOpen(path: string, err: unknown, kind: FileKind): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'ENXIO') return err;
  try {
    const st = statSync(path);
    return st.isFile() ? err : notAFile(path, st, kind);
  } catch {
    return err;
  }
}

/**
 * Reads a regular file of at most FILE_CAPS[kind] bytes, asynchronously. Errors of open(2) (ENOENT, EACCES)
 * are thrown as they are; anything that is not a regular file, or is too big, throws FileRefusedError.
 */
export async function readFileSafely(path: string, kind: FileKind): Promise<Buffer> {
  const handle = await open(path, OPEN_FLAGS).catch((err: unknown) => {
    throw refusedOpen(path, err, kind);
  });
  try {
    const st = await handle.stat();
    const buf = Buffer.alloc(Math.min(admit(path, st, kind), st.size + 1));
    let got = 0;
    while (got < buf.length) {
      const { bytesRead } = await handle.read(buf, got, buf.length - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    if (got > FILE_CAPS[kind]) throw tooBig(path, kind);
    return buf.subarray(0, got);
  } finally {
    await handle.close();
  }
}

/**
 * The same checks for the synchronous readers (ssh_config resolution, known_hosts look-ups) whose callers
 * cannot await: open never blocks (O_NONBLOCK), nothing but a regular file is read, and at most the cap, so
 * the event loop is held for one bounded local read at worst.
 */
export function readFileSafelySync(path: string, kind: FileKind): Buffer {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    throw refusedOpen(path, err, kind);
  }
  try {
    const st = fstatSync(fd);
    const buf = Buffer.alloc(Math.min(admit(path, st, kind), st.size + 1));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got > FILE_CAPS[kind]) throw tooBig(path, kind);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** Reads up to FILE_CAPS[kind] bytes of standard input (`-`); more is refused, not buffered. */
export async function readStdinSafely(kind: FileKind, stream: NodeJS.ReadableStream = process.stdin): Promise<Buffer> {
  const cap = FILE_CAPS[kind];
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    total += b.length;
    if (total > cap) throw new FileRefusedError('standard input', `is longer than ${sizeText(cap)}`, kind);
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/**
 * Whether bytes are binary: a NUL before the tail. Editors and `printf '...\0'` leave trailing NULs on text;
 * those are padding, not structure, so only a NUL followed by something other than NULs marks binary.
 */
export function looksBinary(bytes: Buffer, head = 8192): boolean {
  const end = textEnd(bytes);
  const nul = bytes.subarray(0, Math.min(end, head)).indexOf(0);
  return nul !== -1;
}

/** The length of `bytes` without its trailing NULs. */
export function textEnd(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return end;
}
