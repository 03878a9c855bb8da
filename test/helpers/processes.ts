/**
 * What runs on this machine, read from /proc, for the real-sshd tests (test/helpers/sshd.ts): they check on
 * the server side that a command is running, that it is gone after a cancel, and which sshd process serves
 * which connection.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { processRunning } from '../../src/util/process-running.js';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  uid: number;
  /** argv joined with spaces ('' for kernel threads). */
  args: string;
}

/** A snapshot of /proc; processes that exit while it is read are left out. */
export function listProcesses(): ProcessInfo[] {
  const out: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name in parentheses may hold spaces and parentheses: fields resume after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (rest[0] === 'Z') continue; // a zombie has exited; only its parent has not reaped it yet
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1);
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0+$/, '').replace(/\0/g, ' ');
      out.push({ pid: Number(entry), ppid: Number(rest[1]), uid, args });
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** Pids of processes whose argv is exactly one of `argsList`, run by `owner`. */
export function pidsOf(owner: number, argsList: readonly string[]): number[] {
  return listProcesses()
    .filter((p) => p.uid === owner && argsList.includes(p.args))
    .map((p) => p.pid);
}

/** `root` and everything below it, from one snapshot. */
export function processTree(root: number, procs: readonly ProcessInfo[] = listProcesses()): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  const pids = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) {
      if (!pids.has(p.pid) && pids.has(p.ppid)) {
        pids.add(p.pid);
        grew = true;
      }
    }
  }
  for (const p of procs) if (pids.has(p.pid)) found.push(p);
  return found;
}

export function uidOf(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
}

/** Polls `condition` every 20 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Running (not exited, not a zombie waiting to be reaped). */
export function isAlive(pid: number): boolean {
  return processRunning(pid);
}

/** Every process on this machine whose argv or environment holds `secret` ("PID cmdline|environ"). */
export function processesHolding(secret: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    for (const what of ['cmdline', 'environ']) {
      try {
        if (readFileSync(`/proc/${pid}/${what}`).includes(secret)) found.push(`${pid} ${what}`);
      } catch {
        // exited, or a kernel thread
      }
    }
  }
  return found;
}

/** Regular files under `dir` (recursively) that hold `secret`; a .gz file is searched unpacked. `seen` counts the files read. */
export function filesHolding(dir: string, secret: string, seen?: { files: number }): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) {
        if (seen) seen.files++;
        const raw = readFileSync(p);
        if ((p.endsWith('.gz') ? gunzipSync(raw) : raw).includes(secret)) found.push(p);
      }
    }
  };
  walk(dir);
  return found;
}

/** Sleeping inside a pipe write: the remote command cannot get rid of its output. */
export function blockedWriting(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state === 'S' && /pipe_write|pipe_wait|wait_woken/.test(readFileSync(`/proc/${pid}/wchan`, 'utf8'));
  } catch {
    return false;
  }
}

/** Bytes the process has written so far (/proc/PID/io wchar). */
export function written(pid: number): number {
  try {
    return Number(/^wchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? -1);
  } catch {
    return -1;
  }
}
