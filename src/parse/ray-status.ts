/**
 * `ray status` (also `-v`): `======== Autoscaler status: <time> ========`, `Node status` with `Active:` / `Idle:`
 * (Ray ≥ 2.8; `Healthy:` before), `Pending:`, `Recent failures:`, then `Resources` with `Usage:` (or `Total Usage:`)
 * counters `0.0/16.0 GPU`, `Constraints:`/`Total Constraints:` and `Demands:`/`Total Demands:`; `-v` adds per-node
 * `Node: <ip>` blocks, whose counters are not the cluster's. Node lines are `<count> <node type or id>`;
 * `(no pending nodes)` / `(no failures)` mark empty sections.
 */
import { z } from 'zod';
import { compact, guard, toNum, validate } from './common.js';
import { logLines } from './log-lines.js';

export const RayStatusFactsSchema = z.object({
  /** Nodes under `Active:` (or the legacy `Healthy:`). */
  nodesActive: z.number().int().optional(),
  /** Nodes under `Idle:` (alive, no running work). */
  nodesIdle: z.number().int().optional(),
  gpusUsed: z.number().optional(),
  gpusTotal: z.number().optional(),
  cpusUsed: z.number().optional(),
  cpusTotal: z.number().optional(),
  nodes: z.array(z.object({ state: z.enum(['active', 'idle', 'healthy']), count: z.number().int(), id: z.string() })),
  pending: z.array(z.string()),
  failures: z.array(z.string()),
  demands: z.array(z.string()),
  /** `Usage` counters of the cluster: `{ GPU: { used: 0, total: 16 } }`. */
  usage: z.record(z.string(), z.object({ used: z.string(), total: z.string() })),
  timestamp: z.string().optional(),
  errors: z.array(z.string()),
});
export type RayStatusFacts = z.infer<typeof RayStatusFactsSchema>;

export interface RayStatusScan {
  facts: RayStatusFacts;
  pendingLines: Array<{ line: number; text: string }>;
  failureLines: Array<{ line: number; text: string }>;
  gpuLine?: { line: number; text: string };
  activeHeader?: number;
}

export function scanRayStatus(text: string): RayStatusScan {
  const empty = (): RayStatusScan => ({
    facts: { nodes: [], pending: [], failures: [], demands: [], usage: {}, errors: [] },
    pendingLines: [],
    failureLines: [],
  });
  return guard(() => {
    const s = empty();
    const f = s.facts;
    let inNodes = false;
    let block:
      'active' | 'idle' | 'healthy' | 'pending' | 'failures' | 'usage' | 'demands' | 'constraints' | 'node' | undefined;
    const lines = logLines(text);
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i] ?? '';
      const t = raw.trim();
      if (t === '') continue;
      const ts = /^=+\s*Autoscaler status:\s*(.*?)\s*=+$/.exec(t);
      if (ts) {
        f.timestamp = ts[1];
        continue;
      }
      if (/^-{5,}$/.test(t) || t === 'Node status' || t === 'Resources') continue;
      const head =
        /^(Active|Idle|Healthy|Pending|Recent failures|(?:Total )?Usage|(?:Total )?Demands|(?:Total )?Constraints|Node: .*|Is Idle|Idle time):$|^Node: \S+/.exec(
          t,
        );
      if (head && !/^\s{2,}/.test(raw)) {
        const h = head[1] ?? 'Node:';
        // `ray status -v` per-node blocks (`Node: <ip>` then ` Usage:`) run to the end: their counters are not the cluster's.
        if (h.startsWith('Node:') || head[0].startsWith('Node:')) inNodes = true;
        if (inNodes) {
          block = 'node';
          continue;
        }
        if (h.startsWith('Node:')) block = 'node';
        else if (h === 'Active') {
          block = 'active';
          s.activeHeader = i + 1;
        } else if (h === 'Idle') block = 'idle';
        else if (h === 'Healthy') {
          block = 'healthy';
          s.activeHeader = i + 1;
        } else if (h === 'Pending') block = 'pending';
        else if (h === 'Recent failures') block = 'failures';
        else if (/Usage$/.test(h)) block = 'usage';
        else if (/Demands$/.test(h)) block = 'demands';
        else if (/Constraints$/.test(h)) block = 'constraints';
        else block = undefined;
        continue;
      }
      if (block === 'node' || block === undefined) continue;
      if (/^\(no .*\)$/.test(t)) continue;
      if (block === 'active' || block === 'idle' || block === 'healthy') {
        const n = /^(\d+)\s+(\S.*)$/.exec(t);
        if (n && f.nodes.length < 1000) f.nodes.push({ state: block, count: Number(n[1]), id: (n[2] ?? '').trim() });
        continue;
      }
      if (block === 'pending') {
        f.pending.push(t);
        if (s.pendingLines.length < 10) s.pendingLines.push({ line: i + 1, text: t });
        continue;
      }
      if (block === 'failures') {
        f.failures.push(t);
        if (s.failureLines.length < 10) s.failureLines.push({ line: i + 1, text: t });
        continue;
      }
      if (block === 'demands') {
        if (f.demands.length < 100) f.demands.push(t);
        continue;
      }
      if (block === 'usage') {
        // ` 8.0/16.0 GPU (8.0 used of 8.0 reserved in placement groups)`: the name is the first word.
        const u = /^(\S+)\/(\S+)\s+(\S+)/.exec(t);
        if (u?.[3]) {
          const name = u[3];
          if (!(name in f.usage)) f.usage[name] = { used: u[1] ?? '', total: u[2] ?? '' };
          if (name === 'GPU' && s.gpuLine === undefined) s.gpuLine = { line: i + 1, text: t };
        }
      }
    }
    const sum = (st: string): number | undefined => {
      const xs = f.nodes.filter((n) => n.state === st);
      return xs.length > 0 ? xs.reduce((a, n) => a + n.count, 0) : undefined;
    };
    const active = sum('active') ?? sum('healthy');
    if (active !== undefined) f.nodesActive = active;
    else if (s.activeHeader !== undefined) f.nodesActive = 0;
    const idle = sum('idle');
    if (idle !== undefined) f.nodesIdle = idle;
    const gpu = f.usage.GPU;
    if (gpu) {
      const used = toNum(gpu.used);
      const total = toNum(gpu.total);
      if (used !== undefined) f.gpusUsed = used;
      if (total !== undefined) f.gpusTotal = total;
    }
    const cpu = f.usage.CPU;
    if (cpu) {
      const used = toNum(cpu.used);
      const total = toNum(cpu.total);
      if (used !== undefined) f.cpusUsed = used;
      if (total !== undefined) f.cpusTotal = total;
    }
    for (const l of lines) {
      if (
        /ConnectionError|Could not find any running Ray instance|Failed to connect to GCS/i.test(l) &&
        f.errors.length < 10
      )
        f.errors.push(l.trim());
    }
    s.facts = validate(RayStatusFactsSchema, compact(f));
    return s;
  }, empty);
}

export function parseRayStatus(text: string): RayStatusFacts {
  return scanRayStatus(text).facts;
}
