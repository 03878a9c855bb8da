/**
 * A read-mostly file system computed from the model, mounted at /sys and /proc. Directories
 * list their entries lazily, files render their content at every read (so `cat operstate`
 * follows `ip link set up`), and symlinks are relative as in sysfs so `readlink -f` walks the
 * real device hierarchy. Unknown paths are ENOENT, writes are refused unless a node accepts them.
 */
import { posix } from 'node:path';
import { encodeUtf8ToBytes } from 'just-bash';
import type {
  BufferEncoding,
  ByteString,
  CpOptions,
  FileContent,
  FsStat,
  IFileSystem,
  MkdirOptions,
  RmOptions,
} from 'just-bash';

/** Shapes of just-bash's fs/interface types that its package index does not re-export. */
interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}
type ReadFileOptions = { encoding?: BufferEncoding | null };
type WriteFileOptions = { encoding?: BufferEncoding };

export interface VDir {
  type: 'dir';
  entries: () => Record<string, VNode>;
  mode?: number;
}
export interface VFile {
  type: 'file';
  read: () => string;
  write?: (data: string) => void;
  mode?: number;
}
export interface VLink {
  type: 'link';
  target: string;
}
export type VNode = VDir | VFile | VLink;

export const dir = (entries: () => Record<string, VNode>, mode = 0o755): VDir => ({ type: 'dir', entries, mode });
export const file = (read: () => string, mode = 0o444, write?: (data: string) => void): VFile =>
  write ? { type: 'file', read, mode, write } : { type: 'file', read, mode };
export const text = (content: string, mode = 0o444): VFile => ({ type: 'file', read: () => content, mode });
export const link = (target: string): VLink => ({ type: 'link', target });

const MESSAGES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'not a directory',
  EISDIR: 'illegal operation on a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EINVAL: 'invalid argument',
  ELOOP: 'too many levels of symbolic links',
  ENODATA: 'no data available',
};

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EINVAL: 'Invalid argument',
  EISDIR: 'Is a directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  ENOTDIR: 'Not a directory',
  ENODATA: 'No data available',
  ELOOP: 'Too many levels of symbolic links',
};

/** strerror() text for an error raised by a file system (`ENOENT: …` messages or a `code`). */
export function errnoText(e: unknown): string {
  const code = (e as { code?: string }).code ?? /^(E[A-Z]+)\b/.exec((e as Error).message ?? '')?.[1] ?? 'ENOENT';
  return ERRNO_TEXT[code] ?? ERRNO_TEXT.ENOENT ?? code;
}

/** The path named in a Node-style error message (`…, open '/sys/x'`). */
export function errorPath(e: unknown): string | undefined {
  return /'([^']+)'\s*$/.exec((e as Error).message ?? '')?.[1];
}

/** Errors shaped like Node's (`ENOENT: no such file or directory, open '/x'`), which just-bash maps to messages. */
export function vfsError(code: string, op: string, path: string): Error {
  const err = new Error(`${code}: ${MESSAGES[code] ?? code.toLowerCase()}, ${op} '${path}'`) as Error & {
    code: string;
  };
  err.code = code;
  return err;
}

interface Resolved {
  node: VNode;
  /** Canonical path components from the mount root. */
  parts: string[];
}

export interface TreeFsOptions {
  /** Where the tree is mounted, used in error messages and canonical paths. */
  mountPoint: string;
  root: () => VDir;
  /** Changes whenever the model changes; the tree (and its memoised directories) is rebuilt then. */
  version: () => number;
  /** sysfs reports 4096 for attribute sizes, procfs 0. */
  fileSize: number;
  mtime: () => Date;
}

export class TreeFs implements IFileSystem {
  private cachedRoot: VDir | undefined;
  private cachedVersion = -1;
  private readonly memo = new WeakMap<VDir, Record<string, VNode>>();

  constructor(private readonly opts: TreeFsOptions) {}

  private root(): VDir {
    const v = this.opts.version();
    if (!this.cachedRoot || v !== this.cachedVersion) {
      this.cachedRoot = this.opts.root();
      this.cachedVersion = v;
    }
    return this.cachedRoot;
  }

  private entries(d: VDir): Record<string, VNode> {
    let e = this.memo.get(d);
    if (!e) {
      e = d.entries();
      this.memo.set(d, e);
    }
    return e;
  }

  private display(path: string): string {
    const rel = path.startsWith('/') ? path : `/${path}`;
    return this.opts.mountPoint === '/' ? rel : rel === '/' ? this.opts.mountPoint : `${this.opts.mountPoint}${rel}`;
  }

