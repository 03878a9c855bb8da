/** `l20-setup troubleshoot` through the built binary: docs/DESIGN.md's JSON, the plain diagnosis, exit codes. */
import { describe, expect, it } from 'vitest';
import { cli } from '../helpers/cli.js';

interface Report {
  version: number;
  diagnoses: Array<{
    symptom: string;
    status: string;
    cause: string | null;
    rules: string[];
    hosts: string[];
    evidence: string;
    fix: string;
    fixStages: string[];
  }>;
}

describe('l20-setup troubleshoot', () => {
  it('--lab --scenario pfc-mismatch --json: every symptom probed, PFC on one side found with R26 on l20-n2, exit 1', async () => {
    const r = await cli(['troubleshoot', '--lab', '--scenario', 'pfc-mismatch', '--speed', 'max', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.version).toBe(1);
    expect(report.diagnoses.length).toBeGreaterThanOrEqual(12);
    const pfc = report.diagnoses.find((d) => d.symptom === 'pfc-one-side')!;
    expect(pfc.status).toBe('found');
    expect(pfc.rules).toEqual(['R26']);
    expect(pfc.hosts).toEqual(['l20-n2']);
    expect(pfc.cause).toMatch(/PFC/);
    expect(pfc.evidence).toMatch(/qos\.pair/);
    expect(pfc.fix.length).toBeGreaterThan(0);
    expect(pfc.fixStages).toEqual(['qos']);
    expect(report.diagnoses.filter((d) => d.status !== 'clear').map((d) => d.symptom)).toEqual(['pfc-one-side']);
  }, 120_000);

  it('one symptom in plain lines: cause, rules, hosts, fix and the two mlnx_qos outputs with the differing lines marked', async () => {
    const r = await cli(['troubleshoot', 'pfc-one-side', '--lab', '--scenario', 'pfc-mismatch', '--speed', 'max']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^FOUND\s+pfc-one-side/m);
    expect(r.stdout).toMatch(/^ {2}rules: R26$/m);
    expect(r.stdout).toMatch(/^ {2}hosts: l20-n2$/m);
    expect(r.stdout).toMatch(/^ {2}apply: l20-setup apply --stage qos --yes$/m);
    expect(r.stdout).toMatch(/^ {4}── l20-n1$/m);
    expect(r.stdout).toMatch(/^ {2}≠ .*pfc.*3:off/m);
    expect(r.stdout).not.toMatch(/\u001b\[/);
  }, 120_000);

  it('ready: nothing found, exit 0', async () => {
    const r = await cli(['troubleshoot', '--lab', '--scenario', 'ready', '--speed', 'max']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^0 found, 0 inconclusive, \d+ clear/m);
  }, 120_000);

  it('an unknown symptom is a usage error naming the known ones: exit 2', async () => {
    const r = await cli(['troubleshoot', 'slow-gpus', '--lab']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown symptom "slow-gpus"; symptoms: nccl-sockets, wrong-gid, .*pfc-one-side/);
    expect(r.stdout).toBe('');
  });

  it('--help describes the verb and lists the symptoms', async () => {
    const r = await cli(['troubleshoot', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Usage: l20-setup troubleshoot \[SYMPTOM\]/);
    expect(r.stdout).toMatch(/mtu-mismatch/);
    const main = await cli(['--help']);
    expect(main.stdout).toMatch(/l20-setup troubleshoot \[SYMPTOM\]/);
    expect(main.stdout).not.toMatch(/Coming in later releases:.*troubleshoot/);
  });
});
