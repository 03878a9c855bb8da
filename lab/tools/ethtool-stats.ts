/**
 * `ethtool -S <if>`: `NIC statistics:` and one `     <name>: <value>` line per counter (5-space indent).
 *
 * mlx5 (ConnectX-4 Lx): the counter set and order of fixtures/corpus/ethtool-S__cx4lx-ubuntu1804-inbox-
 * full-751-counters-NO-INDENT.txt (its head sample ethtool-S__cx4lx-ubuntu1804-inbox-head-TRUNCATED.txt
 * shows the header and indent): software, queue, vport and physical-port counters, per-priority
 * traffic, then the pause group and per-channel counters for 16 channels. The pause group follows
 * the driver's per_prio_pfc strings (en_stats.c): for every PFC-enabled priority `rx_prioN_pause`,
 * `rx_prioN_pause_duration`, `tx_prioN_pause`, `tx_prioN_pause_duration`, `rx_prioN_pause_transition`
 * — source-derived, no sample with PFC on — and the `global` set only while no priority has PFC (the
 * port runs 802.3x pause or PFC, not both). Values are what the lab's traffic moved (model/rdma.ts),
 * flows in flight settled up to now first (model/traffic.ts); everything else stays 0.
 *
 * igb (management port): a short set; bonds and loopback have no statistics (`no stats available`).
 */
import { pfcEnabled } from '../model/qos.js';
import { ethtoolCounter } from '../model/rdma.js';
import { settleTraffic } from '../model/traffic.js';
import type { Machine, NetDev } from '../model/types.js';
import { fail, ok } from '../shell/args.js';

const MLX5_PORT = (
  'rx_packets rx_bytes tx_packets tx_bytes tx_tso_packets tx_tso_bytes tx_tso_inner_packets tx_tso_inner_bytes ' +
  'tx_added_vlan_packets rx_lro_packets rx_lro_bytes rx_removed_vlan_packets rx_csum_unnecessary rx_csum_none ' +
  'rx_csum_complete rx_csum_unnecessary_inner rx_xdp_drop rx_xdp_tx rx_xdp_tx_full tx_csum_none tx_csum_partial ' +
  'tx_csum_partial_inner tx_queue_stopped tx_queue_wake tx_queue_dropped tx_xmit_more rx_wqe_err rx_mpwqe_filler ' +
  'rx_buff_alloc_err rx_cqe_compress_blks rx_cqe_compress_pkts rx_page_reuse rx_cache_reuse rx_cache_full ' +
  'rx_cache_empty rx_cache_busy rx_cache_waive link_down_events_phy rx_out_of_buffer rx_vport_unicast_packets ' +
  'rx_vport_unicast_bytes tx_vport_unicast_packets tx_vport_unicast_bytes rx_vport_multicast_packets ' +
  'rx_vport_multicast_bytes tx_vport_multicast_packets tx_vport_multicast_bytes rx_vport_broadcast_packets ' +
  'rx_vport_broadcast_bytes tx_vport_broadcast_packets tx_vport_broadcast_bytes rx_vport_rdma_unicast_packets ' +
  'rx_vport_rdma_unicast_bytes tx_vport_rdma_unicast_packets tx_vport_rdma_unicast_bytes ' +
  'rx_vport_rdma_multicast_packets rx_vport_rdma_multicast_bytes tx_vport_rdma_multicast_packets ' +
  'tx_vport_rdma_multicast_bytes tx_packets_phy rx_packets_phy rx_crc_errors_phy tx_bytes_phy rx_bytes_phy ' +
  'tx_multicast_phy tx_broadcast_phy rx_multicast_phy rx_broadcast_phy rx_in_range_len_errors_phy ' +
  'rx_out_of_range_len_phy rx_oversize_pkts_phy rx_symbol_err_phy tx_mac_control_phy rx_mac_control_phy ' +
  'rx_unsupported_op_phy rx_pause_ctrl_phy tx_pause_ctrl_phy rx_discards_phy tx_discards_phy tx_errors_phy ' +
  'rx_undersize_pkts_phy rx_fragments_phy rx_jabbers_phy rx_64_bytes_phy rx_65_to_127_bytes_phy ' +
  'rx_128_to_255_bytes_phy rx_256_to_511_bytes_phy rx_512_to_1023_bytes_phy rx_1024_to_1518_bytes_phy ' +
  'rx_1519_to_2047_bytes_phy rx_2048_to_4095_bytes_phy rx_4096_to_8191_bytes_phy rx_8192_to_10239_bytes_phy ' +
  'rx_pcs_symbol_err_phy rx_corrected_bits_phy rx_buffer_passed_thres_phy rx_pci_signal_integrity ' +
  'tx_pci_signal_integrity outbound_pci_stalled_rd outbound_pci_stalled_wr outbound_pci_stalled_rd_events ' +
  'outbound_pci_stalled_wr_events'
).split(' ');
const PRIO_TRAFFIC = ['rx_%_bytes', 'rx_%_packets', 'tx_%_bytes', 'tx_%_packets'];
const PAUSE = ['rx_%_pause', 'rx_%_pause_duration', 'tx_%_pause', 'tx_%_pause_duration', 'rx_%_pause_transition'];
const MODULE = ['module_unplug', 'module_bus_stuck', 'module_high_temp', 'module_bad_shorted'];
const RX_CHANNEL = (
  'packets bytes csum_complete csum_unnecessary csum_unnecessary_inner csum_none xdp_drop xdp_tx xdp_tx_full ' +
  'lro_packets lro_bytes removed_vlan_packets wqe_err mpwqe_filler buff_alloc_err cqe_compress_blks ' +
  'cqe_compress_pkts page_reuse cache_reuse cache_full cache_empty cache_busy cache_waive'
).split(' ');
const TX_CHANNEL = (
  'packets bytes tso_packets tso_bytes tso_inner_packets tso_inner_bytes csum_partial csum_partial_inner ' +
  'added_vlan_packets nop csum_none stopped wake dropped xmit_more'
).split(' ');
const CHANNELS = 16;

