/**
 * `ibstat` / `ibstat <ca>` / `ibstat <ca> <port>` (rdma-core infiniband-diags `ibstat.c`).
 *
 * `CA '<name>'` starts a CA; CA fields are indented by one TAB (8 spaces when pasted), `Port N:` and the
 * port fields by two. The per-port form prints `CA: '<name>'` and unindented fields. Rates are Gb/s
 * (`Rate: 400`, `2.5`, `56 (FDR10)`); a down port still prints a rate, which says nothing about the link.
 * New lines (`Effective speed:`) are tolerated; `ibpanic:` lines (a CA vanished mid-scan) are kept as
 * errors.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { parseRateGbps, toIntAny, rdmaLines } from './rdma-util.js';

export const IbstatPortSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  /** As printed: `Active`, `Down`, `Initializing`, `Armed`. */
  state: z.string().optional(),
  /** As printed: `LinkUp`, `Polling`, `Disabled`. */
  physState: z.string().optional(),
  rateGbps: z.number().optional(),
  effectiveSpeed: z.string().optional(),
  baseLid: z.number().int().optional(),
  lmc: z.number().int().optional(),
  smLid: z.number().int().optional(),
  capabilityMask: z.string().optional(),
  portGuid: z.string().optional(),
  /** `InfiniBand` or `Ethernet`. */
  linkLayer: z.string().optional(),
});
export type IbstatPort = z.infer<typeof IbstatPortSchema>;

export const IbstatCaSchema = z.object({
  device: z.string(),
  /** `MT4117` (ConnectX-4 Lx), `MT4115` (ConnectX-4), `MT4129` … */
  caType: z.string().optional(),
  numPorts: z.number().int().optional(),
  firmware: z.string().optional(),
  hardware: z.string().optional(),
  nodeGuid: z.string().optional(),
  systemImageGuid: z.string().optional(),
});
export type IbstatCa = z.infer<typeof IbstatCaSchema>;

export const IbstatFactsSchema = z.object({
  cas: z.array(IbstatCaSchema),
  ports: z.array(IbstatPortSchema),
  /** `ibpanic: …` lines. */
  errors: z.array(z.string()).optional(),
});
export type IbstatFacts = z.infer<typeof IbstatFactsSchema>;

// ibstat.c's port_state_str / port_phy_state_str; anything else (a cut `Acti`) is not a state.
const STATES = new Set(['Down', 'Initializing', 'Armed', 'Active', '???']);
const PHYS_STATES = new Set([
  'No state change',
  'Sleep',
  'Polling',
  'Disabled',
  'PortConfigurationTraining',
  'LinkUp',
  'LinkErrorRecovery',
  'PhyTest',
  '???',
]);

// `CA 'mlx5_0'` (node types: CA, Switch, Router, iWARP RNIC); the per-port form prints `CA: 'mlx5_0'`.
const CA_RE = /^\s*(?:CA|Switch|Router|iWARP RNIC|\?\?\?):?\s+'([^']+)'\s*$/;
const PORT_RE = /^\s*Port\s+(\d+):\s*$/;
const FIELD_RE = /^\s*([A-Za-z][A-Za-z ]*?):\s*(.*)$/;

const CA_KEYS: Record<string, keyof IbstatCa> = {
  'CA type': 'caType',
  'Firmware version': 'firmware',
  'Hardware version': 'hardware',
  'Node GUID': 'nodeGuid',
  'System image GUID': 'systemImageGuid',
};

export function parseIbstat(text: string): IbstatFacts {
  return guard(
    () => {
      const cas: IbstatCa[] = [];
      const ports: IbstatPort[] = [];
      const errors: string[] = [];
      let ca: IbstatCa | undefined;
      let port: IbstatPort | undefined;
      for (const line of rdmaLines(text, { commands: ['ibstat'] })) {
        const t = line.trim();
        if (t === '') continue;
        if (/^ibpanic:/.test(t) || /^ibwarn:/.test(t)) {
          errors.push(t);
          continue;
        }
        const c = CA_RE.exec(line);
        if (c && c[1] !== undefined) {
          ca = { device: c[1] };
          cas.push(ca);
          port = undefined;
          continue;
        }
        if (!ca) continue;
        const p = PORT_RE.exec(line);
        if (p) {
          const n = toInt(p[1]);
          if (n === undefined) continue;
          port = { device: ca.device, port: n };
          ports.push(port);
          continue;
        }
        const f = FIELD_RE.exec(line);
        if (!f || f[1] === undefined) continue;
        const key = f[1].trim().replace(/^(?:Switch|Router|iWARP RNIC) type$/, 'CA type');
        const value = (f[2] ?? '').trim();
        if (value === '') continue;
        if (port) {
          switch (key) {
            case 'State':
              if (STATES.has(value)) port.state = value;
              continue;
            case 'Physical state':
              if (PHYS_STATES.has(value)) port.physState = value;
              continue;
            case 'Rate': {
              const r = parseRateGbps(value);
              if (r !== undefined) port.rateGbps = r;
              continue;
            }
            case 'Effective speed':
              port.effectiveSpeed = value;
              continue;
            case 'Base lid': {
              const n = toIntAny(value);
              if (n !== undefined) port.baseLid = n;
              continue;
            }
            case 'LMC': {
              const n = toIntAny(value);
              if (n !== undefined) port.lmc = n;
              continue;
            }
            case 'SM lid': {
              const n = toIntAny(value);
              if (n !== undefined) port.smLid = n;
              continue;
            }
            case 'Capability mask':
              port.capabilityMask = value;
              continue;
            case 'Port GUID':
              port.portGuid = value;
              continue;
            case 'Link layer':
              if (/^(InfiniBand|Ethernet)$/i.test(value)) port.linkLayer = value;
              continue;
            default:
              break;
          }
        }
        if (key === 'Number of ports') {
          const n = toInt(value);
          if (n !== undefined) ca.numPorts = n;
          continue;
        }
        const ck = CA_KEYS[key];
        if (ck && ck !== 'device' && ck !== 'numPorts') (ca as Record<string, unknown>)[ck] = value;
      }
      return validate(
        IbstatFactsSchema,
        compact({
          cas: cas.map((c) => compact(c)),
          ports: ports.map((p) => compact(p)),
          errors: errors.length ? errors : undefined,
        }),
      );
    },
    () => ({ cas: [], ports: [] }),
  );
}
