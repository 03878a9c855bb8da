/**
 * The built-in simulated lab: one SSH server per simulated L20 server on 127.0.0.1, each backed
 * by a model of the machine (hardware, PCI tree, netdevs, RDMA, packages, files) and a shell
 * whose commands render that model the way the real tools print it. See docs/STAGES.md §4.
 */
import { createCluster, type Cluster } from './model/cluster.js';
import type { Machine } from './model/types.js';
import { resolveScenario } from './scenarios/index.js';
import { generateEd25519 } from '../src/util/ssh-keys.js';
import { HostServer, parsePublicKey, type LabHostStats } from './server.js';
import { createShell } from './shell/shell.js';
import { coldBoot } from './system/boot.js';
import { TOOLS } from './tools/index.js';
import { createHash } from 'node:crypto';

export interface LabOptions {
  hosts?: number;
  scenario?: string;
  seed?: number;
  speed?: number | 'max';
  maxSessions?: number;
  /**
   * Serve only these hosts (0-based, in cluster order): the whole cluster is modelled and booted,
   * but only these machines get an SSH server. With `seed`, `scenario` and `clientKey` alike,
   * several processes can serve one cluster between them, each on its own CPU, as real servers do.
   * Each process models the others' machines from the same seed, so what one host reads of another
   * (LLDP neighbours, ping) agrees as long as nothing changes; changes made through one process
   * (an apply) do not reach the others' copies.
   */
  serve?: readonly number[];
  /** The client key the hosts accept (OpenSSH format); default a fresh one. */
  clientKey?: { private: string; public: string };
  /** Wall-clock ms the simulated time starts to flow at (util/clock.ts); default now. */
  clockStartedAt?: number;
  /** The local address the hosts' SSH servers listen on (default 127.0.0.1; `lab serve --address` checks it). */
  address?: string;
}

export interface LabHost {
  name: string;
  address: string;
  port: number;
  user: string;
  hostKeyType: string;
  hostKeyBlob: Buffer;
  hostKeyFingerprint: string;
  stats(): LabHostStats;
  machine: Machine;
  /**
   * Fault injection: drop every SSH connection of this host at a chosen command (HostServer.dropAt); take its
   * SSH server away (`suspend`: as when sshd is killed — sessions end, the port refuses, the machine and its
   * timers run on) and bring it back (`resume`).
   */
  faults: Pick<HostServer, 'dropAt' | 'cancelDrop' | 'dropArmed' | 'suspend' | 'resume'>;
}

export interface Lab {
  hosts: LabHost[];
  /** The model behind the hosts: tests and fault injection change it (unplug a cable, …), then bump revisions. */
  cluster: Cluster;
  clientPrivateKey: string;
  clientPublicKey: string;
  close(): Promise<void>;
}

/** `SHA256:` + unpadded base64 of the key blob's SHA-256, as `ssh-keygen -lf` prints it. */
function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

export async function startLab(options: LabOptions = {}): Promise<Lab> {
  const hosts = options.hosts ?? 2;
  const seed = options.seed ?? 1;
  const speed = options.speed ?? 1;
  const maxSessions = options.maxSessions ?? 10;
  if (!Number.isInteger(hosts) || hosts < 1) throw new Error(`lab: hosts must be a positive integer, got ${hosts}`);
  if (speed !== 'max' && !(speed > 0)) throw new Error(`lab: speed must be a positive number or 'max', got ${speed}`);
  if (!Number.isInteger(maxSessions) || maxSessions < 1)
    throw new Error(`lab: maxSessions must be a positive integer, got ${maxSessions}`);
  const serve = new Set(options.serve ?? Array.from({ length: hosts }, (_, i) => i));
  for (const i of serve)
    if (!Number.isInteger(i) || i < 0 || i >= hosts) throw new Error(`lab: serve: no host ${i} among ${hosts}`);
  const scenarios = resolveScenario(options.scenario ?? 'fresh');
  const address = options.address ?? '127.0.0.1';

  const cluster = createCluster(hosts, seed, speed, options.clockStartedAt);
  for (const s of scenarios) s.apply(cluster);

  const client = options.clientKey ?? generateEd25519('l20-setup-lab');
  const clientPublicKey = parsePublicKey(client.public);
  const servers: HostServer[] = [];
  const labHosts: LabHost[] = [];
  try {
    for (const [index, machine] of cluster.machines.entries()) {
      const shell = await createShell(machine, cluster, TOOLS);
      // The machine has been up for a while: daemons of enabled units run (system/boot.ts). Hosts
      // another process serves boot here too, so what this one's hosts see of them is the same.
      await coldBoot(machine.system);
      if (!serve.has(index)) continue;
      const hostKey = generateEd25519();
      const blob = parsePublicKey(hostKey.public).getPublicSSH();
      const server = new HostServer({
        machine,
        shell,
        hostPrivateKey: hostKey.private,
        clientPublicKey,
        maxSessions,
        address,
      });
      servers.push(server);
      // A reboot takes the host's SSH server down and brings it back on the same port.
      machine.system.onPower((state) => {
        if (state === 'down') server.suspend();
        else void server.resume().catch(() => undefined);
      });
      const port = await server.listen();
      labHosts.push({
        name: machine.hostname,
        address,
        port,
        user: machine.user.name,
        hostKeyType: 'ssh-ed25519',
        hostKeyBlob: blob,
        hostKeyFingerprint: fingerprint(blob),
        stats: () => ({ ...server.stats }),
        machine,
        faults: server,
      });
    }
  } catch (err) {
    cluster.clock.close();
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }

  let closing: Promise<void> | undefined;
  return {
    hosts: labHosts,
    cluster,
    clientPrivateKey: client.private,
    clientPublicKey: client.public,
    close() {
      closing ??= (async () => {
        cluster.clock.close();
        await Promise.all(servers.map((s) => s.close()));
      })();
      return closing;
    },
  };
}
