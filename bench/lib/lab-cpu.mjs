#!/usr/bin/env node
// What one lab command costs the lab process: `l20-setup lab serve --hosts N` in its own process,
// the full read-only check suite (`l20-setup check --inventory FILE`) against it, and the lab's CPU
// time (utime+stime from /proc/PID/stat) over the check run divided by the commands the check ran
// (cmd.start events in its session log), beside the check process's own CPU time (bash's `times`
// for its child). The fan-out benchmark's wall time at large N is bounded by these figures on a
// machine where the lab shares the CPU with the tool.
// Prints one table of medians over R repeats per N (a fresh lab for each repeat).
// Run: npm run build && node bench/lib/lab-cpu.mjs [N,N,…] [R]   (default 2,16,64 and 3)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const bin = join(root, 'bin/l20-setup.js');
const sizes = (process.argv[2] ?? '2,16,64').split(',').map(Number);
const repeats = Number(process.argv[3] ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** CPU seconds (user+system) the process has used so far. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticks;
}

async function startLab(hosts, dir) {
  const inv = join(dir, 'inv.json');
  const child = spawn(process.execPath, [bin, 'lab', 'serve', '--hosts', String(hosts), '--inventory-out', inv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('serving;')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`lab serve exited ${code} before serving:\n${out}`)));
  });
  return { child, inv };
}

async function stopLab(child) {
  if (child.exitCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await gone;
}

async function once(hosts) {
  const dir = mkdtempSync(join(tmpdir(), 'lab-cpu-'));
  const { child, inv } = await startLab(hosts, dir);
  try {
    const before = cpuSeconds(child.pid);
    const t = process.hrtime.bigint();
    // A private state directory: the session log of this run is the only one there. bash's `times`
    // prints the CPU time of its finished children (user, then system) on its second line.
    const script = '"$@" >/dev/null; s=$?; times >&2; exit $s';
    const check = spawn('bash', ['-c', script, 'bash', process.execPath, bin, 'check', '--inventory', inv], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, XDG_STATE_HOME: dir },
    });
    let err = '';
    check.stderr.on('data', (d) => (err += d));
    const code = await new Promise((resolve) => check.once('exit', resolve));
    const [user, sys] = [...(err.trim().split('\n').pop() ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
      (m) => Number(m[1]) * 60 + Number(m[2]),
    );
    const wall = Number(process.hrtime.bigint() - t) / 1e9;
    const labCpu = cpuSeconds(child.pid) - before;
    if (code !== 0 && code !== 1) throw new Error(`check exited ${code}: ${err}`);
    const sessions = join(dir, 'l20-setup', 'sessions');
    const log = readdirSync(sessions)
      .map((f) => readFileSync(join(sessions, f), 'utf8'))
      .join('');
    const commands = log
      .split('\n')
      .filter((l) => l.includes('"type":"cmd.start"') && !l.includes('"reusedFrom"')).length;
    return { wall, labCpu, commands, checkCpu: (user ?? NaN) + (sys ?? NaN) };
  } finally {
    await stopLab(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const n of sizes) {
  const runs = [];
  for (let i = 0; i < repeats; i++) runs.push(await once(n));
  rows.push({
    n,
    commands: median(runs.map((r) => r.commands)),
    wall: median(runs.map((r) => r.wall)),
    labCpu: median(runs.map((r) => r.labCpu)),
    checkCpu: median(runs.map((r) => r.checkCpu)),
    perCmd: median(runs.map((r) => (r.labCpu * 1000) / r.commands)),
  });
}

console.log(
  `lab CPU per command under the full check suite; node ${process.version}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}; median of ${repeats}`,
);
console.log('| hosts | commands | check wall s | check CPU s | lab CPU s | lab CPU ms/command |');
console.log('|-------|----------|--------------|-------------|-----------|--------------------|');
for (const r of rows) {
  console.log(
    `| ${String(r.n).padStart(5)} | ${String(r.commands).padStart(8)} | ${r.wall.toFixed(2).padStart(12)} | ${r.checkCpu.toFixed(2).padStart(11)} | ${r.labCpu.toFixed(2).padStart(9)} | ${r.perCmd.toFixed(2).padStart(18)} |`,
  );
}
console.log(`reproduce: npm run build && node bench/lib/lab-cpu.mjs ${sizes.join(',')} ${repeats}`);
