import { describe, expect, it } from 'vitest';
import { appState, reduceApp } from '../../screens/state/app-store.js';
import type { AppAction, AppState } from '../../screens/state/ui-types.js';
import { shownDiagnosis } from '../../screens/state/ui-reducer.js';
import {
  alignLines,
  comparisonLines,
  diagnosisLines,
  DIFFER_MARK,
  symptomMark,
  symptomRow,
  wrapText,
} from '../../screens/troubleshoot/troubleshoot-lines.js';
import { pfcDiagnosis, PFC_ON, symptoms } from './troubleshoot-fixtures.js';
import { symptomForCheck } from '../../src/troubleshoot/lookup.js';
import type { CheckResult } from '../../src/engine/types.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

function apply(state: AppState, ...actions: AppAction[]): AppState {
  return actions.reduce(reduceApp, state);
}

const shown = (s: AppState) => shownDiagnosis(s, s.ui.troubleshoot.cursor);

describe('troubleshoot slice', () => {
  it('opens from a screen with the catalog and a selected symptom, and esc goes back there', () => {
    const s = apply(
      appState(hosts),
      { type: 'ui.screen', screen: 'stage' },
      { type: 'troubleshoot.open', symptoms, select: 'pfc-one-side' },
    );
    expect(s.ui.screen).toBe('troubleshoot');
    expect(s.ui.troubleshoot.cursor).toBe(1);
    expect(s.ui.troubleshoot.returnTo).toBe('stage');
    // Opening again from the screen itself keeps where to go back.
    const again = reduceApp(s, { type: 'troubleshoot.open', select: 'mtu-mismatch' });
    expect(again.ui.troubleshoot.returnTo).toBe('stage');
    expect(again.ui.troubleshoot.cursor).toBe(2);
    expect(reduceApp(again, { type: 'troubleshoot.close' }).ui.screen).toBe('stage');
  });

  it('an unknown symptom keeps the cursor; the cursor stays inside the list', () => {
    const s = apply(
      appState(hosts),
      { type: 'troubleshoot.open', symptoms, select: 'nope' },
      { type: 'troubleshoot.cursor', delta: -5 },
    );
    expect(s.ui.troubleshoot.cursor).toBe(0);
    expect(apply(s, { type: 'troubleshoot.cursor', delta: 9 }).ui.troubleshoot.cursor).toBe(2);
  });

  it("shows the cursor's latest diagnosis from its top; another symptom's result only marks the list", () => {
    let s = apply(
      appState(hosts),
      { type: 'troubleshoot.open', symptoms, select: 'pfc-one-side' },
      { type: 'troubleshoot.running', symptom: 'pfc-one-side' },
    );
    expect(s.troubleshoot.running).toBe('pfc-one-side');
    s = apply(
      s,
      { type: 'troubleshoot.diagnosis', diagnosis: pfcDiagnosis() },
      { type: 'troubleshoot.running', symptom: null },
      { type: 'troubleshoot.scroll', delta: 3 },
    );
    expect(shown(s)?.causeId).toBe('pfc-off');
    expect(s.ui.troubleshoot.scroll).toBe(3);
    s = reduceApp(s, {
      type: 'troubleshoot.diagnosis',
      diagnosis: pfcDiagnosis({ symptom: 'mtu-mismatch', status: 'clear' }),
    });
    expect(shown(s)?.symptom).toBe('pfc-one-side');
    expect(s.ui.troubleshoot.scroll).toBe(3);
    // A new diagnosis of the cursor's symptom shows from its top.
    s = reduceApp(s, { type: 'troubleshoot.diagnosis', diagnosis: pfcDiagnosis() });
    expect(s.ui.troubleshoot.scroll).toBe(0);
    s = apply(s, { type: 'troubleshoot.scroll', delta: 3 }, { type: 'troubleshoot.cursor', delta: 1 });
    expect(shown(s)?.symptom).toBe('mtu-mismatch');
    expect(s.ui.troubleshoot.scroll).toBe(0);
    s = reduceApp(s, { type: 'troubleshoot.cursor', delta: -2 });
    expect(shown(s)).toBeNull();
    expect(apply(s, { type: 'troubleshoot.scroll', delta: -4 }).ui.troubleshoot.scroll).toBe(0);
  });

  it("a fix on its way through the stage view keeps troubleshooting's way back", () => {
    let s = apply(
      appState(hosts),
      { type: 'troubleshoot.open', symptoms },
      { type: 'troubleshoot.fixing', fixing: { symptom: 'pfc-one-side', stage: 'qos' } },
      { type: 'session.showStage', stage: 'qos' },
      { type: 'session.apply', apply: { stage: 'qos', phase: 'applying' } },
      { type: 'session.apply' },
    );
    expect(s.ui.screen).toBe('stage');
    expect(s.troubleshoot.fixing).toEqual({ symptom: 'pfc-one-side', stage: 'qos' });
    s = reduceApp(s, { type: 'troubleshoot.open', select: 'pfc-one-side' });
    expect(s.ui.screen).toBe('troubleshoot');
    expect(s.ui.troubleshoot.returnTo).toBe('pipeline');
  });

  it('a new inventory drops the diagnoses but keeps the catalog', () => {
    const s = apply(
      appState(hosts),
      { type: 'troubleshoot.open', symptoms },
      { type: 'troubleshoot.diagnosis', diagnosis: pfcDiagnosis() },
      { type: 'session.hosts', hosts: [{ name: 'gpu-a', address: '10.0.0.1' }] },
    );
    expect(s.troubleshoot.symptoms).toHaveLength(3);
    expect(s.troubleshoot.diagnoses).toEqual({});
  });
});

