#!/usr/bin/env node
// Benchmark: start-up. Targets (issue 8): `l20-setup --version` ≤ 150 ms and the first TUI frame
// ≤ 700 ms (medians).
//
// --version: wall time from spawn to exit. First frame: the TUI runs in a real pseudo-terminal
// (node-pty, 160×48); the clock stops at the first output that holds the title bar ("l20-setup ·"),
// i.e. the first frame Ink drew, not the alternate-screen switch before it. Three targets: the
// built-in lab (`--lab`, which also starts the simulated hosts in-process), an inventory of lab
// hosts served by another process (`--inventory`, what an operator's run looks like), and the same
// two through the unbundled build (dist/src/cli.js) for comparison.
//
// Run: npm run build && node bench/startup.mjs [RUNS=15]
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pty from './lib/pty.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bundled = join(root, 'bin/l20-setup.js');
const runs = Number(process.argv[2] ?? 15);
const dir = mkdtempSync(join(tmpdir(), 'l20-bench-start-'));
const inventory = join(dir, 'inv.json');
const env = {
  ...process.env,
  HOME: dir,
  XDG_STATE_HOME: join(dir, 'state'),
  XDG_CONFIG_HOME: join(dir, 'config'),
  TERM: 'xterm-256color',
};
delete env.CI;
const wait = (ms) => new Promise((r) => setTimeout(r, ms));
// The unbundled build: the same main() from tsc's output, one module per source file.
const unbundledLauncher = join(dir, 'unbundled.mjs');
writeFileSync(
  unbundledLauncher,
  `import { main } from ${JSON.stringify(pathToFileURL(join(root, 'dist/src/cli.js')).href)};\nmain(process.argv.slice(2)).then((c) => { process.exitCode = c; });\n`,
);
const unbundled = [unbundledLauncher];

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)];

function versionMs(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [...args, '--version'], { env, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0 || !/^\d+\.\d+\.\d+/.test(r.stdout))
    throw new Error(`--version failed: ${r.status} ${r.stdout}${r.stderr}`);
  return ms;
}

/** Milliseconds from spawn to the first frame of the TUI in a pty. */
function firstFrameMs(args) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = pty.spawn(process.execPath, args, { name: 'xterm-256color', cols: 160, rows: 48, cwd: root, env });
    let seen = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no frame within 20 s; output: ${JSON.stringify(seen.slice(-400))}`));
    }, 20_000);
    const exited = new Promise((r) => child.onExit(() => r()));
    child.onData((d) => {
      if (seen === null) return;
      seen += d;
      if (seen.includes('l20-setup ·')) {
        const ms = performance.now() - t0;
        seen = null;
        clearTimeout(timer);
        child.kill('SIGTERM');
        exited.then(() => resolve(ms));
      }
    });
    child.onExit(({ exitCode }) => {
      if (seen !== null) {
        clearTimeout(timer);
        reject(new Error(`exited ${exitCode} before a frame: ${JSON.stringify(seen.slice(-400))}`));
      }
    });
  });
}

const lab = spawn(process.execPath, [bundled, 'lab', 'serve', '--inventory-out', inventory], {
  env,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let labOut = '';
lab.stdout.on('data', (d) => (labOut += d));
while (!(existsSync(inventory) && labOut.includes('serving'))) {
  if (lab.exitCode !== null) throw new Error(`lab serve exited: ${labOut}`);
  await wait(50);
}

const rows = [];
try {
  const cases = [
    ['--version', 'bundled', () => versionMs([bundled]), 150],
    ['--version', 'unbundled', () => versionMs(unbundled), 150],
    ['first frame, --lab', 'bundled', () => firstFrameMs([bundled, '--lab']), 700],
    ['first frame, --lab', 'unbundled', () => firstFrameMs([...unbundled, '--lab']), 700],
    ['first frame, --inventory', 'bundled', () => firstFrameMs([bundled, '--inventory', inventory]), 700],
    ['first frame, --inventory', 'unbundled', () => firstFrameMs([...unbundled, '--inventory', inventory]), 700],
  ];
  // Interleaved runs, so a burst of load on the machine hits every case alike.
  const samples = cases.map(() => []);
  await cases[0][2](); // warm the file cache
  for (let i = 0; i < runs; i++) {
    for (let c = 0; c < cases.length; c++) samples[c].push(await cases[c][2]());
  }
  for (let c = 0; c < cases.length; c++) {
    const [what, build, , target] = cases[c];
    const m = median(samples[c]);
    rows.push([
      what,
      build,
      m.toFixed(0),
      p95(samples[c]).toFixed(0),
      `≤ ${target}`,
      build === 'bundled' ? (m <= target ? 'met' : 'NOT met') : '',
    ]);
  }
} finally {
  lab.kill('SIGTERM');
  await new Promise((r) => (lab.exitCode !== null ? r() : lab.once('exit', r)));
  rmSync(dir, { recursive: true, force: true });
}

const head = ['what', 'build', 'median ms', 'p95 ms', 'target', ''];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
const line = (r) =>
  r
    .map((c, i) => String(c).padEnd(widths[i]))
    .join('  ')
    .trimEnd();
console.log(
  `start-up, ${runs} runs each (interleaved) — ${cpus()[0]?.model ?? 'cpu?'} × ${cpus().length}, Node ${process.version}`,
);
console.log(line(head));
for (const r of rows) console.log(line(r));
console.log('reproduce: npm run build && node bench/startup.mjs ' + runs);
