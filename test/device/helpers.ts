/**
 * Reads test/fixtures/device/: what bench/device/run.sh captured on the device tool's H200 machine
 * (bench/device/fixtures.mjs wrote them). Every file starts with one header line naming the machine,
 * driver, torch, command and date; the rest is the output, whole.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

const DIR = join(import.meta.dirname, '../fixtures/device');

/** The captured output without its header (which must say it came from the H200 box). */
export function deviceFixture(name: string): string {
  const text = readFileSync(join(DIR, name), 'utf8');
  const nl = text.indexOf('\n');
  const header = text.slice(0, nl);
  const made = /^# device tool nvidia-h200 \(NVIDIA H200, 580\.\d+\.\d+, .*torch 2\.\d+.*; command: .+; date 20\d\d-/;
  expect(header).toMatch(made);
  return text.slice(nl + 1);
}

/** box.txt: `key=value` lines (tool.NAME=path or missing, gpu=…, torch=…). */
export function deviceBox(): Map<string, string> {
  const lines = deviceFixture('box.txt').split('\n');
  return new Map(lines.map((l) => /^([\w.-]+)=(.*)$/.exec(l)).filter((m) => m !== null).map((m) => [m[1]!, m[2]!]));
}

export interface CheckJson { id: string; host?: string | null; status: string; summary: string; evidence: string }

// "Verdicts rest on evidence", written here (as in test/integration/evidence-lab.test.ts and
// test/realhost/conformance.test.ts), not imported from the guard: the product must not judge itself.
/** A value that was never read, printed as `?`, `x?`, undefined, NaN or an object's default string. */
const UNREAD = /(?:^|[\s(:=,/])\?(?=$|[\s),.;:/]|GT)|\bx\?(?!\w)|\bundefined\b|\bNaN\b|\[object Object\]/m;
const SPLICED_EMPTY = /: $|\bis {2}on\b| \(\)/;
const GUARD_FIRED = /^cannot tell: (no evidence for|".*" rests on a value)/;

/** Each check that breaks the rule, with why: `status host id: summary — reasons`. */
export function ungroundedVerdicts(checks: readonly CheckJson[]): string[] {
  return checks.flatMap((c) => {
    const why: string[] = [];
    if ((c.status === 'pass' || c.status === 'warn') && !c.evidence.trim()) why.push('pass/warn without evidence');
    if (UNREAD.test(c.summary)) why.push('placeholder in summary');
    const line = c.evidence.split('\n').find((l) => UNREAD.test(l));
    if (line !== undefined) why.push(`placeholder in evidence: ${line}`);
    if (GUARD_FIRED.test(c.summary)) why.push('the engine guard fired (fix the check)');
    if (SPLICED_EMPTY.test(c.summary)) why.push('empty value spliced into the summary');
    return why.length > 0 ? [`${verdictLabel(c)} — ${why.join('; ')}`] : [];
  });
}

const MISSING_WORDS = '(not installed|missing|unavailable|not available)';

/**
 * Failing verdicts whose evidence shows `TOOL: command not found` but whose summary does not say that
 * TOOL is missing: a missing tool must never read as a finding about the host.
 */
export function unnamedMissingTools(checks: readonly CheckJson[]): string[] {
  return checks.filter((c) => c.status === 'fail' || c.status === 'error').flatMap((c) => {
    const notFound = [...c.evidence.matchAll(/(?:^|\s)([\w.-]+): command not found/gm)].map((m) => m[1]!);
    const absent = [...new Set(notFound)];
    const said = (tool: string) =>
      new RegExp(`\\b${tool.replace(/[.-]/g, '\\$&')}\\b.*\\b${MISSING_WORDS}`).test(c.summary);
    const unnamed = absent.filter((t) => !said(t));
    return unnamed.length > 0 ? [`${verdictLabel(c)} — not named as missing: ${unnamed.join(', ')}`] : [];
  });
}

export const verdictLabel = (c: CheckJson): string =>
  `${c.status} ${c.host ?? 'cluster'} ${c.id}: ${c.summary.slice(0, 100)}`;
