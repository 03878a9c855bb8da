/**
 * D24 Ray cluster smaller than the inventory expects — high (docs/RULES.md §3). `ray status`: fewer nodes, or fewer
 * GPUs in `<used>/<total> GPU`, than the expectation (the inventory: 2 nodes, 16.0 GPU), or any `Pending:` or
 * `Recent failures:` entry. doctor has no inventory: it passes no expectation, so only the Pending / failures part
 * (facts of the text itself) can fire there; live checks pass the inventory.
 */
import type { RayStatusScan } from '../../parse/ray-status.js';
import type { Finding } from '../types.js';

export interface RayExpectation {
  nodes: number;
  gpus: number;
}

export function d24RayClusterSmall(scan: RayStatusScan, expect?: RayExpectation): Finding | undefined {
  const f = scan.facts;
  const ev: string[] = [];
  let line: number | undefined;
  const alive = f.nodesActive !== undefined ? f.nodesActive + (f.nodesIdle ?? 0) : undefined;
  if (expect && alive !== undefined && alive < expect.nodes) {
    ev.push(
      `${alive} node(s) alive (Active ${f.nodesActive}${f.nodesIdle !== undefined ? `, Idle ${f.nodesIdle}` : ''}) < ${expect.nodes} expected`,
    );
    line ??= scan.activeHeader;
  }
  if (expect && f.gpusTotal !== undefined && f.gpusTotal < expect.gpus) {
    ev.push(
      `${scan.gpuLine ? `line ${scan.gpuLine.line}: ${scan.gpuLine.text}: ` : ''}${f.gpusTotal} GPU < ${expect.gpus} expected`,
    );
    line ??= scan.gpuLine?.line;
  }
  for (const p of scan.pendingLines.slice(0, 3)) ev.push(`line ${p.line}: Pending: ${p.text}`);
  for (const p of scan.failureLines.slice(0, 3)) ev.push(`line ${p.line}: Recent failure: ${p.text}`);
  line ??= scan.pendingLines[0]?.line ?? scan.failureLines[0]?.line;
  if (ev.length === 0) return undefined;
  return {
    rule: 'D24',
    severity: 'high',
    title: 'Ray cluster smaller than expected',
    evidence: ev.join('\n'),
    fix:
      'Causes: the worker never joined or joined a wrong address; it registered a management IP (R45: `ray start --address=<head>:6379 ' +
      '--node-ip-address=<cluster IP>`); the firewall blocks Ray (R48); Ray or Python versions differ (R47); the worker has no GPUs ' +
      "(D13, `--num-gpus=0`). Next: `ray list nodes` on the head, and the worker's `ray start` output.",
    ...(line !== undefined ? { line } : {}),
  };
}
