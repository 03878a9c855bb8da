/**
 * Builds the ssh2 authentication methods for an SshHost, in the order ssh tries them: the agent, then an
 * inline private key, then the identity files. Keys are parsed up front rather than handed to ssh2 as
 * paths, so an unreadable, encrypted or public-only key is skipped with a note instead of failing the whole
 * connection; the notes end up in the error when no method works, which is where the operator looks.
 */
import { FileRefusedError, readFileSafely } from '../util/read-file-safely.js';
// ssh2 is CommonJS: Node's ESM loader exposes only its default export at run time.
import ssh2, { type AnyAuthMethod, type ParsedKey } from 'ssh2';

const { utils } = ssh2;
import type { SshHostOptions } from './ssh-options.js';

export type AuthOptions = Pick<
  SshHostOptions,
  'user' | 'agent' | 'privateKey' | 'passphrase' | 'identityFiles' | 'identityFilesDefaulted'
>;

export interface AuthMethods {
  methods: AnyAuthMethod[];
  /** Why keys were skipped, for the error message. */
  notes: string[];
}

/**
 * Missing identity files are skipped silently only when they are OpenSSH's defaults (which usually do not all
 * exist); a file the inventory or an IdentityFile line names is noted "no such identity: PATH", as ssh does.
 * A FIFO, device or directory given as a key is refused by name, never read.
 */
export async function loadAuthMethods(opts: AuthOptions): Promise<AuthMethods> {
  const { user } = opts;
  const methods: AnyAuthMethod[] = [];
  const notes: string[] = [];
  if (opts.agent) methods.push({ type: 'agent', username: user, agent: opts.agent });
  const addKey = (data: Buffer | string, label: string) => {
    const parsed = utils.parseKey(data, opts.passphrase);
    if (parsed instanceof Error) {
      notes.push(`${label}: ${parsed.message}`);
      return;
    }
    const key = (Array.isArray(parsed) ? parsed[0] : parsed) as ParsedKey | undefined;
    if (!key || key.getPrivatePEM() === null) {
      notes.push(`${label}: not a private key`);
      return;
    }
    methods.push({ type: 'publickey', username: user, key });
  };
  if (opts.privateKey !== undefined) addKey(opts.privateKey, 'privateKey');
  for (const file of opts.identityFiles ?? []) {
    let data: Buffer;
    try {
      data = await readFileSafely(file, 'SSH key');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (err instanceof FileRefusedError) notes.push(err.message);
      else if (code === 'ENOENT' || code === 'ENOTDIR') {
        if (opts.identityFilesDefaulted !== true) notes.push(`no such identity: ${file}`);
      } else notes.push(`${file}: ${(err as Error).message}`);
      continue;
    }
    addKey(data, file);
  }
  return { methods, notes };
}
