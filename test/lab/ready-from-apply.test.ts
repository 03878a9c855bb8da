/**
 * `ready` is what the stages' own apply leaves, not what the lab believes it leaves: a `fresh` lab is
 * applied fresh → ready by the engine (--speed max, reboots allowed), then every file and symlink of
 * its hosts and the model state the checks read (packages and holds, active units, modules, netdevs,
 * routes, RDMA names, QoS, firewall, driver, boot command line) are compared with a lab started as
 * `ready`, naming the first difference with both versions.
 *
 * Left out of the comparison, each listed with why: the run's own records (RUN_RECORDS: backups, logs,
 * rollback snapshots, benchmark results — ready models a host, not a run) and, inside the files named,
 * run-specific fields (RUN_SPECIFIC: run ids, the API key, the cluster key pair, hf time stamps).
 *
 * The `ready` scenario holds the files as data recorded from this apply (lab/scenarios/ready/);
 * when a generator changes, this test fails naming the file: re-record with `node scripts/record-ready.mjs`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_COMMAND } from '../../lab/scenarios/ready/index.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import {
  applyFreshToReady,
  describeEntry,
  isRunRecord,
  labTree,
  modelState,
  normaliseRunSpecific,
  RUN_SPECIFIC,
  type ApplyOutcome,
  type TreeEntry,
} from './ready-snapshot.js';

const RERECORD = `the ready scenario differs from what the apply writes: re-record it with \`${RECORD_COMMAND}\``;

/** The first path (in order) whose entries differ, with both versions; undefined when they agree. */
function firstDifference(applied: Map<string, TreeEntry>, ready: Map<string, TreeEntry>): string | undefined {
  const paths = [...new Set([...applied.keys(), ...ready.keys()])].filter((p) => !isRunRecord(p)).sort();
  for (const path of paths) {
    const a = describeEntry(path, applied.get(path));
    const b = describeEntry(path, ready.get(path));
    if (a !== b) return `${path}\n--- after the apply:\n${a}\n--- in ready:\n${b}`;
  }
  return undefined;
}

function firstStateDifference(applied: string[], ready: string[]): string | undefined {
  const onlyApplied = applied.filter((l) => !ready.includes(l));
  const onlyReady = ready.filter((l) => !applied.includes(l));
  if (onlyApplied.length === 0 && onlyReady.length === 0) return undefined;
  const head = (lines: string[]): string => lines.slice(0, 10).join('\n');
  return `after the apply only:\n${head(onlyApplied)}\nin ready only:\n${head(onlyReady)}`;
}

describe("ready is what the stages' own apply leaves on fresh", () => {
  let applied: LabTarget;
  let ready: LabTarget;
  let run: ApplyOutcome;

  beforeAll(async () => {
    applied = await labTarget({ scenario: 'fresh', seed: 1 });
    ready = await labTarget({ scenario: 'ready', seed: 1 });
    run = await applyFreshToReady(applied);
  }, 600_000);
  afterAll(async () => {
    await applied?.close();
    await ready?.close();
  });

  it('the apply converges without a failed step', () => {
    expect(run.failed).toEqual([]);
    expect(run.changed).toBeGreaterThan(20);
  });

  it('every file and symlink agrees, byte for byte (run records and run-specific fields aside)', async () => {
    for (const [i, host] of applied.lab.hosts.entries()) {
      const a = await labTree(host.machine);
      const b = await labTree(ready.lab.hosts[i]!.machine);
      // Every file a step declared it writes is there (the comparison below is not vacuous).
      for (const path of run.declared.get(host.name)!) {
        expect(a.has(path), `${host.name}:${path} after the apply`).toBe(true);
      }
      expect(firstDifference(a, b), `${host.name}: ${RERECORD}`).toBeUndefined();
      // The figure docs/RELIABILITY.md quotes.
      const kinds = [...a.entries()].filter(([p]) => !isRunRecord(p)).map(([, e]) => e.kind);
      const count = (k: TreeEntry['kind']): number => kinds.filter((x) => x === k).length;
      console.log(
        `ready-from-apply: ${host.name}: ${count('file')} files, ${count('dir')} directories, ` +
          `${count('link')} symlinks identical to ready (${run.changed} steps changed something)`,
      );
    }
  });

  it('the model state the checks read agrees (packages, units, modules, netdevs, QoS, firewall, driver, boot)', () => {
    for (const [i, host] of applied.lab.hosts.entries()) {
      const got = modelState(host.machine);
      expect(
        got.some((l) => /^qos ens1f0 trust dscp/.test(l)),
        `${host.name}: QoS state read`,
      ).toBe(true);
      expect(firstStateDifference(got, modelState(ready.lab.hosts[i]!.machine)), `${host.name}`).toBeUndefined();
      console.log(`ready-from-apply: ${host.name}: ${got.length} model-state lines identical to ready`);
    }
  });

  it('the normalisation touches only the fields it lists', () => {
    const conf = '# l20-setup 0.1.0 run 20261202T005329Z design A\nNCCL_IB_TC=106\n';
    expect(normaliseRunSpecific('/etc/nccl.conf', conf)).toBe(
      '# l20-setup 0.1.0 run «run-specific» design A\nNCCL_IB_TC=106\n',
    );
    // Another file keeps its run id: only the files each entry names are normalised.
    expect(normaliseRunSpecific('/etc/systemd/system/l20-vllm.service', conf)).toBe(conf);
    const env = `VLLM_API_KEY=${'a'.repeat(64)}\nOTHER=1\n`;
    expect(normaliseRunSpecific('/etc/l20/vllm.env', env)).toBe('VLLM_API_KEY=«run-specific»\nOTHER=1\n');
    // The run-specific fields, listed here so that a new one is a visible change of this test.
    expect(RUN_SPECIFIC.map((r) => r.why)).toEqual([
      'the run id in the header',
      'the vLLM API key',
      'the cluster key pair (ssh-keygen)',
      'the cluster public key',
      "hf download's time stamp of each file",
    ]);
  });
});
