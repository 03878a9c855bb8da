/**
 * GNU du (coreutils 8.32) in place of just-bash's, which lacks -b: `-s`, `-b` (apparent bytes),
 * `-c` (grand total), `-h`, `-k`, `--apparent-size`, `-B1`. Sizes are what the files stand for: a
 * model shard written by the lab holds a one-line stand-in naming its real size (model/hf-models.ts),
 * so `du -sb` of a model directory prints the real model's bytes and equals wherever the copy is
 * complete. Directories count 4096 bytes each, as on ext4. Format: `SIZE\tPATH`.
 */
import { posix } from 'node:path';
import type { ExecResult, IFileSystem } from 'just-bash';
import type { Tool } from './types.js';

const DIR_BYTES = 4096;
const STANDIN = /^l20-lab safetensors stand-in: (\d+) bytes/;

/** Bytes a file stands for (a model shard's stand-in names them). */
export function standsFor(content: string): number {
  const m = STANDIN.exec(content);
  return m ? Number(m[1]) : Buffer.byteLength(content, 'utf8');
}

async function usage(fs: IFileSystem, path: string, apparent: boolean): Promise<number> {
  const st = await fs.stat(path);
  if (!st.isDirectory) {
    const bytes = standsFor(await fs.readFile(path).catch(() => ''));
    return apparent ? bytes : Math.ceil(bytes / 4096) * 4096;
  }
  let total = DIR_BYTES;
  for (const name of await fs.readdir(path)) total += await usage(fs, posix.join(path, name), apparent);
  return total;
}

function human(b: number): string {
  const units = ['K', 'M', 'G', 'T', 'P'];
  let v = b;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u < 0) return String(b);
  return `${v < 10 ? (Math.ceil(v * 10) / 10).toFixed(1) : Math.ceil(v)}${units[u]}`;
}

export const du: Tool = {
  name: 'du',
  path: '/usr/bin/du',
  packages: ['coreutils'],
  async run(args, env): Promise<ExecResult> {
    let summarize = false,
      apparent = false,
      total = false,
      hum = false,
      block = 1024;
    const paths: string[] = [];
    for (const a of args) {
      if (a === '--apparent-size') apparent = true;
      else if (a === '--summarize') summarize = true;
      else if (a === '--total') total = true;
      else if (a === '--human-readable') hum = true;
      else if (a === '--bytes' || a === '-B1') {
        apparent = a === '--bytes' || apparent;
        block = 1;
      } else if (/^-[sbchk]+$/.test(a)) {
        for (const c of a.slice(1)) {
          if (c === 's') summarize = true;
          else if (c === 'b') {
            apparent = true;
            block = 1;
          } else if (c === 'c') total = true;
          else if (c === 'h') hum = true;
          else if (c === 'k') block = 1024;
        }
      } else if (a.startsWith('-'))
        return {
          stdout: '',
          stderr: `du: invalid option -- '${a.slice(1, 2)}'\nTry 'du --help' for more information.\n`,
          exitCode: 1,
        };
      else paths.push(a);
    }
    if (paths.length === 0) paths.push('.');
    const fmt = (bytes: number): string => (hum ? human(bytes) : String(Math.ceil(bytes / block)));
    let out = '';
    let err = '';
    let sum = 0;
    let code = 0;
    for (const p of paths) {
      const abs = env.ctx.fs.resolvePath(env.ctx.cwd, p);
      try {
        const st = await env.ctx.fs.stat(abs);
        if (!summarize && st.isDirectory) {
          // Every directory below, deepest first, as du walks.
          const walk = async (dir: string, shown: string): Promise<number> => {
            let t = DIR_BYTES;
            for (const name of (await env.ctx.fs.readdir(dir)).sort()) {
              const full = posix.join(dir, name);
              if ((await env.ctx.fs.stat(full)).isDirectory) t += await walk(full, posix.join(shown, name));
              else t += await usage(env.ctx.fs, full, apparent);
            }
            out += `${fmt(t)}\t${shown}\n`;
            return t;
          };
          sum += await walk(abs, p);
        } else {
          const b = await usage(env.ctx.fs, abs, apparent);
          sum += b;
          out += `${fmt(b)}\t${p}\n`;
        }
      } catch {
        err += `du: cannot access '${p}': No such file or directory\n`;
        code = 1;
      }
    }
    if (total) out += `${fmt(sum)}\ttotal\n`;
    return { stdout: out, stderr: err, exitCode: code };
  },
};
