/**
 * Ray as it runs on the modelled machines (docs/STAGES.md §4.3 "Ray / vLLM"): one Ray node per machine —
 * its processes in the machine's process table, the address it registered, its ports — and the
 * cluster those nodes form (a node belongs to the head whose GCS address it joined). A node lives
 * exactly as long as its raylet process, so `ray stop`, `kill`, a unit stop or a reboot all end it.
 *
 * The node IP Ray registers without `--node-ip-address` is what it would pick on a multi-homed host:
 * the head takes the address of the default route's interface (management), a worker the address
 * it uses to reach the head (R45).
 */
import type { Cluster } from './cluster.js';
import { tcpPath } from './rdma-path.js';
import { listensOn, registerListenSource, type ListenSocket } from './sockets.js';
import type { Machine } from './types.js';
import type { Process } from '../system/processes.js';
import type { ResourceLimits } from '../system/limits.js';
import { rng } from '../util/prng.js';
import { cudaRuntime } from '../tools/cuda-runtime.js';

export interface RayStartOptions {
  head: boolean;
  /** `--address` of a worker: `ip:port`. */
  address?: string;
  nodeIp?: string;
  port: number;
  dashboardHost: string;
  dashboardPort: number;
  clientPort: number;
  nodeManagerPort?: number;
  objectManagerPort?: number;
  agentPort: number;
  metricsPort?: number;
  numGpus?: number;
}

export interface RayNode {
  head: boolean;
  nodeIp: string;
  /** `ip:port` of the GCS this node belongs to (its own for the head). */
  gcs: string;
  nodeId: string;
  session: string;
  version: string;
  /** site-packages directory the ray package was imported from. */
  site: string;
  python: string;
  opts: RayStartOptions;
  nodeManagerPort: number;
  objectManagerPort: number;
  metricsPort: number;
  gpus: number;
  cpus: number;
  memoryBytes: number;
  objectStoreBytes: number;
  startedAt: number;
  procs: Process[];
  /** Whether the node's IP was given (--node-ip-address) or guessed. */
  explicitIp: boolean;
}

const nodes = new WeakMap<Machine, RayNode>();
let starts = 0;

export function rayNode(m: Machine): RayNode | undefined {
  const n = nodes.get(m);
  if (!n) return undefined;
  const raylet = n.procs.find((p) => p.comm === 'raylet');
  if (!raylet || m.system.processes.get(raylet.pid) !== raylet) {
    nodes.delete(m);
    return undefined;
  }
  return n;
}

/** IPv4 address of an interface. */
function addrOf(m: Machine, ifname: string): string | undefined {
  return m.netdevs.find((d) => d.name === ifname)?.addresses.find((a) => a.family === 'inet')?.local;
}

/** What Ray's get_node_ip_address() returns: the source address towards `target` (default: the internet). */
export function autoNodeIp(m: Machine, target?: string): string {
  if (target) {
    for (const d of m.netdevs) {
      if (!d.adminUp) continue;
      for (const a of d.addresses) {
        if (a.family !== 'inet') continue;
        const mask = a.prefixlen === 0 ? 0 : (~0 << (32 - a.prefixlen)) >>> 0;
        const n = (s: string): number => s.split('.').reduce((x, y) => ((x << 8) | Number(y)) >>> 0, 0);
        if ((n(a.local) & mask) >>> 0 === (n(target) & mask) >>> 0) return a.local;
      }
    }
  }
  const dflt = m.routes.find((r) => r.dst === 'default');
  return (dflt && addrOf(m, dflt.dev)) ?? '127.0.0.1';
}

/** Machine that runs the live head whose GCS is at `address` (ip:port). */
export function headAt(cluster: Cluster, address: string): { machine: Machine; node: RayNode } | undefined {
  for (const machine of cluster.machines) {
    const node = rayNode(machine);
    if (node?.head && node.gcs === address) return { machine, node };
    if (node?.head) {
      const [ip, port] = address.split(':');
      const owns = machine.netdevs.some((d) => d.addresses.some((a) => a.local === ip)) || machine.mgmt.address === ip;
      if (owns && String(node.opts.port) === port) return { machine, node };
    }
  }
  return undefined;
}

