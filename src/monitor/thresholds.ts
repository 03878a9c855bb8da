/**
 * What deserves the operator's eye, from one host's sample. Limits follow the hardware's own signals
 * where it has them (NVML's clock event reasons say *why* clocks dropped) and the fabric's semantics
 * elsewhere: pause frames are normal under incast, a storm is many pauses while little data moves;
 * any discard on a lossless (PFC) priority is a configuration fault (docs/RULES.md R26/R29).
 */
import { reasonsFromBitmask } from '../parse/clock-events.js';
import { clockEventVerdict } from '../rules/output/d26-clock-events.js';
import type { Alert, GpuReading, HostSample, PortReading } from './types.js';

export const LIMITS = {
  /** GPU temperature (°C): L20's slowdown starts in the high 80s; warn before it. */
  tempWarnC: 83,
  tempFailC: 90,
  /** Pause frames per second (rx + tx, all priorities) worth a look, and the storm level. */
  pauseWarnPerSec: 1_000,
  pauseStormPerSec: 10_000,
  /** A storm moves little data: below this share of line rate while pausing at the storm level. */
  stormThroughputShare: 0.1,
} as const;

function gpuAlerts(g: GpuReading): Alert[] {
  const subject = `gpu${g.index}`;
  const out: Alert[] = [];
  // The clock event verdict doctor's D26 uses on `nvidia-smi -q` and CSV outputs: one reading of the reasons.
  const v = clockEventVerdict(reasonsFromBitmask(g.eventReasons ?? 0) ?? []);
  if (v.thermal.length > 0) {
    out.push({
      kind: 'thermal',
      subject,
      severity: 'fail',
      message: `GPU ${g.index} thermal slowdown at ${g.tempC ?? '?'} °C (clocks ${g.smClockMHz ?? '?'} MHz)`,
    });
  } else if (g.tempC !== null && g.tempC >= LIMITS.tempFailC) {
    out.push({
      kind: 'thermal',
      subject,
      severity: 'fail',
      message: `GPU ${g.index} at ${g.tempC} °C (≥ ${LIMITS.tempFailC})`,
    });
  } else if (g.tempC !== null && g.tempC >= LIMITS.tempWarnC) {
    out.push({
      kind: 'thermal',
      subject,
      severity: 'warn',
      message: `GPU ${g.index} at ${g.tempC} °C (≥ ${LIMITS.tempWarnC})`,
    });
  }
  if (v.hardware.length > 0) {
    out.push({
      kind: 'power',
      subject,
      severity: 'fail',
      message: `GPU ${g.index} hardware slowdown (power brake or HW slowdown): check PSU and cabling`,
    });
  } else if (v.powerCap) {
    out.push({
      kind: 'power',
      subject,
      severity: 'warn',
      message: `GPU ${g.index} held at its power cap (${g.powerW ?? '?'} / ${g.powerCapW ?? '?'} W)`,
    });
  }
  return out;
}

const totalPauses = (p: PortReading): number =>
  [...Object.values(p.pauseRxPerSec), ...Object.values(p.pauseTxPerSec)].reduce((a, b) => a + b, 0);

function portAlerts(p: PortReading, expectedGbps: number | null): Alert[] {
  const subject = p.netdev;
  if (!p.up && p.adminUp === false) {
    return [
      {
        kind: 'port-down',
        subject,
        severity: 'warn',
        message: `${p.netdev} is administratively down (not brought up yet: stage network)`,
      },
    ];
  }
  if (!p.up)
    return [
      {
        kind: 'port-down',
        subject,
        severity: 'fail',
        message: `${p.netdev} is up but has no link (cable, peer port or transceiver)`,
      },
    ];
  const out: Alert[] = [];
  if (expectedGbps !== null && p.speedGbps !== null && p.speedGbps < expectedGbps) {
    out.push({
      kind: 'port-speed',
      subject,
      severity: 'warn',
      message: `${p.netdev} runs at ${p.speedGbps} Gb/s, below ${expectedGbps} Gb/s`,
    });
  }
  const pauses = totalPauses(p);
  const moved = Math.max(p.txGbps ?? 0, p.rxGbps ?? 0);
  const line = p.speedGbps ?? expectedGbps ?? 25;
  if (pauses >= LIMITS.pauseStormPerSec && moved < line * LIMITS.stormThroughputShare) {
    out.push({
      kind: 'pause-storm',
      subject,
      severity: 'fail',
      message: `${p.netdev} pause storm: ${pauses} pauses/s while only ${moved.toFixed(1)} Gb/s moves`,
    });
  } else if (pauses >= LIMITS.pauseWarnPerSec) {
    out.push({
      kind: 'pause-storm',
      subject,
      severity: 'warn',
      message: `${p.netdev} ${pauses} pause frames/s (congestion; R26 if the ends disagree on PFC)`,
    });
  }
  const discards = (p.discardsPerSec ?? 0) + (p.outOfBufferPerSec ?? 0);
  if (discards > 0) {
    out.push({
      kind: 'discards',
      subject,
      severity: 'fail',
      message: `${p.netdev} dropping ${discards} packets/s (discards ${p.discardsPerSec ?? 0}, out of buffer ${p.outOfBufferPerSec ?? 0}): lossless priority not lossless (R26, R29)`,
    });
  }
  return out;
}

/**
 * Alerts for one host. `expectedGbps` is the speed its fabric ports should run at (the fastest port
 * seen across the cluster, since they are the same model); `newXids` the Xid lines first seen now.
 */
export function hostAlerts(
  h: Omit<HostSample, 'alerts'>,
  expectedGbps: number | null,
  newXids: readonly string[] = h.xids,
): Alert[] {
  if (h.stale)
    return [
      {
        kind: 'stale',
        subject: h.name,
        severity: 'fail',
        message: `${h.name} not answering${h.error ? `: ${h.error}` : ''}`,
      },
    ];
  return [
    ...h.gpus.flatMap(gpuAlerts),
    ...h.ports.flatMap((p) => portAlerts(p, expectedGbps)),
    ...newXids.map((line): Alert => ({
      kind: 'xid',
      subject: h.name,
      severity: 'fail',
      message: line.replace(/^\[[^\]]*\]\s*/, ''),
    })),
  ];
}
