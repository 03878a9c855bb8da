/**
 * NCCL's env echo in an INFO log (`NCCL INFO NCCL_ALGO set by environment to …`) is the configuration the
 * job ran with: doctor judges those values with the cfg rules lint uses on nccl.conf (same rule code), at
 * the NCCL version the log states. Log lines follow NCCL's format (`host:pid:tid [dev] NCCL INFO …`, integer
 * parameters echoed with a trailing period) as in the real logs of test/fixtures/corpus.
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import { lintText } from '../../src/lint/index.js';

function log(version: string, echoes: string[], tail: string[] = []): string {
  const p = 'l20-n1:2291:2332 [0] NCCL INFO';
  return [
    'l20-n1:2291:2291 [0] NCCL INFO Bootstrap : Using ens1f0:10.10.1.1<0>',
    'l20-n1:2291:2291 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.',
    'l20-n1:2291:2291 [0] NCCL INFO cudaDriverVersion 12080',
    `NCCL version ${version}+cuda12.9`,
    ...echoes.map((e) => `${p} ${e}`),
    `${p} NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB ens1f0:10.10.1.1<0>`,
    ...tail,
  ].join('\n');
}

// The tutorial's /etc/nccl.conf values as NCCL echoes them.
const TUTORIAL = [
  'NCCL_IB_HCA set by environment to mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2',
  'NCCL_IB_GID_INDEX set by environment to 3.',
  'NCCL_NET_GDR_LEVEL set by environment to 5.',
  'NCCL_ALGO set by environment to COLLNET_CHAIN',
];

describe('NCCL env echo judged by the cfg rules', () => {
  it('the tutorial values in an NCCL 2.27 log raise R01, R02, R04, R05 and R06 at their echo lines', () => {
    const text = log('2.27.5', TUTORIAL);
    const { report } = doctorText(text);
    expect(report.kind).toBe('nccl-log');
    const lines = text.split('\n');
    const lineOf = (needle: string): number => lines.findIndex((l) => l.includes(needle)) + 1;
    const byRule = new Map(report.findings.map((f) => [f.rule, f]));
    expect(byRule.get('R01')).toMatchObject({ severity: 'blocker', line: lineOf('NCCL_ALGO set') });
    expect(byRule.get('R01')?.evidence).toContain('Unrecognized element token "COLLNET_CHAIN"');
    expect(byRule.get('R01')?.evidence).toContain('NCCL 2.27.5 (pinned in the files)');
    expect(byRule.get('R02')).toMatchObject({ severity: 'high', line: lineOf('NCCL_ALGO set') });
    expect(byRule.get('R04')).toMatchObject({ line: lineOf('NCCL_NET_GDR_LEVEL set') });
    expect(byRule.get('R05')).toMatchObject({ line: lineOf('NCCL_IB_GID_INDEX set') });
    expect(byRule.get('R06')?.evidence).toContain('mlx5_0:2 (port 2');
    // The evidence quotes the log line itself, then the value the rule read.
    const algo = lineOf('NCCL_ALGO set');
    expect(byRule.get('R01')?.evidence.split('\n')[0]).toBe(`line ${algo}: ${lines[algo - 1]}`);
  });

  it('raises the rules lint raises on the same values in nccl.conf (one implementation)', () => {
    const conf = TUTORIAL.map((e) => e.replace(/ set by environment to /, '=').replace(/\.$/, '')).join('\n') + '\n';
    const judged = ['R01', 'R02', 'R04', 'R05', 'R06'];
    const lint = lintText(conf, 'nccl.conf').findings.filter((f) => judged.includes(f.rule));
    const doctor = doctorText(log('2.29.3', TUTORIAL)).report.findings.filter((f) => /^R/.test(f.rule));
    type Graded = ReadonlyArray<{ rule: string; severity: string }>;
    const graded = (fs: Graded): string[] => fs.map((f) => `${f.rule} ${f.severity}`).sort();
    expect(graded(doctor)).toEqual(graded(lint));
  });

  it('NCCL before 2.24 ignored a bad ALGO token: no R01 from a 2.18 log, R02 still', () => {
    const text = log('2.18.5', ['NCCL_ALGO set by environment to COLLNET_CHAIN']);
    const rules = doctorText(text).report.findings.map((f) => f.rule);
    expect(rules).not.toContain('R01');
    expect(rules).toContain('R02');
  });

  it('the config rejection and its cause both fire (D03 and R01)', () => {
    const text = log(
      '2.27.5',
      ['NCCL_ALGO set by environment to COLLNET_CHAIN'],
      [
        '',
        'l20-n1:2291:2332 [0] enqueue.cc:1640 NCCL WARN Unrecognized element token "COLLNET_CHAIN" ' +
          'when parsing "COLLNET_CHAIN"',
        'l20-n1:2291:2332 [0] NCCL INFO init.cc:1880 -> 5',
      ],
    );
    const rules = doctorText(text).report.findings.map((f) => f.rule);
    expect(rules).toEqual(expect.arrayContaining(['D03', 'R01', 'R02']));
  });

  it('an older `NCCL_IB_HCA set to` echo is read too, and each rank repeating it gives one finding', () => {
    const echo = 'NCCL_IB_HCA set to mlx5_0:2';
    const text = log('2.19.3', [echo, echo, echo]);
    expect(doctorText(text).report.findings.filter((f) => f.rule === 'R06')).toHaveLength(1);
  });

  it('good values give no cfg finding', () => {
    const text = log('2.27.5', [
      'NCCL_IB_HCA set by environment to =mlx5_0:1,mlx5_1:1',
      'NCCL_IB_TC set by environment to 106.',
      'NCCL_SOCKET_IFNAME set by environment to =ens1f0',
    ]);
    expect(doctorText(text).report.findings.filter((f) => /^R/.test(f.rule))).toEqual([]);
  });
});
