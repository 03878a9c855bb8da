#!/usr/bin/env node
// Benchmark (issue 8, item 1): the full read-only check suite on N lab hosts, side by side with what an
// operator would use instead, on the same hosts and the same command lines.
//
// For each N, `l20-setup lab serve --hosts N --inventory-out DIR/invN.json` runs in its own process. Then:
//   ours      `l20-setup check --inventory invN.json` (one SSH connection per host, probes over channels;
//             exit 1 is expected, checks fail on a fresh lab). Its session log gives every command line it
//             sent, per host, with the script a `bash -s` line read and the exit code it got.
//   ours-openssh  the same check with every host set to `transport: openssh` (a copy of invN.json): our engine
//             over the system `ssh`, one ControlMaster per host, instead of ssh2. Verified like ours.
//   ssh-seq   the same lines with OpenSSH, one `ssh -F invN.json.ssh_config HOST LINE` per command, in order.
//   ssh-par   the same, `xargs -P N`.
//   ansible   Ansible ad-hoc, `-m raw --forks N`, one call per distinct line, `--limit` to the hosts that
//             ran it, default ssh settings (ControlPersist). One addition: `--ssh-extra-args=-n`. The lab
//             (lab/server.ts) starts a command only when its stdin reaches EOF, or after 2 s without
//             input; Ansible keeps ssh's stdin open on a pty, so without -n each raw call would sit 2 s in
//             the lab (a real sshd runs it at once) and a `bash -s` here-document would never start.
// Wall time; CPU = user+sys of the contender's whole process tree (bash `times`, children reaped), plus
// Ansible's ControlPersist masters (sampled from /proc each second, as they detach); lab CPU = the lab process
// over the same run (/proc/PID/stat), which shows when the single-threaded lab is the bottleneck.
// Every run is verified: each command ran on each host and exited as it did for us; OpenSSH exit 255 and
// Ansible UNREACHABLE are counted as failures, with their messages, never retried.
//
// Run: npm run build && node bench/fanout.mjs [--hosts 2,16,64] [--repeats 3] [--ansible-repeats R]
//      [--seq-repeats R] [--skip [N:]contender,…] [--speed F|max] [--lab-arg=ARG …] [--json FILE] [--limit-s 3600]
//      [--keep] [--quick]   (--lab-arg: one more argument for `lab serve`, repeatable; --keep: leave the work dirs)
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  cpuSeconds,
  killAll,
  machine,
  measure,
  median,
  pidsByCmdlinePrefix,
  startLab,
  stopLab,
} from './lib/fanout-run.mjs';
import {
  ansibleGroups,
  compareRuns,
  doneCount,
  readSessionLog,
  sshArgv,
  verifyAnsible,
  verifySsh,
  writeAnsibleScript,
  writeSshJobs,
} from './lib/fanout-replay.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin/l20-setup.js');
const { values: opt } = parseArgs({
  options: {
    hosts: { type: 'string' },
    repeats: { type: 'string' },
    'ansible-repeats': { type: 'string' },
    'seq-repeats': { type: 'string' },
    skip: { type: 'string', multiple: true },
    speed: { type: 'string' },
    json: { type: 'string' },
    'limit-s': { type: 'string' },
    'lab-arg': { type: 'string', multiple: true },
    quick: { type: 'boolean' },
    keep: { type: 'boolean' },
  },
});
const CONTENDERS = ['ours', 'ours-openssh', 'ssh-seq', 'ssh-par', 'ansible'];
const sizes = (opt.hosts ?? (opt.quick ? '2' : '2,16,64')).split(',').map(Number);
const repeats = Number(opt.repeats ?? (opt.quick ? 1 : 3));
const reps = {
  ours: repeats,
  'ours-openssh': repeats,
  'ssh-par': repeats,
  'ssh-seq': Number(opt['seq-repeats'] ?? repeats),
  ansible: Number(opt['ansible-repeats'] ?? repeats),
};
const limitS = Number(opt['limit-s'] ?? 3600);
if (sizes.some((n) => !(n >= 1)) || Object.values(reps).some((r) => !(r >= 1)) || !(limitS > 0))
  throw new Error('--hosts, --*repeats and --limit-s take positive numbers');
