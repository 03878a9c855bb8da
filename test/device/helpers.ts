/**
 * Reads test/fixtures/device/: what bench/device/run.sh captured on the device tool's H200 machine
 * (bench/device/fixtures.mjs wrote them). Every file starts with one header line naming the machine,
 * driver, torch, command and date; the rest is the output, whole.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type CheckJson, verdictLabel } from '../helpers/evidence.js';

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
  return new Map(
    lines
      .map((l) => /^([\w.-]+)=(.*)$/.exec(l))
      .filter((m) => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
}

const MISSING_WORDS = '(not installed|missing|unavailable|not available)';

/**
 * Failing verdicts whose evidence shows `TOOL: command not found` but whose summary does not say that
 * TOOL is missing: a missing tool must never read as a finding about the host.
 */
export function unnamedMissingTools(checks: readonly CheckJson[]): string[] {
  return checks
    .filter((c) => c.status === 'fail' || c.status === 'error')
    .flatMap((c) => {
      const notFound = [...c.evidence.matchAll(/(?:^|\s)([\w.-]+): command not found/gm)].map((m) => m[1]!);
      const absent = [...new Set(notFound)];
      const said = (tool: string) =>
        new RegExp(`\\b${tool.replace(/[.-]/g, '\\$&')}\\b.*\\b${MISSING_WORDS}`).test(c.summary);
      const unnamed = absent.filter((t) => !said(t));
      return unnamed.length > 0 ? [`${verdictLabel(c)} — not named as missing: ${unnamed.join(', ')}`] : [];
    });
}
