/**
 * DCB state of the ConnectX PFs (docs/STAGES.md §4.1 "QoS"): trust, DSCP → priority map, PFC vector and
 * DCBX owner per PF, as the mlx5 driver holds them. The state is runtime only: a reboot or a driver
 * reload drops it (resetQos), and only a unit that re-applies it at boot brings it back.
 *
 * State is keyed by PCI address, not netdev name: the settings belong to the function and survive a
 * rename. mlnx_qos and `dcb` (tools/mlnx-qos.ts) change it; perftest and ethtool -S counters read
 * `pfcEnabled` to decide whether a priority is lossless.
 *
 * The coupling of trust and the kernel's DCB APP table follows the inbox mlx5 driver
 * (en/en_dcbnl.c): the first DSCP APP entry switches the port to DSCP trust and deleting the last
 * one switches it back to PCP; an entry sets the hardware map for its DSCP and deleting it restores
 * the default DSCP >> 3. Setting DCB from the OS (PFC, APP, trust) takes DCBX over from the firmware.
 */
import type { Machine, NetDev, PortQos } from './types.js';

export const DSCP_COUNT = 64;
export const PRIO_COUNT = 8;

/** The driver's state after probe: PCP trust, the default map, PFC off, DCBX owned by the OS. */
export function defaultPortQos(): PortQos {
  return {
    dcbx: 'os',
    trust: 'pcp',
    dscp2prio: Array.from({ length: DSCP_COUNT }, (_, d) => d >> 3),
    dscpApp: [],
    pfc: Array.from({ length: PRIO_COUNT }, () => false),
  };
}

/** The PF netdev `ifname` is (mlx5_core, backed by a PCI function), or undefined for bonds and others. */
export function dcbNetdev(m: Machine, ifname: string): NetDev | undefined {
  const d = m.netdevs.find((n) => n.name === ifname);
  return d && d.driver === 'mlx5_core' && d.pci ? d : undefined;
}

/** The DCB state of a PF, created with the driver defaults on first use; undefined for non-DCB devices. */
export function portQos(m: Machine, ifname: string): PortQos | undefined {
  const d = dcbNetdev(m, ifname);
  if (!d?.pci) return undefined;
  m.qos ??= {};
  return (m.qos[d.pci] ??= defaultPortQos());
}

/** Whether PFC protects `prio` on this port (false for anything that is not a PF). */
export function pfcEnabled(m: Machine, ifname: string, prio: number): boolean {
  return portQos(m, ifname)?.pfc[prio] === true;
}

/** DSCP APP entry added (`dcb app add/replace`, mlnx_qos --dscp2prio set). */
export function addDscpApp(q: PortQos, dscp: number, prio: number): void {
  // mlx5 keeps one entry per DSCP: a new mapping replaces the old one (en_dcbnl.c setapp).
  q.dscpApp = q.dscpApp.filter(([d]) => d !== dscp);
  q.dscpApp.push([dscp, prio]);
  q.dscp2prio[dscp] = prio;
  q.trust = 'dscp';
  q.dcbx = 'os';
}

/** DSCP APP entry removed: the hardware map falls back to the default; the last one out restores PCP trust. */
export function delDscpApp(q: PortQos, dscp: number, prio: number): boolean {
  const i = q.dscpApp.findIndex(([d, p]) => d === dscp && p === prio);
  if (i < 0) return false;
  q.dscpApp.splice(i, 1);
  if (!q.dscpApp.some(([d]) => d === dscp)) q.dscp2prio[dscp] = dscp >> 3;
  if (q.dscpApp.length === 0) q.trust = 'pcp';
  q.dcbx = 'os';
  return true;
}

/**
 * Trust set directly (mlnx_qos --trust). With DSCP trust the driver publishes its whole map as APP
 * entries (so `dcb app show` lists all 64); with PCP trust it withdraws them.
 */
export function setTrust(q: PortQos, trust: 'pcp' | 'dscp'): void {
  q.trust = trust;
  q.dscpApp = trust === 'dscp' ? q.dscp2prio.map((p, d): [number, number] => [d, p]) : [];
  q.dcbx = 'os';
}

export function setPfc(q: PortQos, pfc: readonly boolean[]): void {
  q.pfc = Array.from({ length: PRIO_COUNT }, (_, i) => pfc[i] === true);
  q.dcbx = 'os';
}

/** Reboot or mlx5 driver reload: every PF is back at the driver defaults. */
export function resetQos(m: Machine): void {
  delete m.qos;
  m.revision++;
}
