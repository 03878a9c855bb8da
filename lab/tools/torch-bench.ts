/**
 * `torchrun` (torch 2.8's console script) running the nccl stage's all-reduce benchmark
 * (checks/nccl/bench-script.ts) on one or more modelled hosts (docs/STAGES.md §3.9 path 2, §4.3 NCCL).
 *
 * Each host's torchrun reads its own NCCL settings (environment, `~/.nccl.conf` or `$NCCL_CONF_FILE`,
 * `/etc/nccl.conf`) and live state into a HostPlan, then meets the other nodes at a rendezvous kept
 * per cluster under `--master-addr:--master-port` (c10d's static rendezvous: node 0 serves the
 * store, the others must reach the master address). When all `--nnodes` have joined, the NCCL model
 * (nccl.ts) decides the job once; every host renders and streams its own ranks' part: torchrun's
 * warnings, the NCCL log of its 8 ranks (nccl-log.ts), rank 0's result table, and on failure the
 * ranks' Python tracebacks with torch's DistBackendError text and torchrun's ChildFailedError block.
 *
 * Traffic: while each size runs, its inter-node bytes flow over the job's rails (model/traffic.ts),
 * so the ports' RDMA counters move during the run.
 *
 * Time: Python and CUDA start-up, NCCL init and every size's warmup + timed iterations take their
 * modelled time (≈ 25–45 s for an inter-node run at speed 1). A peer that never comes times out
 * after torch's 900 s store timeout, scaled by the lab speed, but not before 5 s of real time.
 *
 * Formats: torchrun's log lines and error block follow fixtures/h200-x2/nccl_info_torch_allreduce.txt
 * and torch/distributed/elastic's source; torch's NCCL error text is ProcessGroupNCCL's.
 */
import type { ExecResult } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import { entryModule } from '../model/python.js';
import { addGpuWork, removeGpuWork } from '../model/gpu-telemetry.js';
import { flowRate, startFlow, type Flow } from '../model/perftest.js';
import type { TrafficHandle } from '../model/traffic.js';
import type { Machine } from '../model/types.js';
import { registerProgram, type ProgramInvocation } from '../shell/programs.js';
import { toolIo, type ToolIo } from '../system/live.js';
import { rng, type Rng } from '../util/prng.js';
import { HostLogger, type RankIds } from './nccl-log.js';
import { backendError, childFailed, tsPrefix, traceback } from './torch-errors.js';
import { hostPlan, ipReachable, jobOutcome, type HostPlan, type JobOutcome } from './nccl.js';
import { ncclConfPaths, ncclSettings } from './nccl-settings.js';
import { scriptEnv } from './venv.js';

/** How the lab recognises the benchmark (its docstring's first line, checks/nccl/bench-script.ts). */
export const BENCH_MARK = 'l20-setup all-reduce benchmark';
const STORE_TIMEOUT_MS = 900_000;
const PEER_GRACE_MS = 5_000;

interface Args {
  nnodes: number;
  nproc: number;
  nodeRank: number;
  masterAddr: string;
  masterPort: number;
  script: string;
  scriptArgs: string[];
}

