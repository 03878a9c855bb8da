/** Helpers for the RDMA-kind tests: run a kind the way doctor does (cleaned text), by kind id. */
import { rdmaKinds } from '../../src/doctor/kinds/rdma.js';
import type { KindDef } from '../../src/doctor/types.js';
import { cleanText } from '../../src/parse/common.js';
import type { Finding } from '../../src/rules/types.js';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFixture } from '../parse/fixtures.js';
import { KIND_BY_PREFIX } from './expected-kinds.js';

const DIR = resolve(import.meta.dirname, '../fixtures');

export function kindOf(id: string): KindDef {
  const k = rdmaKinds.find((x) => x.kind === id);
  if (!k) throw new Error(`no kind ${id}`);
  return k;
}

/** Facts, findings and summary of `text` read as kind `id`, as doctor would (cleaned text). */
export function run<F = any>(
  id: string,
  text: string,
): { facts: F; findings: Finding[]; summary: Array<[string, string]>; text: string } {
  const k = kindOf(id);
  const cleaned = cleanText(text);
  const facts = k.parse(cleaned) as F;
  return { facts, findings: k.findings(facts, cleaned), summary: k.summary(facts), text: cleaned };
}

export function sample<F = any>(id: string, file: string): ReturnType<typeof run<F>> {
  return run<F>(id, loadFixture(`corpus/${file}`));
}

/** The 1-based line of the cleaned text. */
export function lineAt(text: string, n: number | undefined): string {
  return n === undefined ? '' : (text.split('\n')[n - 1] ?? '').trim();
}

/** File-name prefix → kind, for the families the RDMA kinds own. */
const RDMA_KIND_IDS = new Set(rdmaKinds.map((k) => k.kind));
export const RDMA_PREFIX: Record<string, string> = Object.fromEntries(
  Object.entries(KIND_BY_PREFIX).filter(([, kind]) => RDMA_KIND_IDS.has(kind)),
);

/** Every corpus sample of these kinds' families, with its kind. */
export function rdmaSamples(): Array<{ file: string; kind: string }> {
  return readdirSync(join(DIR, 'corpus'))
    .filter((f) => f.includes('__'))
    .map((file) => ({ file, kind: RDMA_PREFIX[file.split('__')[0]!] }))
    .filter((s): s is { file: string; kind: string } => s.kind !== undefined);
}
