#!/usr/bin/env node
// Benchmark (issue 8, item 2): one command printing N lines on each of 2 hosts, shown live in the stage view of
// the real TUI inside a pseudo-terminal (node-pty, 160×48), against OpenSSH `ssh host cmd > /dev/null` on the same
// sshd. Targets: wall ≤ 1.5× ssh's for 1,000,000 lines; peak RSS ≤ 200 MB and flat with output size (10,000,000
// lines about the same peak); keystroke-to-screen p95 ≤ 50 ms while the stream runs.
// The hosts are a real OpenSSH sshd on 127.0.0.1 started here (two ports = two inventory hosts, as the current
// user, fresh keys, host keys pinned). Prints one table of medians and the command that reproduces it.
// Run: npm run build && node bench/stream.mjs [--runs 5] [--lines 1000000] [--big 10000000] [--big-runs 2]
import { execFile } from 'node:child_process';
import { createReadStream, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSshd, HOST_NAMES } from './lib/stream-sshd.mjs';
import { runTui } from './lib/stream-pty.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    lines: { type: 'string', default: '1000000' },
    big: { type: 'string', default: '10000000' },
    'big-runs': { type: 'string', default: '2' },
  },
});
const runs = Number(values.runs);
const bigRuns = Number(values['big-runs']);
const lines = Number(values.lines);
const big = Number(values.big);
const median = (xs) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]);
const pct = (xs, p) =>
  xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

function sh(cmd) {
  return new Promise((resolve, reject) =>
    execFile('/bin/bash', ['-c', cmd], { maxBuffer: 1 << 20 }, (err, out, errOut) =>
      err ? reject(new Error(`${cmd}: ${errOut || err.message}`)) : resolve(out),
    ),
  );
}

/** Both hosts in parallel, each `ssh -F cfg HOST 'seq 1 N' > /dev/null`: wall for both, per run. */
async function sshBaseline(cfg, n, extra = '') {
  const t = performance.now();
  await Promise.all(HOST_NAMES.map((h) => sh(`ssh -F ${cfg} ${extra} ${h} 'seq 1 ${n}' > /dev/null`)));
  return performance.now() - t;
}

/** Per run of the stage in the TUI's session log: stage start → last cmd.exit, and every output line counted and in order. */
async function readSessionLog(stateDir) {
  const dir = join(stateDir, 'l20-setup', 'sessions');
  const file = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  const runsSeen = [];
  let cur;
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    const e = JSON.parse(line);
    if (e.type === 'stage.state' && e.state === 'running')
      runsSeen.push((cur = { start: Date.parse(e.t), exits: [], lines: {}, last: {}, disorder: '' }));
    else if (cur && e.type === 'cmd.output' && e.stream === 'stdout') {
      let n = cur.lines[e.host] ?? 0;
      for (const l of e.lines) if (Number(l) !== ++n && !cur.disorder) cur.disorder = `${e.host}: line ${n} is "${l}"`;
      cur.lines[e.host] = n;
      cur.last[e.host] = e.lines[e.lines.length - 1];
    } else if (cur && e.type === 'cmd.exit')
      cur.exits.push({ host: e.host, t: Date.parse(e.t), exitCode: e.exitCode, durationMs: e.durationMs });
  }
  return {
    file,
    bytes: statSync(file).size,
    runs: runsSeen.map((r) => ({ ...r, wall: Math.max(...r.exits.map((x) => x.t)) - r.start })),
  };
}

function checkComplete(log, n) {
  for (const r of log.runs) {
    for (const h of HOST_NAMES) {
      if (r.lines[h] !== n || r.last[h] !== String(n))
        throw new Error(
          `session log ${log.file}: ${h} has ${r.lines[h]} lines ending "${r.last[h]}", expected ${n} ending "${n}"`,
        );
    }
    if (r.disorder) throw new Error(`session log ${log.file}: ${r.disorder}`);
    if (r.exits.length !== 2 || r.exits.some((x) => x.exitCode !== 0))
      throw new Error(`session log ${log.file}: exits ${JSON.stringify(r.exits)}`);
  }
}

