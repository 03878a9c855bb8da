/**
 * An active clock event (throttle) reason is a doctor finding (D26), read the way the monitor reads it: both
 * go through `clockEventVerdict`, so every combination of NVML reason bits gets the same verdict from a live
 * sample and from a pasted output. Real samples: H200 (driver 580) idle and under a bf16 matmul loop at its
 * power cap, and the corpus 8 × H100 (535) -q with a GPU in thermal and power-brake slowdown.
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { hostAlerts } from '../../src/monitor/thresholds.js';
import type { GpuReading } from '../../src/monitor/types.js';
import { EVENT_REASONS } from '../../src/parse/clock-events.js';
import { loadFixture } from '../parse/fixtures.js';

const d26 = (text: string) => doctorText(text).report.findings.filter((f) => f.rule === 'D26');

describe('nvidia-smi -q clock event reasons → D26', () => {
  it('SW Power Cap : Active (real H200 under load) → medium, at its line', () => {
    const text = loadFixture('nvidia-smi/nvidia-smi-q-d-PERFORMANCE__h200-580-sw-power-cap-active.txt');
    const [f, ...rest] = d26(text);
    expect(rest).toEqual([]);
    const line = text.split('\n').findIndex((l) => /SW Power Cap\s+: Active/.test(l)) + 1;
    expect(f).toMatchObject({ severity: 'medium', line });
    expect(f?.title).toContain('SW Power Cap');
    expect(f?.evidence).toContain(`line ${line}: SW Power Cap`);
  });

  it('only Idle active (real idle H200) → no finding', () => {
    expect(d26(loadFixture('nvidia-smi/nvidia-smi-q-d-PERFORMANCE__h200-580-idle.txt'))).toEqual([]);
  });

  it('the pre-535 spelling "Clocks Throttle Reasons" with HW Thermal Slowdown → high', () => {
    const old = 'nvidia-smi/nvidia-smi-q-d-PERFORMANCE__synth-pre-535-throttle-reasons-hw-thermal.txt';
    const [f] = d26(loadFixture(old));
    expect(f).toMatchObject({ severity: 'high' });
    expect(f?.title).toContain('HW Thermal Slowdown');
    expect(f?.fix).toContain('airflow');
  });

  it('a real 8 × H100 -q: the one GPU in thermal and power-brake slowdown, every reason line quoted', () => {
    const [f, ...rest] = d26(loadFixture('corpus/nvidia-smi-q__8x-h100-535.183.01-full.txt'));
    expect(rest).toEqual([]);
    expect(f?.severity).toBe('high');
    expect(f?.title).toContain('00000000:75:00.0');
    for (const r of ['SW Power Cap', 'HW Power Brake Slowdown', 'SW Thermal Slowdown']) {
      expect(f?.evidence).toMatch(new RegExp(`line \\d+: ${r}\\s+: Active`));
    }
  });

  it('-q -x: <clocks_throttle_reasons> children (the corpus A100 XML with one reason set Active)', () => {
    const xml = loadFixture('corpus/nvidia-smi-q-x__a100-sxm4-40gb-510-mig.xml.txt');
    expect(d26(xml)).toEqual([]);
    const tag = '<clocks_throttle_reason_sw_thermal_slowdown>';
    const hot = xml.replace(`${tag}Not Active`, `${tag}Active`);
    const [f] = d26(hot);
    expect(f).toMatchObject({ severity: 'high' });
    expect(f?.evidence).toContain('<clocks_throttle_reason_sw_thermal_slowdown>Active');
  });
});

describe('--query-gpu clock event reasons → D26', () => {
  it('the monitor query headerless (real H200: idle 0x1, then power-capped 0x4) → one medium finding', () => {
    const path = 'nvidia-smi/query-gpu-noheader__h200-580-monitor-fields-event-reasons-idle-and-power-capped.txt';
    const [f, ...rest] = d26(loadFixture(path));
    expect(rest).toEqual([]);
    expect(f?.severity).toBe('medium');
    expect(f?.evidence).toContain('clocks_event_reasons.active = 0x0000000000000004');
  });

  it('per-reason columns (`clocks_event_reasons.sw_power_cap` = Active) count as well', () => {
    const text = [
      'index, name, clocks_event_reasons.hw_slowdown, clocks_event_reasons.sw_power_cap',
      '0, NVIDIA H200, Active, Not Active',
    ].join('\n');
    expect(d26(text)[0]).toMatchObject({ severity: 'high' });
  });
});

describe('doctor and the monitor agree on every reason combination', () => {
  const reading = (bits: number): GpuReading => ({
    index: 0,
    name: 'NVIDIA L20',
    uuid: 'GPU-x',
    utilPct: 90,
    memUsedMiB: 1,
    memTotalMiB: 46068,
    tempC: null,
    powerW: 340,
    powerCapW: 350,
    smClockMHz: 1800,
    smClockMaxMHz: 2520,
    pstate: 'P0',
    eventReasons: bits,
    processes: [],
  });
  it('D26 high ⇔ a monitor fail, D26 medium ⇔ a monitor warn, none ⇔ no clock alert', () => {
    const all = Object.values(EVENT_REASONS).reduce((a, b) => a | b, 0);
    for (let bits = 0; bits <= all; bits++) {
      const gpus = [reading(bits)];
      const host = { name: 'h', stale: false, updated: null, error: null, gpus, ports: [], vllm: null, xids: [] };
      const alerts = hostAlerts(host, null);
      const fail = alerts.some((a) => a.severity === 'fail');
      const monitor = fail ? 'high' : alerts.some((a) => a.severity === 'warn') ? 'medium' : 'none';
      const csv = `index, clocks_event_reasons.active\n0, 0x${bits.toString(16).padStart(16, '0')}\n`;
      const doctor = d26(csv)[0]?.severity ?? 'none';
      expect(doctor, `bits 0x${bits.toString(16)}`).toBe(monitor);
    }
  });
});
