/**
 * Acceptance: every real sample (test/fixtures/corpus, h200-x2) is detected as its kind by content.
 * The expected kind comes from the sample's file name, which the product never sees.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';

const DIR = resolve(import.meta.dirname, '../fixtures');

/** File-name prefix (before `__`) → the DOCTOR.md kind. */
const EXPECTED: Record<string, string> = {
  ibstat: 'ibstat',
  ibstatus: 'ibstatus',
  ibv_devices: 'ibv_devices',
  'ibv_devinfo-l': 'ibv_devinfo',
  'ibv_devinfo-v': 'ibv_devinfo',
  show_gids: 'show_gids',
  ibdev2netdev: 'ibdev2netdev',
  'ibdev2netdev-v': 'ibdev2netdev',
  'rdma-link': 'rdma-link',
  mlnx_qos: 'mlnx_qos',
  'proc-net-bonding': 'bonding',
  ethtool: 'ethtool',
  'ethtool-S': 'ethtool-S',
  'ethtool-i': 'ethtool-i',
  ib_write_bw: 'perftest',
  ib_read_bw: 'perftest',
  ib_send_bw: 'perftest',
  ib_send_lat: 'perftest',
  ib_read_lat: 'perftest',
  'ofed_info-s': 'ofed_info',
  'ofed_info-n': 'ofed_info',
  'ofed_info-s-and-n': 'ofed_info',
  ofed_info: 'ofed_info',
  lspci: 'lspci',
  'lspci-nn': 'lspci',
  'lspci-vv': 'lspci',
  'lspci-vvv': 'lspci',
  lsmod: 'lsmod',
  'lsmod-grep-nvidia': 'lsmod',
  'proc-driver-nvidia-version': 'nvidia-driver-version',
  'nvcc--version': 'nvcc',
  'nvidia-smi': 'nvidia-smi',
  'nvidia-smi-query-gpu': 'nvidia-smi-csv',
  'nvidia-smi-query-compute-apps': 'nvidia-smi-csv',
  'nvidia-smi-topo-m': 'nvidia-smi-topo',
  'nvidia-smi-topo-mp': 'nvidia-smi-topo',
  'nvidia-smi-q': 'nvidia-smi-q',
  'nvidia-smi-q-d': 'nvidia-smi-q',
  'nvidia-smi-q-x': 'nvidia-smi-q',
  'nvidia-smi-dmon': 'nvidia-smi-dmon',
  'nvidia-smi-dmon-s-pt': 'nvidia-smi-dmon',
  'nvidia-smi-pmon': 'nvidia-smi-dmon',
  'nccl-debug': 'nccl-log',
  all_reduce_perf: 'nccl-tests',
  'all_reduce_perf+nccl-debug': 'nccl-tests',
  'gather_perf+nccl-debug': 'nccl-tests',
  'ray-status': 'ray-status',
  'ray-status-v': 'ray-status',
  'ray-start-head': 'ray-start',
  'vllm-serve': 'vllm-log',
  'vllm-error': 'vllm-log',
  benchmark_serving: 'vllm-bench',
  'dcgmi-diag-r1': 'dcgmi-diag',
  'dcgmi-diag-r3': 'dcgmi-diag',
  'dcgmi-discovery-l': 'dcgmi-discovery',
  'netplan-get': 'netplan-yaml',
  'netplan-status': 'netplan-status',
};

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
    const expected = EXPECTED[prefix];
    it(`corpus/${name}`, () => {
      const { report } = doctorText(body(join(DIR, 'corpus', name)));
      if (expected) expect(report.kind).toBe(expected);
      else expect(report.kind, 'a tool outside DOCTOR.md still gets a kind of its own').not.toBe('unknown');
    });
  }
  for (const [name, expected] of Object.entries(H200)) {
    it(`h200-x2/${name}`, () => {
      expect(doctorText(body(join(DIR, 'h200-x2', name))).report.kind).toBe(expected);
    });
  }
});
