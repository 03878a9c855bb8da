/** Diagnostic-output rules for the fabric: RDMA ports, links, bonds, QoS, counters, GIDs, bandwidth, NIC stack. */
import type { RuleRecord } from './schema.js';

export const FABRIC_OUTPUT_RULES: readonly RuleRecord[] = [
  {
    id: 'D08',
    family: 'output',
    title: 'RDMA port not active',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      '- `ibstat`: `State:` other than `Active` (`Down`, `Initializing`, `Armed`), or `Physical state:` ' +
      'other than `LinkUp` (`Polling`, `Disabled`);\n' +
      '- `ibstatus`: `state: 1: DOWN`;\n' +
      '- `ibv_devinfo`: `PORT_DOWN (1)`, `PORT_INIT (2)`, `PORT_ARMED (3)`;\n' +
      '- `rdma link`: `state DOWN physical_state DISABLED|POLLING`.\n' +
      'Live checks judge inventory ports only; doctor reports every non-active Ethernet port. Never ' +
      'read the `Rate:` of a down port.',
    why:
      'Causes, most likely first:\n' +
      '1. The netdev is admin-down or missing from netplan (`Disabled`).\n' +
      '2. No carrier: the cable, a wrong port, or the peer is down (`Polling`).\n' +
      '3. A speed, FEC or autoneg mismatch (D09).\n' +
      '4. `Initializing` on an IB port means no subnet manager; it never applies to RoCE.',
    fix: '`ip link set dev <if> up`; `ethtool` on both ends.',
  },
  {
    id: 'D09',
    family: 'output',
    title: 'Ethernet link down or slower than the port supports',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `ethtool`:\n' +
      '- `Link detected: no`, on newer ethtool with a reason: `(Cable issue, Unsupported cable)`, ' +
      '`(Link training failure, Remote side is not ready yet)`;\n' +
      '- `Speed: Unknown!`;\n' +
      '- a `Speed:` below the best `Supported link modes` entry (`10000Mb/s` with `25000baseCR/Full` ' +
      'listed).\n' +
      'An ibstat `Rate:` below 25 on an active port corroborates.',
    why:
      'Causes, most likely first:\n' +
      '1. The cable: a 10G SFP+ DAC, or unsupported optics.\n' +
      '2. Speed or autoneg forced on one end only.\n' +
      '3. An FEC mismatch.\n' +
      '4. The peer port is down.',
    fix: '`ethtool`, `ethtool -m` and `ethtool --show-fec` on both ends; make them match.',
  },
  {
    id: 'D10',
    family: 'output',
    title: 'Bond degraded',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `bonding`, any of:\n' +
      '- a slave `MII Status: down`;\n' +
      '- `bond <name> has no active aggregator`;\n' +
      '- in 802.3ad, `Partner Mac Address: 00:00:00:00:00:00`;\n' +
      '- a slave `Aggregator ID` different from the active one;\n' +
      '- `Number of ports` below the number of slaves that are up;\n' +
      '- `Churn State: churned`;\n' +
      '- no `Slave Interface:` section;\n' +
      '- slaves at unequal `Speed:`.',
    why:
      'Causes, most likely first:\n' +
      '1. Mode mismatch between the ends, or the peer has LACP off.\n' +
      '2. A slave link down (D09).\n' +
      '3. A stale bond (R23).',
    fix: 'Identical bond settings on both ends; for RDMA, design A (R16).',
  },
  {
    id: 'D11',
    family: 'output',
    title: 'Lossless QoS missing on a RoCE port',
    severity: 'medium',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `mlnx_qos`, dcb:\n' +
      '- `PFC configuration … enabled 0 0 0 0 0 0 0 0`, or `prio-pfc` all `off`;\n' +
      '- `Priority trust state: pcp` (no DSCP entries in `dcb app`) while RoCE is DSCP-marked;\n' +
      '- PFC not on dscp2prio[RoCE DSCP] (e.g. PFC 5 while DSCP 26 maps to 3).',
    why:
      'Causes, most likely first:\n' +
      '1. QoS never applied, or lost at a reboot or reload (R27).\n' +
      '2. QoS set on the bond (R25).\n' +
      '3. Firmware DCBX (R28).\n' +
      '4. `--pfc` without `--trust dscp` (the default trust is pcp).',
    fix:
      '`mlnx_qos -i <pf> --trust dscp --pfc 0,0,0,1,0,0,0,0` on every RoCE PF of both hosts. Inbox: ' +
      '`dcb app replace dev <pf> dscp-prio 26:3` (the first DSCP entry switches mlx5 to DSCP trust) and ' +
      '`dcb pfc set dev <pf> prio-pfc all:off 3:on`. Then R27.',
  },
  {
    id: 'D12',
    family: 'output',
    title: 'Pause storm or drops',
    severity: 'medium',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `ethtool-S`, `show_counters`, any of these non-zero:\n' +
      '- `tx_pause_storm_warning_events`, `tx_pause_storm_error_events`;\n' +
      '- `rx_discards_phy`, `rx_out_of_buffer`, `out_of_buffer`, `rx_prio<n>_discards`;\n' +
      '- `tx_global_pause` while PFC is intended.\n' +
      'Trim counter names: one kernel prints the warning counter with a trailing space. Live, the rule ' +
      'tests growth between snapshots; from a single snapshot, doctor adds "no baseline, may be ' +
      'historical".',
    why:
      'Causes, most likely first:\n' +
      '1. No PFC, so overload turns into drops (D11).\n' +
      '2. The receiver cannot drain: PCIe or ACS (R38, R36).\n' +
      '3. PFC on all priorities, or a stuck receiver (R26).\n' +
      '4. RQ starvation (`out_of_buffer`), benign at low rates.',
    fix: 'R29 around an `ib_write_bw` run.',
  },
  {
    id: 'D19',
    family: 'output',
    title: 'No RoCE v2 GID carrying an IPv4 address on an active port',
    severity: 'high',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `show_gids`, `ibv_devinfo -v`: an active Ethernet port with no row that has VER `v2` and an ' +
      'IPv4 address (GID `…:ffff:xxxx:xxxx`, or `::ffff:a.b.c.d, RoCE v2`). Old `GID[ n]:` lines have ' +
      'no type, so an IPv4-mapped entry suffices there. Skip down ports (D08).',
    why:
      'Causes, most likely first:\n' +
      '1. No IPv4 on the netdev.\n' +
      '2. A bond slave without a LAG, whose GIDs follow the bond (R16).',
    fix: 'Give the PF its per-cable IPv4, then rerun `show_gids`.',
  },
  {
    id: 'D20',
    family: 'output',
    title: 'RDMA or NCCL bandwidth below the expected share of line rate',
    severity: 'medium',
    graded: false,
    scope: ['output'],
    status: 'implemented',
    detect:
      'Thresholds are estimates, kept as data:\n' +
      '- `perftest`: BW average of the largest row, per 25GbE port: ≥ 22 Gb/s passes, 20–22 is marginal ' +
      '(facts only), < 20 fires. For n ports in parallel, multiply by n. A `Mtu : 1024[B]` line adds ' +
      'R24 as a cause.\n' +
      '- `nccl-tests` inter-node all_reduce: busbw at the largest size (≥ 256 MiB) below 40 % of the ' +
      'aggregate RDMA line rate. At 4 × 25 Gb/s (12.5 GB/s) that is < 5 GB/s; 5–10 GB/s is expected.\n' +
      '- `nccl-tests` intra-node, 8 × L20: busbw < 10 GB/s (10–25 GB/s expected).\n' +
      'It fires only when the link speed is known: from a live probe, from `ibstat`/`ethtool` in the ' +
      'same text, or from a stated expectation.',
    why:
      'Causes, most likely first:\n' +
      '1. The wrong transport (D01), or a bond without a LAG (R16).\n' +
      '2. One QP or one port (no `-q 4`; one HCA, R06).\n' +
      '3. Link speed (D09) or MTU (R24).\n' +
      '4. PCIe or ACS (R38, R36).\n' +
      '5. Drops (D12).',
    fix:
      '`ib_write_bw -d <dev> -x <v2 idx> -F --report_gbits -q 4 -D 10` per port, then all four at once. ' +
      'Expect 23–24.5 Gb/s per port and 92–96 Gb/s in total.',
  },
  {
    id: 'D25',
    family: 'output',
    title: 'NIC software stack unsupported for this NIC, or not an LTS line',
    severity: 'medium',
    graded: true,
    scope: ['output'],
    status: 'implemented',
    detect:
      'From `ofed_info -s` (`MLNX_OFED_LINUX-<ver>:`, or `OFED-internal-<ver>:` for DOCA-OFED); `ethtool -i` ' +
      "(`driver: mlx5_core`, `version:` = an OFED version or, inbox, the kernel's; `firmware-version: " +
      '14.xx.xxxx`); the device from `lspci -nn` (`[15b3:1013]` `MT27700 Family [ConnectX-4]`, ' +
      '`[15b3:1015]` `MT27710 Family [ConnectX-4 Lx]`) or the ibstat `CA type` (MT4115 / MT4117).\n' +
      "It fires when, by R30's tables, the stack is past the device's last supported release, is an " +
      'unpublished MLNX_OFED version, or is a non-LTS MLNX_OFED branch → `medium` (the live R30 check ' +
      'grades the first two `high`); ConnectX-4 Lx firmware below 14.32 → `low`. Inbox on ConnectX-4 Lx ' +
      'is supported.',
    why:
      "The same reasoning as R30: a stack past the device's support gets no fixes for it, an " +
      'unpublished version cannot be reproduced, and short-lived branches end early.',
    fix: 'The R30 fix.',
  },
];
