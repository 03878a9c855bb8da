/**
 * What an RDMA write test across a cable achieves and leaves behind (docs/STAGES.md §4.3 ib_write_bw):
 *
 * - bandwidth: link rate × header efficiency(path MTU) × 0.985, ± 0.4 % jitter from a seeded stream.
 *   Header efficiency is MTU / (MTU + 82): Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4 +
 *   preamble 8 + inter-frame gap 12 bytes per packet (98.0 % at 4096, 92.6 % at 1024).
 * - the lossless class: the sender's egress priority and the receiver's ingress priority follow each
 *   port's trust (DSCP → dscp2prio[tclass >> 2]; PCP: the SL at egress, 0 for untagged frames at
 *   ingress). When exactly one end has PFC on that priority (a PFC mismatch) pauses go unanswered,
 *   the receiver drops and RC retransmits: 55–80 % of the rate, `rx_discards_phy` on the receiver,
 *   `tx_prioN_pause` on the PFC end, out_of_sequence at the responder and packet_seq_err /
 *   local_ack_timeout_err at the requester. With PFC at both ends the receiver pauses now and then.
 * - counters: the vport RDMA, physical-port, per-priority and packet-size counters of both ports and
 *   the responder's rx_write_requests, moving over the test's time (`startFlow`, model/traffic.ts).
 */
import { pfcEnabled, portQos } from './qos.js';
import { startTraffic, type CounterDelta, type TrafficHandle } from './traffic.js';
import type { Machine } from './types.js';
import { rng } from '../util/prng.js';

/** Bytes a RoCE v2 packet adds on the wire besides its payload. */
export const ROCE_WIRE_OVERHEAD = 82;
/** What RC write traffic reaches of the payload rate in practice (completion and doorbell overhead). */
export const RDMA_EFFICIENCY = 0.985;
/** ConnectX-4 Lx message rate ceiling per port (small messages). */
export const MAX_MPPS = 7.5;

export function headerEfficiency(mtuBytes: number): number {
  return mtuBytes / (mtuBytes + ROCE_WIRE_OVERHEAD);
}

/** Priority the sender's port puts the traffic on. */
export function egressPriority(m: Machine, port: string, tclass: number | undefined, sl: number): number {
  const q = portQos(m, port);
  if (q?.trust === 'dscp') return q.dscp2prio[(tclass ?? 0) >> 2] ?? 0;
  return sl;
}

/** Priority the receiver's port classifies the (untagged) traffic into. */
export function ingressPriority(m: Machine, port: string, tclass: number | undefined): number {
  const q = portQos(m, port);
  if (q?.trust === 'dscp') return q.dscp2prio[(tclass ?? 0) >> 2] ?? 0;
  return 0;
}

const sequences = new WeakMap<Machine, number>();

/** A fresh seeded stream per test run of a machine (same seed and commands → same numbers). */
export function runRng(m: Machine): ReturnType<typeof rng> {
  const n = (sequences.get(m) ?? 0) + 1;
  sequences.set(m, n);
  return rng(m.seed, m.hostname, 'perftest', n);
}

export interface Flow {
  sender: Machine;
  senderPort: string;
  senderDevice: string;
  receiver: Machine;
  receiverPort: string;
  receiverDevice: string;
  tclass: number | undefined;
  sl: number;
  mtuBytes: number;
  /** Link rate of the ports in Gb/s. */
  linkGbps: number;
  /** Share of the port this flow gets (1 alone; 1/n when n tests share it). */
  share: number;
}

export interface FlowResult {
  gbps: number;
  senderPriority: number;
  receiverPriority: number;
  /** PFC differs between the ends on the traffic's priority. */
  pfcMismatch: boolean;
  lossless: boolean;
}

