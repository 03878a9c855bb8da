/**
 * A gzip-compressed POSIX ustar archive of in-memory files. A bundle holds a few dozen short-named
 * text files, so the format's plain form is enough (names up to 255 bytes through the prefix field,
 * no links, no sparse files) and no dependency is needed; GNU tar, bsdtar and Python's tarfile read it.
 */
import { gzipSync } from 'node:zlib';

export interface TarEntry {
  /** Path inside the archive, `/`-separated; a trailing `/` makes a directory. */
  name: string;
  content?: string | Buffer;
  mode?: number;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  // width − 1 digits and a NUL, as ustar writers do.
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function splitName(name: string): { prefix: string; base: string } {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  // ustar: the name is prefix + '/' + base, cut at a slash with base ≤ 100 and prefix ≤ 155 bytes.
  for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const base = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(base) <= 100 && base !== '') return { prefix, base };
  }
  throw new Error(`archive member name too long for ustar: ${name}`);
}

function header(name: string, size: number, mode: number, mtime: number, dir: boolean): Buffer {
  const h = Buffer.alloc(BLOCK, 0);
  const { prefix, base } = splitName(name);
  h.write(base, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(size, 12), 124, 12, 'ascii');
  h.write(octal(Math.floor(mtime / 1000), 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum counted as spaces
  h.write(dir ? '5' : '0', 156, 1, 'ascii');
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** The uncompressed archive: entries in the given order, then the two zero blocks that end it. */
export function tar(entries: readonly TarEntry[], mtime: number = Date.now()): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const dir = e.name.endsWith('/');
    const body = dir ? Buffer.alloc(0) : Buffer.isBuffer(e.content) ? e.content : Buffer.from(e.content ?? '', 'utf8');
    parts.push(header(e.name, body.length, e.mode ?? (dir ? 0o700 : 0o600), mtime, dir));
    if (body.length > 0) {
      parts.push(body);
      const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
      if (pad > 0) parts.push(Buffer.alloc(pad, 0));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2, 0));
  return Buffer.concat(parts);
}

export function tarGz(entries: readonly TarEntry[], mtime?: number): Buffer {
  return gzipSync(tar(entries, mtime), { level: 9 });
}

/** Reads back an uncompressed ustar archive (tests, and the bundle's own post-write secret scan). */
export function untar(archive: Buffer): Array<{ name: string; content: Buffer; dir: boolean }> {
  const out: Array<{ name: string; content: Buffer; dir: boolean }> = [];
  let off = 0;
  while (off + BLOCK <= archive.length) {
    const h = archive.subarray(off, off + BLOCK);
    if (h.every((b) => b === 0)) break;
    const str = (a: number, n: number) =>
      h
        .subarray(a, a + n)
        .toString('utf8')
        .replace(/\0.*$/s, '');
    const base = str(0, 100);
    const prefix = str(345, 155);
    const size = parseInt(str(124, 12).trim() || '0', 8);
    const dir = str(156, 1) === '5';
    off += BLOCK;
    out.push({
      name: prefix ? `${prefix}/${base}` : base,
      content: Buffer.from(archive.subarray(off, off + size)),
      dir,
    });
    off += Math.ceil(size / BLOCK) * BLOCK;
  }
  return out;
}
