/** A correct design-A configuration written from docs/STAGES.md reports no blocker or high finding. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lintFiles, runLint } from '../../src/lint/index.js';
import { DESIGN_A, lintMany } from './helpers.js';

const FILES = readdirSync(DESIGN_A).map((n) => join(DESIGN_A, n));

describe('design A (docs/STAGES.md §2, §3.4, §3.5, §3.9–§3.11)', () => {
  it('no blocker or high finding; exit status 0', async () => {
    const report = await lintFiles(FILES);
    const serious = report.files.flatMap((f) =>
      f.findings
        .filter((x) => x.severity === 'blocker' || x.severity === 'high')
        .map((x) => `${f.file}: ${x.rule} ${x.evidence}`),
    );
    expect(serious).toEqual([]);
    let out = '';
    expect(await runLint({ files: FILES, json: false, color: false, write: (s) => (out += s) })).toBe(0);
  });

  it('detects every file by content', async () => {
    const report = await lintFiles(FILES);
    const kinds = Object.fromEntries(report.files.map((f) => [f.file.slice(DESIGN_A.length + 1), f.kind]));
    expect(kinds).toEqual({
      '01-mgmt.yaml': 'netplan-yaml',
      '60-l20-fabric.yaml': 'netplan-yaml',
      'install-venv.sh': 'shell-script',
      'l20-ray.service': 'systemd-unit',
      'l20-roce-qos': 'shell-script',
      'l20-roce-qos.service': 'systemd-unit',
      'l20-vllm.service': 'systemd-unit',
      'nccl.conf': 'nccl-conf',
      'vllm-node2.sh': 'shell-script',
    });
  });

  it('only hygiene remains (netplan file mode from disk), and nothing at all from text', () => {
    const texts = Object.fromEntries(FILES.map((p) => [p, readFileSync(p, 'utf8')]));
    const all = Object.values(lintMany(texts)).flat();
    expect(all).toEqual([]);
  });

  it('the QoS script alone still needs its unit (R27), which the run supplies', () => {
    const qos = readFileSync(join(DESIGN_A, 'l20-roce-qos'), 'utf8');
    expect(lintMany({ qos }).qos?.map((f) => f.rule)).toEqual(['R27']);
    const unit = readFileSync(join(DESIGN_A, 'l20-roce-qos.service'), 'utf8');
    expect(lintMany({ qos, unit }).qos).toEqual([]);
  });
});