const IGB = (
  'rx_packets tx_packets rx_bytes tx_bytes rx_broadcast tx_broadcast rx_multicast tx_multicast multicast ' +
  'collisions rx_crc_errors rx_no_buffer_count rx_missed_errors tx_aborted_errors tx_carrier_errors ' +
  'tx_window_errors tx_abort_late_coll tx_deferred_ok tx_single_coll_ok tx_multi_coll_ok tx_timeout_count ' +
  'rx_long_length_errors rx_short_length_errors rx_align_errors tx_tcp_seg_good tx_tcp_seg_failed ' +
  'rx_flow_control_xon rx_flow_control_xoff tx_flow_control_xon tx_flow_control_xoff rx_long_byte_count ' +
  'tx_dma_out_of_sync tx_smbus rx_smbus dropped_smbus os2bmc_rx_by_bmc os2bmc_tx_by_bmc os2bmc_tx_by_host ' +
  'os2bmc_rx_by_host tx_hwtstamp_timeouts tx_hwtstamp_skipped rx_hwtstamp_cleared rx_errors tx_errors ' +
  'tx_dropped rx_length_errors rx_over_errors rx_frame_errors rx_fifo_errors tx_fifo_errors tx_heartbeat_errors'
).split(' ');

/** The counter names of an mlx5 port in output order, given which priorities have PFC on. */
export function mlx5CounterNames(pfc: readonly boolean[]): string[] {
  const names = [...MLX5_PORT];
  for (let p = 0; p < 8; p++) names.push(...PRIO_TRAFFIC.map((f) => f.replace('%', `prio${p}`)));
  const lossless = pfc.map((on, p) => (on ? p : -1)).filter((p) => p >= 0);
  for (const p of lossless) names.push(...PAUSE.map((f) => f.replace('%', `prio${p}`)));
  if (lossless.length === 0) names.push(...PAUSE.map((f) => f.replace('%', 'global')));
  names.push(...MODULE);
  for (let c = 0; c < CHANNELS; c++) names.push(...RX_CHANNEL.map((n) => `rx${c}_${n}`));
  for (let c = 0; c < CHANNELS; c++) names.push(...TX_CHANNEL.map((n) => `tx${c}_${n}`));
  return names;
}

function render(m: Machine, d: NetDev, names: readonly string[]): string {
  return `NIC statistics:\n${names.map((n) => `     ${n}: ${ethtoolCounter(m, d.name, n)}\n`).join('')}`;
}

/** `ethtool -S <if>` for one device (the caller resolved the name). */
export function ethtoolStatistics(m: Machine, ifname: string | undefined) {
  const d = m.netdevs.find((x) => x.name === ifname);
  if (!d) return fail(96, 'Cannot get stats strings information: No such device\n');
  settleTraffic(m);
  if (d.driver === 'mlx5_core') {
    const pfc = Array.from({ length: 8 }, (_, p) => pfcEnabled(m, d.name, p));
    return ok(render(m, d, mlx5CounterNames(pfc)));
  }
  if (d.driver === 'igb') return ok(render(m, d, IGB));
  return fail(94, 'no stats available\n');
}
