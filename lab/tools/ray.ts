/**
 * The `ray` CLI (a console script of the ray wheel, run by path: /opt/l20/venv/bin/ray) and `ray start
 * --block` as a systemd service program: `--version`, `start` (head or worker; output per
 * fixtures/corpus/ray-start-head__2023-ray2x-new-next-steps.txt), `stop` and `status` (per
 * fixtures/corpus/ray-status__2node-16gpu-usage-format-verl-docs.txt). What a start does to the
 * machine — processes, sockets, the registered address — is model/ray-runtime.ts.
 *
 * Formats: from the samples above; the error texts and the --block notice from Ray 2.x's
 * scripts.py and services.py (source-derived).
 */
import type { ExecResult } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import { pythonEnvOf, shebangInterpreter, SYSTEM_PYTHON, entryModule, type PythonEnv } from '../model/python.js';
import {
  clusterNodes,
  gcsReachable,
  headAt,
  rayNode,
  startRayNode,
  stopRayNode,
  type RayNode,
  type RayStartOptions,
} from '../model/ray-runtime.js';
import { listensOn } from '../model/sockets.js';
import type { Machine } from '../model/types.js';
import { registerProgram, type ProgramInvocation } from '../shell/programs.js';
import { toolIo } from '../system/live.js';
import { DEFAULT_LIMITS, sessionLimits, type ResourceLimits } from '../system/limits.js';
import { registerServiceProgram } from '../system/systemd/programs.js';
import { vllmRayGpusInUse } from '../model/vllm-runtime.js';

const RAY_ENTRY = 'ray.scripts.scripts';

export const USAGE_STATS_ENABLED =
  'Usage stats collection is enabled. To disable this, add `--disable-usage-stats` to the command that starts the cluster, or run the following command: `ray disable-usage-stats` before starting the cluster. See https://docs.ray.io/en/master/cluster/usage-stats.html for more details.\n\n';
export const BLOCK_NOTICE =
  '\n--block\n  This command will now block forever until terminated by a signal.\n  Running subprocesses are monitored and a message will be printed if any of them terminate unexpectedly. Subprocesses exit with SIGTERM will be treated as graceful, thus NOT reported.\n';

/** Options of `ray start` the lab reads, and whether each takes a value (click's --opt=v / --opt v). */
const START_OPTS: Record<string, boolean> = {
  head: false,
  block: false,
  address: true,
  'node-ip-address': true,
  port: true,
  'dashboard-host': true,
  'dashboard-port': true,
  'ray-client-server-port': true,
  'node-manager-port': true,
  'object-manager-port': true,
  'min-worker-port': true,
  'max-worker-port': true,
  'dashboard-agent-listen-port': true,
  'metrics-export-port': true,
  'num-gpus': true,
  'num-cpus': true,
  'disable-usage-stats': false,
  'include-dashboard': true,
  'temp-dir': true,
  'object-store-memory': true,
  resources: true,
  'dashboard-agent-grpc-port': true,
  'runtime-env-agent-port': true,
  'gcs-server-port': true,
  verbose: false,
};

export interface StartArgs {
  opts: Map<string, string>;
  error?: string;
}

export function parseStart(args: readonly string[]): StartArgs {
  const opts = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) return { opts, error: `Got unexpected extra argument (${a})` };
    const name = m[1]!;
    const takes = START_OPTS[name];
    if (takes === undefined) return { opts, error: `No such option: --${name}` };
    if (!takes) opts.set(name, '');
    else {
      const v = m[2] ?? args[++i];
      if (v === undefined) return { opts, error: `Option '--${name}' requires an argument.` };
      opts.set(name, v);
    }
  }
  return { opts };
}

export function startOptions(o: Map<string, string>): RayStartOptions {
  const num = (k: string, d?: number): number | undefined => (o.has(k) ? Number(o.get(k)) : d);
  return {
    head: o.has('head'),
    ...(o.get('address') ? { address: o.get('address')! } : {}),
    ...(o.get('node-ip-address') ? { nodeIp: o.get('node-ip-address')! } : {}),
    port: num('port', 6379)!,
    // Ray's default dashboard host is localhost.
    dashboardHost: o.get('dashboard-host') ?? '127.0.0.1',
    dashboardPort: num('dashboard-port', 8265)!,
    clientPort: num('ray-client-server-port', 10001)!,
    ...(o.has('node-manager-port') ? { nodeManagerPort: num('node-manager-port')! } : {}),
    ...(o.has('object-manager-port') ? { objectManagerPort: num('object-manager-port')! } : {}),
    agentPort: num('dashboard-agent-listen-port', 52365)!,
    ...(o.has('metrics-export-port') ? { metricsPort: num('metrics-export-port')! } : {}),
    ...(o.has('num-gpus') ? { numGpus: num('num-gpus')! } : {}),
  };
}

