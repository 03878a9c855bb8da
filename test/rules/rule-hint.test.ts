/** Human lint and doctor reports with findings end by saying how to look a rule up; JSON stays as it was. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { renderDoctor } from '../../src/doctor/render.js';
import { runLint } from '../../src/lint/index.js';

const dir = mkdtempSync(join(tmpdir(), 'l20-rule-hint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function lint(text: string, json = false): Promise<string> {
  const file = join(dir, `nccl-${Math.random().toString(36).slice(2)}.conf`);
  writeFileSync(file, text);
  let out = '';
  await runLint({ files: [file], json, color: false, write: (s) => (out += s) });
  return out;
}

const IBSTAT_DOWN =
  "CA 'mlx5_0'\n\tCA type: MT4117\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n" +
  '\t\tPhysical state: Disabled\n\t\tRate: 40\n\t\tLink layer: Ethernet\n';

describe('the rule lookup hint', () => {
  it('lint: the last line names `l20-setup rules` with a rule that was found; none without findings', async () => {
    const found = await lint('NCCL_IB_GID_INDEX=3\n');
    expect(found.trimEnd().split('\n').at(-1)).toBe('explain a rule: l20-setup rules ID  (e.g. l20-setup rules R05)');
    expect(await lint('NCCL_IB_HCA==mlx5_0:1\n')).not.toContain('l20-setup rules');
    expect(await lint('NCCL_IB_GID_INDEX=3\n', true)).not.toContain('l20-setup rules');
  });

  it('doctor: after the findings, with the first one as the example; none for a clean output', () => {
    const report = renderDoctor(doctorText(IBSTAT_DOWN), false);
    expect(report.trimEnd().split('\n').at(-1)).toBe('explain a rule: l20-setup rules ID  (e.g. l20-setup rules D08)');
    const clean = renderDoctor(
      doctorText(
        IBSTAT_DOWN.replace('State: Down', 'State: Active')
          .replace('Physical state: Disabled', 'Physical state: LinkUp')
          .replace('Rate: 40', 'Rate: 25'),
      ),
      false,
    );
    expect(clean).toContain('no findings');
    expect(clean).not.toContain('l20-setup rules');
  });
});
