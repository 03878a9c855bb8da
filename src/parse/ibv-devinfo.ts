/**
 * `ibv_devinfo [-v|-vv]` and `ibv_devinfo -l` (rdma-core libibverbs/examples/devinfo.c).
 *
 * `hca_id:\t<dev>` starts a device; device fields are `\t<key>:\t\t<value>`; `port:\t<n>` starts a port
 * whose fields are indented one level deeper (`state: PORT_ACTIVE (4)`, `active_mtu: 1024 (3)`,
 * `link_layer: Ethernet`). With `-v`, GIDs follow: rdma-core ≥ v29 prints
 * `GID[  3]:\t\t::ffff:192.168.1.11, RoCE v2` (type on Ethernet ports only, v2 GIDs via inet_ntop);
 * older stacks print `GID[  0]:\t\tfe80:0000:…` in full hex and no type. MLNX_OFED 4.x adds
 * `Device ports:` and EXP_* capability lines. `-l` prints `N HCAs found:` and one name per line.
 * An excerpt may start after the `hca_id:` line: ports are then reported without a device.
 */
import { z } from 'zod';
import { compact, guard, toInt, validate } from './common.js';
import { gidIpv4, rdmaLines } from './rdma-util.js';

export const IbvPortSchema = z.object({
  /** Omitted when the excerpt starts after the `hca_id:` line. */
  device: z.string().optional(),
  port: z.number().int(),
  /** As printed without the number: `PORT_ACTIVE`, `PORT_DOWN`, `PORT_INIT`, `PORT_ARMED`. */
  state: z.string().optional(),
  stateCode: z.number().int().optional(),
  physState: z.string().optional(),
  linkLayer: z.string().optional(),
  /** Bytes: 256 … 4096. */
  activeMtu: z.number().int().optional(),
  maxMtu: z.number().int().optional(),
  activeWidth: z.string().optional(),
  activeSpeed: z.string().optional(),
  smLid: z.number().int().optional(),
  portLid: z.number().int().optional(),
});
export type IbvPort = z.infer<typeof IbvPortSchema>;

export const IbvGidSchema = z.object({
  device: z.string().optional(),
  port: z.number().int(),
  index: z.number().int(),
  gid: z.string(),
  /** `v1` / `v2`, when printed (rdma-core ≥ v29, Ethernet ports). */
  version: z.enum(['v1', 'v2']).optional(),
  ipv4: z.string().optional(),
});
export type IbvGid = z.infer<typeof IbvGidSchema>;

export const IbvDeviceSchema = z.object({
  device: z.string(),
  transport: z.string().optional(),
  fwVer: z.string().optional(),
  nodeGuid: z.string().optional(),
  sysImageGuid: z.string().optional(),
  vendorId: z.string().optional(),
  vendorPartId: z.number().int().optional(),
  hwVer: z.string().optional(),
  boardId: z.string().optional(),
  physPortCnt: z.number().int().optional(),
});
export type IbvDevice = z.infer<typeof IbvDeviceSchema>;

export const IbvDevinfoFactsSchema = z.object({
  devices: z.array(IbvDeviceSchema),
  ports: z.array(IbvPortSchema),
  gids: z.array(IbvGidSchema).optional(),
  /** `ibv_devinfo -l`: the listed device names. */
  hcas: z.array(z.string()).optional(),
  /** `No IB devices found`. */
  noDevices: z.boolean().optional(),
});
export type IbvDevinfoFacts = z.infer<typeof IbvDevinfoFactsSchema>;

const PORT_STATES = new Set(['PORT_NOP', 'PORT_DOWN', 'PORT_INIT', 'PORT_ARMED', 'PORT_ACTIVE', 'PORT_ACTIVE_DEFER']);
const FIELD_RE = /^\s*([A-Za-z_][\w ]*?):\s*(.*)$/;
const GID_RE = /^\s*GID\[\s*(\d+)\]:\s*([0-9A-Fa-f:.]+?)(?:\s*,\s*(?:RoCE\s*)?(v[12]))?\s*$/;

function named(v: string): { name?: string; code?: number } {
  const m = /^([A-Z_]+)\s*\((\d+)\)/.exec(v);
  if (m) return { name: m[1], code: toInt(m[2]) };
  return { name: /^[A-Z_]+$/.test(v) ? v : undefined };
}

