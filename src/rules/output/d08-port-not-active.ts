/**
 * D08 RDMA port not active — high (docs/RULES.md §3). Reads `ibstat`, `ibstatus`, `ibv_devinfo`, `rdma link`
 * (and the same sysfs state files). A port fires when its state is known and not active, or its physical
 * state is known and not link-up; nothing fires on a port whose state the text does not show.
 */
import type { Finding } from '../types.js';

export interface PortStateInput {
  device?: string;
  port?: number;
  /** As the tool printed it: `Down`, `DOWN`, `PORT_DOWN`, `Initializing`, … */
  state?: string;
  physState?: string;
  /** `Ethernet` / `InfiniBand` when known. */
  linkLayer?: string;
  /** The port's netdev, when the text names it. */
  netdev?: string;
  /** The triggering lines, verbatim. */
  evidence: string;
  line?: number;
  /** The output kind, for `source`. */
  kind?: string;
}

const norm = (s: string | undefined): string | undefined =>
  s
    ?.toLowerCase()
    .replace(/^port_/, '')
    .replace(/[\s_]/g, '');

/** True when the printed state is an active state (`Active`, `ACTIVE`, `PORT_ACTIVE`, `4: ACTIVE`). */
export function isActiveState(state: string | undefined): boolean | undefined {
  const s = norm(state?.replace(/^\d+:\s*/, ''));
  if (s === undefined || s === '') return undefined;
  return s === 'active' || s === 'activedefer';
}

/** True when the printed physical state is link-up (`LinkUp`, `LINK_UP`, `5: LinkUp`). */
export function isLinkUp(phys: string | undefined): boolean | undefined {
  const s = norm(phys?.replace(/^\d+:\s*/, ''));
  if (s === undefined || s === '') return undefined;
  return s === 'linkup';
}

export function d08PortNotActive(p: PortStateInput): Finding | undefined {
  const active = isActiveState(p.state);
  const up = isLinkUp(p.physState);
  if (active !== false && up !== false) return undefined;
  const name = `${p.device ?? 'the device'}${p.port !== undefined ? ` port ${p.port}` : ''}`;
  const phys = norm(p.physState);
  const st = norm(p.state);
  const ib = /^infiniband$/i.test(p.linkLayer ?? '');
  const dev = p.device ?? '<dev>';
  const netdev = p.netdev ?? `<netdev of ${dev}>`;
  const find = p.netdev
    ? ''
    : ` (find it with \`rdma link show ${dev}/${p.port ?? 1}\` or \`ibdev2netdev | grep -w ${dev}\`)`;
  let cause: string;
  if (phys === 'disabled') cause = 'Physical state Disabled: the netdev is admin-down or missing from netplan.';
  else if (phys === 'polling')
    cause =
      'Physical state Polling: no carrier — the cable, a wrong port, or the peer port is down; or a speed/FEC/autoneg mismatch (D09).';
  else if (st === 'initializing' || st === 'init')
    cause = ib
      ? 'Initializing on an InfiniBand port: no subnet manager is running.'
      : 'The port is not yet active: check carrier and the peer.';
  else if (st === 'armed') cause = 'Armed: the port waits for the subnet manager to activate it.';
  else cause = 'The link is down: admin-down netdev, no carrier, or a speed/FEC mismatch (D09).';
  const fix = ib
    ? `${cause} On an IB fabric start/check the subnet manager (\`sminfo\`, opensm), then \`ibstat ${dev}\`; check the cable and the switch port.`
    : `${cause} Bring the netdev up: \`ip link set dev ${netdev} up\`${find} and make sure netplan defines it; then compare \`ethtool ${netdev}\` on both ends (speed, FEC, autoneg) and reseat or replace the cable if there is no carrier.`;
  return {
    rule: 'D08',
    severity: 'high',
    title: 'RDMA port not active',
    evidence: `${name}${p.linkLayer ? ` (${p.linkLayer})` : ''}: ${p.evidence}`,
    fix,
    ...(p.line !== undefined ? { line: p.line } : {}),
    ...(p.kind ? { source: p.kind } : {}),
  };
}
