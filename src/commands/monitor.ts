/**
 * `l20-setup monitor [TARGET] [--once] [--json] [--interval MS] [--record FILE | --replay FILE]`.
 * On a terminal it opens the TUI on the monitor screen; without one it prints a line per host per
 * sample (JSONL with --json); --once prints one complete sample (rates need two readings, so it takes
 * about one interval) and exits. --record appends every sample as JSONL; --replay plays a recording.
 */
import type { Target } from '../target.js';
import { MonitorSession } from '../monitor/session.js';
import { readRecording, ReplaySource } from '../monitor/replay.js';
import { formatSampleLines } from '../monitor/plain.js';
import type { MonitorSample } from '../monitor/types.js';
import { intOption, UsageError, type CliValues } from './common.js';
import { labSpeed, targetFromCli } from './target-from-cli.js';

type MonitorValues = CliValues;

const write = (s: string): void => {
  process.stdout.write(s);
};

function printSample(sample: MonitorSample, json: boolean, pretty: boolean): void {
  if (json) write(`${JSON.stringify(sample, null, pretty ? 2 : undefined)}\n`);
  else write(`${formatSampleLines(sample).join('\n')}\n`);
}

/** 2 when no host could be sampled at all (connection or tool failure), else 0. */
const exitFor = (sample: MonitorSample): number =>
  sample.hosts.length > 0 && sample.hosts.every((h) => h.stale || (h.gpus.length === 0 && h.ports.length === 0))
    ? 2
    : 0;

export async function runMonitor(values: MonitorValues): Promise<number> {
  const intervalMs = intOption('interval', values.interval, 100, 3_600_000) ?? 1_000;
  if (values.record && values.replay)
    throw new UsageError('--record and --replay exclude each other: record a live monitor, or replay a recording');
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true && !values.once && !values.json;
  if (values.replay) return replay(values, interactive);

  // The monitor watches a running cluster: the lab starts serving, in real time, with work on it.
  const target = await targetFromCli(
    values,
    values.lab ? { scenario: values.scenario ?? 'ready', speed: labSpeed(values.speed) ?? 1, load: true } : {},
  );
  if (!target) return 2;
  if (interactive) return interactiveMonitor(target, values, intervalMs);
  const session = new MonitorSession(target.hosts, {
    intervalMs,
    config: target.config,
    ...(values.record ? { recordFile: values.record } : {}),
  });
  try {
    session.start();
    if (values.once) {
      // Connecting, the first GPU block and two counter frames: a few intervals at most.
      const sample = await session.once(Math.max(15_000, intervalMs * 4));
      printSample(sample, values.json ?? false, true);
      return exitFor(sample);
    }
    await new Promise<void>((resolve) => {
      const off = session.subscribe((frame) => printSample(frame.sample, values.json ?? false, false));
      process.once('SIGINT', () => {
        off();
        resolve();
      });
    });
    return 0;
  } finally {
    await session.stop();
    await target.close();
  }
}

async function interactiveMonitor(target: Target, values: MonitorValues, intervalMs: number): Promise<number> {
  const { runInteractiveOn } = await import('./interactive.js');
  return runInteractiveOn(target, {
    screen: 'monitor',
    monitor: { intervalMs, ...(values.record ? { recordFile: values.record } : {}) },
  });
}

async function replay(values: MonitorValues, interactive: boolean): Promise<number> {
  const file = values.replay as string;
  const samples = await readRecording(file);
  if (values.once) {
    printSample(samples[0] as MonitorSample, values.json ?? false, true);
    return 0;
  }
  if (interactive) {
    const { runReplayInteractive } = await import('./interactive.js');
    return runReplayInteractive(new ReplaySource(samples, file));
  }
  for (const s of samples) printSample(s, values.json ?? false, false);
  return 0;
}