export function parseIbvDevinfo(text: string): IbvDevinfoFacts {
  return guard(
    () => {
      const devices: IbvDevice[] = [];
      const ports: IbvPort[] = [];
      const gids: IbvGid[] = [];
      const hcas: string[] = [];
      let noDevices = false;
      let dev: IbvDevice | undefined;
      let port: IbvPort | undefined;
      let inList = false;
      for (const line of rdmaLines(text, { commands: ['ibv_devinfo'] })) {
        const t = line.trim();
        if (t === '') continue;
        if (/^No IB devices found/i.test(t)) {
          noDevices = true;
          continue;
        }
        if (/^\d+\s+HCAs?\s+found:?$/.test(t)) {
          inList = true;
          continue;
        }
        if (inList) {
          if (/^\s+[\w.-]+$/.test(line)) {
            hcas.push(t);
            continue;
          }
          inList = false;
        }
        const h = /^\s*hca_id:\s*(\S+)\s*$/.exec(line);
        if (h && h[1] !== undefined) {
          dev = { device: h[1] };
          devices.push(dev);
          port = undefined;
          continue;
        }
        const p = /^\s*port:\s*(\d+)\s*$/.exec(line);
        if (p) {
          const n = toInt(p[1]);
          if (n === undefined) continue;
          port = compact({ device: dev?.device, port: n });
          ports.push(port);
          continue;
        }
        const g = GID_RE.exec(line);
        if (g && port && g[2] !== undefined) {
          const index = toInt(g[1]);
          if (index === undefined) continue;
          const gid = g[2];
          // A cut GID is shorter than any printed form; keep only complete addresses.
          if (!/^[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){7}$/i.test(gid) && !/::/.test(gid)) continue;
          gids.push(
            compact({
              device: port.device,
              port: port.port,
              index,
              gid,
              version: g[3] === 'v1' || g[3] === 'v2' ? g[3] : undefined,
              ipv4: gidIpv4(gid),
            }),
          );
          continue;
        }
        const f = FIELD_RE.exec(line);
        if (!f || f[1] === undefined) continue;
        const key = f[1].trim();
        const value = (f[2] ?? '').trim();
        if (value === '') continue;
        if (port) {
          switch (key) {
            case 'state': {
              const { name, code } = named(value);
              if (name !== undefined && PORT_STATES.has(name)) port.state = name;
              if (code !== undefined && /\(\d+\)/.test(value)) port.stateCode = code;
              continue;
            }
            case 'phys_state': {
              const { name } = named(value);
              if (name !== undefined && /\(\d+\)/.test(value)) port.physState = name;
              continue;
            }
            case 'link_layer':
              if (/^(InfiniBand|Ethernet|Unknown)$/i.test(value)) port.linkLayer = value;
              continue;
            case 'active_mtu':
            case 'max_mtu': {
              const m = /^(\d+)\s*\(\d+\)/.exec(value);
              const n = m ? toInt(m[1]) : undefined;
              if (n !== undefined) port[key === 'active_mtu' ? 'activeMtu' : 'maxMtu'] = n;
              continue;
            }
            case 'active_width':
              port.activeWidth = value;
              continue;
            case 'active_speed':
              port.activeSpeed = value;
              continue;
            case 'sm_lid':
            case 'port_lid': {
              const n = toInt(value);
              if (n !== undefined) port[key === 'sm_lid' ? 'smLid' : 'portLid'] = n;
              continue;
            }
            default:
              continue;
          }
        }
        if (!dev) continue;
        switch (key) {
          case 'transport':
            dev.transport = value;
            break;
          case 'fw_ver':
            dev.fwVer = value;
            break;
          case 'node_guid':
            dev.nodeGuid = value;
            break;
          case 'sys_image_guid':
            dev.sysImageGuid = value;
            break;
          case 'vendor_id':
            dev.vendorId = value;
            break;
          case 'vendor_part_id': {
            const n = toInt(value);
            if (n !== undefined) dev.vendorPartId = n;
            break;
          }
          case 'hw_ver':
            dev.hwVer = value;
            break;
          case 'board_id':
            dev.boardId = value;
            break;
          case 'phys_port_cnt': {
            const n = toInt(value);
            if (n !== undefined) dev.physPortCnt = n;
            break;
          }
          default:
            break;
        }
      }
      return validate(
        IbvDevinfoFactsSchema,
        compact({
          devices,
          ports,
          gids: gids.length ? gids : undefined,
          hcas: hcas.length ? hcas : undefined,
          noDevices: noDevices ? true : undefined,
        }),
      );
    },
    () => ({ devices: [], ports: [] }),
  );
}
