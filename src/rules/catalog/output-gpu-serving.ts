/** Diagnostic-output rules for GPUs, their driver and clocks, and Ray / vLLM serving. */
import type { RuleRecord } from './schema.js';

export const GPU_SERVING_OUTPUT_RULES: readonly RuleRecord[] = [
  {
    id: 'D13',
    family: 'output',
    title: 'NVIDIA driver not usable',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nvidia-smi`, dmesg:\n' +
      "- `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that " +
      'the latest NVIDIA driver is installed and running.`;\n' +
      '- `No devices were found`;\n' +
      '- `Failed to initialize NVML: Driver/library version mismatch`;\n' +
      '- `NVRM: No NVIDIA graphics adapter probed!`.',
    why:
      'Causes, most likely first:\n' +
      '1. A driver upgrade without a reboot (unattended-upgrades).\n' +
      '2. No DKMS build for the running kernel.\n' +
      '3. nouveau, or Secure Boot rejecting the module.\n' +
      '4. Mixed install methods (R32).\n' +
      '5. A GPU off the bus (D21).',
    fix:
      '`/proc/driver/nvidia/version`, `dkms status`, `mokutil --sb-state`, `dmesg | grep NVRM`. Reboot ' +
      'after upgrades, and hold the driver packages on both nodes.',
  },
  {
    id: 'D14',
    family: 'output',
    title: 'nvidia-peermem not loaded',
    severity: 'info',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `lsmod`, full or grepped for nvidia/peer: neither `nvidia_peermem` nor `nv_peer_mem`. A ' +
      'grep for another pattern proves nothing; `Used by 0` is normal.',
    why:
      'Fine with DMA-BUF; needed only on the peermem path. `modprobe` failing with `Invalid argument` ' +
      'plus `Unknown symbol ib_register_peer_memory_client` means an inbox `ib_core`.',
    fix: 'R34 decides.',
  },
  {
    id: 'D16',
    family: 'output',
    title: 'vLLM launch or configuration error',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `vllm-log`:\n' +
      '- `World size (<n>) is larger than the number of available GPUs (<m>) in this node`;\n' +
      '- `local_world_size (<n>) must be less than or equal to the number of visible devices (<m>)`;\n' +
      '- `The number of required GPUs exceeds the total number of available GPUs in the placement ' +
      'group` (or `… in the cluster`);\n' +
      '- `Tensor parallel size (<n>) exceeds available GPUs (<m>)`;\n' +
      '- a repeated `Waiting for creating a placement group of specs for …`;\n' +
      '- `error: unrecognized arguments: …`.',
    why:
      'Causes, most likely first:\n' +
      '1. TP × PP exceeds one node under the `mp` backend without `--nnodes`.\n' +
      '2. vLLM started its own Ray (`Started a local Ray instance`); set `RAY_ADDRESS`.\n' +
      '3. The Ray cluster lacks nodes or GPUs (D24, R45).\n' +
      '4. A removed flag (R40).\n' +
      '5. CUDA_VISIBLE_DEVICES.',
    fix: '`ray status`; lint the command (R40, R42).',
  },
  {
    id: 'D18',
    family: 'output',
    title: 'DCGM diagnostic failure',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      "From `dcgmi-diag`: a row or `GPUn:` sub-row with `Fail`. Join the next `Error` row's wrapped " +
      'text by plain concatenation (DCGM wraps mid-word). `Skip` and `Warn` do not fire; if everything ' +
      'is `Skip`, the tests did not run.',
    why:
      'Causes by test:\n' +
      '- Persistence Mode: persistence off (`nvidia-smi -pm 1`);\n' +
      '- pcie: R38, R36;\n' +
      '- memory, diagnostic, stress: hardware;\n' +
      '- Denylist, NVML, CUDA library: the driver install (D13, R32).',
    fix: 'Fix, then `dcgmi diag -r 3`.',
  },
  {
    id: 'D21',
    family: 'output',
    title: 'GPU reporting errors',
    severity: 'blocker',
    graded: true,
    scope: ['output'],
    status: 'implemented',
    detect:
      'Any of:\n' +
      '- `nvidia-smi`: `ERR!` in a GPU row (`high` if only the Fan field); `Unable to determine the ' +
      'device handle for GPU <bdf>: Unknown Error`; `GPU has fallen off the bus`; `Volatile Uncorr. ' +
      'ECC` > 0;\n' +
      '- `nvidia-smi -q`: volatile `DRAM Uncorrectable` or `SRAM Uncorrectable…` > 0, Remapped Rows ' +
      '`Pending: Yes`, or `Remapping Failure Occurred: Yes`;\n' +
      '- dmesg: `NVRM: Xid` 48, 64, 79, 94 or 95;\n' +
      '- `lspci`: the GPU at `(rev ff)`.',
    why:
      'Causes, most likely first:\n' +
      '1. A PCIe, riser or power fault.\n' +
      '2. A memory ECC fault.\n' +
      '3. A driver hang.',
    fix:
      'Drain the node; `nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER`; reset the GPU (pending ' +
      'remaps apply at reset); `dcgmi diag -r 3`; RMA if it recurs.',
  },
  {
    id: 'D23',
    family: 'output',
    title: 'MIG enabled on a GPU meant for vLLM tensor parallelism',
    severity: 'medium',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      '- `nvidia-smi`: `MIG M.` reads `Enabled`, or a `MIG devices:` table is present;\n' +
      '- `nvidia-smi -q`: `MIG Mode` → `Current : Enabled`;\n' +
      '- CSV: `mig.mode.current` = Enabled.\n' +
      'The L20 reports `N/A`.',
    why:
      'The cause is earlier partitioning: CUDA exposes one MIG instance per process, so TP cannot span ' + 'instances.',
    fix: '`nvidia-smi -i <n> -mig 0`, then reset the GPU.',
  },
  {
    id: 'D24',
    family: 'output',
    title: 'Ray cluster smaller than the inventory expects',
    severity: 'high',
    graded: false,
    severityNote: 'doctor: only with an expectation',
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `ray-status`: fewer `Active:` node lines, or fewer GPUs in `<used>/<total> GPU`, than the ' +
      'inventory (2 nodes, 16.0 GPU); or any `Pending:` or `Recent failures:` entry.',
    why:
      'Causes, most likely first:\n' +
      '1. The worker never joined, or joined a wrong address.\n' +
      '2. It registered a management IP (R45).\n' +
      '3. The firewall blocks Ray (R48).\n' +
      '4. Ray or Python versions differ (R47).\n' +
      '5. The worker has no GPUs (D13, `--num-gpus=0`).',
    fix: "`ray list nodes`, and the worker's `ray start` output.",
  },
  {
    id: 'D26',
    family: 'output',
    title: 'GPU clocks held down',
    severity: 'high',
    graded: true,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nvidia-smi -q`, `--query-gpu` CSV and the live monitor: an *Active* clock event reason ' +
      '(`Clocks Event Reasons`; before driver 535 `Clocks Throttle Reasons`; the ' +
      '`clocks_event_reasons.active` bits).\n' +
      '- HW or SW Thermal Slowdown, HW Slowdown or HW Power Brake Slowdown → `high`;\n' +
      '- SW Power Cap alone → `medium`;\n' +
      '- Idle, Applications Clocks, Sync Boost and Display Clock → no finding.\n' +
      'Doctor and the monitor share one reading (`src/parse/clock-events.ts`), so a live alert and a ' +
      'doctor finding agree on every reason.',
    why:
      'Thermal reasons mean the cooling cannot keep up; HW Slowdown and HW Power Brake point at the ' +
      "power supplies, cabling or the board's power brake. SW Power Cap alone means the GPU runs at its " +
      'power limit: expected at full load, a loss if the limit was lowered.',
    fix: 'Cooling; power supplies and cables; `nvidia-smi -q -d POWER` (restore a lowered limit).',
  },
];
