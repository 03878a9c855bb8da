#!/usr/bin/env node
// The full read-only check suite (`l20-setup check --inventory FILE`) against one lab of N hosts
// served by one process, and by W processes that each serve a slice of the same cluster
// (startLab's `serve`: every process models and boots the whole cluster from the same seed and
// scenario, and serves its own hosts, as N real servers each run on their own CPU; their simulated
// clocks start at one instant). Prints one table of medians over R repeats: check wall time, the
// check's CPU, the lab processes' CPU together, and whether every check's verdict and summary were
// the same as against one process.
// Run: npm run build && node bench/lib/lab-split.mjs [N,N,…] [W] [R]   (default 16,64 2 3)
// Read-only only: a change made through one process (an apply) does not reach the others' models.
// LAB_SPLIT_DUMP=DIR keeps each run's verdict lines and session log there (to see what differed).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const self = fileURLToPath(import.meta.url);

if (process.argv[2] === '--serve') {
  // Child: serve hosts `slice` of an N-host lab; print them as JSON; run until SIGINT.
  const [n, slice, key, clockStartedAt] = [
    Number(process.argv[3]),
    process.argv[4].split(',').map(Number),
    JSON.parse(process.argv[5]),
    Number(process.argv[6]),
  ];
  const { startLab } = await import(join(root, 'dist/lab/index.js'));
  const lab = await startLab({ hosts: n, serve: slice, clientKey: key, clockStartedAt });
  const hosts = lab.hosts.map((h) => ({
    ...h,
    hostKeyBlob: h.hostKeyBlob.toString('base64'),
    machine: undefined,
    faults: undefined,
    stats: undefined,
  }));
  process.stdout.write(`${JSON.stringify(hosts)}\n`);
  await new Promise((resolve) => process.once('SIGINT', resolve));
  await lab.close();
  process.exit(0);
}

const sizes = (process.argv[2] ?? '16,64').split(',').map(Number);
const workers = Number(process.argv[3] ?? 2);
const repeats = Number(process.argv[4] ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);
const { generateEd25519 } = await import(join(root, 'dist/src/util/ssh-keys.js'));
const { labInventory, writeInventoryFile } = await import(join(root, 'dist/src/target.js'));

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticks;
}

async function serveSlice(n, slice, key, clockStartedAt) {
  const child = spawn(
    process.execPath,
    [self, '--serve', String(n), slice.join(','), JSON.stringify(key), String(clockStartedAt)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const hosts = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out.slice(0, out.indexOf('\n'))));
    });
    child.once('exit', (code) => reject(new Error(`lab slice exited ${code}`)));
  });
  return { child, hosts: hosts.map((h) => ({ ...h, hostKeyBlob: Buffer.from(h.hostKeyBlob, 'base64') })) };
}