export function flowRate(f: Flow, r: ReturnType<typeof rng>): FlowResult {
  const ps = egressPriority(f.sender, f.senderPort, f.tclass, f.sl);
  const pr = ingressPriority(f.receiver, f.receiverPort, f.tclass);
  const pfcS = pfcEnabled(f.sender, f.senderPort, ps);
  const pfcR = pfcEnabled(f.receiver, f.receiverPort, pr);
  const jitter = 1 + (r.next() * 2 - 1) * 0.004;
  let gbps = f.linkGbps * headerEfficiency(f.mtuBytes) * RDMA_EFFICIENCY * f.share * jitter;
  const pfcMismatch = pfcS !== pfcR;
  if (pfcMismatch) gbps *= 0.55 + r.next() * 0.25;
  return { gbps, senderPriority: ps, receiverPriority: pr, pfcMismatch, lossless: pfcS && pfcR };
}

function sizeBucket(bytes: number): string {
  if (bytes <= 1518) return 'rx_1024_to_1518_bytes_phy';
  if (bytes <= 2047) return 'rx_1519_to_2047_bytes_phy';
  if (bytes <= 4095) return 'rx_2048_to_4095_bytes_phy';
  if (bytes <= 8191) return 'rx_4096_to_8191_bytes_phy';
  return 'rx_8192_to_10239_bytes_phy';
}

/**
 * What `bytes` of payload written in `messages` messages add to the counters of both ends (the draws
 * from `r` happen here, in the order recording them always had).
 */
