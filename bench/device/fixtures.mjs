#!/usr/bin/env node
/**
 * Turns what bench/device/run.sh brought back (device.tgz, unpacked: results/) into test/fixtures/device/,
 * each file whole, behind one header line naming the machine, driver, torch, the command and the date.
 * Usage: node bench/device/fixtures.mjs RESULTS_DIR
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const results = process.argv[2];
if (!results) throw new Error('usage: node bench/device/fixtures.mjs RESULTS_DIR');
const box = Object.fromEntries(
  readFileSync(join(results, 'box.txt'), 'utf8')
    .split('\n')
    .map((l) => /^([\w.-]+)=(.*)$/.exec(l))
    .filter(Boolean)
    .map((m) => [m[1], m[2]]),
);
const machine = `device tool nvidia-h200 (${box.gpu}; ${box.os}; kernel ${box.uname})`;
const torch = `torch ${box.torch}`;
const bench = (conf, env = '') =>
  `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET ${env}bash -s -- 1 0 127.0.0.1 PORT ` +
  "< bench-run.sh (BENCH_RUN_SCRIPT; ~/.local/bin/torchrun → the box's torchrun, --nproc-per-node 8 → 1), " +
  `/etc/nccl.conf = ${conf}`;
const cli = (args) =>
  `node l20-setup.mjs ${args} ` + '(the CLI bundle, over SSH to 127.0.0.1: bench/device/exec-server.mjs)';

/** fixture name, result file, command that produced it. */
const files = [
  ['bench-ours.log', 'bench-ours.out', bench('nccl-ours.conf (renderConf/designALines)')],
  ['bench-tutorial.log', 'bench-tutorial.out', bench("the tutorial's nccl.conf as written")],
  [
    'bench-tutorial-ifname.log',
    'bench-tutorial-ifname.out',
    bench("the tutorial's nccl.conf, NCCL_SOCKET_IFNAME=eth0"),
  ],
  ['bench-socket.log', 'bench-socket.out', bench('nccl-ours.conf', 'NCCL_NET=Socket ')],
  ['nccl-ours.conf', 'nccl-ours.conf', 'node nccl-conf.mjs eth0 (renderConf + designALines, no RDMA device)'],
  [
    'host-loop.txt',
    'host-loop.out',
    'timeout 6 bash host-loop.sh (hostLoopScript intervalMs 1000, vllmPort 8000), matmul load',
  ],
  ['gpu-sampler.txt', 'gpu-sampler.out', 'timeout 4 bash gpu-sampler.sh (gpuCommand(1000, 0)), matmul load'],
  ['smi-query.txt', 'smi-gpu-driver.query.out', 'gpu-driver probe query (nvidia-smi --query-gpu=QUERY_FIELDS)'],
  ['smi.txt', 'smi-gpu-driver.smi.out', 'gpu-driver probe smi (nvidia-smi)'],
  ['smi-topo-m.txt', 'smi-gpudirect.topo.out', 'gpudirect probe topo (nvidia-smi topo -m)'],
  ['smi-topo-p2p.txt', 'smi-gpudirect.p2p.out', 'gpudirect probe p2p (nvidia-smi topo -p2p r)'],
  ['check.json', 'check.out', cli('check --inventory inventory.json --json')],
  [
    'check-sudo-shim.json',
    'check-sudo-shim.out',
    `${cli('check --inventory inventory.json --json')}, a pass-through sudo on PATH`,
  ],
  [
    'check-execs.jsonl',
    'check-execs.jsonl',
    'bench/device/exec-server.mjs: every exec of check, monitor and bundle, one JSON a line',
  ],
  [
    'check-sudo-shim-execs.jsonl',
    'check-sudo-shim-execs.jsonl',
    'bench/device/exec-server.mjs: every exec of the pass-through-sudo check',
  ],
  ['inventory.json', 'inventory.json', 'bench/device/run.sh: the inventory check, monitor and bundle used'],
  ['monitor.json', 'monitor.out', cli('monitor --inventory inventory.json --once --json')],
  ['box.txt', 'box.txt', 'bench/device/run.sh: the box and the tools on its PATH'],
];
const out = join(root, 'test/fixtures/device');
mkdirSync(out, { recursive: true });
for (const [name, from, command] of files) {
  const header = `# ${machine}, driver ${box.gpu.split(', ')[1]}, ${torch}; command: ${command}; date ${box.date}\n`;
  writeFileSync(join(out, name), header + readFileSync(join(results, from), 'utf8'));
}
process.stdout.write(`${files.length} fixtures in ${out}\n`);
