/**
 * `ray start` output. Head (`ray start --head`): `Local node IP: <ip>`, the `Ray runtime started.` box and next
 * steps that tell other nodes how to join (2022: `To connect to this Ray runtime from another node, run`; 2023+:
 * `To add another node to this Ray cluster, run` + `ray start --address='<ip>:6379'`; macOS: `To connect to this
 * Ray cluster:`), the dashboard. Worker (`ray start --address=…`): the box and `To terminate the Ray runtime, run`
 * only. Failures: `ConnectionError`, `Failed to connect to GCS`, `ValueError: …`.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { logLines } from './log-lines.js';

export const RayStartFactsSchema = z.object({
  /** true for a head node, false for a worker; omitted when the text does not say. */
  head: z.boolean().optional(),
  nodeIp: z.string().optional(),
  started: z.boolean().optional(),
  /** `<ip>:<port>` other nodes join (head) or joined (worker command line). */
  address: z.string().optional(),
  dashboardUrl: z.string().optional(),
  rayVersion: z.string().optional(),
  errors: z.array(z.string()),
});
export type RayStartFacts = z.infer<typeof RayStartFactsSchema>;

export function parseRayStart(text: string): RayStartFacts {
  return guard(
    () => {
      const f: RayStartFacts = { errors: [] };
      let headHint = false;
      let workerCmd = false;
      for (const line of logLines(text)) {
        const t = line.trim();
        if (t === '') continue;
        const ip = /^Local node IP:\s*(\S+)/.exec(t);
        if (ip) {
          f.nodeIp ??= ip[1];
          continue;
        }
        if (/^Ray runtime started\.?$/.test(t)) {
          f.started = true;
          continue;
        }
        if (
          /To connect to this Ray runtime from another node|To add another node to this Ray cluster|To connect to this Ray cluster:|Next steps/.test(
            t,
          )
        ) {
          if (!/Next steps/.test(t)) headHint = true;
          continue;
        }
        const addr = /ray start --address=['"]?([^'"\s]+)/.exec(t);
        if (addr) {
          // The command the operator ran (not the indented next-steps hint a head prints).
          if (!/^\s/.test(line) && !/--head/.test(t)) workerCmd = true;
          f.address ??= addr[1];
          continue;
        }
        if (/(?:^|\s)ray start\b.*--head/.test(t)) {
          headHint = true;
          continue;
        }
        const dash = /(?:View the Ray dashboard at|dashboard at)\s+(\S+)/.exec(t);
        if (dash) {
          f.dashboardUrl ??= dash[1];
          continue;
        }
        const ver = /\bRay version:?\s*(\d+\.\d+\.\d+\S*)|ray, version (\d+\.\d+\.\d+)/.exec(t);
        if (ver) f.rayVersion ??= ver[1] ?? ver[2];
        if (
          /ConnectionError|Failed to connect to GCS|Unable to connect to GCS|ValueError:|RuntimeError:|Error:/.test(
            t,
          ) &&
          f.errors.length < 20
        )
          f.errors.push(t);
      }
      if (headHint) f.head = true;
      else if (workerCmd || (f.started && !headHint && /To terminate the Ray runtime/.test(text))) f.head = false;
      return validate(RayStartFactsSchema, compact(f));
    },
    () => ({ errors: [] }),
  );
}
