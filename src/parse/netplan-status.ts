/**
 * `netplan status [--all]` (netplan.io ≥ 0.106): a global block (`Online state:`, DNS) then one block
 * per interface headed `● <ifindex>: <name> <type> <state> (<backend>[: <id>] | unmanaged)`, with
 * `Key: value` lines whose continuation lines are aligned under the value column.
 */
import { z } from 'zod';
import { cleanLines, guard, validate } from './common.js';

export const NetplanStatusInterfaceSchema = z.object({
  index: z.number().int(),
  name: z.string(),
  /** `ethernet`, `bond`, `wifi/"SSID"`, `tunnel/wireguard`, … as printed. */
  type: z.string(),
  /** `UP`, `DOWN`, `UNKNOWN/UP` as printed. */
  state: z.string(),
  up: z.boolean(),
  /** `networkd`, `NetworkManager`, or `unmanaged`. */
  backend: z.string().optional(),
  mac: z.string().optional(),
  addresses: z.array(z.string()),
  routes: z.array(z.string()),
  /** Bond/bridge members (`Interfaces:`), when printed. */
  members: z.array(z.string()).optional(),
  activationMode: z.string().optional(),
});
export type NetplanStatusInterface = z.infer<typeof NetplanStatusInterfaceSchema>;

export const NetplanStatusFactsSchema = z.object({
  onlineState: z.string().optional(),
  interfaces: z.array(NetplanStatusInterfaceSchema),
  /** `N inactive interfaces hidden` footer: the listing is not complete. */
  hiddenInactive: z.number().int().optional(),
});
export type NetplanStatusFacts = z.infer<typeof NetplanStatusFactsSchema>;

const HEADER = /^\s*●\s*(\d+):\s+(\S+)\s+(\S+)\s+(\S+)\s*(?:\((.*)\))?\s*$/;
const FIELD = /^\s*([A-Z][A-Za-z ]{1,30}):\s?(.*)$/;

export function parseNetplanStatus(text: string): NetplanStatusFacts {
  return guard(
    () => {
      const interfaces: NetplanStatusInterface[] = [];
      let onlineState: string | undefined;
      let hiddenInactive: number | undefined;
      let current: NetplanStatusInterface | undefined;
      let key: string | undefined;
      const add = (k: string, v: string) => {
        if (!current || v === '') return;
        const value = v.replace(/\s+\(.*\)$/, '').trim();
        if (k === 'Addresses') current.addresses.push(value);
        else if (k === 'Routes') current.routes.push(v.trim());
        else if (k === 'Interfaces')
          (current.members ??= []).push(...v.split(/[\s,]+/).filter((x) => x && !x.startsWith('(')));
        else if (k === 'MAC Address') current.mac = value;
        else if (k === 'Activation Mode') current.activationMode = value;
      };
      for (const line of cleanLines(text, { commands: ['netplan'] })) {
        const h = HEADER.exec(line);
        if (h) {
          const backend = h[5]?.split(':')[0]?.trim();
          current = {
            index: Number(h[1]),
            name: h[2]!,
            type: h[3]!,
            state: h[4]!,
            up: /(^|\/)UP$/.test(h[4]!),
            addresses: [],
            routes: [],
            ...(backend ? { backend } : {}),
          };
          interfaces.push(current);
          key = undefined;
          continue;
        }
        const hidden = /^\s*(\d+) inactive interfaces? hidden/.exec(line);
        if (hidden) {
          hiddenInactive = Number(hidden[1]);
          continue;
        }
        const f = FIELD.exec(line);
        if (f) {
          key = f[1]!.trim();
          if (key === 'Online state' && !current) onlineState = f[2]!.trim();
          else add(key, f[2]!);
          continue;
        }
        if (/^\s{8,}\S/.test(line) && key) add(key, line.trim());
        else if (line.trim() === '') key = undefined;
      }
      return validate(NetplanStatusFactsSchema, {
        interfaces,
        ...(onlineState ? { onlineState } : {}),
        ...(hiddenInactive !== undefined ? { hiddenInactive } : {}),
      });
    },
    () => ({ interfaces: [] }),
  );
}
