/**
 * Acceptance: every real sample (test/fixtures/corpus, h200-x2) is detected as its kind by content.
 * The expected kind comes from the sample's file name, which the product never sees.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { KIND_BY_PREFIX } from './expected-kinds.js';

const DIR = resolve(import.meta.dirname, '../fixtures');

/** h200-x2 captures, by file name. */
const H200: Record<string, string> = {
  'nvidia-smi.txt': 'nvidia-smi',
  'nvidia-smi_busy_with_process.txt': 'nvidia-smi',
  'nvidia-smi_-q.txt': 'nvidia-smi-q',
  'nvidia-smi_-q_-x.xml': 'nvidia-smi-q',
  'query-gpu_csv.txt': 'nvidia-smi-csv',
  'query-gpu_csv_noheader_nounits.txt': 'nvidia-smi-csv',
  'query-gpu_lms500_busy.txt': 'nvidia-smi-csv',
  'query-compute-apps.txt': 'nvidia-smi-csv',
  'topo_-m.txt': 'nvidia-smi-topo',
  'dmon_-c3.txt': 'nvidia-smi-dmon',
  'pmon_-c2.txt': 'nvidia-smi-dmon',
  'nccl_info_torch_allreduce.txt': 'nccl-log',
  'proc_driver_nvidia_version.txt': 'nvidia-driver-version',
  'nvcc_--version.txt': 'nvcc',
};

function body(path: string): string {
  const text = readFileSync(path, 'utf8');
  // Corpus samples carry `# source:` / `# context:` and a blank line; h200-x2 captures are raw.
  return text.startsWith('# source:') ? text.split('\n').slice(3).join('\n') : text;
}

describe('every real sample is detected as its kind', () => {
  const corpus = readdirSync(join(DIR, 'corpus')).filter((f) => f.includes('__'));
  for (const name of corpus) {
    const prefix = name.split('__')[0]!;
    const expected = KIND_BY_PREFIX[prefix];
    it(`corpus/${name}`, () => {
      const { report } = doctorText(body(join(DIR, 'corpus', name)));
      if (expected) expect(report.kind).toBe(expected);
      else expect(report.kind, 'a tool outside docs/DOCTOR.md still gets a kind of its own').not.toBe('unknown');
    });
  }
  for (const [name, expected] of Object.entries(H200)) {
    it(`h200-x2/${name}`, () => {
      expect(doctorText(body(join(DIR, 'h200-x2', name))).report.kind).toBe(expected);
    });
  }
});