function parseArgs(argv: readonly string[]): Args | string {
  const a: Args = {
    nnodes: 1,
    nproc: 1,
    nodeRank: 0,
    masterAddr: '127.0.0.1',
    masterPort: 29500,
    script: '',
    scriptArgs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    if (!raw.startsWith('--')) {
      a.script = raw;
      a.scriptArgs = argv.slice(i + 1);
      return a;
    }
    const eq = raw.indexOf('=');
    const name = (eq >= 0 ? raw.slice(2, eq) : raw.slice(2)).replace(/_/g, '-');
    if (name === 'standalone') continue;
    const value = eq >= 0 ? raw.slice(eq + 1) : argv[++i];
    if (value === undefined) return `torchrun: error: argument --${name}: expected one argument`;
    switch (name) {
      case 'nnodes':
        a.nnodes = Number(value.split(':').pop());
        break;
      case 'nproc-per-node':
        a.nproc = value === 'gpu' || value === 'auto' ? 8 : Number(value);
        break;
      case 'node-rank':
        a.nodeRank = Number(value);
        break;
      case 'master-addr':
        a.masterAddr = value;
        break;
      case 'master-port':
        a.masterPort = Number(value);
        break;
      case 'rdzv-backend':
      case 'rdzv-endpoint':
      case 'rdzv-id':
      case 'max-restarts':
      case 'monitor-interval':
      case 'log-dir':
      case 'redirects':
      case 'tee':
        break;
      default:
        return `torchrun: error: unrecognized arguments: ${raw}`;
    }
  }
  return 'torchrun: error: the following arguments are required: training_script, training_script_args';
}

// ---------------------------------------------------------------- rendezvous

interface Participant {
  nodeRank: number;
  machine: Machine;
  plan: HostPlan;
}

interface Rendezvous {
  nnodes: number;
  members: Map<number, Participant>;
  done: Promise<void>;
  complete: () => void;
  outcome?: JobOutcome;
  seq: number;
}

const rendezvous = new WeakMap<Cluster, Map<string, Rendezvous>>();
const runCounter = new WeakMap<Cluster, number>();

function join(cluster: Cluster, key: string, nnodes: number, p: Participant): Rendezvous {
  const all = rendezvous.get(cluster) ?? new Map<string, Rendezvous>();
  rendezvous.set(cluster, all);
  let rv = all.get(key);
  if (!rv || rv.members.size >= rv.nnodes || rv.members.has(p.nodeRank)) {
    let complete = (): void => undefined;
    const done = new Promise<void>((resolve) => {
      complete = resolve;
    });
    const seq = (runCounter.get(cluster) ?? 0) + 1;
    runCounter.set(cluster, seq);
    rv = { nnodes, members: new Map(), done, complete, seq };
    all.set(key, rv);
  }
  rv.members.set(p.nodeRank, p);
  if (rv.members.size >= rv.nnodes) {
    all.delete(key);
    rv.complete();
  }
  return rv;
}

/**
 * Waits for every node; false on timeout or cancel. The other nodes are real SSH commands arriving in
 * real time, so the bound is torch's store timeout scaled by the lab speed but never under
 * PEER_GRACE_MS of real time (at 'max' or very fast speeds the scaled timeout is shorter than a
 * second connection takes to arrive).
 */
async function waitForPeers(rv: Rendezvous, m: Machine, signal: AbortSignal | undefined): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const realMs = Math.max(m.clock.realMs(STORE_TIMEOUT_MS), PEER_GRACE_MS);
  const bound = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), realMs);
  });
  const aborted = new Promise<boolean>((resolve) =>
    signal?.addEventListener('abort', () => resolve(false), { once: true }),
  );
  try {
    return await Promise.race([rv.done.then(() => true), bound, aborted]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function parseSize(t: string): number {
  const m = /^(\d+(?:\.\d+)?)([KMG]?)B?$/i.exec(t.trim());
  if (!m) return NaN;
  const mult = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(m[2] ?? '').toUpperCase()] ?? 1;
  return Math.floor(Number(m[1]) * mult);
}

interface BenchArgs {
  min: number;
  max: number;
  factor: number;
  warmup: number;
  iters: number;
}

function benchArgs(args: readonly string[]): BenchArgs | string {
  const b: BenchArgs = { min: 8, max: 1024 ** 3, factor: 2, warmup: 5, iters: 20 };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = (args[i] as string).split('=');
    const v = inline ?? args[++i] ?? '';
    if (flag === '--min-bytes') b.min = parseSize(v);
    else if (flag === '--max-bytes') b.max = parseSize(v);
    else if (flag === '--factor') b.factor = Number(v);
    else if (flag === '--warmup') b.warmup = Number(v);
    else if (flag === '--iters') b.iters = Number(v);
    else return `error: unrecognized arguments: ${flag}`;
  }
  return [b.min, b.max, b.factor, b.warmup, b.iters].some((x) => !Number.isFinite(x))
    ? 'error: argument: invalid value'
    : b;
}