  /** Walks `path`, following symlinks (the final one only if `followLast`), with physical `..`. */
  private resolve(path: string, followLast: boolean, op: string): Resolved {
    const todo = path.split('/').filter((p) => p !== '' && p !== '.');
    const stack: Array<{ node: VNode; name: string }> = [{ node: this.root(), name: '' }];
    let hops = 0;
    while (todo.length > 0) {
      const name = todo.shift() as string;
      if (name === '..') {
        if (stack.length > 1) stack.pop();
        continue;
      }
      const cur = stack[stack.length - 1]?.node;
      if (!cur || cur.type !== 'dir') throw vfsError(cur ? 'ENOTDIR' : 'ENOENT', op, this.display(path));
      const next = this.entries(cur)[name];
      if (!next) throw vfsError('ENOENT', op, this.display(path));
      if (next.type === 'link' && (todo.length > 0 || followLast)) {
        if (++hops > 40) throw vfsError('ELOOP', op, this.display(path));
        const target = next.target.split('/').filter((p) => p !== '' && p !== '.');
        if (next.target.startsWith('/')) stack.splice(1);
        todo.unshift(...target);
        continue;
      }
      stack.push({ node: next, name });
    }
    const last = stack[stack.length - 1];
    if (!last) throw vfsError('ENOENT', op, this.display(path));
    return { node: last.node, parts: stack.slice(1).map((s) => s.name) };
  }

  private statOf(node: VNode): FsStat {
    const mtime = this.opts.mtime();
    if (node.type === 'dir')
      return { isFile: false, isDirectory: true, isSymbolicLink: false, mode: node.mode ?? 0o755, size: 0, mtime };
    if (node.type === 'link')
      return { isFile: false, isDirectory: false, isSymbolicLink: true, mode: 0o777, size: node.target.length, mtime };
    return {
      isFile: true,
      isDirectory: false,
      isSymbolicLink: false,
      mode: node.mode ?? 0o444,
      size: this.opts.fileSize,
      mtime,
    };
  }

  private readNode(path: string): string {
    const { node } = this.resolve(path, true, 'open');
    if (node.type === 'dir') throw vfsError('EISDIR', 'read', this.display(path));
    if (node.type !== 'file') throw vfsError('ENOENT', 'open', this.display(path));
    return node.read();
  }

  async readFile(path: string, _options?: ReadFileOptions | BufferEncoding): Promise<string> {
    return this.readNode(path);
  }

  async readFileBytes(path: string): Promise<ByteString> {
    return encodeUtf8ToBytes(this.readNode(path));
  }

  async readFileBuffer(path: string): Promise<Uint8Array> {
    return new Uint8Array(Buffer.from(this.readNode(path), 'utf8'));
  }

  async writeFile(path: string, content: FileContent, _options?: WriteFileOptions | BufferEncoding): Promise<void> {
    let res: Resolved;
    try {
      res = this.resolve(path, true, 'open');
    } catch {
      throw vfsError('EACCES', 'open', this.display(path));
    }
    if (res.node.type !== 'file' || !res.node.write) throw vfsError('EACCES', 'open', this.display(path));
    res.node.write(typeof content === 'string' ? content : Buffer.from(content).toString('utf8'));
  }

  async appendFile(path: string, content: FileContent, options?: WriteFileOptions | BufferEncoding): Promise<void> {
    return this.writeFile(path, content, options);
  }

  async exists(path: string): Promise<boolean> {
    try {
      this.resolve(path, true, 'stat');
      return true;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    return this.statOf(this.resolve(path, true, 'stat').node);
  }

  async lstat(path: string): Promise<FsStat> {
    return this.statOf(this.resolve(path, false, 'lstat').node);
  }

  async mkdir(path: string, _options?: MkdirOptions): Promise<void> {
    throw vfsError('EPERM', 'mkdir', this.display(path));
  }

  async readdir(path: string): Promise<string[]> {
    const { node } = this.resolve(path, true, 'scandir');
    if (node.type !== 'dir') throw vfsError('ENOTDIR', 'scandir', this.display(path));
    return Object.keys(this.entries(node));
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    const { node } = this.resolve(path, true, 'scandir');
    if (node.type !== 'dir') throw vfsError('ENOTDIR', 'scandir', this.display(path));
    return Object.entries(this.entries(node)).map(([name, n]) => ({
      name,
      isFile: n.type === 'file',
      isDirectory: n.type === 'dir',
      isSymbolicLink: n.type === 'link',
    }));
  }

  async rm(path: string, _options?: RmOptions): Promise<void> {
    throw vfsError('EPERM', 'rm', this.display(path));
  }

  async cp(src: string, dest: string, _options?: CpOptions): Promise<void> {
    throw vfsError('EPERM', 'cp', this.display(dest));
  }

  async mv(src: string, _dest: string): Promise<void> {
    throw vfsError('EPERM', 'rename', this.display(src));
  }

  resolvePath(base: string, path: string): string {
    return posix.resolve(base, path);
  }

  getAllPaths(): string[] {
    return [];
  }

  async chmod(path: string, _mode: number): Promise<void> {
    throw vfsError('EPERM', 'chmod', this.display(path));
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw vfsError('EPERM', 'symlink', this.display(linkPath));
  }

  async link(_existingPath: string, newPath: string): Promise<void> {
    throw vfsError('EPERM', 'link', this.display(newPath));
  }

  async readlink(path: string): Promise<string> {
    const { node } = this.resolve(path, false, 'readlink');
    if (node.type !== 'link') throw vfsError('EINVAL', 'readlink', this.display(path));
    return node.target;
  }

  async realpath(path: string): Promise<string> {
    return `/${this.resolve(path, true, 'realpath').parts.join('/')}`;
  }

  async utimes(path: string, _atime: Date, _mtime: Date): Promise<void> {
    throw vfsError('EPERM', 'utime', this.display(path));
  }
}
