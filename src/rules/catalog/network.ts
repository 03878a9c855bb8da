/** Network design, netplan and bonding rules (R16–R24): addressing, bonds, MTU, applying netplan safely. */
import type { RuleRecord } from './schema.js';

export const NETWORK_RULES: readonly RuleRecord[] = [
  {
    id: 'R16',
    family: 'network',
    title: 'RDMA over a Linux bond needs a real RoCE LAG',
    severity: 'blocker',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'A bond carries RDMA or NCCL traffic (its subnet is the NCCL or Ray subnet, NCCL_SOCKET_IFNAME ' +
      'names it, or its slaves are RDMA ports) and is not a RoCE LAG. A LAG needs:\n' +
      '- exactly 2 slaves, the two PFs of one PCI device (same domain:bus:device, functions .0/.1; ' +
      'statically, names equal up to `f<fn>`, e.g. `ens1f0` + `ens1f1`);\n' +
      '- mode active-backup, balance-xor or 802.3ad;\n' +
      '- live: an `mlx5_bond_<n>` in `rdma link`.',
    evidence: 'Slave→BDF table, bond definition, `rdma link`.',
    why:
      'The LAG forms only when both PF netdevs of one dual-port card are the only slaves (kernel commit ' +
      "7907f23adc18). Without it the bond's IP GID lands on every slave's RDMA port while each QP " +
      'leaves through its own port; a QP paired with another NIC on the peer hits an HCA that does not ' +
      'own it (errors, hangs). Bonds never stripe a flow or QP; NCCL aggregates HCAs itself ' +
      '(NVIDIA/nccl#452).',
    fix: 'Design A, or design B with the R06 settings.',
  },
  {
    id: 'R17',
    family: 'network',
    title: 'One subnet per back-to-back cable',
    severity: 'high',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'Two or more RDMA ports of one host share a subnet (statically, from netplan). Live, it also ' +
      'fires if `ping -c3 -I <if> <peer>` fails or the neighbour entry is learned on another interface.',
    evidence: 'Cabling map `node1 ens1f0 ↔ node2 ens1f0` (LLDP, else pings).',
    why:
      'ARP flux (NVIDIA/nccl#1269, #1348): with several ports in one subnet, the peer learns an address ' +
      'on another port than the one that owns it.',
    fix: 'One /24 per cable.',
  },
  {
    id: 'R18',
    family: 'network',
    title: '`lacp-rate` only with `mode: 802.3ad`',
    severity: 'medium',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: '`lacp-rate` appears with another mode. Live: `/proc/net/bonding` shows no `LACP rate:`.',
    why:
      'networkd applies it only in 802.3ad, so netplan drops it silently, and the kernel rejects it: the ' +
      'file promises a setting that is not in force.',
    fix: 'Remove it, or use 802.3ad on both ends.',
  },
  {
    id: 'R19',
    family: 'network',
    title: '`transmit-hash-policy`',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: 'It is set with a mode other than balance-xor, 802.3ad or balance-tlb.',
    why:
      'Only those modes hash traffic onto slaves, so elsewhere the key does nothing; and no policy ' +
      'spreads one flow or QP.',
    fix: 'Remove `transmit-hash-policy`.',
  },
  {
    id: 'R20',
    family: 'network',
    title: '`mii-monitor-interval`',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: 'It is 0 or absent on a bond without ARP monitoring. A bare number is in ms (netplan ≥ 0.100).',
    why: 'Without MII or ARP monitoring, link loss goes unseen and the bond keeps sending on a dead slave.',
    fix: "Add `mii-monitor-interval: 100` under the bond's parameters.",
  },
  {
    id: 'R21',
    family: 'network',
    title: 'Netplan hygiene',
    severity: 'low',
    graded: true,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      '`gateway4`/`gateway6` appears, or a file is not mode 600. A file that is not valid YAML → `high`: ' +
      '`netplan generate` rejects the whole file.',
    why:
      '`gateway4`/`gateway6` are deprecated (netplan warns at every generate); a file others can read ' +
      'makes netplan warn "Permissions … are too open" (it may hold secrets).',
    fix: '`routes: [{to: default, via: <gw>}]`; `chmod 600`; fix the YAML, then `netplan generate` first.',
  },
  {
    id: 'R22',
    family: 'network',
    title: '`netplan try` is unsafe with bond or bridge parameters',
    severity: 'high',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect: 'A bond or bridge in the YAML to apply has a `parameters` key.',
    why:
      '`netplan try` then prints `<name>: reverting custom parameters for bridges and bonds is not ' +
      'supported`, applies nothing, and gives no rollback: an operator falling back to `netplan apply` ' +
      'has no safety net on a remote host.',
    fix:
      'Use the console or BMC, or arm a rollback first (`systemd-run --on-active=300 <restore YAML + ' +
      'netplan apply>`). Then `netplan generate && netplan apply`. Cancel the timer once the management ' +
      'and cluster paths are verified. Design A has no bond, so `netplan try --timeout 120` works.',
  },
  {
    id: 'R23',
    family: 'network',
    title: 'Stale virtual devices',
    severity: 'medium',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect: '`ip -d link` shows a bond, bridge or VLAN that no netplan file defines.',
    why:
      '`netplan apply` never deletes virtual devices (netplan-apply(8), KNOWN ISSUES), so an old bond ' +
      'keeps its slaves, IP and GIDs.',
    fix: '`ip link delete dev <bond>` from the console, or reboot.',
  },
  {
    id: 'R24',
    family: 'network',
    title: 'MTU parity',
    severity: 'high',
    graded: true,
    scope: ['pair'],
    status: 'implemented',
    detect:
      '- cable ends, or a bond and its slaves, have different MTUs → `high`;\n' + '- both ends are < 4200 → `medium`.',
    evidence: '`ip -d link` and `active_mtu` from both hosts.',
    why:
      'Since NCCL 2.20 an MTU mismatch causes errors and hangs (NVIDIA/nccl#1524). Below 4200 the RoCE ' +
      '`active_mtu` is 1024, not 4096, costing ≈ 5 % goodput (≈ 23.2 vs ≈ 24.5 Gb/s per port).',
    fix: '`mtu: 9000` everywhere.',
  },
];
