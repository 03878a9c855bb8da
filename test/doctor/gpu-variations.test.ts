/**
 * Every GPU/NCCL/Ray/vLLM/DCGM sample as real captures distort it: CRLF, ANSI colours, a prompt and command
 * above, trailing spaces, cuts at several points. Same kind and facts, never a throw, nothing invented from a
 * cut. Plus the time budget: doctor on the 118 KB H200 NCCL log.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { gpuKinds } from '../../src/doctor/kinds/gpu.js';
import { ansiWrap, CUTS, loadFixture, toCrlf, truncateAt, withPrompt, withTrailingSpaces } from '../parse/fixtures.js';

const DIR = resolve(import.meta.dirname, '../fixtures');
const MINE =
  /^(?:nvidia-smi(?!-topo)|nvcc|nccl-debug|all_reduce_perf|gather_perf|ray-|vllm-|benchmark_serving|dcgmi-|torch-nccl|proc-driver-nvidia)/;
const H200 = readdirSync(join(DIR, 'h200-x2')).filter((f) => !/^topo/.test(f));
const FILES = [
  ...readdirSync(join(DIR, 'corpus'))
    .filter((f) => MINE.test(f))
    .map((f) => `corpus/${f}`),
  ...H200.map((f) => `h200-x2/${f}`),
];
const KINDS = new Set(gpuKinds.map((k) => k.kind));

function clean(report: ReturnType<typeof doctorText>['report']) {
  expect(report.errors ?? []).toEqual([]);
  return report;
}

describe('GPU samples under capture distortions', () => {
  it('covers every sample of these kinds', () => {
    expect(FILES.length).toBeGreaterThanOrEqual(70);
  });

  for (const file of FILES) {
    it(file, () => {
      const text = loadFixture(file);
      const base = clean(doctorText(text).report);
      expect(KINDS.has(base.kind), `${file} detected as ${base.kind}`).toBe(true);
      const rulesOf = (r: typeof base) => r.findings.map((f) => f.rule).sort();
      for (const variant of [toCrlf(text), ansiWrap(text), withPrompt(text, 'nvidia-smi'), withTrailingSpaces(text)]) {
        const r = clean(doctorText(variant).report);
        expect(r.kind).toBe(base.kind);
        expect(rulesOf(r)).toEqual(rulesOf(base));
      }
      // CRLF and colours change nothing at all, facts included.
      expect(doctorText(toCrlf(text)).report.facts).toEqual(base.facts);
      expect(doctorText(ansiWrap(text)).report.facts).toEqual(base.facts);
      for (const cut of CUTS) {
        const part = truncateAt(text, cut);
        const r = clean(doctorText(part).report);
        // A cut can remove a trigger, never create one the whole text lacks.
        for (const rule of rulesOf(r)) expect(rulesOf(base)).toContain(rule);
        for (const k of gpuKinds) {
          expect(() => {
            const facts = k.parse(part);
            k.findings(facts, part);
            k.summary(facts);
          }).not.toThrow();
        }
      }
    });
  }

  it('kinds are total on junk', () => {
    for (const junk of [
      '',
      '\u0000\u0001',
      '|'.repeat(1000),
      'NCCL INFO '.repeat(5000),
      '<nvidia_smi_log>'.repeat(100),
      `# gpu\n${'1 '.repeat(10000)}`,
    ]) {
      for (const k of gpuKinds) {
        expect(() => k.detect(junk)).not.toThrow();
        expect(() => k.findings(k.parse(junk), junk)).not.toThrow();
      }
    }
  });
});

describe('time budget', () => {
  it('doctor reads the 118 KB H200 NCCL log in well under 200 ms', () => {
    const bytes = Buffer.from(loadFixture('h200-x2/nccl_info_torch_allreduce.txt'));
    doctorText(bytes);
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = doctorText(Buffer.concat([bytes, Buffer.from(`\n# run ${i}\n`)])).report;
      times.push(performance.now() - t);
      expect(r.kind).toBe('nccl-log');
    }
    expect(Math.min(...times)).toBeLessThan(100);
  });

  it('the GPU detectors and the NCCL log parser stay linear on 20 MB', () => {
    const unit = loadFixture('h200-x2/nccl_info_torch_allreduce.txt');
    const big = unit.repeat(Math.ceil((20 * 1024 * 1024) / unit.length));
    const t = performance.now();
    for (const k of gpuKinds) k.detect(big);
    const nccl = gpuKinds.find((k) => k.kind === 'nccl-log');
    const facts = nccl?.parse(big) as { ncclVersion?: string };
    expect(facts.ncclVersion).toBe('2.28.9');
    expect(performance.now() - t).toBeLessThan(15_000);
  });
});