const skips = (opt.skip ?? [])
  .flatMap((s) => s.split(','))
  .filter(Boolean)
  .map((s) => {
    const [n, c] = s.includes(':') ? s.split(':') : [undefined, s];
    if (!CONTENDERS.includes(c)) throw new Error(`--skip ${s}: contender is one of ${CONTENDERS.join(', ')}`);
    return { n: n === undefined ? undefined : Number(n), c };
  });
const skipped = (n, c) => skips.some((s) => s.c === c && (s.n === undefined || s.n === n));
const reproduce = `node bench/fanout.mjs ${process.argv.slice(2).join(' ')}`.trim();

const host = machine();
const ansibleMissing =
  host.ansible === null
    ? 'ansible is not installed (Debian: sudo apt-get install -y --no-install-recommends ansible)'
    : undefined;
if (ansibleMissing) process.stderr.write(`fanout: ${ansibleMissing}; the ansible column is skipped\n`);

const t0 = Date.now();
const log = (s) => process.stderr.write(`[fanout ${((Date.now() - t0) / 1000).toFixed(0)}s] ${s}\n`);
const rows = [];
let lab;
let workDir;
let mastersPrefixes = [];

/**
 * ControlPersist masters (Ansible's, and the OpenSSH transport's) detach from their client, so `times`
 * never sees them: their CPU is read from /proc once a second while the contender runs (an idle master
 * exits on its own, and is not reaped by anyone we can ask), and once more before they are stopped.
 */
const masterCpu = new Map();
function sampleMasters() {
  for (const pid of mastersPrefixes.flatMap((p) => pidsByCmdlinePrefix(p))) {
    try {
      masterCpu.set(pid, cpuSeconds(pid, true));
    } catch {
      // exited between the scan and the read: its last sample stands
    }
  }
}

/** Stops the masters; returns the CPU seconds of every master seen since the last call. */
function stopMasters() {
  sampleMasters();
  const cpu = [...masterCpu.values()].reduce((a, b) => a + b, 0);
  masterCpu.clear();
  for (const pid of mastersPrefixes.flatMap((p) => pidsByCmdlinePrefix(p))) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // exited on its own
    }
  }
  return cpu;
}

async function cleanup() {
  killAll();
  stopMasters();
  await stopLab(lab);
  if (workDir && !opt.keep) rmSync(workDir, { recursive: true, force: true });
}

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    log(`${sig}: stopping the contender and the lab`);
    cleanup().finally(() => process.exit(130));
  });
}

/** One measured run with the lab's CPU around it and a progress line every 15 s. */
async function timed(n, contender, r, argv, { env, cwd, outBase, progress }) {
  const tick = setInterval(
    () => log(`N=${n} ${contender} run ${r + 1}: ${progress ? `${progress()}, ` : ''}running`),
    15_000,
  );
  const lab0 = cpuSeconds(lab.pid);
  try {
    const m = await measure(argv, {
      env,
      cwd,
      stdoutFile: `${outBase}.stdout`,
      stderrFile: `${outBase}.stderr`,
      limitS,
    });
    return { ...m, labCpu: cpuSeconds(lab.pid) - lab0 };
  } finally {
    clearInterval(tick);
  }
}