describe('troubleshoot lines', () => {
  it("the list marks each symptom's latest verdict, or that it runs", () => {
    expect(symptomMark(undefined, false)).toBe('none');
    expect(symptomMark(pfcDiagnosis(), true)).toBe('running');
    expect(symptomMark(pfcDiagnosis(), false)).toBe('found');
    expect(symptomRow(symptoms[1]!, 'found', 20)).toBe('✘ PFC configured on…');
    expect(symptomRow(symptoms[0]!, 'clear', 40)).toBe(`✔ ${'NCCL runs over TCP sockets'.padEnd(38)}`);
  });

  it('a comparison is two columns with the differing lines marked ≠', () => {
    const lines = comparisonLines(pfcDiagnosis().comparisons[0]!, ['l20-n1', 'l20-n2'], 61);
    expect(lines[0]).toEqual({ text: '── mlnx_qos -i ens1f0: 2 lines differ (≠)', tone: 'title' });
    expect(lines[1]!.text).toMatch(/^ {2}l20-n1 +│ l20-n2 +$/);
    const body = lines.slice(2);
    expect(body).toHaveLength(PFC_ON.length);
    const enabled = body.find((l) => l.text.includes('enabled'))!;
    expect(enabled.tone).toBe('differ');
    expect(enabled.text.startsWith(`${DIFFER_MARK} `)).toBe(true);
    const [a, b] = enabled.text.slice(2).split(' │ ');
    expect(a).toMatch(/^ {2}enabled {5}0 {3}0 {3}0 {3}1/); // the tab drawn as two spaces
    expect(b).toMatch(/^ {2}enabled {5}0 {3}0 {3}0 {3}0/);
    expect(Array.from(enabled.text)).toHaveLength(61);
    const trust = body.find((l) => l.text.includes('Priority trust state'))!;
    expect(trust.tone).toBe('same');
    expect(trust.text.startsWith('  ')).toBe(true);
  });

  it('aligns the two hosts like a diff: a line one host alone prints shifts nothing, a changed line sits beside its counterpart', () => {
    expect(alignLines(['a', 'extra', 'b', '3:on', 'c'], ['a', 'b', '3:off', 'c', 'tail'])).toEqual([
      { left: 'a', right: 'a', differ: false },
      { left: 'extra', right: '', differ: true },
      { left: 'b', right: 'b', differ: false },
      { left: '3:on', right: '3:off', differ: true },
      { left: 'c', right: 'c', differ: false },
      { left: '', right: 'tail', differ: true },
    ]);
    expect(alignLines([], [])).toEqual([]);
    const c = { label: 'z', byHost: { 'l20-n1': ['a', 'extra', 'b'], 'l20-n2': ['a', 'b'] }, differing: [1, 2] };
    const lines = comparisonLines(c, ['l20-n1', 'l20-n2'], 41);
    expect(lines[0]!.text).toBe('── z: 1 line differs (≠)');
    expect(lines.slice(2).map((l) => l.tone)).toEqual(['same', 'differ', 'same']);
  });

  it("the panes' host pair picks the columns; with one host, one column; lines missing on a host are blank", () => {
    const three = { label: 'x', byHost: { 'l20-n1': ['a'], 'l20-n2': ['a', 'b'], 'l20-n3': ['c'] }, differing: [0, 1] };
    const lines = comparisonLines(three, ['l20-n3', 'l20-n1'], 41);
    expect(lines[1]!.text).toMatch(/^ {2}l20-n3 +│ l20-n1 +$/);
    expect(lines[2]!.text).toMatch(/^≠ c +│ a +$/);
    expect(comparisonLines(three, ['l20-n2', 'l20-n1'], 41)[3]!.text).toMatch(/^≠ b +│ +$/);
    const one = comparisonLines({ label: 'y', byHost: { 'l20-n1': ['only'] }, differing: [] }, ['l20-n1'], 30);
    expect(one[0]!.text).toBe('── y: the same on the host');
    expect(one[2]).toEqual({ text: `  ${'only'.padEnd(28)}`, tone: 'same' });
  });

  it('a found diagnosis: verdict, cause, rules and hosts, fix with its stage, the checks, then the evidence side by side', () => {
    const lines = diagnosisLines(pfcDiagnosis(), ['l20-n1', 'l20-n2'], 120);
    const texts = lines.map((l) => l.text);
    expect(lines[0]).toEqual({ text: '✘ PFC configured on one side only — cause found', tone: 'found' });
    expect(texts).toContain("cause: PFC is off on priority 3 of l20-n2's RoCE ports while l20-n1 has it on");
    expect(texts).toContain('rules R26 · on l20-n2');
    expect(lines.find((l) => l.text.startsWith('fix'))).toEqual({
      text: 'fix (f plans qos): trust DSCP and enable PFC on priority 3 on every RoCE port (the qos stage)',
      tone: 'fix',
    });
    expect(lines.find((l) => l.text.includes('qos.pfc'))).toEqual({
      text: '✘ l20-n2     qos.pfc (R26)  PFC off on priority 3 (ens1f0, ens1f1)',
      tone: 'fail',
    });
    expect(texts.indexOf('── mlnx_qos -i ens1f0: 2 lines differ (≠)')).toBeGreaterThan(
      texts.findIndex((t) => t.includes('qos.pfc')),
    );
    // The checks' full evidence comes last: it is long, and the comparison is what the operator reads.
    expect(texts.indexOf('  l20-n2 ens1f0: pfc enabled 0 0 0 0 0 0 0 0')).toBeGreaterThan(texts.indexOf('evidence:'));
    expect(texts.indexOf('evidence:')).toBeGreaterThan(texts.indexOf('── mlnx_qos -i ens1f0: 2 lines differ (≠)'));
  });

  it('a long cause wraps at word boundaries, continuation rows indented', () => {
    const lines = diagnosisLines(pfcDiagnosis(), ['l20-n1', 'l20-n2'], 40);
    const cause = lines.slice(
      1,
      lines.findIndex((l) => l.text.startsWith('rules')),
    );
    expect(cause.map((l) => l.text)).toEqual([
      'cause: PFC is off on priority 3 of',
      "  l20-n2's RoCE ports while l20-n1 has",
      '  it on',
    ]);
    expect(cause.every((l) => Array.from(l.text).length <= 40)).toBe(true);
    expect(wrapText('averyveryverylongword x', 8)).toEqual(['averyveryverylongword', '  x']);
  });

  it('a clear diagnosis offers no fix', () => {
    const lines = diagnosisLines(
      pfcDiagnosis({ status: 'clear', cause: null, rules: [], hosts: [], evidence: '', checks: [], comparisons: [] }),
      ['l20-n1', 'l20-n2'],
      80,
    );
    expect(lines).toEqual([{ text: '✔ PFC configured on one side only — clear: every probe passes', tone: 'clear' }]);
  });
});

