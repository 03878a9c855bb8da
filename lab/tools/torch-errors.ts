/**
 * What torch 2.8 and torchrun print around an NCCL job: the glog-style lines of
 * torch/distributed/run.py and elastic/multiprocessing (`W0106 09:00:06.141000 17877 file:line] …`,
 * fixtures/h200-x2/nccl_info_torch_allreduce.txt), a rank's traceback with torch's DistBackendError
 * text for an NCCL result (ProcessGroupNCCL / NCCLUtils), and torchrun's ChildFailedError block
 * (torch/distributed/elastic/multiprocessing/errors).
 */
import type { Machine } from '../model/types.js';
import { NCCL_VERSION } from './nccl.js';

export function tsPrefix(m: Machine, level: 'W' | 'E' | 'I', pid: number, where: string): string {
  const d = new Date(m.clock.now());
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const us = String(d.getUTCMilliseconds() * 1000).padStart(6, '0');
  return `${level}${p2(d.getUTCMonth() + 1)}${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}.${us} ${pid} ${where}] `;
}

/** torch's DistBackendError text for an NCCL result (ProcessGroupNCCL / NCCLUtils). */
export function backendError(kind: 'invalid' | 'system' | 'internal' | 'remote', last: string): string[] {
  const head = {
    invalid: [
      'invalid usage (run with NCCL_DEBUG=WARN for details)',
      'ncclInvalidUsage: This usually reflects invalid usage of NCCL library.',
    ],
    system: [
      'unhandled system error (run with NCCL_DEBUG=INFO for details)',
      'ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ',
    ],
    internal: [
      'internal error - please report this issue to the NCCL developers',
      'ncclInternalError: Internal check failed.',
    ],
    remote: [
      'remote process exited or there was a network error',
      'ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.',
    ],
  }[kind];
  return [
    `torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, ${head[0]}, NCCL version ${NCCL_VERSION}`,
    head[1]!,
    ...(kind === 'system'
      ? [
          'It can be also caused by unexpected exit of a remote peer, you can check NCCL warnings for failure information on the remote process.',
        ]
      : []),
    'Last error:',
    last,
  ];
}

function scriptLine(content: string, needle: string): number {
  const i = content.split('\n').findIndex((l) => l.includes(needle));
  return i + 1;
}

export function traceback(rank: number, script: string, content: string, error: string[]): string {
  const lines = [
    'Traceback (most recent call last):',
    `  File "${script}", line ${scriptLine(content, 'main()\n') || scriptLine(content, '    main()')}, in <module>`,
    '    main()',
    `  File "${script}", line ${scriptLine(content, 'dist.init_process_group(')}, in main`,
    '    dist.init_process_group("nccl", device_id=device)',
    ...error,
  ];
  return lines.map((l) => `[rank${rank}]: ${l}\n`).join('');
}

export function childFailed(
  m: Machine,
  script: string,
  rank: number,
  localRank: number,
  pid: number,
  exitcode: number,
  startMs: number,
): string {
  const t = new Date(startMs);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  const time = `${t.getUTCFullYear()}-${p2(t.getUTCMonth() + 1)}-${p2(t.getUTCDate())}_${p2(t.getUTCHours())}:${p2(t.getUTCMinutes())}:${p2(t.getUTCSeconds())}`;
  const bar = '='.repeat(60);
  return [
    'Traceback (most recent call last):',
    '  File "/opt/l20/venv/bin/torchrun", line 8, in <module>',
    '    sys.exit(main())',
    'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ',
    bar,
    `${script} FAILED`,
    '-'.repeat(60),
    'Failures:',
    '  <NO_OTHER_FAILURES>',
    '-'.repeat(60),
    'Root Cause (first observed failure):',
    '[0]:',
    `  time      : ${time}`,
    `  host      : ${m.hostname}`,
    `  rank      : ${rank} (local_rank: ${localRank})`,
    `  exitcode  : ${exitcode} (pid: ${pid})`,
    '  error_file: <N/A>',
    '  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html',
    bar,
    '',
  ].join('\n');
}