async function runSize(n) {
  workDir = mkdtempSync(join(tmpdir(), `l20-fanout-${n}-`));
  const dir = workDir;
  const inventory = join(dir, `inv${n}.json`);
  const env = {
    ...process.env,
    HOME: dir,
    XDG_STATE_HOME: join(dir, 'state'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    NO_COLOR: '1',
    L20_SSH_CONFIG: `${inventory}.ssh_config`,
  };
  // Ansible's ControlPersist masters, and ours (ControlPath in our state directory) once ssh backgrounds them.
  mastersPrefixes = [`ssh: ${dir}/.ansible/cp/`, `ssh: ${env.XDG_STATE_HOME}/l20-setup/ssh/`];
  log(`N=${n}: starting the lab`);
  lab = await startLab(bin, n, inventory, env, [
    ...(opt.speed ? ['--speed', opt.speed] : []),
    ...(opt['lab-arg'] ?? []),
  ]);
  const opensshInventory = join(dir, `inv${n}-openssh.json`);
  const parsedInventory = JSON.parse(readFileSync(inventory, 'utf8'));
  for (const h of parsedInventory.hosts) h.transport = 'openssh';
  writeFileSync(opensshInventory, `${JSON.stringify(parsedInventory, null, 2)}\n`, { mode: 0o600 });
  const runs = Object.fromEntries(CONTENDERS.map((c) => [c, []]));
  const notes = {};
  let reference;
  let jobs;
  let groups;
  const rounds = Math.max(...CONTENDERS.map((c) => reps[c]));
  for (let r = 0; r < rounds; r++) {
    // Contenders take turns each round, so a noisy spell on the machine is spread over all of them.
    if (r < reps.ours) {
      const outBase = join(dir, `ours-${r}`);
      const m = await timed(n, 'ours', r, [process.execPath, bin, 'check', '--inventory', inventory], {
        env,
        cwd: dir,
        outBase,
      });
      const cmds = ourCheckCommands(m, outBase);
      if (cmds && !reference) {
        reference = cmds;
        jobs = writeSshJobs(join(dir, 'ssh'), reference);
        groups = ansibleGroups(reference);
        log(
          `N=${n}: our check ran ${reference.length} commands (${groups.length} distinct lines) in ${m.wall.toFixed(1)} s`,
        );
      }
      runs.ours.push({ ...m, verify: verifyOurs(cmds, reference) });
      if (!reference) break; // nothing to replay
    }
    if (r < reps['ours-openssh'] && !skipped(n, 'ours-openssh')) {
      const outBase = join(dir, `ours-openssh-${r}`);
      const argv = [process.execPath, bin, 'check', '--inventory', opensshInventory];
      stopMasters();
      const sampler = setInterval(sampleMasters, 1000);
      const m = await timed(n, 'ours-openssh', r, argv, { env, cwd: dir, outBase });
      clearInterval(sampler);
      m.masterCpu = stopMasters();
      m.cpu += m.masterCpu;
      runs['ours-openssh'].push({ ...m, verify: verifyOurs(ourCheckCommands(m, outBase), reference) });
    }
    for (const [c, parallel] of [
      ['ssh-par', n],
      ['ssh-seq', 1],
    ]) {
      if (r >= reps[c] || skipped(n, c)) continue;
      const outDir = join(dir, `${c}-${r}`);
      mkdirSync(outDir, { recursive: true });
      const m = await timed(n, c, r, sshArgv(jobs, parallel), {
        env: { ...env, L20_OUT: outDir },
        cwd: dir,
        outBase: join(dir, `${c}-${r}`),
        progress: () => `${doneCount(outDir)}/${reference.length} commands`,
      });
      runs[c].push({ ...m, verify: verifySsh(outDir, reference) });
      rmSync(outDir, { recursive: true, force: true });
    }
    if (r < reps.ansible && !skipped(n, 'ansible') && !ansibleMissing) {
      const aDir = join(dir, `ansible-${r}`);
      const script = writeAnsibleScript(aDir, groups, { ini: `${inventory}.ansible.ini`, forks: n });
      stopMasters();
      const sampler = setInterval(sampleMasters, 1000);
      const m = await timed(n, 'ansible', r, ['bash', script], {
        env,
        cwd: aDir,
        outBase: join(dir, `ansible-${r}`),
        progress: () => `${doneCount(join(aDir, 'out'))}/${groups.length} calls`,
      });
      clearInterval(sampler);
      m.masterCpu = stopMasters();
      m.cpu += m.masterCpu;
      runs.ansible.push({ ...m, verify: verifyAnsible(aDir, groups) });
      rmSync(aDir, { recursive: true, force: true });
    }
  }
  for (const c of CONTENDERS) {
    if (c === 'ansible' && ansibleMissing) notes[c] = `skipped: ${ansibleMissing}`;
    else if (skipped(n, c)) notes[c] = 'skipped (--skip)';
    else if (!reference && c !== 'ours') notes[c] = 'not run: our check gave no command list';
  }
  await stopLab(lab);
  lab = undefined;
  if (!opt.keep) rmSync(dir, { recursive: true, force: true });
  workDir = undefined;
  for (const c of CONTENDERS) {
    const rs = runs[c];
    const bad = rs.filter(
      (x) =>
        x.error ||
        x.verify.differ > 0 ||
        x.verify.ran !== x.verify.expected ||
        x.verify.sshFailures ||
        x.verify.unreachable ||
        x.verify.cutShort,
    );
    rows.push({
      n,
      contender: c,
      runs: rs.length,
      note: notes[c],
      wall: median(rs.map((x) => x.wall)),
      cpu: median(rs.map((x) => x.cpu)),
      labCpu: median(rs.map((x) => x.labCpu)),
      commands: rs[0] ? `${rs[0].verify.ran}/${rs[0].verify.expected}` : '—',
      valid: rs.length > 0 && bad.length === 0,
      problems: bad.map((x) => x.error ?? describeProblem(x.verify)),
      each: rs.map((x) => ({
        wall: x.wall,
        cpu: x.cpu,
        labCpu: x.labCpu,
        ...(x.masterCpu !== undefined ? { masterCpu: x.masterCpu } : {}),
        code: x.code,
        verify: x.verify,
      })),
      ...(c === 'ansible' && groups && rs.length ? { invocations: groups.length } : {}),
    });
  }
  const ours = rows.find((x) => x.n === n && x.contender === 'ours');
  for (const x of rows.filter((y) => y.n === n)) x.ratio = x.wall / ours.wall;
  log(`N=${n}: done`);
}

/**
 * The commands one run of our check sent, from its session log; undefined, with the run's error set, when it
 * gave none. On a fresh lab checks fail (exit 1) and some cannot tell for a missing tool (exit 2, the summary
 * line still printed): both are a full run.
 */
function ourCheckCommands(m, outBase) {
  if (m.code !== 0 && m.code !== 1 && m.code !== 2) {
    m.error ??= `check exited ${m.code}: ${readFileSync(`${outBase}.stderr`, 'utf8').trim().split('\n').pop()}`;
    return undefined;
  }
  const logPath = /session log (\S.*\.jsonl)\s*$/.exec(readFileSync(`${outBase}.stdout`, 'utf8'))?.[1];
  if (!logPath) m.error ??= 'no session log path on the last line of check';
  return logPath ? readSessionLog(logPath) : undefined;
}

const verifyOurs = (cmds, reference) =>
  cmds && reference ? compareRuns(reference, cmds) : { ran: 0, expected: reference?.length ?? 0, differ: 0 };

function describeProblem(v) {
  const parts = [];
  if (v.cutShort)
    parts.push(
      `${v.cutShort} of our commands cut short (probe timeout or lost connection: the check's answer is not the real one)`,
    );
  else if (v.ran !== v.expected) parts.push(`${v.ran}/${v.expected} ran as for us`);
  if (v.sshFailures) parts.push(`${v.sshFailures} ssh exit 255`);
  if (v.unreachable) parts.push(`${v.unreachable} unreachable`);
  if (v.differ) parts.push(`${v.differ} other exit codes`);
  const kinds = Object.entries(v.failureKinds ?? {}).map(([k, c]) => `${c}× ${k}`);
  return [...parts, ...kinds, ...(v.examples ?? [])].join('; ');
}

try {
  for (const n of sizes) await runSize(n);
} finally {
  await cleanup();
}

const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
const elapsed = (Date.now() - t0) / 1000;
const lines = [];
lines.push(
  `fan-out: full read-only check suite on N lab hosts (lab serve in its own process, scenario fresh${opt.speed ? `, speed ${opt.speed}` : ''}${opt['lab-arg'] ? `, lab args ${opt['lab-arg'].join(' ')}` : ''})`,
);
lines.push(
  `machine: ${host.cpu} × ${host.cores} cores; ${host.kernel}; node ${host.node}; ${host.openssh}; ${host.ansible ?? 'ansible: not installed'}`,
);
lines.push('');
lines.push(
  '| N | contender | runs | median wall s | median CPU s | median lab CPU s | wall ÷ ours | commands ran as for us | note |',
);
lines.push('|---|---|---|---|---|---|---|---|---|');
for (const x of rows) {
  const note = [
    x.note,
    x.valid || !x.runs ? (x.invocations ? `${x.invocations} ad-hoc calls` : '') : `INVALID: ${x.problems.join(' | ')}`,
  ]
    .filter(Boolean)
    .join('; ');
  lines.push(
    `| ${x.n} | ${x.contender} | ${x.runs} | ${fmt(x.wall)} | ${fmt(x.cpu)} | ${fmt(x.labCpu)} | ${x.contender === 'ours' ? '1' : fmt(x.ratio, 1)} | ${x.runs ? x.commands : '—'} | ${note} |`,
  );
}
const row = (n, c) => rows.find((x) => x.n === n && x.contender === c);
const targets = [];
const ratioTarget = (c, min) => {
  const a = row(16, c);
  const o = row(16, 'ours');
  const what = `N=16: ${c} wall ÷ ours ≥ ${min}`;
  if (!a || !o || !a.runs || !o.runs)
    return targets.push({ what, status: 'not measured', detail: a?.note ?? 'N=16 not in --hosts' });
  const detail = `${fmt(a.wall)} s ÷ ${fmt(o.wall)} s = ${fmt(a.ratio, 1)}`;
  if (!a.valid || !o.valid)
    return targets.push({
      what,
      status: 'not measured',
      detail: `${detail}, but a run failed verification (see the table)`,
    });
  targets.push({ what, status: a.ratio >= min ? 'met' : 'NOT met', detail });
};
ratioTarget('ansible', 10);
ratioTarget('ssh-par', 5);
{
  const a = row(64, 'ours');
  const b = row(2, 'ours');
  const what = 'ours: wall at N=64 ≤ 4 × wall at N=2';
  if (!a?.runs || !b?.runs) targets.push({ what, status: 'not measured', detail: 'needs N=2 and N=64 in --hosts' });
  else {
    const detail = `${fmt(a.wall)} s vs 4 × ${fmt(b.wall)} s = ${fmt(4 * b.wall)} s (×${fmt(a.wall / b.wall, 1)})`;
    if (!a.valid || !b.valid)
      targets.push({
        what,
        status: 'not measured',
        detail: `${detail}, but a run failed verification (see the table)`,
      });
    else targets.push({ what, status: a.wall <= 4 * b.wall ? 'met' : 'NOT met', detail });
  }
}
lines.push('');
lines.push('targets:');
for (const t of targets) lines.push(`- ${t.what}: ${t.status} (${t.detail})`);
lines.push('');
lines.push(`total elapsed ${fmt(elapsed, 0)} s; reproduce: npm run build && ${reproduce}`);
console.log(lines.join('\n'));
if (opt.json)
  writeFileSync(
    opt.json,
    `${JSON.stringify({ machine: host, command: reproduce, elapsedS: elapsed, repeats: reps, rows, targets }, null, 2)}\n`,
  );