function startBanner(node: RayNode, usageDisabled: boolean): string {
  let s = usageDisabled ? 'Usage stats collection is disabled.\n\n' : USAGE_STATS_ENABLED;
  s += `Local node IP: ${node.nodeIp}\n\n--------------------\nRay runtime started.\n--------------------\n\n`;
  if (!node.head) return `${s}To terminate the Ray runtime, run\n  ray stop\n`;
  const dash = /^(?:0\.0\.0\.0|::)$/.test(node.opts.dashboardHost) ? node.nodeIp : node.opts.dashboardHost;
  const init = node.explicitIp ? `ray.init(_node_ip_address='${node.nodeIp}')` : 'ray.init()';
  return (
    `${s}Next steps\n  To add another node to this Ray cluster, run\n    ray start --address='${node.gcs}'\n  \n  To connect to this Ray cluster:\n    import ray\n    ${init}\n  \n` +
    `  To submit a Ray job using the Ray Jobs CLI:\n    RAY_ADDRESS='http://${dash}:${node.opts.dashboardPort}' ray job submit --working-dir . -- python my_script.py\n  \n` +
    '  See https://docs.ray.io/en/latest/cluster/running-applications/job-submission/index.html \n  for more information on submitting Ray jobs to the Ray cluster.\n  \n' +
    '  To terminate the Ray runtime, run\n    ray stop\n  \n  To view the status of the cluster, use\n    ray status\n  \n' +
    `  To monitor and debug Ray, view the dashboard at \n    ${dash}:${node.opts.dashboardPort}\n  \n  If connection to the dashboard fails, check your firewall settings and network configuration.\n`
  );
}

const GCS_UNREACHABLE = (a: string): string =>
  `ConnectionError: Unable to connect to GCS (ray head) at ${a}. Check that (1) Ray with matching version started successfully at the specified address, (2) this node can reach the specified address, and (3) there is no firewall setting preventing access.\n`;

export interface RayEnv {
  machine: Machine;
  cluster: Cluster;
  uid: number;
  py: PythonEnv;
  limits: ResourceLimits;
}

/** Tries to bring a node up; an error text instead when Ray would refuse. */
export function tryStart(
  env: RayEnv,
  o: RayStartOptions,
  spawn: (argv: string[], comm?: string) => import('../system/processes.js').Process,
): RayNode | string {
  const m = env.machine;
  if (rayNode(m)) {
    const n = rayNode(m)!;
    return `ConnectionError: Ray is trying to start at ${o.nodeIp ?? n.nodeIp}:${o.port}, but is already running at ${n.gcs}. Please specify a different port using the \`--port\` flag of \`ray start\` command.\n`;
  }
  if (o.head && listensOn(m, '0.0.0.0', o.port))
    return `ConnectionError: Ray is trying to start at ${o.nodeIp ?? m.mgmt.address}:${o.port}, but the port is in use.\n`;
  if (!o.head) {
    if (!o.address)
      return 'ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.\n';
    if (!gcsReachable(env.cluster, m, o.address)) return GCS_UNREACHABLE(o.address);
  }
  const version = env.py.dists.get('ray') ?? '0';
  return startRayNode(
    {
      machine: m,
      cluster: env.cluster,
      uid: env.uid,
      limits: env.limits,
      version,
      site: env.py.sites[0] ?? '',
      python: env.py.interpreter,
      spawn,
    },
    o,
  );
}

function fmtBytes(b: number): string {
  const TiB = 2 ** 40;
  if (b >= TiB) return `${(b / TiB).toFixed(2)}TiB`;
  return `${(b / 2 ** 30).toFixed(2)}GiB`;
}