/** Whether `from` can reach the GCS at `address` (route, firewall and a listener). */
export function gcsReachable(cluster: Cluster, from: Machine, address: string): boolean {
  const [ip, port] = address.split(':');
  if (!ip || !port) return false;
  const path = tcpPath(cluster, from, ip, Number(port));
  return path.ok && listensOn(path.machine, ip, Number(port)) !== undefined && headAt(cluster, address) !== undefined;
}

/** Alive nodes of the cluster whose GCS is `gcs`, head first. */
export function clusterNodes(cluster: Cluster, gcs: string): Array<{ machine: Machine; node: RayNode }> {
  const out: Array<{ machine: Machine; node: RayNode }> = [];
  for (const machine of cluster.machines) {
    const node = rayNode(machine);
    if (node && node.gcs === gcs) out.push({ machine, node });
  }
  return out.sort((a, b) => Number(b.node.head) - Number(a.node.head));
}

export interface StartContext {
  machine: Machine;
  cluster: Cluster;
  uid: number;
  limits: ResourceLimits;
  version: string;
  site: string;
  python: string;
  /** Creates a process of the node (the unit's cgroup for `--block` under systemd). */
  spawn(argv: string[], comm?: string): Process;
}

const GiB = 2 ** 30;

/** Brings a node up: its processes and registration. Throws the message `ray start` prints on failure. */
export function startRayNode(ctx: StartContext, opts: RayStartOptions): RayNode {
  const m = ctx.machine;
  const r = rng(m.seed, m.hostname, 'ray-node', starts++);
  const gcsTarget = opts.head ? undefined : opts.address?.split(':')[0];
  const nodeIp = opts.nodeIp ?? autoNodeIp(m, gcsTarget);
  const gcs = opts.head ? `${nodeIp}:${opts.port}` : (opts.address ?? '');
  const avail = Number(m.meminfo.find(([k]) => k === 'MemAvailable')?.[1] ?? 0) * 1024;
  // Ray's defaults: 30 % of available memory for the object store, at most 200 GB; the rest for tasks.
  const objectStoreBytes = Math.min(Math.floor(avail * 0.3), 200e9);
  const gpus = opts.numGpus ?? (cudaRuntime(m).ok ? m.gpus.length : 0);
  // session_2025-01-06_09-10-00_123456_4711: start time to the microsecond and the starting pid.
  const t = new Date(m.clock.now()).toISOString();
  const session = `session_${t.slice(0, 10)}_${t.slice(11, 19).replace(/:/g, '-')}_${t.slice(20, 23)}${r.digits(3)}_${r.int(2000, 60000)}`;
  const ray = `${ctx.site}/ray`;
  const logs = `--log_dir=/tmp/ray/${session}/logs`;
  const node: RayNode = {
    head: opts.head,
    nodeIp,
    gcs,
    nodeId: r.hex(56),
    session,
    version: ctx.version,
    site: ctx.site,
    python: ctx.python,
    opts,
    nodeManagerPort: opts.nodeManagerPort ?? r.int(33000, 46000),
    objectManagerPort: opts.objectManagerPort ?? r.int(33000, 46000),
    metricsPort: opts.metricsPort ?? r.int(50000, 65000),
    gpus,
    cpus: m.cpu.sockets * m.cpu.coresPerSocket * m.cpu.threadsPerCore,
    memoryBytes: Math.max(0, avail - objectStoreBytes),
    objectStoreBytes,
    startedAt: m.clock.now(),
    procs: [],
    explicitIp: opts.nodeIp !== undefined,
  };
  const py = ctx.python;
  if (opts.head) {
    node.procs.push(
      ctx.spawn(
        [
          `${ray}/core/src/ray/gcs/gcs_server`,
          logs,
          `--gcs_server_port=${opts.port}`,
          `--node-ip-address=${nodeIp}`,
          `--session-name=${session}`,
        ],
        'gcs_server',
      ),
    );
    node.procs.push(
      ctx.spawn([py, '-u', `${ray}/autoscaler/_private/monitor.py`, logs, `--gcs-address=${gcs}`], 'python'),
    );
    node.procs.push(
      ctx.spawn(
        [
          py,
          '-u',
          `${ray}/dashboard/dashboard.py`,
          `--host=${opts.dashboardHost}`,
          `--port=${opts.dashboardPort}`,
          '--port-retries=50',
          `--gcs-address=${gcs}`,
          `--node-ip-address=${nodeIp}`,
        ],
        'python',
      ),
    );
    node.procs.push(
      ctx.spawn(
        [
          py,
          '-u',
          `${ray}/util/client/server/server.py`,
          `--address=${gcs}`,
          '--host=0.0.0.0',
          `--port=${opts.clientPort}`,
          '--mode=proxy',
        ],
        'python',
      ),
    );
  }
  node.procs.push(
    ctx.spawn(
      [
        `${ray}/core/src/ray/raylet/raylet`,
        `--raylet_socket_name=/tmp/ray/${session}/sockets/raylet`,
        `--node_ip_address=${nodeIp}`,
        `--node_manager_port=${node.nodeManagerPort}`,
        `--object_manager_port=${node.objectManagerPort}`,
        `--num_gpus=${gpus}`,
        `--gcs-address=${gcs}`,
        `--session-name=${session}`,
      ],
      'raylet',
    ),
  );
  node.procs.push(ctx.spawn([py, '-u', `${ray}/_private/log_monitor.py`, logs, `--gcs-address=${gcs}`], 'python'));
  node.procs.push(
    ctx.spawn(
      [
        py,
        '-u',
        `${ray}/dashboard/agent.py`,
        `--node-ip-address=${nodeIp}`,
        `--listen-port=${opts.agentPort}`,
        `--metrics-export-port=${node.metricsPort}`,
        `--gcs-address=${gcs}`,
      ],
      'python',
    ),
  );
  nodes.set(m, node);
  m.revision++;
  return node;
}

