/**
 * Work on the lab, so the monitor (and a demo) has something to watch: `vllm bench serve` against the
 * head's engines, over and over, and `ib_write_bw` between the nodes on one rail after another. Both
 * run as an operator would run them — commands over SSH to the lab's hosts — so GPUs, /metrics and
 * the fabric counters move exactly as the lab models them under that load.
 *
 * Assumes a serving cluster in design A (scenario `ready`); on other scenarios the commands simply
 * fail and are retried later, which is what the monitor should show then.
 */
import ssh2, { type Client } from 'ssh2';
import type { Lab, LabHost } from './index.js';
import { FABRIC_PORTS } from './model/cluster.js';
import { perftestListening } from './tools/perftest.js';

const { Client: SshClient } = ssh2;

export interface LabLoad {
  stop(): Promise<void>;
}

/** Same shape as the vllm stage's benchmark (checks/vllm), smaller so a cycle takes about a minute. */
const BENCH = `. /etc/l20/vllm.env
OPENAI_API_KEY=$VLLM_API_KEY /opt/l20/venv/bin/vllm bench serve --backend vllm --base-url "http://$1:8000" --model Qwen2.5-7B-Instruct --tokenizer /opt/l20/models/Qwen2.5-7B-Instruct --dataset-name random --random-input-len 512 --random-output-len 256 --max-concurrency 64 --num-prompts 256 --seed "$2" >/dev/null 2>&1
`;

const BW_PORT = 18_900;
const BW_SECONDS = 20;

function connect(lab: Lab, host: LabHost): Promise<Client> {
  return new Promise((resolve, reject) => {
    const c = new SshClient();
    c.once('ready', () => resolve(c));
    c.once('error', reject);
    c.connect({
      host: host.address,
      port: host.port,
      username: host.user,
      privateKey: lab.clientPrivateKey,
      hostVerifier: (key: Buffer) => key.equals(host.hostKeyBlob),
    });
  });
}

/** Runs a command (a script on stdin when given) and resolves when it ends; `signal` closes its channel. */
function exec(c: Client, command: string, stdin: string | undefined, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    c.exec(command, (err, ch) => {
      if (err) return resolve();
      const onAbort = (): void => {
        ch.close();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      ch.on('data', () => undefined);
      ch.stderr.on('data', () => undefined);
      ch.once('close', () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      if (stdin !== undefined) ch.end(stdin);
      else ch.end();
    });
  });
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export async function startLabLoad(lab: Lab): Promise<LabLoad> {
  const ac = new AbortController();
  const [a, b] = lab.hosts;
  if (!a || !b) return { stop: async () => undefined };
  const [ca, cb] = await Promise.all([connect(lab, a), connect(lab, b)]);
  const head = lab.cluster.machines[0];
  const peer = lab.cluster.machines[1];

  const serving = (async () => {
    for (let round = 0; !ac.signal.aborted; round++) {
      // The API listens on the head's management address (an IPv4 literal from the model).
      const api = /^[0-9.]+$/.test(head?.mgmt.address ?? '') ? head?.mgmt.address : '127.0.0.1';
      await exec(ca, `sudo -n bash -s -- ${api} ${round}`, BENCH, ac.signal);
      await pause(5_000, ac.signal);
    }
  })();

  const fabric = (async () => {
    for (let round = 0; !ac.signal.aborted; round++) {
      const k = round % FABRIC_PORTS.length;
      const netdev = FABRIC_PORTS[k] as string;
      const dev = (m: typeof head) => m?.rdma.find((r) => r.netdev === netdev)?.name ?? 'mlx5_0';
      const args = `-x 3 -F --report_gbits -q 1 -D ${BW_SECONDS} --tclass=106 -p ${BW_PORT}`;
      const server = exec(cb, `ib_write_bw -d ${dev(peer)} ${args}`, undefined, ac.signal);
      for (
        let i = 0;
        i < 50 && !ac.signal.aborted && peer && !perftestListening(lab.cluster, peer.hostname, BW_PORT);
        i++
      )
        await pause(100, ac.signal);
      await exec(ca, `ib_write_bw -d ${dev(head)} ${args} 192.168.${101 + k}.2`, undefined, ac.signal);
      await server;
      await pause(10_000, ac.signal);
    }
  })();

  return {
    async stop() {
      ac.abort();
      await Promise.all([serving, fabric]);
      ca.end();
      cb.end();
    },
  };
}
