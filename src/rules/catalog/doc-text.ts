/**
 * The prose of docs/RULES.md around the rule records: what rules, findings, severities and scopes are, and the
 * acceptance table of `lint` on the tutorial. Markdown, one element per line; `npm run docs:rules` assembles
 * the document from these and the records.
 */

/** Under the title: what the catalog is. */
export const RULES_DOC_LEAD: readonly string[] = [
  '`lint`, `doctor` and the live stage checks report findings by the rule ids below. Each rule has one',
  'implementation, shared by all three.',
];

/** §1: rules, findings, severities, scopes, records and terms. */
export const RULES_DOC_DEFINITIONS: readonly string[] = [
  '## 1. Rules and findings',
  '',
  'A **rule** is a machine-checkable condition, with:',
  '',
  '- **Id.** `Rnn` covers configuration, host and pair rules; `Dnn` covers reading diagnostic output. Ids are',
  '  stable: never renumbered, never reused. A retired rule stays listed as *retired*; new rules take the next',
  '  free number.',
  '- **Severity.**',
  '  - `blocker`: will fail or hang (init error, no connectivity, wrong results).',
  '  - `high`: runs, but silently loses much performance, or exposes the hosts.',
  '  - `medium`: a measurable loss, or a risk that needs a trigger.',
  '  - `low`: hygiene: noise, deprecated syntax, settings that do nothing.',
  '  - `info`: worth knowing.',
  '',
  '  *Graded* rules set it per sub-condition; the finding carries the one that applied.',
  '- **Scope.**',
  '  - `cfg`: static check of supplied files or commands (nccl.conf, netplan YAML, scripts, units, `ray`/`vllm`',
  '    command lines, Python launchers).',
  '  - `host`: read-only live probe of one host.',
  '  - `pair`: compares hosts. With N hosts, each host is compared with the reference host (the Ray head, else',
  '    the first host), and every host that differs is named.',
  '  - `output`: reads a diagnostic output (kinds in docs/DOCTOR.md). Live checks reuse the parsers, so every D rule',
  '    also runs live.',
  '',
  '  A multi-scope rule says which part applies where.',
  '',
  '- **Record.** Each rule below gives *Detect* (the condition), *Evidence* (what a finding shows, where the',
  '  spec prescribes it), *Why* (the reasoning with its source: upstream documentation, an issue, a commit or',
  '  a measurement; for D rules the causes, ranked) and *Fix* (the action, or the next probe).',
  '- **Status.** A rule is implemented, *retired* (kept listed, never reused) or *not implemented* yet.',
  '',
  'A **finding** is `{rule, severity, title, host?, source, evidence, fix}`, as in `doctor --json`.',
  '',
  '- **Evidence** is the exact triggering lines or values, verbatim (control characters stripped), with their',
  '  origin: file:line, command@host, or output kind. Pair findings show the hosts side by side; derived values',
  '  show the arithmetic, e.g. `NCCL_IB_TC=106 → DSCP 26 → prio 3; ens1f1: PFC enabled 0 0 0 0 0 0 0 0`.',
  '- **Fix** is a concrete action with real names filled in: the corrected line, or a command and the host to',
  '  run it on. If the fix is a probe, it says which result separates the causes.',
  '',
  'Rules never infer from missing data. A rule part whose facts the mode lacks stays silent, and `lint` lists',
  'it as "not checked (needs host)". Version-dependent conditions take the version from the facts; if it is',
  'unknown, they assume the current release and say so. When two rules see one cause, both fire and refer to',
  'each other.',
  '',
  'Terms:',
  '- G = GPUs per node (8); N = nodes.',
  '- *Cluster ports*: the four ConnectX-4 Lx 25GbE PFs per host.',
  '- *Design A*: one IPv4 subnet per back-to-back cable, with no bond on RDMA ports.',
  '- *Design B*: one RoCE-LAG bond per dual-port NIC.',
  '- The RoCE class is `NCCL_IB_TC=106` (DSCP 26, prio 3); `doctor` assumes it unless told otherwise.',
];

/** §3, before the D rules: how to read them. */
export const OUTPUT_RULES_LEAD: readonly string[] = [
  'Scope `output`; every D rule also runs live. *Detect* names the docs/DOCTOR.md kinds and the literal strings,',
  'matched case-insensitively and whitespace-tolerantly; every wording variant listed must match. *Why* ranks',
  'the causes from most to least likely. *Fix* is the fix or the next probe.',
];