/** Ends a node's processes (what `ray stop` and a unit stop do); true when there was one. */
export function stopRayNode(m: Machine, signal: 'TERM' | 'KILL', senderUid: number): number {
  const node = nodes.get(m);
  if (!node) return 0;
  let n = 0;
  for (const p of node.procs) {
    if (m.system.processes.get(p.pid) !== p) continue;
    if (m.system.processes.signal(p.pid, signal, senderUid) === 'ok') n++;
  }
  if (!rayNode(m)) nodes.delete(m);
  m.revision++;
  return n;
}

/** The listening sockets of the node (what `ss -ltn` shows while it runs). */
function raySockets(m: Machine): ListenSocket[] {
  const n = rayNode(m);
  if (!n) return [];
  const pid = (comm: string, arg?: string): number | undefined =>
    n.procs.find((p) => p.comm === comm && (!arg || p.argv.some((a) => a.includes(arg))))?.pid;
  const out: ListenSocket[] = [];
  const add = (address: string, port: number, p: number | undefined, name: string): void => {
    out.push({ address, port, backlog: 4096, ...(p ? { pid: p, process: name } : {}) });
  };
  if (n.head) {
    add('0.0.0.0', n.opts.port, pid('gcs_server'), 'gcs_server');
    add(
      n.opts.dashboardHost === 'localhost' ? '127.0.0.1' : n.opts.dashboardHost,
      n.opts.dashboardPort,
      pid('python', 'dashboard.py'),
      'ray::dashboard',
    );
    add('0.0.0.0', n.opts.clientPort, pid('python', 'server.py'), 'python');
  }
  add('0.0.0.0', n.nodeManagerPort, pid('raylet'), 'raylet');
  add('0.0.0.0', n.objectManagerPort, pid('raylet'), 'raylet');
  add('0.0.0.0', n.opts.agentPort, pid('python', 'agent.py'), 'python');
  add('0.0.0.0', n.metricsPort, pid('python', 'agent.py'), 'python');
  return out;
}

registerListenSource('ray', raySockets);

export const RAY_GIB = GiB;
