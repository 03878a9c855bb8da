/** NCCL configuration rules (R01–R15): nccl.conf, NCCL_* variables and how they reach every rank. */
import type { RuleRecord } from './schema.js';

export const NCCL_RULES: readonly RuleRecord[] = [
  {
    id: 'R01',
    family: 'nccl',
    title: 'NCCL_ALGO / NCCL_PROTO must parse',
    severity: 'blocker',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      "The value fails NCCL's grammar (≥ 2.24): `;`-separated `[func:]list` entries, `func` optional " +
      'only on the first; func ∈ {broadcast, reduce, allgather, reducescatter, allreduce}; the list is ' +
      'comma-separated, optionally led by `^`, case-insensitive. Algorithms: ring, tree, collnetdirect ' +
      'and collnetchain (2.14+), nvls (2.17+), nvlstree (2.18+), pat (2.23+); `collnet` only ≤ 2.13. ' +
      'Protocols: ll, ll128, simple. Tokens newer than the installed NCCL fail too.',
    evidence:
      'The token, and the message NCCL will print: `Unrecognized element token "COLLNET_CHAIN" when ' +
      'parsing "COLLNET_CHAIN"`.',
    why:
      'Since 2.24 a bad token returns `ncclInvalidUsage` and every communicator init fails, for every ' +
      'user of the host when it sits in /etc/nccl.conf; up to 2.23 it was ignored. NCCL env docs; ' +
      'NVIDIA/nccl#1219 ("You should not be setting NCCL_ALGO").',
    fix: 'Delete the variable.',
  },
  {
    id: 'R02',
    family: 'nccl',
    title: 'CollNet without SHARP',
    severity: 'high',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'The algorithms include collnetdirect or collnetchain (also `COLLNET_CHAIN` once `_` is dropped) ' +
      'and `NCCL_COLLNET_ENABLE=1`, an InfiniBand link layer or a loaded collnet plugin is missing; ' +
      'back-to-back RoCE never has them.',
    why:
      'Since 2.24 NCCL does not fall back to ring, so a collective with no allowed algorithm fails: `No ' +
      'algorithm/protocol available for function AllReduce with datatype … NCCL_ALGO was set to …` ' +
      '(older: `Error : no algorithm/protocol available`; NVIDIA/nccl#653).',
    fix: 'Remove NCCL_ALGO.',
  },
  {
    id: 'R03',
    family: 'nccl',
    title: 'Removed or renamed NCCL variables',
    severity: 'high',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'NCCL_IB_CUDA_SUPPORT (removed in 2.4.0), NCCL_IB_GDR_LEVEL (renamed NCCL_NET_GDR_LEVEL in ' +
      '2.4.0), NCCL_SINGLE_RING_THRESHOLD (removed in 2.3), NCCL_LL_THRESHOLD or NCCL_TREE_THRESHOLD ' +
      '(removed in 2.5) is set.',
    why:
      'NCCL never warns about unknown variables, so the setting silently does nothing while the file ' +
      'suggests it is in force.',
    fix: 'Delete it, or use the replacement.',
  },
  {
    id: 'R04',
    family: 'nccl',
    title: 'GDR and P2P levels',
    severity: 'high',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect: 'NCCL_NET_GDR_LEVEL or NCCL_P2P_LEVEL is an integer (legacy), or above PXB.',
    evidence: 'GPU↔NIC distances (`nvidia-smi topo -m`).',
    why:
      'The GDR integers are 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS, and anything above 4 is SYS. So `5` ' +
      'forces GDR across the CPU interconnect, often slower than host staging.',
    fix: 'Unset it (default PXB); a wider level only with a measured nccl-tests gain, as a string.',
  },
  {
    id: 'R05',
    family: 'nccl',
    title: 'NCCL_IB_GID_INDEX',
    severity: 'high',
    graded: true,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'cfg: it is set and NCCL is ≥ 2.21, or the version is unknown. The default −1 auto-selects a RoCE ' +
      'v2 GID of `NCCL_IB_ADDR_FAMILY` (AF_INET).\n' +
      'host: on some host, the GID at `<idx>` of some HCA has type ≠ `RoCE v2` ' +
      '(`gid_attrs/types/<idx>`), or is not `0000:0000:0000:0000:0000:ffff:<ipv4>` in the NCCL subnet → ' +
      '`blocker`. Expect `Call to ibv_modify_qp failed with 22 Invalid argument` or completion error ' +
      '12.',
    why:
      'NCCL troubleshooting: from 2.21 it "should not be set". Index 3 is v2/IPv4 only with exactly one ' +
      'link-local IPv6 and one IPv4 address; bonds, VLANs and extra addresses shift it.',
    fix: 'Delete it (pin with `NCCL_IB_ADDR_RANGE=<cidr>` if needed).',
  },
  {
    id: 'R06',
    family: 'nccl',
    title: 'Every NCCL_IB_HCA token must resolve',
    severity: 'blocker',
    graded: true,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'Syntax: optional `^` (exclude), optional `=` (exact; else prefix), then comma-separated ' +
      '`<hca>[:<port>[:<rail>[:<plane>]]]`. Port ≤ `phys_port_cnt`, which is always 1 on ConnectX-4+ ' +
      'mlx5 devices, `mlx5_bond_N` included.\n' +
      'host:\n' +
      '- nothing resolves → `blocker` (`NET/IB : No device found.`, then TCP: D01);\n' +
      '- fewer devices than the intended rails, or an unmatchable token → `high`;\n' +
      '- unprefixed tokens on a host with ≥ 10 devices → `low` (`mlx5_1` also matches `mlx5_10…19`).\n' +
      'cfg: an `mlx5_*` token with a port ≠ 1 → `high`.',
    evidence: 'The tokens next to `rdma link show`.',
    why:
      'A token that matches nothing is dropped: with no device left NCCL falls back to TCP sockets (D01), ' +
      'with fewer it runs on fewer rails. A port ≠ 1 never exists on mlx5, and an unprefixed token also ' +
      'matches longer names.',
    fix:
      'Generate it per host from `rdma link` (`NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1`) or ' +
      'unset it; design B: `==mlx5_bond_0,mlx5_bond_1` plus `NCCL_IB_QPS_PER_CONNECTION=2` (one QP uses ' +
      'one LAG port; NVIDIA/nccl#1015).',
  },
  {
    id: 'R07',
    family: 'nccl',
    title: 'RDMA names must exist on every host',
    severity: 'high',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect: 'A configured RDMA device is missing on some host.',
    evidence:
      'Per host, the map netdev → RDMA device → BDF → NUMA node. Names depend on the stack: `mlx5_N`; ' +
      '`rocep<bus>s<slot>f<fn>` / `roceP<domain>p…` (rdma-core udev NAME_FALLBACK); `mlx5_bond_N` ' +
      '(LAG).',
    why:
      'NCCL settings travel between nodes (R13), so a name valid on one host is used on the other; device ' +
      'names differ by NIC stack, and a missing one leaves that host without its rails (R06).',
    fix: 'One stack on all hosts, or forms that match everywhere.',
  },
  {
    id: 'R08',
    family: 'nccl',
    title: 'TC → DSCP → priority → PFC closes on every host',
    severity: 'high',
    graded: false,
    scope: ['pair'],
    status: 'implemented',
    detect:
      'Derivation: DSCP = TC >> 2; ECN = TC & 3; prio = dscp2prio[DSCP], by default DSCP >> 3. So 106 → ' +
      'DSCP 26, ECN 2 (ECT(0)) → prio 3. NCCL_IB_FIFO_TC inherits NCCL_IB_TC. The GRH traffic class is ' +
      'the IPv4 TOS byte.\n' +
      'Fires when, on any RoCE PF of any host, trust ≠ dscp, or PFC is off on that prio, or ECN = 3.',
    evidence: '`mlnx_qos -i <pf>` (or `dcb app/pfc show`) from both hosts, with the arithmetic.',
    why:
      'RoCE needs a lossless class end to end. With NCCL_IB_TC unset, traffic goes to prio 0, ' +
      'unprotected by PFC on 3; a broken link anywhere in the chain on any port leaves that path lossy.',
    fix: '`NCCL_IB_TC=106` and PFC on prio 3 on every PF (R26, R27); perftest needs `--tclass=106`.',
  },
  {
    id: 'R09',
    family: 'nccl',
    title: 'NCCL_IB_SL',
    severity: 'low',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'The trust mode (from the supplied QoS script, or live from mlnx_qos) is PCP and (SL & 7) ≠ the ' +
      'PFC prio. Under DSCP trust the SL is inert and the rule stays silent.',
    why: 'The SL selects the class only under PCP trust (VLAN-tagged RoCE), where the priority is SL & 7.',
    fix: 'Set `NCCL_IB_SL` to the PFC prio, or move to DSCP trust (R08).',
  },
  {
    id: 'R10',
    family: 'nccl',
    title: 'Defaults restated',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'NCCL_BUFFSIZE=4194304, NCCL_IB_TIMEOUT=20, NCCL_IB_RETRY_CNT=7, NCCL_CROSS_NIC=2 or ' +
      'NCCL_IB_GID_INDEX=-1 is set.',
    why: 'These are the defaults: setting them pins behaviour across upgrades for nothing.',
    fix: 'Delete.',
  },
  {
    id: 'R11',
    family: 'nccl',
    title: 'Debug variables in system configuration',
    severity: 'high',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'NCCL_DEBUG is INFO or TRACE, or NCCL_DEBUG_SUBSYS contains COLL, CALL or ALL, in nccl.conf, a ' +
      'unit, a start script or a Ray runtime env.',
    why:
      'NCCL docs: "should not be used in production nor retained in scripts". COLL logs every ' +
      'collective, and TP runs 2 per layer per step.',
    fix: 'Delete; for bring-up, pass `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET` on the command line.',
  },
  {
    id: 'R12',
    family: 'nccl',
    title: 'nccl.conf syntax and parity',
    severity: 'medium',
    graded: false,
    scope: ['cfg', 'pair'],
    status: 'implemented',
    detect:
      'A line does not match `^[A-Z][A-Z0-9_]*=\\S(.*\\S)?$`, or has quotes or `#` after the value; or ' +
      '(pair) the files differ between hosts.\n' +
      'Note: precedence is env > `$NCCL_CONF_FILE` (2.23+) or `~/.nccl.conf` > `/etc/nccl.conf`, ' +
      'applied via setenv(…, 0). Show which source won.',
    why:
      'NCCL skips lines with `#` in column 0 and lines without `=`. The name is the text before the ' +
      'first `=`; the value is the rest, verbatim. So spaces, quotes and inline `# …` become part of the ' +
      'name or value, and `export NCCL_X=1` defines a variable named `export NCCL_X`.',
    fix: 'The corrected line; identical files everywhere.',
  },
  {
    id: 'R13',
    family: 'nccl',
    title: 'Sourced nccl.conf, exported NCCL variables',
    severity: 'high',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'Either:\n' +
      '- `source` or `.` of a KEY=VALUE file without `set -a`;\n' +
      '- `NCCL_*` is exported (`export`, `set -a`, `mpirun -x`, Ray `runtime_env`) where vLLM starts ' +
      'with Ray.',
    why:
      'A sourced KEY=VALUE file exports nothing, so the line misleads (NCCL reads /etc/nccl.conf ' +
      'itself). vLLM copies every `NCCL_*` (and `VLLM_*`, `UCX_*`, `HF_*`) variable to all Ray workers, ' +
      "so host-specific names override the other node's config.",
    fix:
      "Drop the line; keep node-specific values in each host's /etc/nccl.conf, names identical across " +
      'hosts (R07).',
  },
  {
    id: 'R14',
    family: 'nccl',
    title: 'NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME',
    severity: 'high',
    graded: true,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      "host: a host selects no UP interface with IPv4, or the hosts' addresses span several subnets.\n" +
      'cfg:\n' +
      '- the interface is absent from the supplied netplan (`bond0` under design A) → `high`;\n' +
      '- it is the management (default-route) interface while a cluster network exists → `medium`;\n' +
      '- an NCCL value lacks `=` → `low`.',
    why:
      'The interface carries NCCL bootstrap and Gloo traffic: one that does not exist stops init ' +
      '(D06), the management one puts cluster traffic on the wrong network. The NCCL value is a prefix, ' +
      'so `bond0` also matches `bond0.100`.',
    fix:
      '`NCCL_SOCKET_IFNAME==ens1f0` (design A) or `==bond0` (design B), and ' +
      '`GLOO_SOCKET_IFNAME=ens1f0`. Gloo has no `=` syntax.',
  },
  {
    id: 'R15',
    family: 'nccl',
    title: 'NCCL_CROSS_NIC with per-cable subnets',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: 'Design A is used with NCCL_CROSS_NIC ≠ 0.',
    why:
      'The default 2 may pair NIC i with NIC j ≠ i on the peer, and no L2 path joins them. It is ' +
      "NCCL's own hint after `ibv_modify_qp … 110 Connection timed out`.",
    fix: '`NCCL_CROSS_NIC=0`, with same-named ports cabled together (R17 map).',
  },
];
