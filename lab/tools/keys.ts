/**
 * Key material the serving stages create: `ssh-keygen -t ed25519 -N '' [-C comment] -f FILE [-q]`
 * (the cluster key of docs/STAGES.md §3.9 that rsync uses), `ssh-keygen -l -f FILE`, and `openssl rand
 * -hex N | -base64 N` (the vLLM API key). Keys come from the machine's seeded PRNG, so a lab run is
 * reproducible; the formats are OpenSSH 8.9's and OpenSSL 3.0's (source-derived; the private key file
 * is a stand-in with the real armour).
 */
import { createHash } from 'node:crypto';
import type { ExecResult } from 'just-bash';
import { rng } from '../util/prng.js';
import type { Tool, ToolEnv } from './types.js';

const counters = new WeakMap<object, number>();
function next(env: ToolEnv, what: string): ReturnType<typeof rng> {
  const n = (counters.get(env.machine) ?? 0) + 1;
  counters.set(env.machine, n);
  return rng(env.machine.seed, env.machine.hostname, what, n);
}

function sshString(b: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  return Buffer.concat([len, b]);
}

/** The public key blob of an ed25519 key: string "ssh-ed25519" + string key. */
function ed25519Blob(key: Buffer): Buffer {
  return Buffer.concat([sshString(Buffer.from('ssh-ed25519')), sshString(key)]);
}

function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** ssh-keygen's "randomart" (the drunken bishop walk over the fingerprint). */
function randomart(blob: Buffer, title: string): string {
  const W = 17;
  const H = 9;
  const field = Array.from({ length: H }, () => Array<number>(W).fill(0));
  let x = 8;
  let y = 4;
  for (const byte of createHash('sha256').update(blob).digest()) {
    let b = byte;
    for (let i = 0; i < 4; i++) {
      x = Math.max(0, Math.min(W - 1, x + (b & 1 ? 1 : -1)));
      y = Math.max(0, Math.min(H - 1, y + (b & 2 ? 1 : -1)));
      field[y]![x]!++;
      b >>= 2;
    }
  }
  const chars = ' .o+=*BOX@%&#/^SE';
  const rows = field.map(
    (r, yy) =>
      `|${r.map((v, xx) => (xx === x && yy === y ? 'E' : xx === 8 && yy === 4 ? 'S' : chars[Math.min(v, 14)])).join('')}|`,
  );
  const head = `[${title}]`;
  const pad = W - head.length;
  return [
    `+${'-'.repeat(Math.floor(pad / 2))}${head}${'-'.repeat(Math.ceil(pad / 2))}+`,
    ...rows,
    '+----[SHA256]-----+',
  ].join('\n');
}

export const sshKeygen: Tool = {
  name: 'ssh-keygen',
  path: '/usr/bin/ssh-keygen',
  packages: ['openssh-client'],
  async run(args, env): Promise<ExecResult> {
    let type = 'rsa';
    let file: string | undefined;
    let comment: string | undefined;
    let quiet = false;
    let list = false;
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === '-t') type = args[++i] ?? '';
      else if (a === '-f') file = args[++i];
      else if (a === '-C') comment = args[++i];
      else if (a === '-N') i++;
      else if (a === '-q') quiet = true;
      else if (a === '-l') list = true;
      else if (a === '-lf') {
        list = true;
        file = args[++i];
      } else return { stdout: '', stderr: `ssh-keygen: illegal option -- ${a.replace(/^-/, '')}\n`, exitCode: 1 };
    }
    const fs = env.ctx.fs;
    const home = env.ctx.env.get('HOME') ?? env.machine.user.home;
    const path = fs.resolvePath(env.ctx.cwd, (file ?? `${home}/.ssh/id_${type}`).replace(/^~(?=\/)/, home));
    if (list) {
      try {
        const pub = (await fs.readFile(path.endsWith('.pub') ? path : `${path}.pub`)).trim().split(/\s+/);
        const blob = Buffer.from(pub[1] ?? '', 'base64');
        return {
          stdout: `256 ${fingerprint(blob)} ${pub.slice(2).join(' ') || 'no comment'} (ED25519)\n`,
          stderr: '',
          exitCode: 0,
        };
      } catch {
        return { stdout: '', stderr: `${path}: No such file or directory\n`, exitCode: 255 };
      }
    }
    if (type !== 'ed25519')
      return { stdout: '', stderr: `l20-lab: ssh-keygen: only -t ed25519 keys are modelled\n`, exitCode: 1 };
    if (await fs.exists(path)) return { stdout: `${path} already exists.\nOverwrite (y/n)? `, stderr: '', exitCode: 1 };
    const r = next(env, 'ssh-keygen');
    const key = Buffer.from(r.bytes(32));
    const blob = ed25519Blob(key);
    const who = comment ?? `${env.root ? 'root' : env.machine.user.name}@${env.machine.hostname}`;
    const privBody = Buffer.concat([
      Buffer.from('openssh-key-v1\0'),
      sshString(Buffer.from('none')),
      sshString(Buffer.from('none')),
      sshString(Buffer.alloc(0)),
      blob,
      Buffer.from(r.bytes(64)),
    ]).toString('base64');
    const priv = `-----BEGIN OPENSSH PRIVATE KEY-----\n${privBody.match(/.{1,70}/g)!.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`;
    try {
      await fs.writeFile(path, priv);
      await fs.chmod(path, 0o600);
      await fs.writeFile(`${path}.pub`, `ssh-ed25519 ${blob.toString('base64')} ${who}\n`);
      await fs.chmod(`${path}.pub`, 0o644);
    } catch {
      return { stdout: '', stderr: `Saving key "${path}" failed: Permission denied\n`, exitCode: 1 };
    }
    if (quiet) return { stdout: '', stderr: '', exitCode: 0 };
    return {
      stdout: `Generating public/private ed25519 key pair.\nYour identification has been saved in ${path}\nYour public key has been saved in ${path}.pub\nThe key fingerprint is:\n${fingerprint(blob)} ${who}\nThe key's randomart image is:\n${randomart(blob, 'ED25519 256')}\n`,
      stderr: '',
      exitCode: 0,
    };
  },
};

export const openssl: Tool = {
  name: 'openssl',
  path: '/usr/bin/openssl',
  packages: ['openssl'],
  run(args, env): ExecResult {
    const [cmd, mode, n] = args;
    if (cmd !== 'rand')
      return { stdout: '', stderr: `Invalid command '${cmd ?? ''}'; type "help" for a list.\n`, exitCode: 1 };
    const count = Number(n);
    if ((mode !== '-hex' && mode !== '-base64') || !Number.isInteger(count) || count <= 0)
      return { stdout: '', stderr: `rand: Use -help for summary.\n`, exitCode: 1 };
    const bytes = Buffer.from(next(env, 'openssl-rand').bytes(count));
    const text =
      mode === '-hex'
        ? bytes.toString('hex')
        : bytes
            .toString('base64')
            .match(/.{1,64}/g)!
            .join('\n');
    return { stdout: `${text}\n`, stderr: '', exitCode: 0 };
  },
};
