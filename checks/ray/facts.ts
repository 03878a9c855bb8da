/** What the ray stage reads about one host. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import { blocks, collectShared, type SharedFacts } from '../vllm/shared-facts.js';

export interface RayProcess {
  pid: number;
  args: string;
  kind: 'raylet' | 'gcs_server' | 'dashboard' | 'ray-start' | 'other';
  /** `--node_ip_address=` (raylet) / `--node-ip-address=` (gcs_server, ray start). */
  nodeIp?: string;
}

export interface RayFacts extends SharedFacts {
  unit: { loadState?: string; active?: string; subState?: string; nRestarts?: number; file?: string };
  /** NodeManagerAddress of every alive node, from `ray.nodes()`; undefined when Ray could not be asked. */
  nodeIps?: string[];
  nodeIpsEvidence: string;
  procs: RayProcess[];
  /** `Max locked memory` of the oldest raylet: `unlimited` or bytes; undefined without a raylet. */
  memlock?: string;
  memlockEvidence: string;
}

export function parseRayProcs(text: string): RayProcess[] {
  const out: RayProcess[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const args = m[2]!.trim();
    const kind: RayProcess['kind'] = /\/raylet(?:\s|$)/.test(args) ? 'raylet' : /\/gcs_server(?:\s|$)/.test(args) ? 'gcs_server' : /dashboard\/dashboard\.py/.test(args) ? 'dashboard' : /\bray start\b/.test(args) ? 'ray-start' : 'other';
    const ip = /--node[_-]ip[_-]address[= ](\S+)/.exec(args)?.[1];
    out.push({ pid: Number(m[1]), args, kind, ...(ip ? { nodeIp: ip } : {}) });
  }
  return out;
}

export function collectRay(outputs: ProbeOutputs): RayFacts {
  const r = outputs.results;
  const shared = collectShared(outputs);
  const unit: RayFacts['unit'] = {};
  for (const b of blocks(r['ray-unit']?.stdout ?? '')) {
    if (b.name === 'is-active') unit.active = b.body.trim().split('\n')[0];
    else if (b.name === 'show') {
      for (const line of b.body.split('\n')) {
        const eq = line.indexOf('=');
        const k = line.slice(0, eq);
        const v = line.slice(eq + 1);
        if (k === 'LoadState') unit.loadState = v;
        else if (k === 'SubState') unit.subState = v;
        else if (k === 'NRestarts' && /^\d+$/.test(v)) unit.nRestarts = Number(v);
      }
    } else if (b.name === 'file' && b.body.trim()) unit.file = `${b.body}\n`;
  }
  const ni = r['node-ips'];
  let nodeIps: string[] | undefined;
  if (ni?.exitCode === 0) {
    const last = ni.stdout.trim().split('\n').pop() ?? '';
    try {
      const v = JSON.parse(last) as unknown;
      if (Array.isArray(v)) nodeIps = v.map(String);
    } catch {
      nodeIps = undefined;
    }
  }
  const niText = ni ? `${ni.stdout}${ni.stderr}`.trim().split('\n') : [];
  const mem = r.memlock?.stdout ?? '';
  const ml = /^Max locked memory\s+(\S+)/m.exec(mem);
  return {
    ...shared,
    unit,
    ...(nodeIps ? { nodeIps } : {}),
    nodeIpsEvidence: ni ? `python -c 'import ray, json; ray.init(address="auto"); print(json.dumps([…NodeManagerAddress of alive nodes]))' → exit ${ni.exitCode}\n${niText.slice(-4).join('\n')}` : 'not run',
    procs: parseRayProcs(r['ray-procs']?.stdout ?? ''),
    ...(ml ? { memlock: ml[1] } : {}),
    memlockEvidence: mem.trim() ? `grep 'Max locked memory' /proc/$(pgrep -o raylet)/limits →\n${mem.trim()}` : 'no raylet',
  };
}
