// Drives bench/lib/stream-tui.mjs in a pseudo-terminal for bench/stream.mjs: waits until both hosts are connected,
// presses r (run the stage) `runs` times and times each to the frame that shows the session idle again, samples
// the TUI's RSS every 50 ms, and, with keys, presses ] about every 100 ms while the stream runs, timing each from
// the write to the first frame with the two panes swapped. Everything is read from what the TUI really drew.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pty from './pty.mjs';
import { HOST_NAMES } from './stream-sshd.mjs';

const COLS = 160;
const ROWS = 48;
// The title bar's state (App.tsx: a dim ' running ' or ' idle    ').
const RUNNING = '\u001b[2m running \u001b[22m';
const IDLE = '\u001b[2m idle    \u001b[22m';
// A pane's first row names its host and address; with two panes both sit on one terminal row.
const HEADERS = new RegExp(
  `(${HOST_NAMES.join('|')})  127\\.0\\.0\\.1:\\d+[^\\n]*?(${HOST_NAMES.join('|')})  127\\.0\\.0\\.1:\\d+`,
  'g',
);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function procStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** utime + stime of the process, in ms. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function connectedHosts(stateDir) {
  try {
    const dir = join(stateDir, 'l20-setup', 'sessions');
    const file = readdirSync(dir).find((f) => f.endsWith('.jsonl'));
    if (!file) return 0;
    const text = readFileSync(join(dir, file), 'utf8');
    return HOST_NAMES.filter((h) => text.includes(`"type":"host.state","host":"${h}","state":"connected"`)).length;
  } catch {
    return 0;
  }
}

/** `nodeArgs`: for looking into it (`--cpu-prof`, `--heap-prof`); the bench passes none. */
/** `minKeys`: with keys, runs the stage again (up to 20 more times) until that many keystrokes were timed. */
export async function runTui({
  root,
  inventory,
  lines,
  runs,
  keys,
  minKeys = 0,
  stateDir,
  keepDefault = false,
  nodeArgs = [],
}) {
  const args = [
    ...nodeArgs,
    join(root, 'bench/lib/stream-tui.mjs'),
    inventory,
    String(lines),
    ...(keepDefault ? ['--keep-default'] : []),
  ];
  const term = pty.spawn(process.execPath, args, {
    name: 'xterm-256color',
    cols: COLS,
    rows: ROWS,
    cwd: root,
    env: { ...process.env, XDG_STATE_HOME: stateDir, TERM: 'xterm-256color' },
  });
  let exited = null;
  const exit = new Promise((resolve) =>
    term.onExit((e) => {
      exited = e;
      resolve(e);
    }),
  );
  let seen = ''; // what the TUI drew since the last mark (kept short: only the newest frames matter)
  let waiter;
  // Whether a frame since the last reset showed the title bar running / idle (a marker may straddle two reads).
  let edge = '';
  const drew = { running: false, idle: false };
  term.onData((d) => {
    seen += d;
    // Only the newest frames matter; trimmed now and then, not copied on every read.
    if (seen.length > 400_000) seen = seen.slice(-200_000);
    const probe = edge + d;
    if (probe.includes(RUNNING)) drew.running = true;
    if (probe.includes(IDLE)) drew.idle = true;
    edge = probe.slice(-32);
    waiter?.();
  });
  const mark = () => {
    seen = '';
  };
  /** Resolves once `test(seen)` holds for what arrived since the last mark. */
  const until = (test, what, timeoutMs = 120_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter = undefined;
        reject(new Error(`timed out waiting for ${what}; the TUI drew: ${JSON.stringify(seen.slice(-2000))}`));
      }, timeoutMs);
      waiter = () => {
        const r = test(seen);
        if (r) {
          clearTimeout(timer);
          waiter = undefined;
          resolve(r);
        }
      };
      waiter();
    });

  let maxRssKb = 0;
  const sampler = setInterval(() => {
    try {
      const { rss } = procStatus(term.pid);
      if (Number.isFinite(rss)) maxRssKb = Math.max(maxRssKb, rss);
    } catch {
      // exited
    }
  }, 50);

  const screenWalls = [];
  const latencies = [];
  let missed = 0;
  let hwmKb;
  let cpu;
  try {
    const deadline = Date.now() + 30_000;
    while (connectedHosts(stateDir) < HOST_NAMES.length) {
      if (exited) throw new Error(`the TUI exited (${JSON.stringify(exited)}): ${seen.slice(-2000)}`);
      if (Date.now() > deadline)
        throw new Error(`hosts not connected after 30 s; the TUI drew: ${JSON.stringify(seen.slice(-2000))}`);
      await sleep(50);
    }
    await until(() => drew.idle, 'the first idle frame');
    const cpu0 = cpuMs(term.pid);
    for (let i = 0; i < runs || (latencies.length < minKeys && i < runs + 20); i++) {
      mark();
      drew.running = false;
      const t0 = performance.now();
      term.write('r');
      await until(() => drew.running, 'the stage to start');
      // Frames before the running one may still have said idle.
      drew.idle = false;
      if (keys) {
        // Panes start alpha | bravo; every ] swaps them. A key counts from its write to the first frame showing the swap.
        let order = await until((s) => lastOrder(s), 'the panes');
        while (!drew.idle) {
          const want = order === 'ab' ? 'ba' : 'ab';
          mark();
          const k0 = performance.now();
          term.write(']');
          const swapped = (s) => [...s.matchAll(HEADERS)].some((m) => orderOf(m) === want);
          try {
            await until((s) => swapped(s) || drew.idle, 'the swap', 2000);
            // A swap first drawn after the stream ended is not a measurement during it.
            if (swapped(seen) && !drew.idle) latencies.push(performance.now() - k0);
          } catch {
            missed++;
          }
          order = lastOrder(seen) || order;
          await sleep(Math.max(0, 100 - (performance.now() - k0)));
        }
      } else {
        await until(() => drew.idle, 'the stage to end');
      }
      screenWalls.push(performance.now() - t0);
      await sleep(300);
    }
    cpu = cpuMs(term.pid) - cpu0;
    hwmKb = procStatus(term.pid).hwm;
    term.write('q');
    await Promise.race([exit, sleep(10_000)]);
  } finally {
    clearInterval(sampler);
    if (!exited) term.kill('SIGTERM');
    await exit;
  }
  return { screenWalls, latencies, missed, hwmKb, maxRssKb, cpuMs: cpu };
}

function orderOf(m) {
  return m[1] === HOST_NAMES[0] ? 'ab' : 'ba';
}

function lastOrder(s) {
  const all = [...s.matchAll(HEADERS)];
  return all.length > 0 ? orderOf(all[all.length - 1]) : '';
}
