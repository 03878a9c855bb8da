/**
 * What netplan makes of a set of netplan files, for the devices the network stage must not disturb:
 * the renderer each definition ends up with and its addressing. A pure model of netplan's parser
 * (src/parse.c), checked against the real `netplan generate` by test/checks/netplan-oracle.test.ts:
 *
 *  - files are read in lexical order of their base names; a later file amends (new keys) or overrides
 *    (same keys) a definition, and appends to its sequences (addresses, routes);
 *  - a definition's renderer: its own last `renderer:`, else the section-level `renderer:` that stood
 *    before it in the file that first defined it, else the top-level `renderer:` of the LAST file that
 *    has one (whichever file defined the device), else networkd;
 *  - `gateway4: X` is the default route via X (both render `Gateway=X` / `gateway=X`).
 */
import { parse as parseYaml } from 'yaml';

export type NetplanRenderer = 'networkd' | 'NetworkManager';

export interface NetplanDeviceView {
  name: string;
  section: string;
  renderer: NetplanRenderer;
  /** Static addresses, sorted, without duplicates (netplan drops repeats). */
  addresses: string[];
  dhcp4: boolean;
  dhcp6: boolean;
  /** `to>via`, sorted; `default` for 0.0.0.0/0 and for gateway4. */
  routes: string[];
  optional: boolean;
  mtu?: number;
}

export interface NetplanView {
  devices: Map<string, NetplanDeviceView>;
  /** Files netplan would refuse (it then generates nothing at all). */
  errors: string[];
}

const SECTIONS = [
  'ethernets',
  'bonds',
  'bridges',
  'vlans',
  'wifis',
  'tunnels',
  'vrfs',
  'modems',
  'dummy-devices',
  'virtual-ethernets',
  'nm-devices',
];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function renderer(v: unknown): NetplanRenderer | undefined {
  return v === 'networkd' || v === 'NetworkManager' ? v : undefined;
}

/** netplan's truthy booleans (`true`, `yes`, `on`, `y` — YAML 1.1 words its parser accepts). */
function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && ['true', 'yes', 'on', 'y'].includes(v.toLowerCase()));
}

const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

interface Accumulated {
  section: string;
  /** Backend set when the definition was first created (section-level renderer), or by its own key. */
  backend?: NetplanRenderer;
  addresses: Set<string>;
  routes: Set<string>;
  dhcp4: boolean;
  dhcp6: boolean;
  optional: boolean;
  mtu?: number;
}

/** The devices the files define, as netplan merges them. */
export function netplanView(files: ReadonlyArray<{ path: string; text: string }>): NetplanView {
  const errors: string[] = [];
  const acc = new Map<string, Accumulated>();
  let globalBackend: NetplanRenderer | undefined;
  const byName = (a: { path: string }, b: { path: string }): number => (baseName(a.path) < baseName(b.path) ? -1 : 1);
  const ordered = [...files].sort(byName);
  for (const file of ordered) {
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch (e) {
      errors.push(`${file.path}: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    if (doc === null || doc === undefined) continue;
    const net = isObj(doc) ? doc.network : undefined;
    if (!isObj(net)) {
      errors.push(`${file.path}: no network: mapping`);
      continue;
    }
    globalBackend = renderer(net.renderer) ?? globalBackend;
    for (const section of SECTIONS) {
      const defs = net[section];
      if (!isObj(defs)) continue;
      let sectionBackend: NetplanRenderer | undefined;
      // Key order matters: a section-level renderer applies to definitions after it.
      for (const [name, body] of Object.entries(defs)) {
        if (name === 'renderer') {
          sectionBackend = renderer(body);
          continue;
        }
        const d = isObj(body) ? body : {};
        let a = acc.get(name);
        if (!a) {
          a = { section, addresses: new Set(), routes: new Set(), dhcp4: false, dhcp6: false, optional: false };
          if (sectionBackend) a.backend = sectionBackend;
          acc.set(name, a);
        } else if (a.section !== section) errors.push(`${file.path}: updated definition '${name}' changes device type`);
        a.backend = renderer(d.renderer) ?? a.backend;
        for (const x of Array.isArray(d.addresses) ? d.addresses : []) if (typeof x === 'string') a.addresses.add(x);
        if (d.gateway4 !== undefined) a.routes.add(`default>${String(d.gateway4)}`);
        for (const r of Array.isArray(d.routes) ? d.routes : []) {
          if (!isObj(r) || r.to === undefined) continue;
          const to = String(r.to) === '0.0.0.0/0' ? 'default' : String(r.to);
          a.routes.add(`${to}>${r.via === undefined ? '' : String(r.via)}`);
        }
        if (d.dhcp4 !== undefined) a.dhcp4 = truthy(d.dhcp4);
        if (d.dhcp6 !== undefined) a.dhcp6 = truthy(d.dhcp6);
        if (d.optional !== undefined) a.optional = truthy(d.optional);
        if (d.mtu !== undefined) a.mtu = Number(d.mtu);
      }
    }
  }
  const devices = new Map<string, NetplanDeviceView>();
  for (const [name, a] of acc) {
    devices.set(name, {
      name,
      section: a.section,
      renderer: a.backend ?? globalBackend ?? 'networkd',
      addresses: [...a.addresses].sort(),
      dhcp4: a.dhcp4,
      dhcp6: a.dhcp6,
      routes: [...a.routes].sort(),
      optional: a.optional,
      ...(a.mtu !== undefined ? { mtu: a.mtu } : {}),
    });
  }
  return { devices, errors };
}

/** What decides whether a device still works the same: who renders it and how it is addressed and routed. */
export type RenderedDevice = Pick<NetplanDeviceView, 'renderer' | 'addresses' | 'dhcp4' | 'dhcp6' | 'routes'>;

function summarize(d: RenderedDevice | undefined): string {
  if (!d) return 'not rendered';
  const dhcp = [d.dhcp4 ? 'dhcp4' : '', d.dhcp6 ? 'dhcp6' : ''].filter(Boolean);
  const routes = d.routes.map((r) => r.replace('>', ' via '));
  const addressing = [...d.addresses, ...dhcp].join(', ') || 'no address';
  return `${d.renderer}; ${addressing}; routes ${routes.join(', ') || 'none'}`;
}

/**
 * Why `netdev` would be rendered differently after than before (its renderer, static addresses,
 * DHCP, routes); undefined when it is rendered the same. Works on netplanView's devices and on
 * what real `netplan generate` wrote (netplan-generated.ts) alike.
 */
export function renderedChange(
  netdev: string,
  was: RenderedDevice | undefined,
  now: RenderedDevice | undefined,
): string | undefined {
  if (was && now && was.renderer !== now.renderer) {
    return (
      `management ${netdev} would move from ${was.renderer} to ${now.renderer}` +
      ' (a top-level renderer: in a later file re-renders every device without its own)'
    );
  }
  if (summarize(was) !== summarize(now)) {
    return `the new files change management ${netdev}: before ${summarize(was)}; after ${summarize(now)}`;
  }
  return undefined;
}

/** renderedChange over two sets of netplan files; files netplan would reject are a change too. */
export function managementChange(before: NetplanView, after: NetplanView, netdev: string): string | undefined {
  if (after.errors.length > 0) return `netplan would reject the new files: ${after.errors.join('; ')}`;
  return renderedChange(netdev, before.devices.get(netdev), after.devices.get(netdev));
}