describe('symptomForCheck', () => {
  const r = (id: string, status: CheckResult['status'], rule?: string): CheckResult => ({
    id,
    stage: id.split('.')[0] as CheckResult['stage'],
    host: null,
    status,
    summary: '',
    evidence: '',
    ...(rule ? { rule } : {}),
  });
  it('finds the catalog symptom whose cause reads the check, by id and rule', () => {
    expect(symptomForCheck(r('qos.pair', 'fail', 'R26'))?.id).toBe('pfc-one-side');
    expect(symptomForCheck(r('network.mtu', 'fail', 'R24'))?.id).toBe('mtu-mismatch');
    expect(symptomForCheck(r('gpudirect.acs', 'fail', 'R36'))?.id).toBe('acs');
    expect(symptomForCheck(r('inventory.os', 'fail'))).toBeUndefined();
  });
  it("a symptom whose cause would report the check's status comes before one that only looks at it", () => {
    const only = {
      id: 'looks',
      title: '',
      observed: '',
      stages: ['qos'] as const,
      causes: [{ id: 'x', when: { checks: ['qos.pfc'], statuses: ['error' as const] }, cause: '', rules: [], fix: '' }],
      fixStages: [],
    };
    const reports = {
      ...only,
      id: 'reports',
      causes: [{ id: 'y', when: { checks: ['qos.pfc'] }, cause: '', rules: [], fix: '' }],
    };
    expect(symptomForCheck(r('qos.pfc', 'fail'), [only, reports])?.id).toBe('reports');
    expect(symptomForCheck(r('qos.pfc', 'pass'), [only, reports])?.id).toBe('looks');
  });
});
