/**
 * The GID table and hw_counters of an RDMA port in sysfs (drivers/infiniband/core/sysfs.c), rendered
 * from model/rdma.ts at every read:
 *
 * - `ports/1/gids/<n>`: `%pI6` of the entry, all zeros for an empty slot (show_port_gid);
 * - `ports/1/gid_attrs/types/<n>`: `IB/RoCE v1` or `RoCE v2`; `ndevs/<n>`: the netdev name — both fail
 *   with EINVAL for an empty slot (`cat: …: Invalid argument`), which is why scripts add `2>/dev/null`;
 * - `ports/1/hw_counters/<name>`: one decimal per file (the mlx5 set of a ConnectX-4 Lx; the names
 *   follow fixtures/corpus/show_counters__mlx5_0-roce-hw-counters-nonzero-errors.txt).
 * - `ports/1/counters/port_{xmit,rcv}_data` in 4-byte words (octets / 4, as the IB PMA counts) and
 *   `port_{xmit,rcv}_packets` from the port's RDMA (vport) counters. A RoCE LAG device (its netdev is
 *   the bond) counts the traffic of both of its card's ports, as mlx5 queries the LAG's vport.
 *
 * Every read first settles the traffic in flight (model/traffic.ts), so the counters move while a
 * test or a job runs.
 */
import { ethtoolCounter, gidTable, GID_TABLE_LEN, hwCounter, ZERO_GID } from '../model/rdma.js';
import { settleTraffic } from '../model/traffic.js';
import type { Machine, RdmaDevice } from '../model/types.js';
import { dir, file, vfsError, type VNode } from './vfs.js';

/** mlx5 RoCE hw_counters in the kernel's (alphabetical, as listed) order; `lifespan` is a setting (ms). */
export const HW_COUNTERS = [
  'duplicate_request',
  'implied_nak_seq_err',
  'lifespan',
  'local_ack_timeout_err',
  'np_cnp_sent',
  'np_ecn_marked_roce_packets',
  'out_of_buffer',
  'out_of_sequence',
  'packet_seq_err',
  'req_cqe_error',
  'req_cqe_flush_error',
  'req_remote_access_errors',
  'req_remote_invalid_request',
  'resp_cqe_error',
  'resp_cqe_flush_error',
  'resp_local_length_error',
  'resp_remote_access_errors',
  'rnr_nak_retry_err',
  'roce_adp_retrans',
  'roce_adp_retrans_to',
  'roce_slow_restart',
  'roce_slow_restart_cnps',
  'roce_slow_restart_trans',
  'rp_cnp_handled',
  'rp_cnp_ignored',
  'rx_atomic_requests',
  'rx_dct_connect',
  'rx_icrc_encapsulated',
  'rx_read_requests',
  'rx_write_requests',
] as const;

export function hwCounterValue(m: Machine, r: RdmaDevice, name: string): number {
  settleTraffic(m);
  return name === 'lifespan' ? 10 + hwCounter(m, r.name, name) : hwCounter(m, r.name, name);
}

/** The ethtool ports an RDMA device's counters come from: its port, or a LAG's two PFs on its card. */
function counterPorts(m: Machine, r: RdmaDevice): string[] {
  const d = m.netdevs.find((x) => x.name === r.netdev);
  if (!d?.bond) return [r.netdev];
  const card = r.pci.slice(0, r.pci.lastIndexOf('.'));
  return d.bond.slaves.filter((s) => m.netdevs.find((x) => x.name === s)?.pci?.startsWith(`${card}.`));
}

/** A port counter of `r` with the traffic in flight settled. */
function portCounter(m: Machine, r: RdmaDevice, name: string): number {
  settleTraffic(m);
  return counterPorts(m, r).reduce((sum, p) => sum + ethtoolCounter(m, p, name), 0);
}

/** A directory of files `0` … `255` (one per GID slot). */
function indexed(render: (i: number) => string): VNode {
  return dir(() => {
    const e: Record<string, VNode> = {};
    for (let i = 0; i < GID_TABLE_LEN; i++) e[String(i)] = file(() => render(i), 0o444);
    return e;
  });
}

/** Extra entries of `ports/<n>/` for the GID table and counters. `portDir` is that directory's path. */
export function rdmaPortEntries(m: Machine, r: RdmaDevice, portDir: string): Record<string, VNode> {
  const entry = (i: number) => gidTable(m, r)[i] ?? null;
  const attr = (kind: 'types' | 'ndevs', i: number): string => {
    const e = entry(i);
    if (!e) throw vfsError('EINVAL', 'read', `${portDir}/gid_attrs/${kind}/${i}`);
    return `${kind === 'types' ? e.type : e.ndev}\n`;
  };
  // Port data counters in 4-byte words as the IB PMA reports them; RoCE traffic moves them too.
  const words = (name: string) => Math.floor(portCounter(m, r, name) / 4);
  return {
    gids: indexed((i) => `${entry(i)?.gid ?? ZERO_GID}\n`),
    gid_attrs: dir(() => ({
      types: indexed((i) => attr('types', i)),
      ndevs: indexed((i) => attr('ndevs', i)),
    })),
    hw_counters: dir(() => Object.fromEntries(HW_COUNTERS.map((n) => [n, file(() => `${hwCounterValue(m, r, n)}\n`)]))),
    counters: dir(() => ({
      port_rcv_data: file(() => `${words('rx_vport_rdma_unicast_bytes')}\n`),
      port_xmit_data: file(() => `${words('tx_vport_rdma_unicast_bytes')}\n`),
      port_rcv_packets: file(() => `${portCounter(m, r, 'rx_vport_rdma_unicast_packets')}\n`),
      port_xmit_packets: file(() => `${portCounter(m, r, 'tx_vport_rdma_unicast_packets')}\n`),
      port_rcv_errors: file(() => '0\n'),
      port_xmit_discards: file(() => '0\n'),
    })),
  };
}
