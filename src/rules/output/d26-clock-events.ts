/**
 * D26 GPU clocks held down by a thermal, hardware or power event — high, graded (docs/RULES.md §3).
 * Reads the active clock event reasons (`nvidia-smi -q` `Clocks Event Reasons` / `Clocks Throttle Reasons`,
 * `-q -x`, `--query-gpu` `clocks_event_reasons.*`). The monitor's alerts read the same verdict
 * (`clockEventVerdict`), so a live alert and a doctor finding agree on every reason:
 * - HW Thermal Slowdown or SW Thermal Slowdown → thermal, `high`;
 * - HW Slowdown or HW Power Brake Slowdown → hardware (PSU, cabling, the board's power brake), `high`;
 * - SW Power Cap alone → the GPU runs at its power limit, `medium` (expected at full load; a loss if the
 *   limit was lowered);
 * - Idle, Applications Clocks Setting, Sync Boost, Display Clock Setting → not a fault, no finding.
 */
import { EVENT_REASON_NAMES, type EventReason } from '../../parse/clock-events.js';
import type { Finding } from '../types.js';

export interface ClockEventVerdict {
  thermal: EventReason[];
  hardware: EventReason[];
  powerCap: boolean;
}

const THERMAL: readonly EventReason[] = ['hwThermalSlowdown', 'swThermalSlowdown'];
const HARDWARE: readonly EventReason[] = ['hwPowerBrakeSlowdown', 'hwSlowdown'];

/** Which of the active reasons are faults, and of which kind. */
export function clockEventVerdict(reasons: readonly EventReason[]): ClockEventVerdict {
  return {
    thermal: THERMAL.filter((r) => reasons.includes(r)),
    hardware: HARDWARE.filter((r) => reasons.includes(r)),
    powerCap: reasons.includes('swPowerCap'),
  };
}

export interface D26Hit {
  gpu: string | number;
  reasons: readonly EventReason[];
  /** The triggering lines, verbatim (led by `line N: ` where the input has line numbers). */
  evidence: string[];
  /** The first triggering line. */
  line?: number;
}

export function d26ClockEvents(hits: readonly D26Hit[]): Finding | undefined {
  const judged = hits
    .map((h) => ({ h, v: clockEventVerdict(h.reasons) }))
    .filter(({ v }) => v.thermal.length + v.hardware.length > 0 || v.powerCap);
  const first = judged[0];
  if (!first) return undefined;
  const thermal = judged.some(({ v }) => v.thermal.length > 0);
  const hardware = judged.some(({ v }) => v.hardware.length > 0);
  const cap: EventReason[] = ['swPowerCap'];
  const faults = judged.flatMap(({ v }) => [...v.thermal, ...v.hardware, ...(v.powerCap ? cap : [])]);
  const names = [...new Set(faults)].map((r) => EVENT_REASON_NAMES[r]);
  const gpus = [...new Set(judged.map(({ h }) => String(h.gpu)))];
  const fixes: string[] = [];
  if (thermal) {
    fixes.push('Thermal: check airflow, fans and inlet temperature (`nvidia-smi -q -d TEMPERATURE`).');
  }
  if (hardware) {
    fixes.push(
      'Hardware slowdown / power brake: check the PSU, the GPU power cables and the chassis power-brake signal; ' +
        '`nvidia-smi -q -d PERFORMANCE` counters show how long it lasted.',
    );
  }
  if (judged.some(({ v }) => v.powerCap)) {
    fixes.push(
      'SW Power Cap: the GPU draws its power limit — expected at full load; if `Current Power Limit` is below ' +
        '`Default Power Limit` (`nvidia-smi -q -d POWER`), restore it with `nvidia-smi -pl <default>`.',
    );
  }
  return {
    rule: 'D26',
    severity: thermal || hardware ? 'high' : 'medium',
    title: `GPU clocks held down: ${names.join(', ')}${gpus.length > 0 ? ` (GPU ${gpus.join(', ')})` : ''}`,
    evidence: judged
      .slice(0, 4)
      .flatMap(({ h }) => [`GPU ${h.gpu}:`, ...h.evidence.map((e) => `  ${e}`)])
      .join('\n'),
    fix: fixes.join(' '),
    ...(first.h.line !== undefined ? { line: first.h.line } : {}),
  };
}
