/**
 * Scenario parts for the ray and vllm stages (docs/STAGES.md §4.4).
 *
 * `ready`: what applying both stages leaves for design A with the default model — the model in
 * /opt/l20/models, /etc/l20/vllm.env, l20-vllm.service enabled on both hosts (node 1 the API on its
 * management address, node 2 headless), port 8000 admitted on management: the recorded files (ready/) —
 * and the unit running since boot; no Ray (the layout is DP 16).
 *
 * `tutorial`: the recipe's Ray, started by hand from the user's pip install — the head with
 * `--dashboard-host=0.0.0.0` and no `--node-ip-address`, the worker joining 192.168.100.1:6379 (when
 * the fabric reaches it) — and its start_vllm.sh / inference_test.py in the home directory, never
 * successfully run. `tutorialServing` is that part alone on top of `ready` (scenario
 * `tutorial-serving`), so the stages' fix can be proven without the rest of the recipe.
 */
import type { Cluster } from '../model/cluster.js';
import { CLUSTER_VENV } from '../product-checks.js';
import { pythonEnvOf, SYSTEM_PYTHON } from '../model/python.js';
import type { Machine } from '../model/types.js';
import { registerBootHook } from '../system/boot.js';
import { sessionLimits } from '../system/limits.js';
import { parseStart, startOptions, tryStart } from '../tools/ray.js';
import { markPreloaded } from '../tools/vllm-serve.js';

/** The enable link of the product's vLLM unit. */
const VLLM_WANTS = '/etc/systemd/system/multi-user.target.wants/l20-vllm.service';

/** The tutorial's start_vllm.sh and inference_test.py, byte for byte. */
export const TUTORIAL_START_VLLM = `#!/bin/bash
source /etc/nccl.conf
python -m vllm.entrypoints.openai.api_server \\
  --model deepseek-ai/deepseek-v3-8b \\
  --tensor-parallel-size 16 \\
  --quantization fp8 \\
  --gpu-memory-utilization 0.9 \\
  --host 0.0.0.0 \\
  --engine-use-ray \\
  --ray-address auto
`;

export const TUTORIAL_INFERENCE_TEST = `# inference_test.py
import ray
from vllm import LLM, SamplingParams

ray.init(address="auto")
llm = LLM(model="deepseek-ai/deepseek-v3-8b", tensor_parallel_size=16)
prompts = ["AI将如何改变医疗行业?"] * 64
sampling_params = SamplingParams(temperature=0.7, max_tokens=1024)
outputs = llm.generate(prompts, sampling_params)
for output in outputs:
    print(f"Generated {len(output.outputs[0].token_ids)} tokens")
`;

/** The tutorial's ray-start.sh lines: head on server 1, worker on server 2. */
export const TUTORIAL_RAY_HEAD = ['start', '--head', '--port=6379', '--num-gpus=8', '--dashboard-host=0.0.0.0'];
export const TUTORIAL_RAY_WORKER = ['start', '--address=192.168.100.1:6379', '--num-gpus=8'];

function setFile(m: Machine, path: string, content: string, mode: number): void {
  (m.files ??= new Map()).set(path, { content, mode });
}

export function ready(cluster: Cluster): void {
  // The unit has been running since boot: its first start at the lab's cold boot is already done.
  for (const m of cluster.machines) if (m.links?.has(VLLM_WANTS)) markPreloaded(m);
}

/** Ray starts the tutorial's operator ran by hand; started by the cold-boot hook below. */
const handStarted = new WeakMap<Machine, string[]>();

export function tutorialServing(cluster: Cluster): void {
  cluster.machines.forEach((m, i) => {
    setFile(m, `${m.user.home}/start_vllm.sh`, TUTORIAL_START_VLLM, 0o755);
    setFile(m, `${m.user.home}/inference_test.py`, TUTORIAL_INFERENCE_TEST, 0o644);
    handStarted.set(m, i === 0 ? TUTORIAL_RAY_HEAD : TUTORIAL_RAY_WORKER);
  });
}

export function tutorial(cluster: Cluster): void {
  tutorialServing(cluster);
}

/** `tutorial-serving`: `ready`, then the tutorial's Ray and launch scripts instead of the vLLM units. */
export function tutorialOnReady(cluster: Cluster): void {
  for (const m of cluster.machines) {
    m.files?.delete('/etc/systemd/system/l20-vllm.service');
    m.links?.delete(VLLM_WANTS);
    markPreloaded(m, false);
  }
  tutorialServing(cluster);
}

// The hand-started Ray runs from the lab's start: its daemons outlive the shell that ran `ray start`.
registerBootHook(
  'up',
  'tutorial-ray',
  async ({ machine: m, system, cluster, cold }) => {
    const args = handStarted.get(m);
    if (!cold || !args || !cluster) return;
    handStarted.delete(m);
    // The operator's `pip install` in the user site, else (on `ready`) the cluster venv's ray.
    let py = await pythonEnvOf(system.shell.fs, SYSTEM_PYTHON, m.user.home, false);
    if (!py.dists.get('ray'))
      py = await pythonEnvOf(system.shell.fs, `${CLUSTER_VENV}/bin/python3`, m.user.home, false);
    if (!py.dists.get('ray')) return;
    const limits = await sessionLimits(system.shell.fs, m.user.name, []);
    const uid = m.user.uid;
    tryStart({ machine: m, cluster, uid, py, limits }, startOptions(parseStart(args.slice(1)).opts), (argv, comm) =>
      system.processes.spawn({ argv, uid, limits, ...(comm ? { comm } : {}) }),
    );
  },
  { cold: true },
);
