/**
 * D16 vLLM launch or configuration error — blocker (docs/RULES.md §3). Read by vllm-log.
 */
import type { Finding } from '../types.js';

export interface VllmLine {
  line: number;
  text: string;
}

const PATTERNS: RegExp[] = [
  /World size \(\d+\) is larger than the number of available GPUs \(\d+\) in this node/i,
  /local_world_size \(\d+\) must be less than or equal to the number of visible devices \(\d+\)/i,
  /The number of required GPUs exceeds the total number of available GPUs in the (?:placement group|cluster)/i,
  /Tensor parallel size \(\d+\) exceeds available GPUs \(\d+\)/i,
  /error: unrecognized arguments:/i,
];
const WAITING = /Waiting for creating a placement group of specs for/i;

/** Scans the lines once; `lines` are the log's lines (control characters stripped). */
export function d16VllmLaunch(lines: readonly string[]): Finding | undefined {
  const hits: VllmLine[] = [];
  const waiting: VllmLine[] = [];
  let localRay: VllmLine | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] ?? '';
    if (l.length < 20) continue;
    if (!/GPUs|world_size|World size|unrecognized|placement group|Ray instance/i.test(l)) continue;
    if (PATTERNS.some((p) => p.test(l))) {
      if (hits.length < 5) hits.push({ line: i + 1, text: l.trim() });
    } else if (WAITING.test(l)) {
      if (waiting.length < 5) waiting.push({ line: i + 1, text: l.trim() });
    } else if (/Started a local Ray instance/.test(l)) localRay ??= { line: i + 1, text: l.trim() };
  }
  const trig = [...hits];
  if (waiting.length >= 2) trig.push(...waiting.slice(0, 2));
  trig.sort((a, b) => a.line - b.line);
  const first = trig[0];
  if (!first) return undefined;
  const all = trig.map((h) => h.text).join('\n');
  const causes: string[] = [];
  if (/unrecognized arguments/i.test(all)) {
    const flags = /unrecognized arguments:\s*(.*)$/i.exec(all)?.[1];
    causes.push(
      `a removed or invented flag${flags ? ` (${flags.trim()})` : ''}: R40 (--engine-use-ray was removed, --worker-use-ray is --distributed-executor-backend ray, --ray-address never existed; vLLM reads RAY_ADDRESS)`,
    );
  }
  if (localRay)
    causes.push(
      `vLLM started its own Ray (line ${localRay.line}: "Started a local Ray instance"): export RAY_ADDRESS=<head IP>:6379 before \`vllm serve\``,
    );
  if (/World size|local_world_size|Tensor parallel size/i.test(all))
    causes.push('TP × PP exceeds one node under the mp backend without --nnodes, or CUDA_VISIBLE_DEVICES hides GPUs');
  if (/placement group/i.test(all))
    causes.push('the Ray cluster lacks nodes or GPUs (D24, R45): `ray status` must show 2 nodes and 16.0 GPU');
  return {
    rule: 'D16',
    severity: 'blocker',
    title: 'vLLM launch or configuration error',
    evidence:
      trig
        .slice(0, 4)
        .map((h) => `line ${h.line}: ${h.text}`)
        .join('\n') + (localRay ? `\nline ${localRay.line}: ${localRay.text}` : ''),
    fix: `Causes here: ${causes.join('; ')}. Next: \`ray status\` on the head, then \`l20-setup lint\` on the vllm command line (R40, R42).`,
    line: first.line,
  };
}