/** One result row as the benchmark prints it (and the time the size took, µs, for pacing). */
function row(o: JobOutcome, world: number, size: number, b: BenchArgs, r: Rng): { text: string; spentUs: number } {
  const count = Math.max(1, Math.floor(size / 4));
  const bytes = count * 4;
  const bf = world > 1 ? (2 * (world - 1)) / world : 0;
  const jitter = 1 + (r.next() - 0.5) * 0.01;
  // A job that fails later (a completion error at its first large message) still moves the small
  // messages before it at the socket fallback's rate rather than at 0 GB/s.
  const rate = o.busbwGBps > 0 ? o.busbwGBps : 1;
  const us = (o.latencyUs + (bytes * bf) / (rate * 1000)) * jitter;
  const algbw = bytes / us / 1e3;
  const busbw = algbw * bf;
  const text = `${String(bytes).padStart(12)} ${us.toFixed(1).padStart(10)}us algbw ${algbw.toFixed(2).padStart(8)} GB/s busbw ${busbw.toFixed(2).padStart(8)} GB/s`;
  return { text, spentUs: us * (b.warmup + b.iters + 2) };
}

/**
 * The inter-node bytes of one size's iterations on this node's rails, as flows from its device to the
 * next node's (each node registers what it sends, so both directions move): a ring all-reduce sends
 * 2(n-1)/n of the buffer per iteration, spread over the rails, in NCCL's 512 KiB chunks.
 */
function railTraffic(
  o: JobOutcome,
  nodeRank: number,
  world: number,
  size: number,
  b: BenchArgs,
  seq: number,
  now: number,
  ms: number,
): TrafficHandle[] {
  if (o.network !== 'IB' || o.rails.length === 0 || o.plans.length !== 2) return [];
  const bytes = Math.max(1, Math.floor(size / 4)) * 4;
  const perRail = (bytes * ((2 * (world - 1)) / world) * (b.warmup + b.iters + 2)) / o.rails.length;
  const me = o.plans[nodeRank]!;
  const peer = o.plans[1 - nodeRank]!;
  const r = rng(me.machine.seed, me.host, 'nccl-traffic', seq, size);
  return o.rails.map((rail) => {
    const [mine, theirs] = nodeRank === 0 ? [rail.a, rail.b] : [rail.b, rail.a];
    const f: Flow = {
      sender: me.machine,
      senderPort: mine.netdev,
      senderDevice: mine.rdma.name,
      receiver: peer.machine,
      receiverPort: theirs.netdev,
      receiverDevice: theirs.rdma.name,
      tclass: me.tc,
      sl: 0,
      mtuBytes: Math.min(mine.mtuBytes, theirs.mtuBytes),
      linkGbps: 25,
      share: 1,
    };
    return startFlow(f, flowRate(f, r), perRail, Math.max(1, Math.ceil(perRail / 524_288)), r, now, now + ms);
  });
}

async function emitLines(io: ToolIo, lines: readonly string[]): Promise<void> {
  if (lines.length > 0) await io.out(lines.map((l) => `${l}\n`).join(''));
}

// ---------------------------------------------------------------- torchrun