export function flowCounters(
  f: Flow,
  res: FlowResult,
  bytes: number,
  messages: number,
  r: ReturnType<typeof rng>,
): CounterDelta[] {
  const out: CounterDelta[] = [];
  const addEthtoolCounter = (machine: Machine, key: string, name: string, total: number): void =>
    void out.push({ machine, kind: 'ethtool', key, name, total });
  const addHwCounter = (machine: Machine, key: string, name: string, total: number): void =>
    void out.push({ machine, kind: 'hw', key, name, total });
  const packets = Math.ceil(bytes / f.mtuBytes);
  const wire = bytes + packets * (ROCE_WIRE_OVERHEAD - 20);
  const { sender: s, receiver: d } = f;
  addEthtoolCounter(s, f.senderPort, 'tx_vport_rdma_unicast_packets', packets);
  addEthtoolCounter(s, f.senderPort, 'tx_vport_rdma_unicast_bytes', bytes);
  addEthtoolCounter(s, f.senderPort, 'tx_packets_phy', packets);
  addEthtoolCounter(s, f.senderPort, 'tx_bytes_phy', wire);
  addEthtoolCounter(s, f.senderPort, `tx_prio${res.senderPriority}_packets`, packets);
  addEthtoolCounter(s, f.senderPort, `tx_prio${res.senderPriority}_bytes`, wire);
  // Acknowledgements flow back (coalesced: about one per 16 packets).
  const acks = Math.ceil(packets / 16);
  addEthtoolCounter(d, f.receiverPort, 'tx_vport_rdma_unicast_packets', acks);
  addEthtoolCounter(d, f.receiverPort, 'tx_vport_rdma_unicast_bytes', acks * 58);
  addEthtoolCounter(d, f.receiverPort, 'tx_packets_phy', acks);
  addEthtoolCounter(d, f.receiverPort, 'tx_bytes_phy', acks * 62);
  addEthtoolCounter(s, f.senderPort, 'rx_vport_rdma_unicast_packets', acks);
  addEthtoolCounter(s, f.senderPort, 'rx_vport_rdma_unicast_bytes', acks * 58);
  addEthtoolCounter(s, f.senderPort, 'rx_packets_phy', acks);
  addEthtoolCounter(s, f.senderPort, 'rx_bytes_phy', acks * 62);
  addEthtoolCounter(s, f.senderPort, 'rx_64_bytes_phy', acks);

  let delivered = packets;
  if (res.pfcMismatch) {
    // Drops at the receiver, each recovered by go-back-N: out-of-sequence arrivals, NAKs, timeouts.
    const drops = Math.max(1, Math.round(packets * (0.004 + r.next() * 0.004)));
    delivered = packets - drops;
    addEthtoolCounter(d, f.receiverPort, 'rx_discards_phy', drops);
    addEthtoolCounter(d, f.receiverPort, 'rx_out_of_buffer', Math.round(drops / 50));
    addHwCounter(d, f.receiverDevice, 'out_of_sequence', Math.round(drops * 0.9));
    addHwCounter(d, f.receiverDevice, 'duplicate_request', Math.round(drops * 0.2));
    addHwCounter(s, f.senderDevice, 'packet_seq_err', Math.round(drops * 0.8));
    addHwCounter(s, f.senderDevice, 'local_ack_timeout_err', Math.max(1, Math.round(drops / 400)));
    const pauses = Math.round(packets / 40);
    if (pfcEnabled(d, f.receiverPort, res.receiverPriority)) {
      addEthtoolCounter(d, f.receiverPort, `tx_prio${res.receiverPriority}_pause`, pauses);
      addEthtoolCounter(d, f.receiverPort, `tx_prio${res.receiverPriority}_pause_duration`, pauses * 3);
    } else {
      addEthtoolCounter(s, f.senderPort, `tx_prio${res.senderPriority}_pause`, pauses);
      addEthtoolCounter(s, f.senderPort, `tx_prio${res.senderPriority}_pause_duration`, pauses * 3);
    }
  } else if (res.lossless) {
    // The receiver's buffer fills now and then; the sender honours the pauses, nothing drops.
    const pauses = Math.round(packets / 2500);
    addEthtoolCounter(d, f.receiverPort, `tx_prio${res.receiverPriority}_pause`, pauses);
    addEthtoolCounter(d, f.receiverPort, `tx_prio${res.receiverPriority}_pause_duration`, pauses * 2);
    addEthtoolCounter(d, f.receiverPort, `rx_prio${res.receiverPriority}_pause_transition`, 0);
    addEthtoolCounter(s, f.senderPort, `rx_prio${res.senderPriority}_pause`, pauses);
    addEthtoolCounter(s, f.senderPort, `rx_prio${res.senderPriority}_pause_duration`, pauses * 2);
    addEthtoolCounter(s, f.senderPort, `rx_prio${res.senderPriority}_pause_transition`, pauses);
  }
  addEthtoolCounter(d, f.receiverPort, 'rx_vport_rdma_unicast_packets', delivered);
  addEthtoolCounter(d, f.receiverPort, 'rx_vport_rdma_unicast_bytes', Math.round(bytes * (delivered / packets)));
  addEthtoolCounter(d, f.receiverPort, 'rx_packets_phy', packets);
  addEthtoolCounter(d, f.receiverPort, 'rx_bytes_phy', wire);
  addEthtoolCounter(d, f.receiverPort, `rx_prio${res.receiverPriority}_packets`, packets);
  addEthtoolCounter(d, f.receiverPort, `rx_prio${res.receiverPriority}_bytes`, wire);
  addEthtoolCounter(d, f.receiverPort, sizeBucket(f.mtuBytes + ROCE_WIRE_OVERHEAD - 20), packets);
  addHwCounter(d, f.receiverDevice, 'rx_write_requests', messages);
  return out;
}

/** Moves the counters of both ends at once for `bytes` of payload written in `messages` messages. */
export function recordFlow(f: Flow, res: FlowResult, bytes: number, messages: number, r: ReturnType<typeof rng>): void {
  startTraffic(flowCounters(f, res, bytes, messages, r), 0, 0).finish();
}

/**
 * The same counters moving over [start, end] of simulated time: readers see the flow's rate while
 * it runs (model/traffic.ts); `finish()` at the end leaves what recordFlow would.
 */
export function startFlow(
  f: Flow,
  res: FlowResult,
  bytes: number,
  messages: number,
  r: ReturnType<typeof rng>,
  start: number,
  end: number,
): TrafficHandle {
  return startTraffic(flowCounters(f, res, bytes, messages, r), start, end);
}
