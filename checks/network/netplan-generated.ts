/**
 * What `netplan generate` wrote, read back per device: systemd-networkd's `*.network` / `*.netdev`
 * (run/systemd/network) and NetworkManager's `*.nmconnection` (run/NetworkManager/system-connections).
 * The shape matches netplanView's devices (netplan-view.ts) so the two can be compared, plus what only
 * the generated files show (DNS, bond membership, bond parameters as the backend takes them).
 */
import type { NetplanDeviceView } from './netplan-view.js';

export interface GeneratedDevice extends Omit<NetplanDeviceView, 'section' | 'name'> {
  name: string;
  /** DNS servers the backend would use for this device. */
  dns: string[];
  /** `Bond=` of a networkd member port. */
  master?: string;
  /** The `[Bond]` section of a networkd `.netdev` (`Mode`, `LACPTransmitRate`, …). */
  bondParameters?: Record<string, string>;
  /** Generated file names that describe the device. */
  files: string[];
}

/** Entries in order; `block` numbers each section header, so repeated `[Route]` sections stay apart. */
type Ini = Array<{ section: string; block: number; key: string; value: string }>;

function parseIni(text: string): Ini {
  const out: Ini = [];
  let section = '';
  let block = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      section = head[1]!;
      block++;
    } else if (line.includes('=')) {
      out.push({ section, block, key: line.slice(0, line.indexOf('=')), value: line.slice(line.indexOf('=') + 1) });
    }
  }
  return out;
}

const values = (ini: Ini, section: string, key: string | RegExp): string[] =>
  ini
    .filter((e) => e.section === section && (typeof key === 'string' ? e.key === key : key.test(e.key)))
    .map((e) => e.value);

const route = (to: string, via: string): string => `${to === '0.0.0.0/0' ? 'default' : to}>${via}`;

function blank(name: string, renderer: GeneratedDevice['renderer']): GeneratedDevice {
  return { name, renderer, addresses: [], dhcp4: false, dhcp6: false, routes: [], optional: false, dns: [], files: [] };
}

/** Every device the generated files configure, by interface name. */
export function parseGenerated(files: ReadonlyArray<{ name: string; text: string }>): Map<string, GeneratedDevice> {
  const devices = new Map<string, GeneratedDevice>();
  const get = (name: string, renderer: GeneratedDevice['renderer']): GeneratedDevice => {
    const d = devices.get(name) ?? blank(name, renderer);
    devices.set(name, d);
    return d;
  };
  for (const f of files) {
    const base = f.name.slice(f.name.lastIndexOf('/') + 1);
    const ini = parseIni(f.text);
    if (base.endsWith('.network')) {
      const name = values(ini, 'Match', 'Name')[0];
      if (!name) continue;
      const d = get(name, 'networkd');
      d.files.push(base);
      d.addresses = [...new Set(values(ini, 'Network', 'Address'))].sort();
      const dhcp = values(ini, 'Network', 'DHCP')[0];
      d.dhcp4 = dhcp === 'yes' || dhcp === 'ipv4';
      d.dhcp6 = dhcp === 'yes' || dhcp === 'ipv6';
      const gateways = values(ini, 'Network', 'Gateway').map((g) => route('default', g));
      const blocks = [...new Set(ini.filter((e) => e.section === 'Route').map((e) => e.block))];
      const routes = blocks.map((b) => {
        const of = (k: string): string => ini.find((e) => e.block === b && e.key === k)?.value ?? '';
        return route(of('Destination'), of('Gateway'));
      });
      d.routes = [...new Set([...gateways, ...routes])].sort();
      d.optional = values(ini, 'Link', 'RequiredForOnline')[0] === 'no';
      const mtu = values(ini, 'Link', 'MTUBytes')[0];
      if (mtu !== undefined) d.mtu = Number(mtu);
      d.dns = values(ini, 'Network', 'DNS');
      const master = values(ini, 'Network', 'Bond')[0];
      if (master) d.master = master;
    } else if (base.endsWith('.netdev')) {
      const name = values(ini, 'NetDev', 'Name')[0];
      if (!name) continue;
      const d = get(name, 'networkd');
      d.files.push(base);
      if (values(ini, 'NetDev', 'Kind')[0] === 'bond') {
        d.bondParameters = Object.fromEntries(ini.filter((e) => e.section === 'Bond').map((e) => [e.key, e.value]));
      }
    } else if (base.endsWith('.nmconnection')) {
      const name = values(ini, 'connection', 'interface-name')[0];
      if (!name) continue;
      const d = get(name, 'NetworkManager');
      d.files.push(base);
      d.addresses = [...new Set(values(ini, 'ipv4', /^address\d+$/).map((a) => a.split(',')[0]!))].sort();
      d.dhcp4 = values(ini, 'ipv4', 'method')[0] === 'auto';
      d.dhcp6 = values(ini, 'ipv6', 'method')[0] === 'auto';
      const gateways = values(ini, 'ipv4', 'gateway').map((g) => route('default', g));
      const routes = values(ini, 'ipv4', /^route\d+$/).map((r) => {
        const [to, via] = r.split(',');
        return route(to ?? '', via ?? '');
      });
      d.routes = [...new Set([...gateways, ...routes])].sort();
      const mtu = values(ini, 'ethernet', 'mtu')[0];
      if (mtu !== undefined) d.mtu = Number(mtu);
      d.dns = values(ini, 'ipv4', 'dns')
        .flatMap((x) => x.split(';'))
        .filter(Boolean);
    }
  }
  return devices;
}
