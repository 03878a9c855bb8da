#!/usr/bin/env node
/**
 * Prepares .device/ (git-ignored, carried to the device tool's H200 machine) for bench/device/run.sh:
 *   node.xz         this machine's node binary, `xz -T2 -9` (the device has no node and no network)
 *   cli/            the CLI bundled with ssh2 inlined (no node_modules there); ssh2's native parts are
 *                   left out, it falls back to pure JS
 *   exec-server.mjs bench/device/exec-server.mjs bundled the same way (sshd stand-in: the device has none)
 *   nccl-conf.mjs   prints /etc/nccl.conf as the nccl stage renders it (checks/nccl/conf.ts), for the
 *                   device's own socket interface, which only the device knows
 *   scripts/        the exact programs the stages send, from the product's own modules in dist/
 *                   (run `npm run build` first): the all-reduce benchmark and its runner, the monitor's
 *                   host loop and GPU sampler command, the nvidia-smi probes of gpu-driver and gpudirect,
 *                   and the tutorial's nccl.conf as written.
 * Usage: npm run build && node bench/device/prepare.mjs
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { nodeBundleOptions } from '../../scripts/esbuild-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const out = join(root, '.device');
const dist = (p) => join(root, 'dist', p);
if (!existsSync(dist('src/cli.js'))) throw new Error('dist/ is missing: run `npm run build` first');

mkdirSync(out, { recursive: true });
for (const p of ['cli', 'scripts', 'exec-server.mjs', 'nccl-conf.mjs', 'l20-setup.mjs']) {
  rmSync(join(out, p), { recursive: true, force: true });
}
mkdirSync(join(out, 'scripts'), { recursive: true });

// (a) node, compressed; reused while the binary is unchanged (xz -9 takes a minute on two cores).
const node = process.execPath;
const nodeXz = join(out, 'node.xz');
const stamp = `${node} ${statSync(node).size} ${statSync(node).mtimeMs}\n`;
const stampFile = join(out, 'node.xz.source');
if (!existsSync(nodeXz) || !existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
  writeFileSync(nodeXz, execFileSync('xz', ['-T2', '-9', '-c', node], { maxBuffer: 256 * 1024 ** 2 }));
  writeFileSync(stampFile, stamp);
}

// (b, c) bundles with ssh2 inside; just-bash stays outside: only the lab loads it (a dynamic import).
const base = nodeBundleOptions();
// ssh2's CommonJS reads __dirname (agent.js), which ESM output has not: the banner defines it.
const dirnameBanner =
  "import { dirname as l20Dirname } from 'node:path';" +
  " import { fileURLToPath as l20FileUrlPath } from 'node:url';" +
  ' const __filename = l20FileUrlPath(import.meta.url); const __dirname = l20Dirname(__filename);';
const deviceOptions = {
  ...base,
  external: ['just-bash', 'react-devtools-core', 'cpu-features', '*.node'],
  banner: { js: `${base.banner.js} ${dirnameBanner}` },
};
await build({ ...deviceOptions, entryPoints: [dist('src/cli.js')], outdir: join(out, 'cli') });
await build({
  ...deviceOptions,
  splitting: false,
  plugins: [],
  entryPoints: [join(root, 'bench/device/exec-server.mjs')],
  outfile: join(out, 'exec-server.mjs'),
});
await build({
  ...deviceOptions,
  splitting: false,
  plugins: [],
  stdin: {
    resolveDir: root,
    sourcefile: 'nccl-conf-entry.mjs',
    contents: `
      import { designALines, renderConf } from './dist/checks/nccl/conf.js';
      // argv: socket interface, then the RDMA devices (none on the H200 box, so no NCCL_IB_HCA line).
      const [ifname, ...devices] = process.argv.slice(2);
      const lines = designALines(ifname, devices, 106, 0)
        .filter((l) => devices.length > 0 || !l.startsWith('NCCL_IB_HCA'));
      // The device tool's rule: NVLink multicast stays off in NCCL, PyTorch and NVSHMEM.
      lines.push('NCCL_NVLS_ENABLE=0', 'TORCH_SYMM_MEM_DISABLE_MULTICAST=1', 'NVSHMEM_DISABLE_NVLS=1');
      process.stdout.write(renderConf('A', 'device', lines).content);
    `,
  },
  outfile: join(out, 'nccl-conf.mjs'),
});

// The launcher bin/l20-setup.js is, pointed at this bundle.
writeFileSync(
  join(out, 'l20-setup.mjs'),
  readFileSync(join(root, 'bin/l20-setup.js'), 'utf8').replace("'../dist/bundle/cli.js'", "'./cli/cli.js'"),
);

// (d) the programs the stages send, from their own modules.
const { BENCH_SCRIPT } = await import(dist('checks/nccl/bench-script.js'));
const { BENCH_RUN_SCRIPT, DEBUG_ENV } = await import(dist('checks/nccl/validation.js'));
const { hostLoopScript, gpuCommand } = await import(dist('src/monitor/scripts.js'));
const { gpuDriverProbes } = await import(dist('checks/gpu-driver/probes.js'));
const { gpudirectProbes } = await import(dist('checks/gpudirect/probes.js'));
const { quoteArgv } = await import(dist('src/transport/quote.js'));

const script = (name, text, mode = 0o644) => writeFileSync(join(out, 'scripts', name), text, { mode });
script('l20-allreduce-bench.py', BENCH_SCRIPT, 0o755);
script('bench-run.sh', BENCH_RUN_SCRIPT);
script(
  'debug-env.txt',
  Object.entries(DEBUG_ENV)
    .map(([k, v]) => `${k}=${v}\n`)
    .join(''),
);
script('host-loop.sh', hostLoopScript({ intervalMs: 1000, vllmPort: 8000 }));
// The GPU sampler's first field set (with clocks_event_reasons.active), as the monitor starts it.
script('gpu-sampler.sh', `exec ${quoteArgv(gpuCommand(1000, 0))}\n`);
const smiProbes = [
  ...gpuDriverProbes.map((p) => ['gpu-driver', p]),
  ...gpudirectProbes.map((p) => ['gpudirect', p]),
].filter(([, p]) => 'argv' in p.command && p.command.argv[0] === 'nvidia-smi');
script(
  'nvidia-smi-probes.tsv',
  smiProbes.map(([stage, p]) => `${stage}.${p.id}\t${quoteArgv(p.command.argv)}\n`).join(''),
);
copyFileSync(join(root, 'test/fixtures/tutorial/etc/nccl.conf'), join(out, 'scripts/tutorial-nccl.conf'));

const du = execFileSync('du', ['-sb', out], { encoding: 'utf8' }).split('\t')[0];
process.stdout.write(`.device: ${(Number(du) / 1024 ** 2).toFixed(1)} MiB (the carry limit is 64 MiB)\n`);