const sshd = await startSshd();
const work = mkdtempSync(join(tmpdir(), 'l20-stream-bench-'));
const results = {};
try {
  // Baselines: a new connection per command (what `ssh host cmd` is), and over an already open ControlMaster
  // connection (the transfer alone, since l20-setup's connections are open before the stage runs).
  await sshBaseline(sshd.sshConfig, 1000); // warm-up: page cache, sshd's first fork
  const fresh = [];
  for (let i = 0; i < runs; i++) fresh.push(await sshBaseline(sshd.sshConfig, lines));
  const cm = `-o ControlPath=${join(work, 'cm-%n')}`;
  await Promise.all(
    HOST_NAMES.map((h) => sh(`ssh -F ${sshd.sshConfig} ${cm} -o ControlMaster=yes -o ControlPersist=yes -fN ${h}`)),
  );
  const mux = [];
  for (let i = 0; i < runs; i++) mux.push(await sshBaseline(sshd.sshConfig, lines, cm));
  await Promise.all(HOST_NAMES.map((h) => sh(`ssh -F ${sshd.sshConfig} ${cm} -O exit ${h} 2>/dev/null`)));
  results.sshFresh = median(fresh);
  results.sshMux = median(mux);

  // The TUI, N lines, the stage run `runs` times in one session (no keys pressed during these runs).
  const small = await runTui({
    root,
    inventory: sshd.inventory,
    lines,
    runs,
    keys: false,
    stateDir: join(work, 'small'),
  });
  const smallLog = await readSessionLog(join(work, 'small'));
  checkComplete(smallLog, lines);
  // The TUI, the big stream `big-runs` times, no keys: peak RSS against the small one's.
  const large = await runTui({
    root,
    inventory: sshd.inventory,
    lines: big,
    runs: bigRuns,
    keys: false,
    stateDir: join(work, 'big'),
  });
  const largeLog = await readSessionLog(join(work, 'big'));
  checkComplete(largeLog, big);
  // The TUI, the big stream, ] pressed every ~100 ms while it runs (the panes swap: a visible change); run
  // again in the same session until 100 keystrokes were timed.
  const typed = await runTui({
    root,
    inventory: sshd.inventory,
    lines: big,
    runs: 1,
    keys: true,
    minKeys: 100,
    stateDir: join(work, 'keys'),
  });
  checkComplete(await readSessionLog(join(work, 'keys')), big);
  // Not a target: the same big stream through a probe that keeps the transport's default 64 MiB tail of its output
  // for collect (the bench's probe keeps 64 KiB: its collect reads only the last line).
  const keepAll = await runTui({
    root,
    inventory: sshd.inventory,
    lines: big,
    runs: 1,
    keys: false,
    keepDefault: true,
    stateDir: join(work, 'keep'),
  });
  Object.assign(results, { small, smallLog, large, largeLog, typed, keepAll });
} finally {
  await sshd.stop();
  rmSync(work, { recursive: true, force: true });
}

const { small, smallLog, large, largeLog, typed, keepAll } = results;
const wall = median(smallLog.runs.map((r) => r.wall));
const screenWall = median(small.screenWalls);
const lat = typed.latencies;
const mb = (kb) => (kb / 1024).toFixed(0);
const rows = [
  [
    `wall, ${lines.toLocaleString('en-US')} lines × 2 hosts: ssh, new connection each`,
    results.sshFresh.toFixed(0),
    '',
    '',
  ],
  ['  ssh over an open ControlMaster connection', results.sshMux.toFixed(0), '', ''],
  [
    '  l20-setup TUI: stage start → both exits (session log)',
    wall.toFixed(0),
    `${(wall / results.sshFresh).toFixed(2)}× ssh`,
    `≤ 1.5× (${(1.5 * results.sshFresh).toFixed(0)})`,
  ],
  [
    '  l20-setup TUI: r pressed → idle on screen',
    screenWall.toFixed(0),
    `${(screenWall / results.sshFresh).toFixed(2)}× ssh`,
    '',
  ],
  ['  l20-setup TUI: CPU per run (user+sys)', (small.cpuMs / runs).toFixed(0), '', ''],
  [
    `peak RSS, ${lines.toLocaleString('en-US')} lines (VmHWM, MB)`,
    mb(small.hwmKb),
    `sampled max ${mb(small.maxRssKb)}; ${runs} runs`,
    '≤ 200',
  ],
  [
    `peak RSS, ${big.toLocaleString('en-US')} lines (VmHWM, MB)`,
    mb(large.hwmKb),
    `sampled max ${mb(large.maxRssKb)}; ${bigRuns} runs`,
    `≈ ${mb(small.hwmKb)} (flat)`,
  ],
  ['  the same, ] pressed every 100 ms (a frame each)', mb(typed.hwmKb), `${typed.screenWalls.length} runs`, ''],
  [
    '  the same, probe keeping the default 64 MiB tail per stream',
    mb(keepAll.hwmKb),
    'not a target: what collect may read',
    '',
  ],
  [
    `keystroke → screen during the ${big.toLocaleString('en-US')}-line stream, p50 ms`,
    pct(lat, 50).toFixed(1),
    `${lat.length} keys, ${typed.missed} missed`,
    '',
  ],
  ['  p95 ms', pct(lat, 95).toFixed(1), '', '≤ 50'],
  ['  max ms', Math.max(...lat).toFixed(1), '', ''],
];
const met = [
  ['wall ≤ 1.5× ssh', wall <= 1.5 * results.sshFresh],
  ['peak RSS ≤ 200 MB', Math.max(small.hwmKb, large.hwmKb) <= 200 * 1024],
  ['RSS flat (10× the output within 20% of the peak)', large.hwmKb <= 1.2 * small.hwmKb],
  ['keystroke p95 ≤ 50 ms', pct(lat, 95) <= 50 && typed.missed === 0 && lat.length >= 100],
];
console.log(
  `streaming: seq on 2 hosts (one OpenSSH sshd on 127.0.0.1, two ports), TUI in a 160×48 pty; node ${process.version}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}; ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${runs} runs`,
);
console.log(
  `session logs: ${(smallLog.bytes / 2 ** 20).toFixed(0)} MB and ${(largeLog.bytes / 2 ** 20).toFixed(0)} MB, every line of every run present and in order (checked)`,
);
console.log('| measure | median | ratio / detail | target |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
console.log(met.map(([name, ok]) => `${ok ? 'met' : 'NOT met'}: ${name}`).join('; '));
console.log(
  `reproduce: npm run build && node bench/stream.mjs --runs ${runs} --lines ${lines} --big ${big} --big-runs ${bigRuns}`,
);
