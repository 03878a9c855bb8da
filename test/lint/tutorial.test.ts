/**
 * docs/RULES.md §4: one lint run over the tutorial's files raises every cfg row of the acceptance table, with its
 * severity, line and verbatim evidence, and none of the false-positive guards.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lintFiles, runLint } from '../../src/lint/index.js';
import type { LintFileReport, LintReport } from '../../src/lint/report.js';
import { TUTORIAL } from './helpers.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const FILES = walk(TUTORIAL);
let report: LintReport;
const byFile = (name: string): LintFileReport => {
  const f = report.files.find((x) => relative(TUTORIAL, x.file) === name);
  if (!f) throw new Error(`no report for ${name}`);
  return f;
};

beforeAll(async () => {
  report = await lintFiles(FILES);
});

// [row, file, rule, severity, line, evidence that must appear verbatim]
const TABLE: Array<[string, string, string, string, number, string]> = [
  ['T01', 'etc/netplan/02-bond-roce.yaml', 'R16', 'blocker', 11, 'interfaces: [ens1f0, ens1f1, ens2f0, ens2f1]'],
  ['T02', 'etc/netplan/02-bond-roce.yaml', 'R18', 'medium', 16, 'lacp-rate: fast'],
  ['T03', 'etc/netplan/02-bond-roce.yaml', 'R22', 'high', 12, 'parameters:'],
  ['T04', 'etc/netplan/01-netcfg.yaml', 'R21', 'low', 8, 'gateway4: 10.0.0.254'],
  ['T05', 'README.md', 'R48', 'medium', 16, '禁用防火墙'],
  ['T05', 'README.md', 'R48', 'medium', 17, '4791'],
  ['T06', 'install.sh', 'R30', 'high', 5, 'wget https://content.mellanox.com/ofed/MLNX_OFED-23.10-1.1.8.0/'],
  [
    'T07',
    'install.sh',
    'R31',
    'low',
    8,
    'sudo ./mlnxofedinstall --with-neohost-backend --with-nvmf --enable-gds --add-kernel-support',
  ],
  ['T08', 'etc/nccl.conf', 'R06', 'high', 6, 'NCCL_IB_HCA=mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2'],
  ['T09', 'pfc.sh', 'R25', 'blocker', 7, 'sudo mlnx_qos -i bond0 --trust dscp'],
  ['T09', 'pfc.sh', 'R25', 'blocker', 8, 'sudo mlnx_qos -i bond0 --pfc 0,0,0,1,0,0,0,0'],
  ['T10', 'pfc.sh', 'R27', 'high', 3, 'sudo mlnx_qos -i $iface --trust dscp'],
  ['T11', 'install.sh', 'R32', 'blocker', 11, 'sudo sh cuda_12.3.2_545.23.08_linux.run --silent --driver --toolkit'],
  ['T12', 'install.sh', 'R33', 'high', 9, 'sudo apt install -y nvidia-driver-535'],
  ['T13', 'etc/nccl.conf', 'R11', 'high', 2, 'NCCL_DEBUG=INFO'],
  ['T13', 'etc/nccl.conf', 'R11', 'high', 3, 'NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,COLL'],
  ['T14', 'etc/nccl.conf', 'R05', 'high', 8, 'NCCL_IB_GID_INDEX=3'],
  ['T15', 'etc/nccl.conf', 'R03', 'high', 12, 'NCCL_IB_CUDA_SUPPORT=1'],
  ['T16', 'etc/nccl.conf', 'R04', 'high', 13, 'NCCL_NET_GDR_LEVEL=5'],
  ['T17', 'etc/nccl.conf', 'R01', 'blocker', 15, 'NCCL_ALGO=COLLNET_CHAIN'],
  ['T17', 'etc/nccl.conf', 'R02', 'high', 15, 'NCCL_ALGO=COLLNET_CHAIN'],
  ['T18', 'etc/nccl.conf', 'R10', 'low', 16, 'NCCL_BUFFSIZE=4194304'],
  ['T19', 'ray-start.sh', 'R45', 'high', 2, 'ray start --head --port=6379 --num-gpus=8 --dashboard-host=0.0.0.0'],
  ['T19', 'ray-start.sh', 'R45', 'high', 4, 'ray start --address=192.168.100.1:6379 --num-gpus=8'],
  ['T19', 'ray-start.sh', 'R46', 'high', 2, '--dashboard-host=0.0.0.0'],
  ['T20', 'README.md', 'R47', 'medium', 52, 'pip install vllm transformers sentencepiece'],
  ['T21', 'start_vllm.sh', 'R13', 'high', 2, 'source /etc/nccl.conf'],
  ['T22', 'start_vllm.sh', 'R41', 'blocker', 4, '--model deepseek-ai/deepseek-v3-8b'],
  ['T23', 'start_vllm.sh', 'R42', 'high', 5, '--tensor-parallel-size 16'],
  ['T24', 'start_vllm.sh', 'R40', 'blocker', 9, '--engine-use-ray'],
  ['T24', 'start_vllm.sh', 'R40', 'blocker', 10, '--ray-address auto'],
  ['T25', 'start_vllm.sh', 'R46', 'high', 8, '--host 0.0.0.0'],
  ['T26', 'README.md', 'R50', 'medium', 55, '| 吞吐量(tokens/s) | 1,200 | 2,300 | 91% |'],
  [
    'T27',
    'inference_test.py',
    'R41',
    'blocker',
    6,
    'llm = LLM(model="deepseek-ai/deepseek-v3-8b", tensor_parallel_size=16)',
  ],
  ['T27', 'inference_test.py', 'R42', 'high', 6, 'tensor_parallel_size=16'],
  ['T28', 'README.md', 'R49', 'low', 61, 'iftop'],
];

describe('lint on the tutorial (docs/RULES.md §4)', () => {
  it('detects each file by content', () => {
    expect(Object.fromEntries(report.files.map((f) => [relative(TUTORIAL, f.file), f.kind]))).toEqual({
      'README.md': 'markdown',
      'etc/nccl.conf': 'nccl-conf',
      'etc/netplan/01-netcfg.yaml': 'netplan-yaml',
      'etc/netplan/02-bond-roce.yaml': 'netplan-yaml',
      'install.sh': 'shell-script',
      'pfc.sh': 'shell-script',
      'ray-start.sh': 'shell-script',
      'start_vllm.sh': 'shell-script',
      'inference_test.py': 'python-launcher',
    });
  });

  it.each(TABLE)('%s: %s raises %s (%s) at line %i', (_row, file, rule, severity, line, evidence) => {
    const hits = byFile(file).findings.filter((f) => f.rule === rule && f.line === line);
    expect(hits.map((h) => h.severity)).toContain(severity);
    const hit = hits.find((h) => h.severity === severity);
    expect(hit?.evidence).toContain(evidence);
    expect(hit?.fix.length).toBeGreaterThan(10);
    expect(hit?.title.length).toBeGreaterThan(5);
  });

  it('derived arithmetic is spelled out', () => {
    const conf = byFile('etc/nccl.conf').findings;
    expect(conf.find((f) => f.rule === 'R01')?.evidence).toContain(
      'Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"',
    );
    expect(conf.find((f) => f.rule === 'R01')?.evidence).toMatch(/version unknown: assuming the current release/);
    expect(conf.find((f) => f.rule === 'R04')?.evidence).toMatch(/above 4 is SYS\) → SYS/);
    const r42 = byFile('start_vllm.sh').findings.find((f) => f.rule === 'R42');
    expect(r42?.evidence).toMatch(/TP 16 > G = 8/);
    expect(r42?.fix).toContain('--data-parallel-size 16 --data-parallel-size-local 8');
  });

  it('fixes carry real names', () => {
    expect(byFile('pfc.sh').findings.find((f) => f.rule === 'R25')?.fix).toContain(
      'mlnx_qos -i ens1f0 --trust dscp --pfc 0,0,0,1,0,0,0,0',
    );
    expect(byFile('etc/netplan/02-bond-roce.yaml').findings.find((f) => f.rule === 'R16')?.fix).toContain(
      'ens1f0: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.101.1/24]}',
    );
    expect(byFile('ray-start.sh').findings.find((f) => f.rule === 'R45' && f.line === 4)?.fix).toContain(
      '--node-ip-address=192.168.100.2',
    );
    expect(byFile('install.sh').findings.find((f) => f.rule === 'R30')?.fix).toContain('MLNX_OFED-23.10-1.1.9.0');
  });

  it('cross-file facts: the bond is known to carry NCCL from nccl.conf', () => {
    expect(byFile('etc/netplan/02-bond-roce.yaml').findings.find((f) => f.rule === 'R16')?.evidence).toMatch(
      /NCCL_SOCKET_IFNAME=bond0 \(nccl\.conf:5\)/,
    );
    expect(byFile('pfc.sh').findings.find((f) => f.rule === 'R25')?.evidence).toContain('02-bond-roce.yaml:10');
  });

  it('raises none of the false-positive guards (R08 R09 R19 R20 R24 R12 R44)', () => {
    const all = report.files.flatMap((f) => f.findings.map((x) => x.rule));
    for (const guarded of ['R08', 'R09', 'R19', 'R20', 'R24', 'R12', 'R44']) expect(all).not.toContain(guarded);
  });

  it('findings are sorted worst first within each file', () => {
    const rank = { blocker: 4, high: 3, medium: 2, low: 1, info: 0 };
    for (const f of report.files) {
      const r = f.findings.map((x) => rank[x.severity]);
      expect(r).toEqual([...r].sort((a, b) => b - a));
    }
  });

  it('JSON output has the documented shape and exit status 1', async () => {
    let out = '';
    const code = await runLint({ files: FILES, json: true, color: false, write: (s) => (out += s) });
    expect(code).toBe(1);
    const json = JSON.parse(out) as LintReport;
    expect(json.version).toBe(1);
    expect(json.files).toHaveLength(FILES.length);
    for (const f of json.files) {
      expect(Object.keys(f).sort()).toEqual(['file', 'findings', 'kind']);
      for (const x of f.findings)
        expect(Object.keys(x).sort()).toEqual(['evidence', 'fix', 'line', 'rule', 'severity', 'title']);
    }
  });

  it('human output: kind per file, severity, line, evidence, fix and a summary; colour only when asked', async () => {
    let plain = '';
    await runLint({ files: FILES, json: false, color: false, write: (s) => (plain += s) });
    expect(plain).toContain('(nccl.conf)');
    expect(plain).toMatch(/BLOCKER R01 {2}line 15 {2}NCCL_ALGO/);
    expect(plain).toContain('fix: ');
    expect(plain).toMatch(/9 files: \d+ blocker, \d+ high, \d+ medium, \d+ low/);
    expect(plain).not.toContain('\u001b[');
    let colored = '';
    await runLint({ files: FILES, json: false, color: true, write: (s) => (colored += s) });
    expect(colored).toContain('\u001b[');
  });
});
