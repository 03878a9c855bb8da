#!/usr/bin/env node
// Benchmark: `l20-setup doctor` on the 118 KB NCCL INFO log captured on a real 2-GPU H200 machine
// (test/fixtures/h200-x2/nccl_info_torch_allreduce.txt). Target (issue 3): ≤ 200 ms end to end.
// Prints one table: medians over N runs of the whole process, and of the in-process read alone.
// Run: npm run build && node bench/doctor.mjs [N]
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = join(root, 'test/fixtures/h200-x2/nccl_info_torch_allreduce.txt');
const runs = Number(process.argv[2] ?? 20);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const endToEnd = [];
let kind = '';
for (let i = 0; i < runs; i++) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(root, 'bin/l20-setup.js'), 'doctor', file, '--json'], {
    encoding: 'utf8',
  });
  endToEnd.push(Number(process.hrtime.bigint() - t) / 1e6);
  if (r.status !== 0 && r.status !== 1) throw new Error(`doctor exited ${r.status}: ${r.stderr}`);
  kind = JSON.parse(r.stdout).kind;
}

const { doctorText } = await import(join(root, 'dist/src/doctor/doctor.js'));
const bytes = readFileSync(file);
doctorText(bytes); // warm-up: JIT and lazy module state
const inProcess = [];
for (let i = 0; i < runs; i++) {
  const t = process.hrtime.bigint();
  doctorText(bytes);
  inProcess.push(Number(process.hrtime.bigint() - t) / 1e6);
}

const size = `${(statSync(file).size / 1024).toFixed(0)} KB`;
console.log(
  `doctor on ${size} NCCL log (kind ${kind}); node ${process.version}; ${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}; ${runs} runs`,
);
console.log('| measure                         | median ms | min ms | target ms |');
console.log('|---------------------------------|-----------|--------|-----------|');
console.log(
  `| end to end (node bin, --json)   | ${median(endToEnd).toFixed(1).padStart(9)} | ${Math.min(...endToEnd)
    .toFixed(1)
    .padStart(6)} | 200       |`,
);
console.log(
  `| in process (detect+parse+rules) | ${median(inProcess).toFixed(1).padStart(9)} | ${Math.min(...inProcess)
    .toFixed(1)
    .padStart(6)} | —         |`,
);