/** `ray status` of the cluster whose GCS is `gcs`. */
export function statusText(m: Machine, cluster: Cluster, gcs: string): string {
  const nodes = clusterNodes(cluster, gcs);
  const d = new Date(m.clock.now());
  const ts = `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 23)}${String((d.getUTCMilliseconds() * 7) % 1000).padStart(3, '0')}`;
  const sum = (f: (n: RayNode) => number): number => nodes.reduce((a, x) => a + f(x.node), 0);
  const gpus = sum((n) => n.gpus);
  const used = Math.min(gpus, vllmRayGpusInUse(cluster, gcs));
  return [
    `======== Autoscaler status: ${ts} ========`,
    'Node status',
    '---------------------------------------------------------------',
    'Active:',
    ...nodes.map((x) => ` 1 node_${x.node.nodeId}`),
    'Pending:',
    ' (no pending nodes)',
    'Recent failures:',
    ' (no failures)',
    '',
    'Resources',
    '---------------------------------------------------------------',
    'Usage:',
    ` 0.0/${sum((n) => n.cpus).toFixed(1)} CPU`,
    ` ${used.toFixed(1)}/${gpus.toFixed(1)} GPU${used > 0 ? ` (${used.toFixed(1)} used of ${used.toFixed(1)} reserved in placement groups)` : ''}`,
    ` 0B/${fmtBytes(sum((n) => n.memoryBytes))} memory`,
    ` 0B/${fmtBytes(sum((n) => n.objectStoreBytes))} object_store_memory`,
    '',
    'Demands:',
    ' (no resource demands)',
    '',
  ].join('\n');
}

async function limitsFor(inv: ProgramInvocation): Promise<ResourceLimits> {
  if (inv.root) return DEFAULT_LIMITS;
  return sessionLimits(inv.ctx.fs, inv.machine.user.name, []);
}

async function rayCli(inv: ProgramInvocation): Promise<ExecResult> {
  const io = toolIo(inv.ctx, inv.machine.clock);
  const [cmd, ...rest] = inv.args;
  const m = inv.machine;
  const py = await pythonEnvOf(
    inv.ctx.fs,
    shebangInterpreter(inv.content) ?? SYSTEM_PYTHON,
    inv.ctx.env.get('HOME') ?? m.user.home,
    inv.root,
  );
  const version = py.dists.get('ray');
  if (!version)
    return {
      stdout: '',
      stderr: `Traceback (most recent call last):\n  File "${inv.path}", line 5, in <module>\n    from ray.scripts.scripts import main\nModuleNotFoundError: No module named 'ray'\n`,
      exitCode: 1,
    };
  const uid = inv.root ? 0 : m.user.uid;
  if (cmd === '--version') return { stdout: `ray, version ${version}\n`, stderr: '', exitCode: 0 };
  if (cmd === 'start') {
    const p = parseStart(rest);
    if (p.error)
      return {
        stdout: '',
        stderr: `Usage: ray start [OPTIONS]\nTry 'ray start --help' for help.\n\nError: ${p.error}\n`,
        exitCode: 2,
      };
    const o = startOptions(p.opts);
    const usageOff = p.opts.has('disable-usage-stats') || inv.ctx.env.get('RAY_USAGE_STATS_ENABLED') === '0';
    const procs: import('../system/processes.js').Process[] = [];
    const limits = await limitsFor(inv);
    const node = tryStart({ machine: m, cluster: inv.cluster, uid, py, limits }, o, (argv, comm) => {
      const pr = m.system.processes.spawn({ argv, uid, limits, ...(comm ? { comm } : {}) });
      procs.push(pr);
      return pr;
    });
    if (typeof node === 'string') {
      if (!o.head) await io.sleep(10_000);
      await io.err(node);
      return io.result(1);
    }
    await io.out(startBanner(node, usageOff));
    if (!p.opts.has('block')) return io.result(0);
    await io.out(BLOCK_NOTICE);
    // Runs until interrupted (the session ends) or the node's processes die.
    await waitNode(m, node, io.signal);
    if (rayNode(m) === node) stopRayNode(m, 'TERM', uid);
    return io.result(io.signal?.aborted ? 130 : 1);
  }
  if (cmd === 'stop') {
    const force = rest.includes('--force') || rest.includes('-f');
    const n = stopRayNode(m, force ? 'KILL' : 'TERM', uid);
    await io.out(n > 0 ? `Stopped all ${n} Ray processes.\n` : 'Did not find any active Ray processes.\n');
    return io.result(0);
  }
  if (cmd === 'status') {
    const ai = rest.indexOf('--address');
    const addr = ai >= 0 ? rest[ai + 1] : rest.find((a) => a.startsWith('--address='))?.slice(10);
    const gcs = addr ?? rayNode(m)?.gcs;
    if (!gcs)
      return {
        stdout: '',
        stderr:
          'ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.\n',
        exitCode: 1,
      };
    if (!gcsReachable(inv.cluster, m, gcs)) {
      await io.sleep(5_000);
      return {
        stdout: '',
        stderr: `ConnectionError: Failed to connect to GCS at address ${gcs} within 5 seconds.\n`,
        exitCode: 1,
      };
    }
    const head = headAt(inv.cluster, gcs)!;
    return { stdout: statusText(m, inv.cluster, head.node.gcs), stderr: '', exitCode: 0 };
  }
  return {
    stdout: '',
    stderr: `Usage: ray [OPTIONS] COMMAND [ARGS]...\nTry 'ray --help' for help.\n\nError: No such command '${cmd ?? ''}'.\n`,
    exitCode: 2,
  };
}

