/**
 * The files the network stage writes, rendered with the yaml library (never by string splicing):
 * /etc/netplan/60-l20-fabric.yaml for design A or B (docs/STAGES.md §3.4 network.write), and the
 * management file with `gateway4` turned into a default route (network.mgmt-routes, R21).
 */
import { Document, isMap, parseDocument, type YAMLMap } from 'yaml';
import type { DesignPlan } from '../common/design.js';
import { packageVersion } from '../../src/util/version.js';

export const HEADER_RE = /^# l20-setup \S+ run \S+ design (\S+) — fabric only\n/;

/**
 * Keys every fabric device carries. `renderer` per device, never at the top level: netplan gives a
 * device without its own `renderer:` the last top-level renderer of all merged files, so a top-level
 * one here would hand management (NetworkManager on desktop/cloud images) to networkd. `optional`:
 * systemd-networkd-wait-online does not wait for a fabric link whose peer is off or cable is out.
 */
export const FABRIC_DEVICE_KEYS = { renderer: 'networkd', optional: true } as const;

/** The fabric file for a design plan (A: one flow map per port; B: ports plus two bonds). */
export function renderFabricFile(plan: DesignPlan, runId: string, version = packageVersion()): string {
  const ethernets: Record<string, unknown> = {};
  const bonds: Record<string, unknown> = {};
  for (const i of plan.interfaces) {
    const addresses = i.addresses.length > 0 ? { addresses: i.addresses } : {};
    if (i.kind === 'ethernet') ethernets[i.name] = { ...FABRIC_DEVICE_KEYS, mtu: i.mtu, ...addresses };
    else {
      const parameters = i.parameters ?? {};
      const interfaces = i.slaves ?? [];
      bonds[i.name] = { ...FABRIC_DEVICE_KEYS, interfaces, mtu: i.mtu, addresses: i.addresses, parameters };
    }
  }
  const network: Record<string, unknown> = { version: 2, ethernets };
  if (Object.keys(bonds).length > 0) network.bonds = bonds;
  const doc = new Document({ network });
  for (const section of ['ethernets', 'bonds']) {
    const m = doc.getIn(['network', section], true);
    if (!isMap(m)) continue;
    for (const item of (m as YAMLMap).items) if (isMap(item.value)) item.value.flow = true;
  }
  const body = doc.toString({ flowCollectionPadding: false, lineWidth: 0 });
  return `# l20-setup ${version} run ${runId} design ${plan.design} — fabric only\n${body}`;
}

/** The body without the header line (what decides whether the file must be rewritten). */
export function fabricBody(text: string): string {
  return text.replace(HEADER_RE, '');
}

/**
 * A management file with `gateway4: X` of `netdev` replaced by `routes: [{to: default, via: X}]`
 * (appended to existing routes), comments and everything else kept; undefined when there is none.
 */
export function withDefaultRoute(text: string, netdev: string): { text: string; gateway: string } | undefined {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  const path = ['network', 'ethernets', netdev];
  const gw = doc.getIn([...path, 'gateway4']);
  if (gw === undefined || gw === null) return undefined;
  const gateway = String(gw);
  doc.deleteIn([...path, 'gateway4']);
  const routes = doc.getIn([...path, 'routes']);
  const entry = doc.createNode({ to: 'default', via: gateway });
  if (routes && typeof routes === 'object' && 'items' in (routes as object))
    (routes as { items: unknown[] }).items.push(entry);
  else doc.setIn([...path, 'routes'], doc.createNode([{ to: 'default', via: gateway }]));
  return { text: doc.toString({ indentSeq: false, lineWidth: 0 }), gateway };
}
