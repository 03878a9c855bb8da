/**
 * `ibv_devices` (rdma-core libibverbs/examples/device.c): a header `    device          \t   node GUID`, a
 * dashed rule, then one device per line — 4 spaces, the name padded to 16, a TAB, 16 hex digits.
 * Pastes expand the TAB or re-indent; rows are read by shape.
 */
import { z } from 'zod';
import { guard, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const IbvDevicesFactsSchema = z.object({
  devices: z.array(z.object({ device: z.string(), guid: z.string() })),
});
export type IbvDevicesFacts = z.infer<typeof IbvDevicesFactsSchema>;

const ROW_RE = /^\s*([A-Za-z][\w.-]*)\s+([0-9a-fA-F]{16})\s*$/;

export function parseIbvDevices(text: string): IbvDevicesFacts {
  return guard(
    () => {
      const devices: Array<{ device: string; guid: string }> = [];
      for (const line of rdmaLines(text, { commands: ['ibv_devices'] })) {
        const m = ROW_RE.exec(line);
        if (m && m[1] !== undefined && m[2] !== undefined) devices.push({ device: m[1], guid: m[2].toLowerCase() });
      }
      return validate(IbvDevicesFactsSchema, { devices });
    },
    () => ({ devices: [] }),
  );
}
