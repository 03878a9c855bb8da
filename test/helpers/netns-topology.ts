/**
 * A real network path for the jump-host tests (issue 17): network namespaces this process creates, joined by veth
 * pairs, so a target is reachable only through one or two bastions — as GPU servers behind a bastion are.
 *
 *   root namespace ──link0── bastion1 ──link1── bastion2 ──link2── target
 *
 * - Namespace names carry this process's pid and a count (`l20t-<pid>-<n>-bastion1`), so a leftover of a killed
 *   earlier run is recognised by its dead pid and removed when the next topology starts; the root side of link0
 *   (`l20t-s<third octet>`) goes with bastion1's namespace.
 * - Each link is a /24 of 10.231.0.0/16 (nothing on this machine uses it: checked before use): the lower side .1,
 *   the upper side .2. The four /24s of one topology form a /22 picked from the pid, skipping any in use.
 * - The root namespace reaches only link0 (its connected route). An `unreachable` route for the rest of the /22
 *   (more specific than the default route) makes a direct connect to bastion2 or the target fail here, at once,
 *   instead of leaving the machine through its default gateway: traffic goes only to these namespaces.
 * - bastion1 reaches the target through bastion2, which forwards (one hop through bastion1 then works);
 *   bastion1 does not forward, so the root namespace never reaches past it at the IP level.
 * - Teardown (afterAll, and a process exit hook for a test that dies) kills every process inside the namespaces
 *   (started by the test: sshd, the lab), deletes the namespaces (their veths go with them) and the route.
 */
import { execFileSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { isAlive, waitFor } from './processes.js';

export const NETNS_PREFIX = 'l20t-';
/** The `proto` of our unreachable routes; their `metric` is the creating pid (to find a dead run's). */
const ROUTE_PROTO = '231';

export type NodeName = 'bastion1' | 'bastion2' | 'target';
const NODES: readonly NodeName[] = ['bastion1', 'bastion2', 'target'];

export interface TopologyNode {
  name: NodeName;
  /** The network namespace (`ip netns exec NS …`). */
  ns: string;
  /** Its address on the link towards the root namespace (what the hop before it connects to). */
  address: string;
  /** Its interface towards the root namespace (inside ns), for `linkDown`. */
  upLink: string;
  /** Its address on the link towards the next node (what the next node sees its connections come from). */
  downAddress?: string;
}

export interface Topology {
  /** The root namespace's own address on link0. */
  rootAddress: string;
  /** The /22 this topology uses, e.g. 10.231.8.0/22. */
  subnet: string;
  bastion1: TopologyNode;
  bastion2: TopologyNode;
  target: TopologyNode;
  namespaces: readonly string[];
  /** Runs a command inside a node's namespace (throws with its stderr on a non-zero exit). */
  exec(node: NodeName, cmd: string, args: readonly string[]): string;
  /** Cuts the link between a node and the one before it (`ip link set down`), as a pulled cable would. */
  linkDown(node: NodeName): void;
  linkUp(node: NodeName): void;
  /** Pids of the processes running inside a node's namespace. */
  pids(node: NodeName): number[];
  teardown(): Promise<void>;
}

function ip(args: readonly string[]): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`ip ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
  }
}

function netnsPids(ns: string): number[] {
  try {
    return ip(['netns', 'pids', ns]).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Kills what runs inside `ns` (SIGKILL: teardown must finish even when a process ignores TERM) and deletes it. */
function removeNamespace(ns: string): void {
  for (const pid of netnsPids(ns)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  // A killed process leaves the namespace once reaped; deleting it before then only unlinks the name, but the
  // veths stay until the last process is gone, so wait for them.
  const deadline = Date.now() + 5000;
  // Synchronous (the exit hook cannot await): poll the condition every 20 ms.
  while (netnsPids(ns).length > 0 && Date.now() < deadline) execFileSync('sleep', ['0.02']);
  try {
    ip(['netns', 'del', ns]);
  } catch {
    // already gone
  }
}

function ourRoutes(): { spec: string[]; pid: number }[] {
  return ip(['-4', 'route', 'show', 'proto', ROUTE_PROTO])
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const words = line.trim().split(/\s+/);
      const m = words.indexOf('metric');
      return { spec: words, pid: m >= 0 ? Number(words[m + 1]) : -1 };
    });
}

function deleteRoute(words: readonly string[]): void {
  try {
    ip(['-4', 'route', 'del', ...words, 'proto', ROUTE_PROTO]);
  } catch {
    // already gone
  }
}

/** Namespaces and routes a killed earlier run left (its pid is dead), removed before we start. */
export function cleanLeftovers(): string[] {
  const removed: string[] = [];
  for (const line of ip(['netns', 'list']).split('\n')) {
    const ns = line.split(/\s+/)[0] ?? '';
    const m = new RegExp(`^${NETNS_PREFIX}(\\d+)-`).exec(ns);
    if (!m || isAlive(Number(m[1]))) continue;
    removeNamespace(ns);
    removed.push(ns);
  }
  for (const r of ourRoutes()) {
    if (r.pid > 0 && isAlive(r.pid)) continue;
    deleteRoute(r.spec);
    removed.push(`route ${r.spec.join(' ')}`);
  }
  return removed;
}

const subnetOf = (base: number) => `10.231.${base}.0/22`;
const rootVethOf = (base: number) => `l20t-s${base}`;

/**
 * A /22 of 10.231.0.0/16 that no address or route of the root namespace touches, claimed by creating the root
 * side of link0 (named after the /22, its peer `up0` in bastion1's namespace): test files run in parallel workers,
 * and only one of two creating the same interface name succeeds.
 */
function claimSubnet(bastion1Ns: string, pid: number): number {
  for (let i = 0; i < 64; i++) {
    const base = ((pid + i) % 64) * 4;
    const addrs = ip(['-4', 'addr']);
    const routes = ip(['-4', 'route', 'show', 'table', 'all']);
    const used = [0, 1, 2, 3].some((k) => {
      const net = new RegExp(`\\b10\\.231\\.${base + k}\\.`);
      return net.test(addrs) || net.test(routes);
    });
    if (used) continue;
    try {
      ip(['link', 'add', rootVethOf(base), 'type', 'veth', 'peer', 'name', 'up0', 'netns', bastion1Ns]);
      return base;
    } catch {
      // another worker took this one a moment ago
    }
  }
  throw new Error('no free /22 in 10.231.0.0/16 for the test topology (every one is in use)');
}

/** A TCP connect from this (the root) namespace: true when it connects, false when refused or unreachable. */
export function tcpConnects(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.once('timeout', () => done(false));
  });
}

/** Topologies this process started, for unique names. */
let started = 0;

export async function startTopology(): Promise<Topology> {
  if (process.getuid?.() !== 0) throw new Error('the topology tests need root (ip netns, veth pairs)');
  cleanLeftovers();
  const pid = process.pid;
  const seq = started++;
  const ns = (n: NodeName) => `${NETNS_PREFIX}${pid}-${seq}-${n}`;
  const namespaces = NODES.map(ns);
  let base = -1;
  const net = (link: number, host: 1 | 2) => `10.231.${base + link}.${host}`;
  const route = () => ['unreachable', subnetOf(base), 'metric', String(pid)];

  let removed = false;
  const removeSync = () => {
    if (removed) return;
    removed = true;
    for (const n of namespaces) removeNamespace(n);
    if (base >= 0) deleteRoute(route());
  };
  // A test that throws past afterAll, or a worker that exits, must not leave namespaces behind.
  process.once('exit', removeSync);

  try {
    for (const n of namespaces) {
      ip(['netns', 'add', n]);
      ip(['-n', n, 'link', 'set', 'lo', 'up']);
    }
    // link0: root ↔ bastion1
    base = claimSubnet(ns('bastion1'), pid);
    const rootVeth = rootVethOf(base);
    ip(['addr', 'add', `${net(0, 1)}/24`, 'dev', rootVeth]);
    ip(['link', 'set', rootVeth, 'up']);
    ip(['-4', 'route', 'add', ...route(), 'proto', ROUTE_PROTO]);
    // link1: bastion1 ↔ bastion2, link2: bastion2 ↔ target; `dn0` is a node's side towards the next one.
    const chain: NodeName[] = ['bastion1', 'bastion2', 'target'];
    for (const [i, n] of chain.entries()) {
      if (i > 0) {
        const prev = ns(chain[i - 1] as NodeName);
        ip(['-n', prev, 'link', 'add', 'dn0', 'type', 'veth', 'peer', 'name', 'up0', 'netns', ns(n)]);
        ip(['-n', prev, 'addr', 'add', `${net(i, 1)}/24`, 'dev', 'dn0']);
        ip(['-n', prev, 'link', 'set', 'dn0', 'up']);
      }
      ip(['-n', ns(n), 'addr', 'add', `${net(i, 2)}/24`, 'dev', 'up0']);
      ip(['-n', ns(n), 'link', 'set', 'up0', 'up']);
    }
    // bastion1 → target through bastion2 (which forwards); the target answers bastion1 back through bastion2.
    ip(['-n', ns('bastion1'), 'route', 'add', `10.231.${base + 2}.0/24`, 'via', net(1, 2)]);
    ip(['-n', ns('target'), 'route', 'add', `10.231.${base + 1}.0/24`, 'via', net(2, 1)]);
    ip(['netns', 'exec', ns('bastion2'), 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
  } catch (err) {
    removeSync();
    process.removeListener('exit', removeSync);
    throw err;
  }

  const node = (name: NodeName, link: number): TopologyNode => ({
    name,
    ns: ns(name),
    address: net(link, 2),
    upLink: 'up0',
    ...(link < 2 ? { downAddress: net(link + 1, 1) } : {}),
  });
  const exec = (n: NodeName, cmd: string, args: readonly string[]) => ip(['netns', 'exec', ns(n), cmd, ...args]);
  return {
    rootAddress: net(0, 1),
    subnet: subnetOf(base),
    bastion1: node('bastion1', 0),
    bastion2: node('bastion2', 1),
    target: node('target', 2),
    namespaces,
    exec,
    linkDown: (n) => void ip(['-n', ns(n), 'link', 'set', 'up0', 'down']),
    linkUp: (n) => void ip(['-n', ns(n), 'link', 'set', 'up0', 'up']),
    pids: (n) => netnsPids(ns(n)),
    async teardown() {
      // Give what runs inside a chance to exit cleanly first (TERM), then removeSync kills what is left.
      const pids = namespaces.flatMap(netnsPids);
      for (const p of pids) {
        try {
          process.kill(p, 'SIGTERM');
        } catch {
          // gone
        }
      }
      await waitFor(() => pids.every((p) => !isAlive(p)), 'processes in the test namespaces to exit', 5000).catch(
        () => undefined, // removeSync SIGKILLs what is still there
      );
      removeSync();
      process.removeListener('exit', removeSync);
    },
  };
}
