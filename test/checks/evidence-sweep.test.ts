/**
 * Verdicts rest on evidence (stages os, nic-stack, network, qos, rdma-link): every check of these stages, run as
 * the stage runner runs it, on a host whose tools are all missing, on a host that has the tools but no ConnectX
 * (the Debian container CI runs), and on a host without systemd. No verdict may show an unread value, pass on
 * nothing, or read a missing tool as a finding about the hardware.
 */
import { describe, expect, it } from 'vitest';
import { nicStackStage } from '../../checks/nic-stack/index.js';
import { networkStage } from '../../checks/network/index.js';
import { osStage } from '../../checks/os/index.js';
import { qosStage } from '../../checks/qos/index.js';
import { rdmaLinkStage } from '../../checks/rdma-link/index.js';
import { cannotTellVerdict, probeTools, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { StageDef, Verdict } from '../../src/engine/types.js';
import { groundedVerdict, placeholderIn } from '../../src/engine/verdict-guard.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';

const STAGES_SWEPT: ReadonlyArray<StageDef<unknown, unknown>> = [
  osStage,
  nicStackStage,
  networkStage,
  qosStage,
  rdmaLinkStage,
] as never;

const result = (exitCode: number, stdout = '', stderr = ''): RunResult => ({
  commandLine: 'probe',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

type Host = (stage: StageDef<unknown, unknown>) => Record<string, RunResult>;

/** Every probe's program (or first declared tool) is missing: bash says so, as the bare inventory's user sees. */
const bareHost: Host = (stage) =>
  Object.fromEntries(
    stage.probes.map((p) => {
      const argv0 = 'argv' in p.command ? p.command.argv[0]! : undefined;
      const tool = probeTools(p)[0] ?? argv0;
      return [p.id, tool ? result(127, '', `bash: line 1: ${tool}: command not found\n`) : result(0)];
    }),
  );

/** Every tool runs and finds nothing: no ConnectX, no files, no units (the exit codes the real tools give). */
const emptyHost: Host = (stage) => Object.fromEntries(stage.probes.map((p) => [p.id, result(0)]));

/** Tools present, but systemd is not PID 1: every systemd client says so. */
const NO_SYSTEMD =
  "System has not been booted with systemd as init system (PID 1). Can't operate.\n" +
  'Failed to connect to bus: Host is down\n';
const noSystemdHost: Host = (stage) => ({
  ...emptyHost(stage),
  ...Object.fromEntries(
    stage.probes
      .filter((p) => probeTools(p).some((t) => ['systemctl', 'timedatectl'].includes(t)))
      .map((p) => [p.id, result(1, '', NO_SYSTEMD)]),
  ),
});

interface Seen {
  stage: string;
  id: string;
  host: string | null;
  v: Verdict;
}

/** The verdicts the runner would report: "cannot tell" for unreadable needs, else the guarded evaluation. */
function verdicts(stage: StageDef<unknown, unknown>, hosts: readonly string[], make: Host): Seen[] {
  const ctx = testContext(hosts);
  const outputs = new Map(hosts.map((h) => [h, make(stage)]));
  const facts = hosts.map((h) => ({ host: h, facts: stage.collect({ host: h, results: outputs.get(h)! }, ctx) }));
  const out: Seen[] = [];
  for (const check of stage.checks) {
    if (check.scope === 'host') {
      for (const f of facts) {
        const problems = unreadableNeeds(stage.probes, check.needs, outputs.get(f.host)!);
        const v = problems.length
          ? cannotTellVerdict(problems, f.host)
          : groundedVerdict(check.evaluate(f.facts, f.host, ctx));
        out.push({ stage: stage.id, id: check.id, host: f.host, v });
      }
    } else {
      const blocked = hosts
        .map((h) => ({ h, p: unreadableNeeds(stage.probes, check.needs, outputs.get(h)!) }))
        .find((x) => x.p.length > 0);
      const v = blocked
        ? cannotTellVerdict(blocked.p, blocked.h)
        : groundedVerdict(check.evaluate(facts, { ...ctx, cluster: undefined }));
      out.push({ stage: stage.id, id: check.id, host: null, v });
    }
  }
  return out;
}

const all = (make: Host, hosts: readonly string[]): Seen[] => STAGES_SWEPT.flatMap((s) => verdicts(s, hosts, make));
const line = (s: Seen): string => `${s.v.status} ${s.host ?? 'cluster'} ${s.id}: ${s.v.summary}`;

describe.each([
  ['no tools at all', bareHost],
  ['tools but no ConnectX', emptyHost],
  ['no systemd', noSystemdHost],
] as const)('evidence sweep: %s', (_name, make) => {
  it.each([[['n1']], [['n1', 'n2']]])('hosts %j: no unread value, no empty splice, the guard never fires', (hosts) => {
    for (const s of all(make, hosts)) {
      expect(placeholderIn(s.v.summary), line(s)).toBeUndefined();
      expect(placeholderIn(s.v.evidence), `${line(s)}\n${s.v.evidence}`).toBeUndefined();
      expect(s.v.summary, line(s)).not.toMatch(/: $|\bis {2}on\b| \(\)/);
      expect(s.v.summary, line(s)).not.toMatch(/^cannot tell: (no evidence for|".*" rests on a value)/);
      if (s.v.status === 'error') expect(s.v.summary, line(s)).toMatch(/^cannot tell: /);
    }
  });
});

describe('evidence sweep: what each host is told', () => {
  it('without tools, every check that reads a missing tool says cannot tell and names the package', () => {
    const seen = all(bareHost, ['n1', 'n2']);
    expect(seen.find((s) => s.id === 'os.sudo')!.v).toMatchObject({
      status: 'error',
      summary: 'cannot tell: sudo is not installed on n1 (package sudo)',
    });
    const readable = seen.filter((s) => !/is not installed on n\d \(package /.test(s.v.summary)).map(line);
    // What is left rests on no missing tool: the design setting, or (without the stage's cluster run, not made
    // here) measured checks with nothing measured, which fail as live. Root probes need sudo, which is missing too.
    expect(readable).toEqual([
      expect.stringMatching(/^fail cluster rdma-link.bw-aggregate: no measurement/),
      expect.stringMatching(/^skip cluster rdma-link.lag: /),
      expect.stringMatching(/^skip cluster rdma-link.cross-pair: /),
      expect.stringMatching(/^fail cluster rdma-link.counters: no measurement/),
    ]);
  });

  it('on one host every pair check skips: nothing to compare', () => {
    const pairs = all(emptyHost, ['n1']).filter((s) => s.host === null);
    expect(pairs.length).toBeGreaterThan(10);
    const designOnly = ['rdma-link.lag', 'rdma-link.cross-pair', 'rdma-link.counters'];
    for (const s of pairs.filter((x) => !designOnly.includes(x.id))) {
      expect(line(s)).toBe(`skip cluster ${s.id}: one host (n1): nothing to compare`);
    }
  });

  it('with the tools but no ConnectX, nothing passes on zero ports, files or bonds', () => {
    const seen = all(emptyHost, ['n1', 'n2']);
    expect(seen.filter((s) => s.v.status === 'pass').map(line)).toEqual([
      'pass n1 os.sudo: `sudo -n true` works',
      'pass n2 os.sudo: `sudo -n true` works',
    ]);
    const byId = (id: string) => seen.find((s) => s.id === id && s.host !== 'n2')!.v;
    const expected: Array<[string, string, unknown]> = [
      ['network.mtu', 'fail', 'no ConnectX fabric port on n1, n2: no interface to carry MTU 9000'],
      ['network.cabling', 'fail', 'no ConnectX fabric port on n1, n2: no cable to map'],
      ['nic-stack.driver', 'fail', 'no ConnectX netdev to read the driver of'],
      ['rdma-link.ports', 'fail', 'no ConnectX fabric ports found'],
      ['rdma-link.gids', 'skip', expect.stringContaining('no RDMA device on a fabric port of n1, n2')],
      ['nic-stack.firmware-parity', 'skip', 'no ConnectX netdev on n1, n2: no firmware to compare'],
      ['network.netplan-lint', 'skip', 'no /etc/netplan/*.yaml: nothing to lint'],
      ['network.stale-devices', 'skip', 'no bonds: none can be stale'],
      ['os.holds', 'skip', expect.stringContaining('nothing to hold')],
      ['qos.pfc', 'skip', expect.stringContaining('no ConnectX PF')],
      ['nic-stack.parity', 'error', expect.stringMatching(/^cannot tell: which NIC stack n1, n2 run is unknown/)],
      ['os.memlock', 'error', 'cannot tell: `ulimit -l` in a login shell printed no limit'],
    ];
    for (const [id, status, summary] of expected) expect(byId(id), id).toMatchObject({ status, summary });
  });

  it('ufw absent under sudo (env\'s own words) is "cannot tell" naming ufw, not a firewall verdict', () => {
    const firewall = networkStage.checks.find((c) => c.id === 'network.firewall')!;
    const ufw = { ...result(127, '', "env: 'ufw': No such file or directory\n"), commandLine: 'sudo -n -- ufw status' };
    const problems = unreadableNeeds(networkStage.probes, firewall.needs, { ...emptyHost(networkStage as never), ufw });
    expect(cannotTellVerdict(problems, 'deb1')).toMatchObject({
      status: 'error',
      summary: 'cannot tell: ufw is not installed on deb1 (package ufw)',
      fix: expect.stringContaining('sudo apt-get install -y ufw'),
    });
  });

  it('without systemd, time sync and the QoS unit say so instead of "not synchronized" or "no unit"', () => {
    const seen = all(noSystemdHost, ['n1', 'n2']);
    for (const id of ['os.time-sync', 'qos.persistence']) {
      expect(seen.find((s) => s.id === id && s.host === 'n1')!.v).toMatchObject({
        status: 'error',
        summary: 'cannot tell: n1 runs no systemd unit manager (systemctl cannot reach it)',
        evidence: expect.stringContaining('System has not been booted with systemd'),
      });
    }
  });
});
