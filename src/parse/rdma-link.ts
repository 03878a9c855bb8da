/**
 * `rdma link [show]` (iproute2). Current format: `link mlx5_0/1 state ACTIVE physical_state LINK_UP
 * netdev ens1f0 ` — every `key value` pair is followed by a space, IB ports have no `netdev` and may
 * add `subnet_prefix`/`lid`/`sm_lid`/`lmc`. iproute2 before 5.x printed `1/1: mlx5_0/1: state …`.
 * `rdma -j link` (JSON array with `ifname`, `port`, `state`, `physical_state`, `netdev`) is read too.
 */
import { z } from 'zod';
import {
  cleanLines,
  cleanText,
  compact,
  guard,
  isRecord,
  num,
  parseJsonLoose,
  str,
  toInt,
  validate,
} from './common.js';

export const RdmaPortSchema = z.object({
  device: z.string(),
  port: z.number().int(),
  /** As printed: `ACTIVE`, `DOWN`, `INIT`, `ARMED`, … */
  state: z.string().optional(),
  /** As printed: `LINK_UP`, `DISABLED`, `POLLING`, … */
  physState: z.string().optional(),
  netdev: z.string().optional(),
  netdevIndex: z.number().int().optional(),
  lid: z.number().int().optional(),
  smLid: z.number().int().optional(),
  subnetPrefix: z.string().optional(),
});
export type RdmaPort = z.infer<typeof RdmaPortSchema>;

export const RdmaLinkFactsSchema = z.object({ ports: z.array(RdmaPortSchema) });
export type RdmaLinkFacts = z.infer<typeof RdmaLinkFactsSchema>;

// The kernel's port state names (ib_port_state / phys_state strings in rdma/link.c); a value outside
// these sets on a cut last line is a fragment (`ACT`) and is dropped.
const STATES = new Set(['NOP', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER', 'UNKNOWN']);
const PHYS_STATES = new Set([
  'NOP',
  'SLEEP',
  'POLLING',
  'DISABLED',
  'PORT_CONFIGURATION_TRAINING',
  'LINK_UP',
  'LINK_ERROR_RECOVERY',
  'PHY_TEST',
  'UNKNOWN',
]);

// `link <dev>/<port> …` or legacy `<idx>/<port>: <dev>/<port>: …`
const LINE_RE = /^\s*(?:link\s+|\d+\/\d+:\s+)([^\s/]+)\/(\d+):?(?:\s+(.*))?$/;

function valueOf(rest: string, key: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)${key}\\s+(\\S+)`).exec(rest);
  return m?.[1];
}

function fromJson(value: unknown): RdmaPort[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const ports: RdmaPort[] = [];
  for (const o of value) {
    if (!isRecord(o)) continue;
    const device = str(o['ifname']);
    const port = num(o['port']);
    if (!device || port === undefined) continue;
    ports.push(
      compact({
        device,
        port,
        state: str(o['state']),
        physState: str(o['physical_state']),
        netdev: str(o['netdev']),
        netdevIndex: num(o['netdev_index']),
        lid: num(o['lid']),
        smLid: num(o['sm_lid']),
        subnetPrefix: str(o['subnet_prefix']),
      }),
    );
  }
  return ports;
}

export function parseRdmaLink(text: string): RdmaLinkFacts {
  return guard(
    () => {
      const cleaned = cleanText(text, { commands: ['rdma'] });
      if (/^\s*\[/.test(cleaned)) {
        const json = fromJson(parseJsonLoose(cleaned).value);
        if (json) return validate(RdmaLinkFactsSchema, { ports: json });
      }
      const ports: RdmaPort[] = [];
      for (const line of cleanLines(cleaned)) {
        const m = LINE_RE.exec(line);
        if (!m || m[1] === undefined) continue;
        const port = toInt(m[2]);
        if (port === undefined) continue;
        const rest = m[3] ?? '';
        const state = valueOf(rest, 'state');
        const phys = valueOf(rest, 'physical_state');
        ports.push(
          compact({
            device: m[1],
            port,
            state: state !== undefined && STATES.has(state) ? state : undefined,
            physState: phys !== undefined && PHYS_STATES.has(phys) ? phys : undefined,
            netdev: valueOf(rest, 'netdev'),
            netdevIndex: toInt(valueOf(rest, 'netdev_index')),
            lid: toInt(valueOf(rest, 'lid')),
            smLid: toInt(valueOf(rest, 'sm_lid')),
            subnetPrefix: valueOf(rest, 'subnet_prefix'),
          }),
        );
      }
      return validate(RdmaLinkFactsSchema, { ports });
    },
    () => ({ ports: [] }),
  );
}
