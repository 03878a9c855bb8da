/** A diagnosis of node 2's PFC being off, shaped as the troubleshoot engine returns it (lab mlnx_qos output). */
import type { Diagnosis } from '../../src/troubleshoot/types.js';

const qos = (pfc: string, buffer: string): string[] => [
  'DCBX mode: OS controlled',
  'Priority trust state: dscp',
  'PFC configuration:',
  '\tpriority    0   1   2   3   4   5   6   7',
  `\tenabled     ${pfc}`,
  `\tbuffer      ${buffer}`,
  'tc: 3 ratelimit: unlimited, tsa: ets, bw: 50%',
];

export const PFC_ON = qos('0   0   0   1   0   0   0   0', '0   0   0   1   0   0   0   0');
export const PFC_OFF = qos('0   0   0   0   0   0   0   0', '0   0   0   0   0   0   0   0');

export const symptoms = [
  {
    id: 'nccl-on-sockets',
    title: 'NCCL runs over TCP sockets',
    observed: 'all_reduce at ~1 GB/s; NCCL INFO NET/Socket',
  },
  {
    id: 'pfc-one-side',
    title: 'PFC configured on one side only',
    observed: 'rx discards climb under load; bandwidth collapses',
  },
  { id: 'mtu-mismatch', title: 'MTU differs on the two ends', observed: 'RoCE stalls on large messages' },
];

export function pfcDiagnosis(over: Partial<Diagnosis> = {}): Diagnosis {
  return {
    symptom: 'pfc-one-side',
    title: 'PFC configured on one side only',
    status: 'found',
    cause: "PFC is off on priority 3 of l20-n2's RoCE ports while l20-n1 has it on",
    causeId: 'pfc-off',
    rules: ['R26'],
    hosts: ['l20-n2'],
    evidence: 'l20-n2 ens1f0: pfc enabled 0 0 0 0 0 0 0 0',
    fix: 'trust DSCP and enable PFC on priority 3 on every RoCE port (the qos stage)',
    fixStages: ['qos'],
    checks: [
      {
        id: 'qos.pfc',
        stage: 'qos',
        host: 'l20-n2',
        status: 'fail',
        summary: 'PFC off on priority 3 (ens1f0, ens1f1)',
        evidence: '',
        rule: 'R26',
      },
    ],
    comparisons: [{ label: 'mlnx_qos -i ens1f0', byHost: { 'l20-n1': PFC_ON, 'l20-n2': PFC_OFF }, differing: [4, 5] }],
    ...over,
  };
}
