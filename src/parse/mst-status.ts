/**
 * `mst status [-v]` (NVIDIA MFT). `MST modules:` lists whether the MST PCI and PCI-configuration modules are
 * loaded. `-v` prints a table `DEVICE_TYPE MST PCI RDMA NET NUMA` (`ConnectX4LX(rev:0)`,
 * `/dev/mst/mt4117_pciconf0` or `NA`, `31:00.0`, `mlx5_0`, `net-ens1f0`, `0`), cells possibly empty, rows
 * with trailing spaces and blank lines between them; cells are classified by shape. Without `-v`,
 * `MST devices:` lists `/dev/mst/<dev> - <access>` with `domain:bus:dev.fn=…` continuation lines.
 */
import { z } from 'zod';
import { compact, guard, normalizeBdf, toInt, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const MstDeviceSchema = z.object({
  type: z.string().optional(),
  mst: z.string().optional(),
  bdf: z.string().optional(),
  rdma: z.string().optional(),
  /** Without the `net-` prefix. */
  net: z.string().optional(),
  numa: z.number().int().optional(),
  access: z.string().optional(),
});
export type MstDevice = z.infer<typeof MstDeviceSchema>;

export const MstStatusFactsSchema = z.object({
  pciModuleLoaded: z.boolean().optional(),
  pciConfModuleLoaded: z.boolean().optional(),
  devices: z.array(MstDeviceSchema),
});
export type MstStatusFacts = z.infer<typeof MstStatusFactsSchema>;

const BDF = /^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$/;

export function parseMstStatus(text: string): MstStatusFacts {
  return guard(
    () => {
      const out: MstStatusFacts = { devices: [] };
      let table = false;
      let last: MstDevice | undefined;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        let m: RegExpExecArray | null;
        if ((m = /^MST PCI (configuration )?module (is not loaded|loaded|is loaded)/i.exec(t))) {
          const loaded = !/not/i.test(m[2] ?? '');
          if (m[1]) out.pciConfModuleLoaded = loaded;
          else out.pciModuleLoaded = loaded;
          continue;
        }
        if (/^DEVICE_TYPE\s+MST\s+PCI\s+RDMA\s+NET\s+NUMA/.test(t)) {
          table = true;
          continue;
        }
        if ((m = /^(\/dev\/mst\/\S+)\s+-\s+(.*)$/.exec(t))) {
          last = compact({ mst: m[1], access: (m[2] ?? '').replace(/\.$/, '') || undefined });
          out.devices.push(last);
          continue;
        }
        if (last && (m = /domain:bus:dev\.fn=(\S+)/.exec(t))) {
          last.bdf = normalizeBdf(m[1]);
          continue;
        }
        if (!table) continue;
        const tok = t.split(/\s+/);
        if (!/\(rev:/.test(tok[0] ?? '')) continue;
        const d: MstDevice = { type: tok[0] };
        for (const x of tok.slice(1)) {
          if (x.startsWith('/dev/mst/') || x === 'NA') d.mst ??= x === 'NA' ? undefined : x;
          else if (BDF.test(x)) d.bdf ??= normalizeBdf(x);
          else if (x.startsWith('net-')) d.net ??= x.slice(4);
          else if (/^-?\d+$/.test(x)) d.numa ??= toInt(x);
          else if (/^[A-Za-z][\w]*_\w+$|^[a-z]+\d+$/.test(x)) d.rdma ??= x;
        }
        out.devices.push(compact(d));
      }
      return validate(MstStatusFactsSchema, compact(out));
    },
    () => ({ devices: [] }),
  );
}
