/** What the ray stage reads about one host. */
import { probeProblems, type ProbeProblem } from '../../src/engine/probe-health.js';
import type { ProbeOutputs } from '../../src/engine/types.js';
import { collectShared, collectUnit, type SharedFacts, type UnitFacts } from '../vllm/shared-facts.js';
import { rayProbes } from './probes.js';

export interface RayProcess {
  pid: number;
  args: string;
  kind: 'raylet' | 'gcs_server' | 'dashboard' | 'ray-start' | 'other';
  /** `--node_ip_address=` (raylet) / `--node-ip-address=` (gcs_server, ray start). */
  nodeIp?: string;
}

export interface RayFacts extends SharedFacts {
  unit: UnitFacts;
  /** NodeManagerAddress of every alive node, from `ray.nodes()`; undefined when Ray could not be asked. */
  nodeIps?: string[];
  nodeIpsEvidence: string;
  procs: RayProcess[];
  /** `Max locked memory` of the oldest raylet: `unlimited` or bytes; undefined without a raylet. */
  memlock?: string;
  memlockEvidence: string;
  /** Why the memlock probe says nothing (pgrep missing): its "no raylet" is then no answer. */
  memlockUnreadable: ProbeProblem[];
}

export function parseRayProcs(text: string): RayProcess[] {
  const out: RayProcess[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const args = m[2]!.trim();
    const kind: RayProcess['kind'] = /\/raylet(?:\s|$)/.test(args)
      ? 'raylet'
      : /\/gcs_server(?:\s|$)/.test(args)
        ? 'gcs_server'
        : /dashboard\/dashboard\.py/.test(args)
          ? 'dashboard'
          : /\bray start\b/.test(args)
            ? 'ray-start'
            : 'other';
    const ip = /--node[_-]ip[_-]address[= ](\S+)/.exec(args)?.[1];
    out.push({ pid: Number(m[1]), args, kind, ...(ip ? { nodeIp: ip } : {}) });
  }
  return out;
}

export function collectRay(outputs: ProbeOutputs): RayFacts {
  const r = outputs.results;
  const shared = collectShared(outputs);
  const probe = (id: string) => rayProbes.find((p) => p.id === id);
  const unit = collectUnit(probe('ray-unit'), r['ray-unit']);
  const memlockProbe = probe('memlock');
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
    nodeIpsEvidence: ni
      ? `python -c 'import ray, json; ray.init(address="auto"); print(json.dumps([…NodeManagerAddress of alive nodes]))' → exit ${ni.exitCode}\n${niText.slice(-4).join('\n')}`
      : 'not run',
    procs: parseRayProcs(r['ray-procs']?.stdout ?? ''),
    ...(ml ? { memlock: ml[1] } : {}),
    memlockEvidence: mem.trim()
      ? `grep 'Max locked memory' /proc/$(pgrep -o raylet)/limits →\n${mem.trim()}`
      : 'no raylet',
    memlockUnreadable: memlockProbe && r.memlock ? probeProblems(memlockProbe, r.memlock) : [],
  };
}
