// Process plumbing for bench/fanout.mjs: the lab server in its own process, each contender measured
// as one process tree (wall time, and user+sys CPU of every descendant that was waited for, read by
// bash's `times` builtin from the kernel's RUSAGE_CHILDREN), CPU of a live process from /proc, and the
// machine the figures come from.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);
export const wait = (ms) => new Promise((r) => setTimeout(r, ms));
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** CPU seconds (user+system, all threads) a live process has used; `children` adds its reaped children. */
export function cpuSeconds(pid, children = false) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) / ticks;
}

/** `times` prints `0m1.234s 0m0.056s` per line: the shell's own, then its children's. */
function parseTimes(text) {
  const lines = text.trim().split('\n');
  const secs = (s) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(s);
    if (!m) throw new Error(`unexpected times output: ${JSON.stringify(text)}`);
    return Number(m[1]) * 60 + Number(m[2]);
  };
  const [user, sys] = (lines[1] ?? '').trim().split(/\s+/);
  return secs(user) + secs(sys);
}

const live = new Set();

/**
 * Runs argv in its own process group under `bash -c '…; times'`; stdout and stderr go to files. Resolves
 * with wall seconds, the CPU of the whole waited-for tree, and the exit code. `limitS` kills the group.
 */
export function measure(argv, { env, cwd, stdoutFile, stderrFile, limitS }) {
  const out = openSync(stdoutFile, 'w');
  const err = openSync(stderrFile, 'w');
  const t0 = process.hrtime.bigint();
  const child = spawn('bash', ['-c', '"$@"; rc=$?; times >&3; exit $rc', 'bash', ...argv], {
    env,
    cwd,
    stdio: ['ignore', out, err, 'pipe'],
    detached: true,
  });
  closeSync(out);
  closeSync(err);
  live.add(child);
  let times = '';
  child.stdio[3].on('data', (d) => (times += d));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    killGroup(child);
  }, limitS * 1000);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      const wall = Number(process.hrtime.bigint() - t0) / 1e9;
      if (killed) return resolve({ wall, cpu: NaN, code: null, error: `killed after the ${limitS} s limit` });
      if (signal) return resolve({ wall, cpu: NaN, code: null, error: `ended by ${signal}` });
      resolve({ wall, cpu: parseTimes(times), code });
    });
  });
}

export function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

/** Every contender still running (Ctrl-C, an error). */
export function killAll() {
  for (const c of live) killGroup(c);
}

/** `l20-setup lab serve --hosts N --inventory-out FILE` in its own process; resolves once it serves. */
export async function startLab(bin, hosts, inventory, env, extraArgs = []) {
  const child = spawn(
    process.execPath,
    [bin, 'lab', 'serve', '--hosts', String(hosts), '--inventory-out', inventory, ...extraArgs],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (out.includes('serving; Ctrl-C to stop') && existsSync(`${inventory}.ansible.ini`)) {
        clearInterval(poll);
        resolve();
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`lab serve --hosts ${hosts} exited ${code} before serving:\n${out}`));
    });
  });
  return child;
}

export async function stopLab(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await gone;
  clearTimeout(timer);
}

/** Processes whose command line starts with `prefix` (Ansible's ControlPersist masters: `ssh: PATH [mux]`). */
export function pidsByCmdlinePrefix(prefix) {
  const pids = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').startsWith(prefix)) pids.push(Number(d));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

export function machine() {
  const line = (cmd, args) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8' });
    return r.error ? null : `${r.stdout}${r.stderr}`.trim().split('\n')[0];
  };
  return {
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    cores: cpus().length,
    node: process.version,
    openssh: line('ssh', ['-V']),
    ansible: line('ansible', ['--version']),
    kernel: line('uname', ['-sr']),
  };
}
