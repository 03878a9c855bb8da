/**
 * What the network stage's steps would do, from recorded probe output: the files it renders (design
 * A and B, the management default route), network.write's plan (idempotent header, migration moving
 * the tutorial's file, refusals) and network.discover-cabling's plan; and the ufw status parser.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { collectNetwork, type NetworkFacts } from '../../checks/network/facts.js';
import { renderFabricFile, withDefaultRoute } from '../../checks/network/netplan-file.js';
import { networkSteps } from '../../checks/network/steps.js';
import { admits, parseUfwStatus } from '../../checks/network/ufw-status.js';
import { designPlan, type DesignPlan } from '../../checks/common/design.js';
import { networkCabling } from '../../checks/network/cabling.js';
import type { HostFacts, StageContext, StepPlan } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';

type Recorded = Record<string, { commandLine: string; exitCode: number | null; stdout: string; stderr: string }>;
const recorded = (name: string): Recorded =>
  JSON.parse(readFileSync(new URL(`../fixtures/network/${name}.json`, import.meta.url), 'utf8')) as Recorded;

function facts(name: string, host: string, edit: (r: Recorded) => void = () => undefined): NetworkFacts {
  const r = recorded(`${name}-${host}`);
  edit(r);
  const results: Record<string, RunResult> = {};
  for (const [id, x] of Object.entries(r))
    results[id] = { ...x, signal: null, durationMs: 1, timedOut: false, cancelled: false, truncated: false };
  return collectNetwork({ host, results });
}

function all(name: string, edit?: (r: Recorded, host: string) => void): HostFacts<NetworkFacts>[] {
  return ['l20-n1', 'l20-n2'].map((host) => ({
    host,
    facts: facts(name, host, edit ? (r) => edit(r, host) : undefined),
  }));
}

function plan(
  id: string,
  everyone: HostFacts<NetworkFacts>[],
  hostIndex = 0,
  ctx: StageContext = testContext(),
): StepPlan | null {
  const step = networkSteps.find((s) => s.id === id)!;
  return step.plan!({
    ...ctx,
    host: everyone[hostIndex]!.host,
    hostIndex,
    facts: everyone[hostIndex]!.facts,
    all: everyone,
    results: [],
  });
}

describe('rendered files', () => {
  it('design A: one flow map per port in cabling order, the header naming version, run and design', () => {
    const f = all('ready');
    const p = designPlan(testContext().config, 1, f[1]!.facts.fabric, networkCabling(f), 2) as DesignPlan;
    expect(renderFabricFile(p, '20261129T120000Z', '0.9.0')).toBe(
      '# l20-setup 0.9.0 run 20261129T120000Z design A — fabric only\n' +
        'network:\n  version: 2\n  ethernets:\n' +
        '    ens1f0: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.101.2/24]}\n' +
        '    ens1f1: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.102.2/24]}\n' +
        '    ens2f0: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.103.2/24]}\n' +
        '    ens2f1: {renderer: networkd, optional: true, mtu: 9000, addresses: [192.168.104.2/24]}\n',
    );
  });

  it('design B: the four ports, then one 802.3ad bond per card with its two PFs', () => {
    const f = all('ready');
    const ctx = testContext(undefined, { network: { design: 'B', mtu: 9000 } });
    const p = designPlan(ctx.config, 0, f[0]!.facts.fabric, networkCabling(f), 2) as DesignPlan;
    expect(renderFabricFile(p, 'R', 'V')).toBe(
      '# l20-setup V run R design B — fabric only\nnetwork:\n  version: 2\n  ethernets:\n' +
        '    ens1f0: {renderer: networkd, optional: true, mtu: 9000}\n' +
        '    ens1f1: {renderer: networkd, optional: true, mtu: 9000}\n' +
        '    ens2f0: {renderer: networkd, optional: true, mtu: 9000}\n' +
        '    ens2f1: {renderer: networkd, optional: true, mtu: 9000}\n' +
        '  bonds:\n' +
        '    bond0: {renderer: networkd, optional: true, interfaces: [ens1f0, ens1f1], mtu: 9000, ' +
        'addresses: [192.168.110.1/24], ' +
        'parameters: {mode: 802.3ad, lacp-rate: fast, mii-monitor-interval: 100, transmit-hash-policy: layer3+4}}\n' +
        '    bond1: {renderer: networkd, optional: true, interfaces: [ens2f0, ens2f1], mtu: 9000, ' +
        'addresses: [192.168.111.1/24], ' +
        'parameters: {mode: 802.3ad, lacp-rate: fast, mii-monitor-interval: 100, transmit-hash-policy: layer3+4}}\n',
    );
  });

  it('management: gateway4 becomes a default route, comments and the rest kept', () => {
    const installer = facts('fresh', 'l20-n1').netplanFiles.find((x) => x.path === '/etc/netplan/01-netcfg.yaml')!.text;
    const w = withDefaultRoute(installer, 'eno1');
    expect(w?.gateway).toBe('10.0.0.254');
    expect(w?.text).toBe(
      '# This is the network config written by the installer\nnetwork:\n  version: 2\n  renderer: networkd\n  ethernets:\n    eno1:\n' +
        '      addresses:\n      - 10.0.0.1/24\n      nameservers:\n        addresses:\n        - 10.0.0.254\n      routes:\n      - to: default\n        via: 10.0.0.254\n',
    );
    expect(withDefaultRoute(w!.text, 'eno1')).toBeUndefined();
  });
});

describe('network.write', () => {
  it('keeps the file in place (header and all) when the body is what it would write', () => {
    const f = all('ready');
    const current = f[0]!.facts.netplanFiles.find((x) => x.path === '/etc/netplan/60-l20-fabric.yaml')!.text;
    const p = plan('network.write', f);
    expect(p?.files?.[0]).toEqual({ path: '/etc/netplan/60-l20-fabric.yaml', content: current, mode: 0o600 });
    expect(p?.removeFiles).toEqual([]);
  });

  it('on the tutorial: refused while the cabling is unknown; with LLDP, moves the bond file away and snapshots the old configuration', () => {
    expect(plan('network.write', all('tutorial'))?.summary).toBe(
      'refused: the cabling is not known yet: bring the ports up and let network.discover-cabling map it',
    );
    // The recipe's hosts plus lldpd (os.install-base): LLDP names every peer port by its permanent MAC.
    const withLldp = all('tutorial', (r, host) => {
      r.lldp = recorded(`ready-${host}`).lldp!;
    });
    const p = plan('network.write', withLldp, 1);
    expect(p?.summary).toBe(
      'write /etc/netplan/60-l20-fabric.yaml (design A: ens1f0 192.168.101.2/24; ens1f1 192.168.102.2/24; ens2f0 192.168.103.2/24; ens2f1 192.168.104.2/24, MTU 9000); move /etc/netplan/02-bond-roce.yaml to the backup directory',
    );
    expect(p?.removeFiles).toEqual(['/etc/netplan/02-bond-roce.yaml']);
    expect(p?.commands?.map((c) => ('argv' in c.command ? c.command.argv : c.command.args))).toEqual([
      ['netplan', 'generate'],
      // netplan's merged view of management must not change: this is what it is now.
      ['eno1', 'addresses:\n- "10.0.0.2/24"\nnameservers:\n  addresses:\n  - 10.0.0.254\ngateway4: 10.0.0.254'],
      ['20261129T120000Z', '/etc/netplan/60-l20-fabric.yaml', '/etc/netplan/02-bond-roce.yaml'],
    ]);
  });

  it('refuses a file that mixes management and fabric, and writes nothing to keep the tutorial design', () => {
    const mixed = all('tutorial', (r, host) => {
      r.lldp = recorded(`ready-${host}`).lldp!;
      r['netplan-files']!.stdout = r['netplan-files']!.stdout.replace(
        '    eno1:\n',
        '    ens1f0: {mtu: 9000}\n    eno1:\n',
      );
    });
    expect(plan('network.write', mixed)?.summary).toBe(
      'refused: /etc/netplan/01-netcfg.yaml defines both management (eno1) and fabric interfaces: split it by hand first',
    );
    expect(
      plan('network.write', all('tutorial'), 0, testContext(undefined, { network: { design: 'tutorial', mtu: 9000 } })),
    ).toBeNull();
  });
});

describe('network.write for design B', () => {
  it('plans the bonds when each card is cabled to one peer card, and refuses a crossed cabling', () => {
    const ctxB = testContext(undefined, { network: { design: 'B', mtu: 9000 } });
    expect(plan('network.write', all('ready'), 0, ctxB)?.summary).toBe(
      'write /etc/netplan/60-l20-fabric.yaml (design B: bond0 192.168.110.1/24; bond1 192.168.111.1/24, MTU 9000)',
    );
    // Node 2's LLDP sees ens1f1 and ens2f0 swapped: card 1's ports now reach two different peer cards.
    const crossed = all('ready', (r, host) => {
      if (host === 'l20-n1')
        r.lldp!.stdout = r
          .lldp!.stdout.replace(/"ens1f1": \{/, '"TMP": {')
          .replace(/"ens2f0": \{/, '"ens1f1": {')
          .replace(/"TMP": \{/, '"ens2f0": {');
    });
    expect(plan('network.write', crossed, 0, ctxB)?.summary).toMatch(
      /^refused: design B needs both ports of card 0000:1a:00 cabled to one card of one peer; they reach l20-n2:0000:1a:00, l20-n2:0000:9a:00$/,
    );
  });
});

describe('network.discover-cabling', () => {
  it('brings only down, unconfigured ports up and waits for their neighbours; nothing to do when all are up', () => {
    const p = plan('network.discover-cabling', all('fresh'));
    expect(
      p?.commands?.map((c) => ('argv' in c.command ? c.command.argv.join(' ') : `script ${c.command.args?.join(' ')}`)),
    ).toEqual([
      'ip link set dev ens1f0 up',
      'ip link set dev ens1f1 up',
      'ip link set dev ens2f0 up',
      'ip link set dev ens2f1 up',
      'script ens1f0 ens1f1 ens2f0 ens2f1',
    ]);
    expect(p?.rollback?.map((c) => ('argv' in c.command ? c.command.argv.join(' ') : ''))).toEqual([
      'ip link set dev ens1f0 down',
      'ip link set dev ens1f1 down',
      'ip link set dev ens2f0 down',
      'ip link set dev ens2f1 down',
    ]);
    expect(plan('network.discover-cabling', all('ready'))).toBeNull();
  });
});

describe('ufw status verbose', () => {
  const text =
    'Status: active\nLogging: on (low)\nDefault: deny (incoming), allow (outgoing), disabled (routed)\nNew profiles: skip\n\n' +
    'To                         Action      From\n--                         ------      ----\n22/tcp on eno1             ALLOW IN    Anywhere\n' +
    'Anywhere on bond0          ALLOW IN    Anywhere\n22/tcp (v6) on eno1        ALLOW IN    Anywhere (v6)\nAnywhere (v6) on bond0     ALLOW IN    Anywhere (v6)\n\n';
  it('reads each rule and answers what it admits', () => {
    const u = parseUfwStatus(text, text, 0);
    expect(u).toMatchObject({ available: true, active: true, defaultIncoming: 'deny' });
    expect(u.rules.map((r) => [r.iface, r.port, r.proto, r.direction, r.v6])).toEqual([
      ['eno1', 22, 'tcp', 'IN', false],
      ['bond0', undefined, undefined, 'IN', false],
      ['eno1', 22, 'tcp', 'IN', true],
      ['bond0', undefined, undefined, 'IN', true],
    ]);
    expect(admits(u, 'eno1', 22)).toBe(true);
    expect(admits(u, 'eno1', 2222)).toBe(false);
    expect(admits(u, 'bond0')).toBe(true);
    expect(admits(u, 'ens1f0')).toBe(false);
    expect(parseUfwStatus('Status: inactive\n', 'Status: inactive', 0)).toMatchObject({
      available: true,
      active: false,
      rules: [],
    });
    expect(parseUfwStatus('', 'ERROR: You need to be root to run this script', 1).available).toBe(false);
  });
});