/** Resolves when the node's raylet is gone or `signal` aborts. */
async function waitNode(m: Machine, node: RayNode, signal: AbortSignal | undefined): Promise<void> {
  const raylet = node.procs.find((p) => p.comm === 'raylet');
  const gone = raylet ? raylet.exited.then(() => undefined) : Promise.resolve();
  const aborted = new Promise<void>((resolve) => {
    if (!signal || signal.aborted) return resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await Promise.race([gone, aborted]);
  void m;
}

registerProgram({
  name: 'ray',
  basenames: ['ray'],
  accepts: (_path, content) => entryModule(content) === RAY_ENTRY,
  run: rayCli,
});

registerServiceProgram({
  name: 'ray-start-block',
  matches: (argv) => /\/ray$/.test(argv[0] ?? '') && argv[1] === 'start' && argv.includes('--block'),
  async run(ctx) {
    const m = ctx.machine;
    const path = ctx.argv[0] as string;
    let content: string;
    try {
      content = await m.system.readFile(path);
    } catch {
      m.system.journal.add({
        at: m.clock.now(),
        boot: m.system.boot.count,
        ident: 'systemd',
        pid: 1,
        unit: ctx.unit,
        message: `${ctx.unit}: Failed to locate executable ${path}: No such file or directory`,
      });
      return 203;
    }
    // systemd (root) resolves the unit's program and its environment.
    const py = await pythonEnvOf(
      m.system.shell.fsAs(0),
      shebangInterpreter(content) ?? SYSTEM_PYTHON,
      ctx.env.HOME ?? m.user.home,
      ctx.uid === 0,
    );
    if (!py.dists.get('ray') || !ctx.cluster) {
      await ctx.err("ModuleNotFoundError: No module named 'ray'\n");
      return 1;
    }
    const p = parseStart(ctx.argv.slice(2));
    if (p.error) {
      await ctx.err(`Usage: ray start [OPTIONS]\nTry 'ray start --help' for help.\n\nError: ${p.error}\n`);
      return 2;
    }
    const o = startOptions(p.opts);
    const node = tryStart(
      { machine: m, cluster: ctx.cluster, uid: ctx.uid, py, limits: ctx.main.limits },
      o,
      (argv, comm) => ctx.spawn(argv, comm ? { comm } : {}),
    );
    if (typeof node === 'string') {
      if (!o.head) await ctx.sleep(10_000);
      await ctx.err(node);
      return 1;
    }
    await ctx.out(startBanner(node, p.opts.has('disable-usage-stats') || ctx.env.RAY_USAGE_STATS_ENABLED === '0'));
    await ctx.out(BLOCK_NOTICE);
    ctx.ready();
    await waitNode(m, node, ctx.signal);
    if (ctx.signal.aborted) {
      stopRayNode(m, 'TERM', ctx.uid);
      return 0;
    }
    await ctx.err(
      `Some Ray subprocesses exited unexpectedly:\n  raylet [exit code=-9]\nRemaining processes will be killed.\n`,
    );
    stopRayNode(m, 'KILL', 0);
    return 1;
  },
});