/** §4: what `lint` must and must not raise on the tutorial's own files. */
export const RULES_DOC_ACCEPTANCE: readonly string[] = [
  "## 4. Acceptance: `lint` on the tutorial's own files",
  '',
  'l20-setup replaces the tutorial 《从零构建L20 GPU集群：Ubuntu 22.04下的RoCE v2实战指南》. One `lint` run over all its files',
  '(each file a separate input, so cross-file facts such as `NCCL_SOCKET_IFNAME=bond0` are known) must raise at',
  'least these findings. Prose advice is fed in as the command it implies (`ufw disable`). *live* marks rules',
  'that the stage checks add from host data.',
  '',
  '| # | Tutorial item (file) | Mistake | Must fire |',
  '|---|---|---|---|',
  '| T01 | `02-bond-roce.yaml`: bond0 = ens1f0, ens1f1, ens2f0, ens2f1 with the RDMA/NCCL address | 4 ' +
    'slaves on 2 NICs: no RoCE LAG | R16 blocker; live R17 |',
  '| T02 | same: `lacp-rate: fast` with `mode: balance-xor` | ignored outside 802.3ad | R18 medium |',
  '| T03 | same, applied with netplan (bond `parameters`) | `netplan try` refuses; no rollback | R22 high |',
  '| T04 | `01-netcfg.yaml`: `gateway4: 10.0.0.254` | deprecated | R21 low |',
  '| T05 | `ufw disable` / "open UDP 4791" | exposes Ray; 4791 inert | R48 medium |',
  '| T06 | `wget …MLNX_OFED-23.10-1.1.8.0…` | unpublished; MLNX_OFED end-of-line | R30 high |',
  '| T07 | `mlnxofedinstall --with-neohost-backend --with-nvmf --enable-gds --add-kernel-support` | ' +
    'unneeded flags | R31 low |',
  '| T08 | `NCCL_IB_HCA=mlx5_0:1,mlx5_0:2,mlx5_1:1,mlx5_1:2`; "ibstat shows mlx5_0, mlx5_1" | `:2` ' +
    'never matches; 2 of 4 ports | R06 high (live: blocker if names absent); live R07 |',
  '| T09 | `mlnx_qos -i bond0 --trust dscp` / `--pfc …` | no DCB on a bond; exit 1 | R25 blocker |',
  '| T10 | QoS script without a unit | lost at reboot | R27 high |',
  '| T11 | `apt install nvidia-driver-535` + `cuda_12.3.2_545.23.08_linux.run --silent --driver ' +
    '--toolkit` | two methods, two branches | R32 blocker |',
  '| T12 | "535 driver + CUDA 12.3" | R535 EOL; 545 a feature branch | R33 high |',
  '| T13 | `NCCL_DEBUG=INFO`, `NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,COLL` | debug in production | R11 high |',
  '| T14 | `NCCL_IB_GID_INDEX=3` | not to be set (≥ 2.21) | R05 high |',
  '| T15 | `NCCL_IB_CUDA_SUPPORT=1` | removed in 2.4.0 | R03 high |',
  '| T16 | `NCCL_NET_GDR_LEVEL=5` | = SYS: GDR across the CPU | R04 high |',
  '| T17 | `NCCL_ALGO=COLLNET_CHAIN` | init fails (≥ 2.24); no CollNet on RoCE | R01 blocker, R02 high |',
  '| T18 | `NCCL_BUFFSIZE=4194304` | the default | R10 low |',
  '| T19 | `ray start --head --port=6379 --num-gpus=8 --dashboard-host=0.0.0.0`; worker `ray start ' +
    '--address=…` | no `--node-ip-address`; open dashboard | R45 high, R46 high |',
  '| T20 | `pip install vllm transformers sentencepiece` | unpinned, system Python | R47 medium |',
  '| T21 | `start_vllm.sh`: `source /etc/nccl.conf` | nothing exported | R13 high |',
  '| T22 | `start_vllm.sh`: `--model deepseek-ai/deepseek-v3-8b` | no such model | R41 blocker |',
  '| T23 | `start_vllm.sh`: `--tensor-parallel-size 16` | TP across nodes | R42 high |',
  '| T24 | `start_vllm.sh`: `--engine-use-ray`, `--ray-address auto` | removed / never existed | R40 blocker |',
  '| T25 | `start_vllm.sh`: `--host 0.0.0.0`, no `--api-key` | open API | R46 high |',
  '| T26 | performance table (1,200 → 2,300 tok/s, TTFT 85 → 92 ms, 32 → 64 concurrent) | no workload; ' +
    'no such model | R50 medium |',
  '| T27 | `inference_test.py`: `LLM(model="deepseek-ai/deepseek-v3-8b", tensor_parallel_size=16)` | ' +
    'same model and layout | R41 blocker, R42 high |',
  '| T28 | monitoring with `iftop` | blind to RoCE | R49 low |',
  '',
  'These rules must **not** fire on the same files (false-positive guards):',
  '- R08: TC 106 → DSCP 26 → prio 3 matches PFC `0,0,0,1,0,0,0,0`.',
  '- R09: SL 3 under trust dscp.',
  '- R19: layer3+4 with balance-xor.',
  '- R20: 100 ms.',
  '- R24: MTU 9000 everywhere.',
  '- R12: well-formed conf lines.',
  '- R44: FP8 on CC 8.9.',
];
