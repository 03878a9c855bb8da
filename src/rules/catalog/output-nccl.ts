/** Diagnostic-output rules for NCCL logs and nccl-tests (doctor kinds `nccl-log`, `nccl-tests`, `vllm-log`). */
import type { RuleRecord } from './schema.js';

export const NCCL_OUTPUT_RULES: readonly RuleRecord[] = [
  {
    id: 'D01',
    family: 'output',
    title: 'NCCL used TCP sockets instead of RDMA',
    severity: 'high',
    graded: true,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`: `NET/IB : No device found.`, `Failed to initialize NET plugin IB`, `Using ' +
      'network Socket`, `NET/Socket : Using [0]<if>`, or `via NET/Socket/<n>` channels.\n' +
      'Severity:\n' +
      '- `high` when the job spans nodes: `nNodes` > 1, two or more hostnames, or a `via NET/Socket` ' +
      'channel;\n' +
      '- `info` for a one-node log without NET channels, because NCCL picks a network even when unused.',
    why:
      'Causes, most likely first:\n' +
      '1. NCCL_IB_HCA matches nothing (R06).\n' +
      '2. A container without `/dev/infiniband`, IPC_LOCK and memlock.\n' +
      '3. libibverbs, `ib_uverbs` or `mlx5_ib` missing.\n' +
      '4. `NCCL_NET=Socket` or `NCCL_IB_DISABLE=1`.\n' +
      '5. Ports down (D08).',
    fix:
      "Run `rdma link show` in the job's environment. Success looks like `NET/IB : Using " +
      '[0]mlx5_0:1/RoCE …` with `via NET/IB/<n>` channels.',
  },
  {
    id: 'D02',
    family: 'output',
    title: 'GPUDirect RDMA disabled for an HCA',
    severity: 'medium',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      "From `nccl-log`: `NET/IB : GPU Direct RDMA Disabled for HCA <n> '<dev>'` (older: with `(no " +
      'module)` appended). `via NET/IB/<n>` channels without `/GDRDMA` corroborate. `NET/Socket : GPU ' +
      'Direct RDMA Disabled…` does not count (D01).',
    why:
      'Causes, most likely first:\n' +
      '1. No DMA-BUF: a proprietary module, or NCCL_DMABUF_ENABLE=0.\n' +
      '2. No nvidia_peermem.\n' +
      '3. peermem on an inbox `ib_core`.\n' +
      '4. rdma-core without dmabuf (`ibv_reg_dmabuf_mr failed … Operation not supported`).',
    fix: 'R34. Host staging is acceptable at 25GbE.',
  },
  {
    id: 'D03',
    family: 'output',
    title: 'NCCL rejected its configuration',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`, `vllm-log`:\n' +
      '- `Unrecognized element token "<t>" when parsing "<s>"`, `Unrecognized prefix token`, `All ' +
      'entries except the first must have a prefix`;\n' +
      '- `No algorithm/protocol available for function …` (older: `Error : no algorithm/protocol ' +
      'available`);\n' +
      '- `invalid usage (run with NCCL_DEBUG=WARN for details)`.',
    why:
      'Causes, most likely first:\n' +
      '1. A bad NCCL_ALGO or NCCL_PROTO (R01), often in /etc/nccl.conf, which breaks every job on the ' +
      'host.\n' +
      '2. Forced CollNet (R02).\n' +
      '3. Other misuse (two ranks on one GPU).',
    fix: 'Read the value from `NCCL_ALGO set by environment to …`, delete it, and lint the conf.',
  },
  {
    id: 'D04',
    family: 'output',
    title: 'RDMA completion error',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`, in any of these formats:\n' +
      '- ≤ 2.19: `NET/IB : Got completion from peer <ip><port> with error 12, opcode 0, len 0, vendor ' +
      'err 129 (Recv)`;\n' +
      '- later 2.2x: `… with status=12 opcode=… len=… vendor err 129 (Recv) localGid … remoteGids … hca ' +
      'mlx5_1`;\n' +
      '- current: `NET/IB: Got completion from peer <ip> with status=IBV_WC_RETRY_EXC_ERR(12) … ' +
      'vendor_err=129 … hca mlx5_1`.\n' +
      'Status codes:\n' +
      '- 12: transport retry counter exceeded (no ACK from the peer);\n' +
      '- 13: RNR retry exceeded;\n' +
      '- 4: local protection error (NCCL hints ACS with GDR);\n' +
      '- 5: flushed. This is secondary: report the earliest error;\n' +
      '- 1: local length error (MTU mismatch, R24).',
    why:
      'Causes of 12:\n' +
      '1. A GID mismatch from a forced NCCL_IB_GID_INDEX (R05; NVIDIA/nccl#426, #769).\n' +
      '2. No path for the QP: cross-NIC under design A, or the 4-port bond (R15, R16).\n' +
      '3. The peer died; its log holds the first error.\n' +
      '4. A port flap changed the GIDs (D08; NVIDIA/nccl#2157).\n' +
      '5. A lossy path (D11, D12).',
    fix:
      '`ib_write_bw` on the same HCA pair with the same `-x` and `--tclass=106`; compare `show_gids` on ' +
      'both hosts.',
  },
  {
    id: 'D05',
    family: 'output',
    title: 'ibv_modify_qp failed',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`: `Call to ibv_modify_qp failed with error Network is unreachable` (older), or ' +
      '`Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_x:1, curr state INIT, ' +
      'next state RTR, local GID index 3, …`. A `… retrying 1/N` INFO line alone does not count.',
    why:
      'Causes by errno:\n' +
      "- 101 `Network is unreachable`: no route from this port to the remote GID's IP (a cross-subnet " +
      'QP; R15);\n' +
      '- 110 `Connection timed out`: neighbour resolution failed (cabling, peer port down, cross-rail); ' +
      'NCCL hints NCCL_CROSS_NIC=0;\n' +
      '- 22 `Invalid argument`: a forced GID index of the wrong type (R05); NCCL hints ' +
      'NCCL_IB_GID_INDEX=-1.',
    fix: 'The R17 pings; `show_gids` on both hosts.',
  },
  {
    id: 'D06',
    family: 'output',
    title: 'NCCL bootstrap found no socket interface',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`: `Bootstrap : no socket interface found`; also `NET/Socket : No usable listening ' +
      'interface found` and `NET/Socket : no interface found`.',
    why:
      'Causes, most likely first:\n' +
      '1. NCCL_SOCKET_IFNAME selects no UP interface with an address (e.g. `bond0` after design A).\n' +
      '2. A NCCL_SOCKET_FAMILY mismatch.\n' +
      '3. A container without host networking (NCCL skips `lo` and `docker*`).',
    fix: '`ip -br addr` per host; R14.',
  },
  {
    id: 'D07',
    family: 'output',
    title: 'Collective timeout / watchdog',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`, `vllm-log`, torch: `Watchdog caught collective operation timeout: ' +
      'WorkNCCL(SeqNum=…, OpType=…, … Timeout(ms)=…) ran for … milliseconds before timing out`, or ' +
      '`Exception (either an error or timeout) detected by watchdog`.',
    why:
      'Causes, most likely first:\n' +
      '1. Another rank died or stalled (an earlier D04, D05 or D17 here or on the peer).\n' +
      '2. A network hang: cross-NIC (R15, R16), or GDR through ACS (R36).\n' +
      '3. SeqNum or OpType differs across ranks (an application bug).\n' +
      '4. The timeout is shorter than a long first operation.',
    fix: "Both hosts' logs with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET`; nccl-tests across the nodes.",
  },
  {
    id: 'D15',
    family: 'output',
    title: 'nccl-tests reported wrong results',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-tests`: a non-zero `#wrong` in any row, or `# Out of bounds values : <n> FAILED`. The ' +
      "old format's `error` column is a max abs error, where small float values are normal; trust the " +
      'footer. `#wrong` `N/A` (`-c 0`) is reported as "not validated".',
    why:
      'Causes, most likely first:\n' +
      '1. GDR or P2P through ACS or IOMMU (R36).\n' +
      '2. `NCCL_PROTO=LL128` forced.\n' +
      '3. A faulty GPU (D21, D18).\n' +
      '4. Mixed NCCL versions (R47).',
    fix:
      'Run on one node; then across nodes with `NCCL_NET_GDR_LEVEL=LOC`; then with ' +
      '`NCCL_P2P_DISABLE=1`. The first clean run isolates the path. Then `dcgmi diag -r 3`.',
  },
  {
    id: 'D17',
    family: 'output',
    title: 'NCCL unhandled system or CUDA error during init',
    severity: 'blocker',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `vllm-log`, `nccl-log`: `NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for ' +
      'details)`, `NCCL Error 2: unhandled system error`, `unhandled cuda error`, or `remote process ' +
      'exited or there was a network error`. When the text holds the underlying NCCL `WARN`, that rule ' +
      '(D01, D04, D05, D06) fires as well, and D17 points to it.',
    why:
      'Causes (system error):\n' +
      '1. memlock (`Call to ibv_reg_mr failed with error Cannot allocate memory`; R35);\n' +
      '2. QP setup (D05);\n' +
      '3. a small /dev/shm in a container (`Error while creating shared memory segment`);\n' +
      '4. a firewalled NCCL port range (R48).\n' +
      'Causes (CUDA error):\n' +
      '1. runtime newer than the driver (R33);\n' +
      '2. P2P or IPC (R36, R37);\n' +
      '3. a bad GPU (D21);\n' +
      '4. MIG (D23).',
    fix: 'Rerun with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET`; read the first WARN.',
  },
  {
    id: 'D22',
    family: 'output',
    title: 'NCCL network plugin failed to load; internal transport used',
    severity: 'info',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `nccl-log`: a requested or present plugin failed to load, shown by any of:\n' +
      '- `NET/Plugin : Plugin load (<lib>) returned <errno> : <dlerror>`;\n' +
      '- `NET/Plugin: <lib>: <dlerror>`;\n' +
      '- `Failed to find ncclNetPlugin_v<N> symbol` for every version, with no later `Loaded net ' +
      'plugin`;\n' +
      '- `Failed to initialize NET plugin <name>` where the name is neither IB nor Socket (a failed IB ' +
      'is D01).\n' +
      'It is then followed by `Using network IB` or `Using network Socket`.\n' +
      'Not a finding: a plain `NET/Plugin: Could not find: libnccl-net.so` or `No plugin found ' +
      '(libnccl-net.so), using internal implementation` is the normal state here, unless ' +
      '`NCCL_NET_PLUGIN` was set. A lone `Failed to find ncclCollNetPlugin_v<N>` is also normal.',
    why:
      'Causes, most likely first:\n' +
      '1. The image ships a plugin for another fabric or NCCL (HPC-X SHARP, aws-ofi-nccl).\n' +
      '2. Its dependencies are missing.\n' +
      '3. NCCL_NET_PLUGIN names a library that is not on the loader path.',
    fix: 'Internal IB is the right transport here: set `NCCL_NET_PLUGIN=none`. A fallback to Socket is ' + 'D01.',
  },
];