async function once(n, w) {
  const dir = mkdtempSync(join(tmpdir(), 'lab-split-'));
  const key = generateEd25519('l20-setup-lab');
  // Host i goes to process i mod w: each process gets every w-th host.
  const slices = Array.from({ length: w }, (_, k) => Array.from({ length: n }, (_, i) => i).filter((i) => i % w === k));
  const clockStartedAt = Date.now();
  const labs = await Promise.all(slices.map((s) => serveSlice(n, s, key, clockStartedAt)));
  try {
    const hosts = labs
      .flatMap((l) => l.hosts)
      .sort((a, b) => Number(a.name.replace(/\D/g, '')) - Number(b.name.replace(/\D/g, '')));
    const { config } = labInventory({ hosts, clientPrivateKey: key.private }, dir);
    const inv = join(dir, 'inv.json');
    await writeInventoryFile(inv, config);
    const before = labs.map((l) => cpuSeconds(l.child.pid));
    const t = process.hrtime.bigint();
    const script = '"$@"; s=$?; times >&2; exit $s';
    const check = spawn(
      'bash',
      ['-c', script, 'bash', process.execPath, join(root, 'bin/l20-setup.js'), 'check', '--json', '--inventory', inv],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_STATE_HOME: dir } },
    );
    let err = '';
    let out = '';
    check.stderr.on('data', (d) => (err += d));
    check.stdout.on('data', (d) => (out += d));
    const code = await new Promise((resolve) => check.once('exit', resolve));
    const wall = Number(process.hrtime.bigint() - t) / 1e9;
    const labCpu = labs.reduce((sum, l, i) => sum + cpuSeconds(l.child.pid) - before[i], 0);
    if (code !== 0 && code !== 1) throw new Error(`check exited ${code}: ${err}`);
    const [user, sys] = [...(err.trim().split('\n').pop() ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
      (m) => Number(m[1]) * 60 + Number(m[2]),
    );
    const sessions = join(dir, 'l20-setup', 'sessions');
    const commands = readdirSync(sessions)
      .map((f) => readFileSync(join(sessions, f), 'utf8'))
      .join('')
      .split('\n')
      .filter((l) => l.includes('"type":"cmd.start"') && !l.includes('"reusedFrom"')).length;
    // What each check concluded; the clock checks' summaries carry measured offsets and skews, which
    // differ from run to run anyway.
    const verdicts = JSON.parse(out)
      .stages.flatMap((st) =>
        st.checks.map(
          (c) =>
            `${c.host} ${c.id} ${c.status} ${/clock|time/.test(c.id) ? '' : c.summary.replace(/clock skew [\d.]+ s/, 'clock skew … s')}`,
        ),
      )
      .sort();
    if (process.env.LAB_SPLIT_DUMP) {
      const stem = join(process.env.LAB_SPLIT_DUMP, `${n}-${w}-${Date.now()}`);
      writeFileSync(`${stem}.txt`, verdicts.join('\n'));
      writeFileSync(
        `${stem}.jsonl`,
        readdirSync(sessions)
          .map((f) => readFileSync(join(sessions, f), 'utf8'))
          .join(''),
      );
    }
    return { wall, labCpu, checkCpu: user + sys, commands, verdicts: verdicts.join('\n') };
  } finally {
    await Promise.all(
      labs.map(
        ({ child }) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', resolve);
            child.kill('SIGINT');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const n of sizes) {
  for (const w of [1, workers]) {
    const runs = [];
    for (let i = 0; i < repeats; i++) runs.push(await once(n, w));
    rows.push({
      n,
      w,
      runs,
      commands: median(runs.map((r) => r.commands)),
      wall: median(runs.map((r) => r.wall)),
      checkCpu: median(runs.map((r) => r.checkCpu)),
      labCpu: median(runs.map((r) => r.labCpu)),
    });
  }
}

console.log(
  `full check suite against one lab process and against ${workers} serving slices of one cluster; node ${process.version}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}; median of ${repeats}`,
);
console.log(
  '| hosts | lab processes | commands | check wall s | vs 1 process | check CPU s | lab CPU s | verdicts as with 1 |',
);
console.log(
  '|-------|---------------|----------|--------------|--------------|-------------|-----------|--------------------|',
);
for (const r of rows) {
  const one = rows.find((x) => x.n === r.n && x.w === 1);
  const same = r.runs.every((x) => x.verdicts === one.runs[0].verdicts) ? 'same' : 'DIFFERENT';
  console.log(
    `| ${String(r.n).padStart(5)} | ${String(r.w).padStart(13)} | ${String(r.commands).padStart(8)} | ${r.wall.toFixed(2).padStart(12)} | ${(r.wall / one.wall).toFixed(2).padStart(11)}× | ${r.checkCpu.toFixed(2).padStart(11)} | ${r.labCpu.toFixed(2).padStart(9)} | ${same.padStart(18)} |`,
  );
}
console.log(`reproduce: npm run build && node bench/lib/lab-split.mjs ${sizes.join(',')} ${workers} ${repeats}`);
