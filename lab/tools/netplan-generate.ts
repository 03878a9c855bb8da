/**
 * What netplan 0.106's `netplan generate` writes for the definitions the lab models (networkd.c,
 * nm.c), checked file for file against the real one by test/checks/netplan-oracle.test.ts:
 *
 * - networkd: `run/systemd/network/10-netplan-<id>.network` ([Match] Name; [Link] RequiredForOnline=no
 *   for `optional`, MTUBytes; [Network] DHCP, LinkLocalAddressing (no on a bond member), Address,
 *   Gateway (gateway4), DNS, ConfigureWithoutCarrier (bonds), Bond; [Route] per route; [DHCP]),
 *   `10-netplan-<bond>.netdev` ([NetDev], [Bond]);
 * - NetworkManager: `run/NetworkManager/system-connections/netplan-<id>.nmconnection`;
 * - either: `10-netplan-<id>.link` for an ethernet with an MTU (udev applies it before any backend).
 * Paths are relative to the root (`/` or `--root-dir`). Only the keys the lab validates are rendered.
 */
import type { NetplanConfig, Netdef } from './netplan-config.js';

const NETWORKD = 'run/systemd/network';
const NM = 'run/NetworkManager/system-connections';

const sections = (parts: Array<[string, string[]]>): string =>
  parts
    .filter(([, lines]) => lines.length > 0)
    .map(([head, lines]) => `[${head}]\n${lines.join('\n')}\n`)
    .join('\n');

const routeTo = (to: string): string => (to === 'default' ? '0.0.0.0/0' : to);

function networkdFiles(nd: Netdef, master: string | undefined): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const mtu = nd.mtu !== undefined ? [`MTUBytes=${nd.mtu}`] : [];
  const link = [...(nd.optional ? ['RequiredForOnline=no'] : []), ...mtu];
  const dhcp = nd.dhcp4 && nd.dhcp6 ? 'yes' : nd.dhcp4 ? 'ipv4' : nd.dhcp6 ? 'ipv6' : undefined;
  const network = [
    ...(dhcp ? [`DHCP=${dhcp}`] : []),
    `LinkLocalAddressing=${master ? 'no' : 'ipv6'}`,
    ...nd.addresses.map((a) => `Address=${a.local}/${a.prefixlen}`),
    ...(nd.gateway4 ? [`Gateway=${nd.gateway4}`] : []),
    ...nd.dns.map((d) => `DNS=${d}`),
    ...(nd.type === 'bond' ? ['ConfigureWithoutCarrier=yes'] : []),
    ...(master ? [`Bond=${master}`] : []),
  ];
  const body = sections([
    ['Match', [`Name=${nd.name}`]],
    ['Link', link],
    ['Network', network],
  ]);
  const routes = nd.routes.map((r) => `\n[Route]\nDestination=${routeTo(r.to)}\nGateway=${r.via}\n`).join('');
  const dhcpSection = dhcp ? '\n[DHCP]\nRouteMetric=100\nUseMTU=true\n' : '';
  out.push([`${NETWORKD}/10-netplan-${nd.name}.network`, `${body}${routes}${dhcpSection}`]);
  if (nd.type === 'bond' && nd.bond) {
    const b = nd.bond;
    const bond = [
      `Mode=${b.mode}`,
      ...(b.lacpRate ? [`LACPTransmitRate=${b.lacpRate}`] : []),
      ...(b.miimon !== undefined ? [`MIIMonitorSec=${b.miimon}ms`] : []),
      ...(b.xmitHashPolicy ? [`TransmitHashPolicy=${b.xmitHashPolicy}`] : []),
      ...(b.updelay !== undefined ? [`UpDelaySec=${b.updelay}ms`] : []),
      ...(b.downdelay !== undefined ? [`DownDelaySec=${b.downdelay}ms`] : []),
    ];
    const netdev = [`Name=${nd.name}`, ...(nd.mtu !== undefined ? [`MTUBytes=${nd.mtu}`] : []), 'Kind=bond'];
    out.push([
      `${NETWORKD}/10-netplan-${nd.name}.netdev`,
      sections([
        ['NetDev', netdev],
        ['Bond', bond],
      ]),
    ]);
  }
  return out;
}

function nmFile(nd: Netdef, master: string | undefined): [string, string] {
  const connection = [
    `id=netplan-${nd.name}`,
    `type=${nd.type === 'bond' ? 'bond' : 'ethernet'}`,
    `interface-name=${nd.name}`,
    ...(master ? ['slave-type=bond', `master=${master}`] : []),
  ];
  const mtu = nd.mtu !== undefined ? [`mtu=${nd.mtu}`] : [];
  const ethernet = [...(nd.type === 'ethernet' ? ['wake-on-lan=0'] : []), ...mtu];
  const b = nd.bond;
  const bond =
    nd.type === 'bond' && b
      ? [
          `mode=${b.mode}`,
          ...(b.lacpRate ? [`lacp_rate=${b.lacpRate}`] : []),
          ...(b.miimon !== undefined ? [`miimon=${b.miimon}`] : []),
          ...(b.xmitHashPolicy ? [`xmit_hash_policy=${b.xmitHashPolicy}`] : []),
        ]
      : [];
  const v4 = nd.addresses.filter((a) => a.family === 'inet');
  const method = nd.dhcp4 ? 'auto' : v4.length > 0 ? 'manual' : 'link-local';
  const ipv4 = [
    `method=${method}`,
    ...v4.map((a, i) => `address${i + 1}=${a.local}/${a.prefixlen}`),
    ...(nd.gateway4 ? [`gateway=${nd.gateway4}`] : []),
    ...(nd.dns.length > 0 ? [`dns=${nd.dns.map((d) => `${d};`).join('')}`] : []),
    ...nd.routes.map((r, i) => `route${i + 1}=${routeTo(r.to)},${r.via}`),
  ];
  const ipv6 = nd.dhcp6 ? ['method=auto', 'ip6-privacy=0'] : ['method=ignore'];
  const text = sections([
    ['connection', connection],
    ['ethernet', ethernet],
    ['bond', bond],
    ['ipv4', ipv4],
    ['ipv6', ipv6],
  ]);
  return [`${NM}/netplan-${nd.name}.nmconnection`, text];
}

/** The backend files for a valid configuration, by path under the root. */
export function renderBackends(cfg: NetplanConfig): Map<string, string> {
  const masters = new Map<string, string>();
  for (const nd of cfg.netdefs) if (nd.type === 'bond') for (const i of nd.interfaces) masters.set(i, nd.name);
  const out = new Map<string, string>();
  for (const nd of cfg.netdefs.filter((n) => n.type === 'ethernet' || n.type === 'bond')) {
    const master = masters.get(nd.name);
    const files = nd.renderer === 'networkd' ? networkdFiles(nd, master) : [nmFile(nd, master)];
    for (const [path, text] of files) out.set(path, text);
    if (nd.type === 'ethernet' && nd.mtu !== undefined) {
      const link = sections([
        ['Match', [`OriginalName=${nd.name}`]],
        ['Link', ['WakeOnLan=off', `MTUBytes=${nd.mtu}`]],
      ]);
      out.set(`${NETWORKD}/10-netplan-${nd.name}.link`, link);
    }
  }
  return out;
}