async function torchrun(inv: ProgramInvocation): Promise<ExecResult> {
  const { machine: m, cluster, ctx } = inv;
  const io = toolIo(ctx, m.clock);
  const a = parseArgs(inv.args);
  if (typeof a === 'string')
    return {
      stdout: '',
      stderr: `usage: torchrun [-h] [--nnodes NNODES] [--nproc-per-node NPROC_PER_NODE] [--node-rank NODE_RANK] [--master-addr MASTER_ADDR] [--master-port MASTER_PORT] training_script ...\n${a}\n`,
      exitCode: 2,
    };
  const env = await scriptEnv(inv);
  const r = rng(m.seed, m.hostname, 'torchrun', m.clock.now());
  const agentPid = 3000 + r.int(0, 60000);
  const interp = env.interpreter;
  const scriptPath = ctx.fs.resolvePath(ctx.cwd, a.script);
  if (a.nproc > 1 && !ctx.env.get('OMP_NUM_THREADS')) {
    const w = tsPrefix(m, 'W', agentPid, 'torch/distributed/run.py:774');
    await io.err(
      `${w}\n${w}*****************************************\n${w}Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. \n${w}*****************************************\n`,
    );
  }
  // Python and torch start in every rank before anything else happens.
  if (!(await io.sleep(6000))) return io.result(130);
  let content: string;
  try {
    content = await ctx.fs.readFile(scriptPath);
  } catch {
    const lines = Array.from(
      { length: a.nproc },
      () => `${interp}: can't open file '${scriptPath}': [Errno 2] No such file or directory\n`,
    ).join('');
    await io.err(lines + childFailed(m, a.script, a.nodeRank * a.nproc, 0, agentPid + 1, 2, m.clock.now()));
    return io.result(1);
  }
  if (!content.includes(BENCH_MARK)) {
    await io.err(
      `l20-lab: torchrun: only the l20-setup all-reduce benchmark is modelled by this version of the l20-setup lab (${scriptPath})\n`,
    );
    return io.result(1);
  }
  const bench = benchArgs(a.scriptArgs);
  if (typeof bench === 'string') {
    await io.err(
      `usage: l20-allreduce-bench.py [-h] [--min-bytes MIN_BYTES] [--max-bytes MAX_BYTES] [--factor FACTOR] [--warmup WARMUP] [--iters ITERS]\nl20-allreduce-bench.py: ${bench}\n`,
    );
    return io.result(2);
  }

  // This host's NCCL view: its own conf files and environment.
  const processEnv = Object.fromEntries([...ctx.env.entries()]);
  const files = new Map<string, string>();
  for (const p of ncclConfPaths(processEnv)) {
    const text = await ctx.fs.readFile(p).catch(() => undefined);
    if (text !== undefined) files.set(p, text);
  }
  const plan = hostPlan(m, ncclSettings(processEnv, files));

  // Loopback is each host's own: only a routable master address joins hosts together.
  const loopback = /^(127\.|localhost$|::1$)/.test(a.masterAddr);
  const key = `${loopback ? `${m.hostname}/` : ''}${a.masterAddr}:${a.masterPort}`;
  if (a.nnodes > 1 && a.nodeRank !== 0 && !ipReachable(cluster, m, a.masterAddr)) {
    await io.sleep(STORE_TIMEOUT_MS);
    await io.err(
      `torch.distributed.DistNetworkError: The client socket has timed out after ${STORE_TIMEOUT_MS}ms while trying to connect to (${a.masterAddr}, ${a.masterPort}).\n`,
    );
    return io.result(1);
  }
  const rv = join(cluster, key, a.nnodes, { nodeRank: a.nodeRank, machine: m, plan });
  if (!(await waitForPeers(rv, m, io.signal))) {
    const joined = rv.members.size;
    // This node leaves the store: a later run must not meet its ghost.
    rv.members.delete(a.nodeRank);
    if (rendezvous.get(cluster)?.get(key) === rv && rv.members.size === 0) rendezvous.get(cluster)?.delete(key);
    if (io.signal?.aborted) return io.result(130);
    await io.err(
      `torch.distributed.DistStoreError: Timed out after ${STORE_TIMEOUT_MS / 1000 + 1} seconds waiting for clients. ${joined}/${a.nnodes} clients joined.\n`,
    );
    return io.result(1);
  }
  const plans = [...rv.members.entries()].sort(([x], [y]) => x - y).map(([, p]) => p.plan);
  rv.outcome ??= jobOutcome(cluster, plans, a.nproc);
  return runJob(inv, io, a, bench, rv.outcome, rv.seq, content, agentPid, interp);
}

