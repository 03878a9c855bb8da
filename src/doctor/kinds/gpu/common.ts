/**
 * Shared helpers of the GPU-family doctor kinds: text-head slicing, cheap literal gates, line lookups, the
 * nvidia-smi driver-error hits (D13), and the summary rows and findings list the nvidia-smi forms share.
 */
import { logLines } from '../../../parse/log-lines.js';
import { SMI_DRIVER_ERROR } from '../../../parse/nvidia-smi.js';
import type { D13Hit } from '../../../rules/output/d13-nvidia-driver.js';
import { d21GpuErrors, type D21Hit } from '../../../rules/output/d21-gpu-errors.js';
import { d23MigEnabled, type D23Hit } from '../../../rules/output/d23-mig-enabled.js';
import type { Finding } from '../../../rules/types.js';

const HEAD = 256 * 1024;
export const head = (t: string, n = HEAD): string => (t.length > n ? t.slice(0, n) : t);
export const defined = (xs: Array<Finding | undefined>): Finding[] => xs.filter((x): x is Finding => x !== undefined);
export const fmt = (n: number | undefined, unit = ''): string =>
  n === undefined ? '?' : `${Math.round(n * 100) / 100}${unit}`;

/** Cheap gate before any regex: does the text hold one of these literal strings? */
export const hasAny = (t: string, ...needles: string[]): boolean => needles.some((n) => t.includes(n));

/** The first `n` lines of `text`, without splitting the rest. */
export function firstLines(text: string, n: number): string[] {
  const out: string[] = [];
  let at = 0;
  while (out.length < n && at <= text.length) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    out.push(text.slice(at, Math.min(end, at + 4096)));
    if (nl < 0) break;
    at = nl + 1;
  }
  return out;
}

/** 0-based index of the first non-empty line matching `re` among the first `max` non-empty lines, or -1. */
export function lineIndexOf(text: string, re: RegExp, max = 40): number {
  let k = 0;
  for (const l of firstLines(text, 400)) {
    if (l.trim() === '') continue;
    if (re.test(l)) return k;
    if (++k >= max) break;
  }
  return -1;
}

/** nvidia-smi driver/NVML error lines near the top of the text (D13 evidence). */
export function smiDriverHits(text: string): D13Hit[] {
  const hits: D13Hit[] = [];
  const lines = logLines(head(text, 64 * 1024));
  for (let i = 0; i < lines.length && hits.length < 5; i++) {
    const l = (lines[i] ?? '').trim();
    if (SMI_DRIVER_ERROR.test(l)) hits.push({ line: i + 1, text: l });
  }
  return hits;
}

/** The driver / CUDA / GPU-count rows the nvidia-smi table and `nvidia-smi -q` summaries start with. */
export function smiHeaderRows(f: {
  driverVersion?: string;
  cudaVersion?: string;
  gpus: Array<{ name?: string }>;
}): Array<[string, string]> {
  const rows: Array<[string, string]> = [];
  if (f.driverVersion) rows.push(['driver', f.driverVersion]);
  if (f.cudaVersion) rows.push(['CUDA (driver)', f.cudaVersion]);
  const names = [...new Set(f.gpus.map((g) => g.name).filter((n) => n))];
  rows.push(['GPUs', `${f.gpus.length}${names.length > 0 ? ` × ${names.join(', ')}` : ''}`]);
  return rows;
}

/** D13, D21 and D23 in that order, the findings every nvidia-smi form reports. */
export function smiFindings(d13: Finding | undefined, d21: D21Hit[], d23: D23Hit[]): Finding[] {
  return defined([d13, d21GpuErrors(d21), d23MigEnabled(d23)]);
}
