/** Ray, vLLM and model rules (R40–R51): launch flags, layout, memory, exposure, versions, firewall, clocks. */
import type { RuleRecord } from './schema.js';

export const SERVING_RULES: readonly RuleRecord[] = [
  {
    id: 'R40',
    family: 'serving',
    title: 'Removed or invented vLLM flags',
    severity: 'blocker',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'The command uses any of these:\n' +
      '- `--engine-use-ray` (removed in vllm-project/vllm#8126);\n' +
      '- `--worker-use-ray` (now `--distributed-executor-backend ray`);\n' +
      '- `--ray-address` (never existed; vLLM joins the running cluster, or reads `RAY_ADDRESS`);\n' +
      '- live: any flag absent from `vllm serve --help=all`.',
    why: 'vLLM rejects it with `error: unrecognized arguments: …` and exits before serving anything.',
    fix: 'The replacement, or delete.',
  },
  {
    id: 'R41',
    family: 'serving',
    title: 'Model exists and is present on every node',
    severity: 'blocker',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'cfg: the id is on the known non-existent list (`deepseek-ai/deepseek-v3-8b`); other ids are "not ' +
      'checked" offline.\n' +
      "host: the id does not resolve, or a node's copy is missing or differs (hash of config.json and " +
      'the safetensors index).',
    why:
      'vLLM cannot start without the weights, and every rank of a multi-node layout loads its shard from ' +
      'its own node: a missing or different copy fails or mixes models.',
    fix: 'A real model, e.g. `deepseek-ai/DeepSeek-R1-Distill-Llama-8B`, at one path on every node.',
  },
  {
    id: 'R42',
    family: 'serving',
    title: 'Parallel layout',
    severity: 'high',
    graded: true,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'Applies to `vllm serve`, `api_server` and `LLM(tensor_parallel_size=…)`. It fires when:\n' +
      '- TP > G (TP crosses nodes over 25GbE) → `high`;\n' +
      '- the model fits one GPU (R43) but is distributed → `high`; use DP;\n' +
      '- TP > 2 on PCIe-only GPUs when a smaller TP fits → `medium`;\n' +
      '- a model that needs two or more nodes without TP = G and PP = N → `high`;\n' +
      '- TP × PP × DP > G × N → `blocker`.',
    why:
      'TP all-reduces twice per layer per step, so TP across nodes runs at 25GbE speed. On more than two ' +
      'PCIe-only GPUs vLLM turns off custom all-reduce ("not supported on more than two PCIe-only ' +
      'GPUs"), leaving all of it to NCCL. A layout larger than the cluster cannot be placed (D16).',
    fix:
      '8B: `--data-parallel-size 16 --data-parallel-size-local 8`, with `--headless ' +
      '--data-parallel-start-rank 8` on node 2. Two-node models: `-tp 8 -pp 2`.',
  },
  {
    id: 'R43',
    family: 'serving',
    title: 'Memory fit',
    severity: 'medium',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'Model: weights ≈ params × bytes per parameter (FP8 1, BF16 2, 4-bit 0.5). Budget = u × 46,068 ' +
      'MiB (the L20 per nvidia-smi) × TP × PP, where u is `--gpu-memory-utilization` (default 0.9).\n' +
      'It fires when weights > 0.9 × budget.',
    why:
      'That leaves under 10 % for the KV cache, so few sequences fit at once. For example, ' +
      'DeepSeek-V3/R1 FP8 (≈ 685B params, ≈ 638 GiB) fills 98 % of 16 L20s.',
    fix:
      'Pick a smaller or quantized model, or more GPUs per replica (TP × PP); keep ≥ 10 % (better 25 %) ' +
      'for the KV cache.',
  },
  {
    id: 'R44',
    family: 'serving',
    title: 'FP8 quantization',
    severity: 'medium',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      '`--quantization fp8` is used with compute capability < 8.9 (the L20 is 8.9), or on an already ' +
      'quantized checkpoint (its config.json has `quantization_config`).',
    why:
      'Below compute capability 8.9 there is no FP8 hardware; an already quantized checkpoint carries ' +
      'its own quantization, which the flag contradicts.',
    fix: "Drop `--quantization fp8`; vLLM reads the checkpoint's own quantization.",
  },
  {
    id: 'R45',
    family: 'serving',
    title: 'Ray node IP',
    severity: 'high',
    graded: false,
    scope: ['cfg', 'pair'],
    status: 'implemented',
    detect:
      'A multi-homed host runs `ray start` without `--node-ip-address=<cluster IP>`, or vLLM without ' +
      '`VLLM_HOST_IP`. Live: `ray list nodes` shows an address outside the cluster subnet.',
    why:
      'Ray otherwise takes the default-route IP, which gives the wrong NIC or `No available node types ' +
      'can fulfill resource request`.',
    fix:
      '`ray start … --node-ip-address=<cluster IP>` and `VLLM_HOST_IP=<cluster IP>` on each node, each ' +
      'with its own fabric address.',
  },
  {
    id: 'R46',
    family: 'serving',
    title: 'Exposed control planes',
    severity: 'high',
    graded: true,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      '- `--dashboard-host=0.0.0.0` is used without token auth (`RAY_AUTH_MODE=token`, Ray ≥ 2.52) and ' +
      'without a firewall limit → `high`;\n' +
      '- vLLM listens on `0.0.0.0` (an API bound beyond management) without `--api-key` → `high`;\n' +
      '- a vLLM launch passes `--api-key` on its command line: `high` for a literal key, `medium` for a ' +
      '`${VAR}` reference (systemd expands it into argv).',
    why:
      'The Ray dashboard and Jobs API execute code (CVE-2023-48022, CVE-2025-62593); an API without a ' +
      'key serves anyone who reaches it. argv is readable by every local user (`ps`, ' +
      '`/proc/<pid>/cmdline`), so a key on the command line is no secret.',
    fix:
      '`--dashboard-host=127.0.0.1` plus an SSH tunnel; vLLM on the service IP with a key: ' +
      '`VLLM_API_KEY` in `/etc/l20/vllm.env` (0600), loaded with `EnvironmentFile=`; `apply vllm.units` ' +
      'moves an old `L20_API_KEY` there, keeping its value.',
  },
  {
    id: 'R47',
    family: 'serving',
    title: 'Version parity',
    severity: 'medium',
    graded: false,
    scope: ['cfg', 'pair'],
    status: 'implemented',
    detect:
      'pair: Python, Ray, vLLM, torch/CUDA or NCCL versions differ between nodes.\n' +
      'cfg: `pip install vllm` is unpinned or targets the system interpreter.',
    why:
      'Ray refuses or misbehaves across Python and Ray versions (D24), mixed NCCL versions can give ' +
      'wrong results (D15); an unpinned install drifts between nodes, and one into the system ' +
      'interpreter collides with distro packages.',
    fix: 'A venv with `vllm==<pinned>`, or one container image.',
  },
  {
    id: 'R48',
    family: 'serving',
    title: 'Firewall model',
    severity: 'medium',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'The plan disables the firewall (`ufw disable`, `iptables -F`), or presents UDP 4791 rules as ' + 'required.',
    why:
      'Without a firewall the Ray and vLLM control planes are open to every network the hosts are on ' +
      '(R46). Hardware RoCE bypasses netfilter, so a UDP 4791 rule does nothing.',
    fix:
      'Keep the firewall on and allow TCP between the cluster addresses only, for the pinned Ray ports ' +
      '(6379, node manager, object manager, 10001, workers 10002–19999, agent, metrics), the vLLM DP RPC ' +
      'port, and the NCCL range (`ip_local_port_range = 50000 51000`).',
  },
  {
    id: 'R49',
    family: 'serving',
    title: 'Monitoring that cannot see RoCE',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: '`iftop`, `nload` or `tcpdump` is offered for RDMA traffic.',
    why: 'Kernel bypass hides RDMA traffic from them: NCCL traffic shows as ~0.',
    fix:
      '`ethtool -S` (`*_vport_rdma_unicast_bytes`, `*_prio3_pause`) and ' +
      '`/sys/class/infiniband/<dev>/ports/1/counters/port_{xmit,rcv}_data` (4-byte units).',
  },
  {
    id: 'R50',
    family: 'serving',
    title: 'Performance claims need a workload',
    severity: 'medium',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'A throughput, TTFT or concurrency claim lacks any of: an existing model, input and output ' +
      'lengths, concurrency, prompt count, layout, or tool (`vllm bench serve`).',
    why:
      'Such a claim is unverifiable. "Max concurrency" is set by `--max-num-seqs` and the KV cache, not ' +
      'by hardware.',
    fix:
      'Measure with a stated workload, e.g. `vllm bench serve --model <real model> --dataset-name random ' +
      '--random-input-len 512 --random-output-len 1024 --max-concurrency 64 --num-prompts 640`, and report ' +
      'model, quantization, TP/PP/DP, lengths, concurrency and prompt count.',
  },
  {
    id: 'R51',
    family: 'serving',
    title: 'Time sync',
    severity: 'info',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect: '`timedatectl` does not show `System clock synchronized: yes`.',
    why: 'Logs of both hosts are only comparable with synchronized clocks.',
    fix: 'Enable and run an NTP client (chrony) on every host.',
  },
];