async function runJob(
  inv: ProgramInvocation,
  io: ToolIo,
  a: Args,
  bench: BenchArgs,
  o: JobOutcome,
  seq: number,
  content: string,
  agentPid: number,
  interp: string,
): Promise<ExecResult> {
  const m = inv.machine;
  const world = a.nnodes * a.nproc;
  const shared = rng(m.seed, 'nccl-job', seq);
  const commId = shared.hex(16);
  const r = rng(m.seed, m.hostname, 'nccl-job', seq);
  const ranks: RankIds[] = Array.from({ length: a.nproc }, (_, i) => {
    const pid = agentPid + 2 + i;
    return {
      rank: a.nodeRank * a.nproc + i,
      localRank: i,
      pid,
      proxyTid: pid + 1200 + i * 3,
      progressTid: pid + 1201 + i * 3,
      comm: `55${r.hex(10)}`,
    };
  });
  const plan = o.plans[a.nodeRank]!;
  const startMs = m.clock.now();
  const f = o.failure;
  if (f?.kind === 'cuda') {
    const err = [`RuntimeError: ${plan.cuda.error ?? f.error}`];
    await io.err(
      ranks.map((x) => traceback(x.rank, a.script, content, err)).join('') +
        childFailed(m, a.script, ranks[0]!.rank, 0, ranks[0]!.pid, 1, startMs),
    );
    return io.result(1);
  }
  const log = new HostLogger({ outcome: o, nodeRank: a.nodeRank, localRanks: a.nproc, ranks, commId, rng: r }).render();
  await emitLines(io, log.init);
  if (!(await io.sleep(1500))) return io.result(130);
  await emitLines(io, log.connect);
  if (!(await io.sleep(600))) return io.result(130);

  const failNow = async (
    kind: 'invalid' | 'system' | 'internal' | 'remote',
    last: string,
    failing: RankIds[],
    code = 1,
  ): Promise<ExecResult> => {
    await emitLines(io, log.failure);
    const tb = failing.map((x) => traceback(x.rank, a.script, content, backendError(kind, last))).join('');
    const others = ranks.filter((x) => !failing.includes(x));
    const term = others
      .map(
        (x) =>
          `${tsPrefix(m, 'W', agentPid, 'torch/distributed/elastic/multiprocessing/api.py:900')}Sending process ${x.pid} closing signal SIGTERM\n`,
      )
      .join('');
    const first = failing[0] ?? ranks[0]!;
    const e = `${tsPrefix(m, 'E', agentPid, 'torch/distributed/elastic/multiprocessing/api.py:874')}failed (exitcode: ${code}) local_rank: ${first.localRank} (pid: ${first.pid}) of binary: ${interp}\n`;
    await io.err(tb + term + e + childFailed(m, a.script, first.rank, first.localRank, first.pid, code, startMs));
    return io.result(1);
  };

  if (f && f.kind !== 'completion') {
    const here = f.host === plan.host;
    switch (f.kind) {
      case 'invalid-usage':
        return plan.algoError
          ? failNow('invalid', plan.algoError, ranks)
          : failNow('remote', `socketProgress: Connection closed by remote peer ${f.host}`, ranks);
      case 'bootstrap':
        return here
          ? failNow(
              'system',
              `socketStartConnect: Connect to ${f.peer} failed : Software caused connection abort`,
              ranks,
            )
          : failNow('remote', `socketProgress: Connection closed by remote peer ${f.host}`, ranks);
      case 'no-socket':
        return here
          ? failNow('internal', 'Bootstrap : no socket interface found', ranks)
          : failNow('remote', 'socketProgress: Connection closed by remote peer', ranks);
      case 'modify-qp': {
        if (!here) return failNow('remote', `socketProgress: Connection closed by remote peer ${f.host}`, ranks);
        const text =
          f.errno === 101 ? 'Network is unreachable' : f.errno === 110 ? 'Connection timed out' : 'Invalid argument';
        const failing = ranks.filter((x) => log.failure.some((l) => l.includes(`:${x.pid}:`)));
        return failNow(
          'system',
          `Call to ibv_modify_qp failed with ${f.errno} ${text}, on dev ${f.device.rdma.name}:${f.device.rdma.port}, curr state INIT, next state RTR, local GID index ${f.device.gidIndex}, local GID ${f.localGid}, remote GID ${f.remoteGid}`,
          failing.length > 0 ? failing : ranks,
        );
      }
      default:
        return failNow('remote', `socketProgress: Connection closed by remote peer ${f.host}`, ranks);
    }
  }

  await emitLines(io, log.complete);
  // The ranks are CUDA processes now: nvidia-smi lists them and the GPUs show the load.
  const bufMiB = Math.ceil((3 * bench.max) / 1024 ** 2);
  for (const x of ranks)
    addGpuWork(m, { gpu: x.localRank, pid: x.pid, name: interp, memMiB: 1030 + bufMiB, utilPct: 97, type: 'C' });
  try {
    return await benchRows(io, a, bench, o, seq, world, m, ranks, log.failure, log.destroy, failNow);
  } finally {
    for (const x of ranks) removeGpuWork(m, x.pid);
  }
}

/** Rank 0's result table, size by size at the modelled pace, or the failure that cuts it short. */
async function benchRows(
  io: ToolIo,
  a: Args,
  bench: BenchArgs,
  o: JobOutcome,
  seq: number,
  world: number,
  m: Machine,
  ranks: RankIds[],
  failureLines: readonly string[],
  destroy: readonly string[],
  failNow: (
    kind: 'invalid' | 'system' | 'internal' | 'remote',
    last: string,
    failing: RankIds[],
    code?: number,
  ) => Promise<ExecResult>,
): Promise<ExecResult> {
  const f = o.failure;
  const plan = o.plans[a.nodeRank]!;
  const printer = a.nodeRank === 0 ? ranks.find((x) => x.rank === 0) : undefined;
  if (printer) await io.out(`# all_reduce sum float32, world=${world}\n`);
  const rowRng = rng(m.seed, 'nccl-rows', seq);
  for (let size = bench.min; size <= bench.max; size = bench.factor > 1 ? size * bench.factor : size + 1) {
    if (f?.kind === 'completion' && Math.max(1, Math.floor(size / 4)) * 4 > f.afterBytes) {
      // The rail's first message larger than the smaller MTU: the receiver's QP errors out.
      if (!(await io.sleep(2000))) return io.result(130);
      if (f.host === plan.host) {
        const failing = ranks.filter((x) => failureLines.some((l) => l.includes(`:${x.pid}:`)));
        return failNow(
          'remote',
          `NET/IB : Got completion from peer with status=${f.status}`,
          failing.length > 0 ? failing : ranks.slice(0, 1),
          1,
        );
      }
      return failNow('remote', `socketProgress: Connection closed by remote peer ${f.host}`, ranks.slice(0, 1), 1);
    }
    const res = row(o, world, size, bench, rowRng);
    const ms = Math.max(1, res.spentUs / 1000);
    const traffic = railTraffic(o, a.nodeRank, world, size, bench, seq, m.clock.now(), ms);
    if (!(await io.sleep(ms))) {
      for (const t of traffic) t.stop();
      return io.result(130);
    }
    for (const t of traffic) t.finish();
    if (printer) await io.out(`${res.text}\n`);
  }
  await emitLines(io, destroy);
  return io.result(0);
}

registerProgram({
  name: 'torchrun',
  basenames: ['torchrun'],
  accepts: (_path, content) => entryModule(content) === 'torch.distributed.run',
  run: torchrun,
});
