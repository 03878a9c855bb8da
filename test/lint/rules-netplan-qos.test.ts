/** Netplan rules R16–R22 and QoS rules R25, R27: fire / do not fire. */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lintFiles } from '../../src/lint/index.js';
import { ids, lintMany, lintOne, only } from './helpers.js';

const bond = (ifs: string, params: string, extra = ''): string =>
  `network:\n  version: 2\n  bonds:\n    bond0:\n      interfaces: [${ifs}]\n${
    params
      ? `      parameters:\n${params
          .split(';')
          .map((p) => `        ${p.trim()}`)
          .join('\n')}\n`
      : ''
  }      addresses: [192.168.100.1/24]\n${extra}`;

describe('R16 RDMA bond without a RoCE LAG', () => {
  it('4 slaves on 2 NICs fire (blocker) at the interfaces line', () => {
    const f = only(
      lintOne(bond('ens1f0, ens1f1, ens2f0, ens2f1', 'mode: balance-xor; mii-monitor-interval: 100')),
      'R16',
    )[0];
    expect(f).toMatchObject({ severity: 'blocker', line: 5 });
    expect(f?.evidence).toContain('4 slaves on 2 PCI devices');
  });
  it('2 ports of two NICs with NCCL on the bond fire; the evidence names the nccl.conf line', () => {
    const r = lintMany({ np: bond('ens1f0, ens2f0', 'mode: 802.3ad'), 'nccl.conf': 'NCCL_SOCKET_IFNAME==bond0\n' });
    expect(only(r.np ?? [], 'R16')[0]?.evidence).toContain('NCCL_SOCKET_IFNAME==bond0 (nccl.conf:1)');
  });
  it('a Ray address in the bond subnet counts as traffic', () => {
    const r = lintMany({
      np: bond('eno1, eno2', 'mode: balance-rr'),
      ray: 'ray start --address=192.168.100.1:6379 --node-ip-address=192.168.100.2\n',
    });
    expect(only(r.np ?? [], 'R16')[0]?.evidence).toMatch(/Ray: --address=192\.168\.100\.1:6379/);
  });
  it('a LAG (the two PFs of one NIC, 802.3ad) and a management bond without fabric traffic are silent', () => {
    expect(ids(lintOne(bond('ens1f0, ens1f1', 'mode: 802.3ad; mii-monitor-interval: 100')))).not.toContain('R16');
    expect(
      ids(lintOne(bond('enp65s0f0np0, enp65s0f1np1', 'mode: active-backup; mii-monitor-interval: 100'))),
    ).not.toContain('R16');
    expect(ids(lintOne(bond('eno1, eno2', 'mode: active-backup; mii-monitor-interval: 100')))).not.toContain('R16');
  });
  it('a LAG in a mode that forms none fires', () =>
    expect(ids(lintOne(bond('ens1f0, ens1f1', 'mode: balance-rr; mii-monitor-interval: 100')))).toContain('R16'));
});

describe('R17 one subnet per cable', () => {
  it('two ports in one subnet fire (high)', () => {
    const np =
      'network:\n  ethernets:\n    ens1f0: {addresses: [192.168.100.1/24]}\n    ens1f1: {addresses: [192.168.100.11/24]}\n';
    expect(only(lintOne(np), 'R17')[0]).toMatchObject({ severity: 'high', line: 4 });
  });
  it('four subnets are silent', () => {
    const np =
      'network:\n  ethernets:\n' + [1, 2, 3, 4].map((k) => `    p${k}: {addresses: [192.168.10${k}.1/24]}\n`).join('');
    expect(ids(lintOne(np))).not.toContain('R17');
  });
});

describe('R18–R20 bond parameters', () => {
  it('R18: lacp-rate outside 802.3ad fires (medium), also with no mode', () => {
    expect(
      only(lintOne(bond('eno1, eno2', 'mode: active-backup; lacp-rate: fast; mii-monitor-interval: 100')), 'R18')[0],
    ).toMatchObject({ severity: 'medium', line: 8 });
    expect(ids(lintOne(bond('eno1, eno2', 'lacp-rate: fast; mii-monitor-interval: 100')))).toContain('R18');
    expect(ids(lintOne(bond('eno1, eno2', 'mode: 802.3ad; lacp-rate: fast; mii-monitor-interval: 100')))).not.toContain(
      'R18',
    );
  });
  it('R19: transmit-hash-policy in active-backup fires (low); with balance-xor / 802.3ad it does not', () => {
    expect(
      only(
        lintOne(bond('eno1, eno2', 'mode: active-backup; transmit-hash-policy: layer3+4; mii-monitor-interval: 100')),
        'R19',
      )[0]?.severity,
    ).toBe('low');
    expect(
      ids(lintOne(bond('eno1, eno2', 'mode: balance-xor; transmit-hash-policy: layer3+4; mii-monitor-interval: 100'))),
    ).not.toContain('R19');
    expect(
      ids(lintOne(bond('eno1, eno2', 'mode: 802.3ad; transmit-hash-policy: layer3+4; mii-monitor-interval: 100'))),
    ).not.toContain('R19');
  });
  it('R20: no or zero mii-monitor-interval fires; 100, "1s" or ARP monitoring do not', () => {
    expect(only(lintOne(bond('eno1, eno2', 'mode: active-backup')), 'R20')[0]?.severity).toBe('low');
    expect(ids(lintOne(bond('eno1, eno2', 'mode: active-backup; mii-monitor-interval: 0')))).toContain('R20');
    expect(ids(lintOne(bond('eno1, eno2', 'mode: active-backup; mii-monitor-interval: 100')))).not.toContain('R20');
    expect(ids(lintOne(bond('eno1, eno2', 'mode: active-backup; mii-monitor-interval: 1s')))).not.toContain('R20');
    expect(
      ids(lintOne(bond('eno1, eno2', 'mode: active-backup; arp-interval: 100; arp-ip-targets: [10.0.0.254]'))),
    ).not.toContain('R20');
  });
});

describe('R21 netplan hygiene', () => {
  it('gateway4 and gateway6 fire (low) with a routes fix', () => {
    const np =
      'network:\n  ethernets:\n    eno1:\n      addresses: [10.0.0.1/24]\n      gateway4: 10.0.0.254\n      gateway6: fe80::1\n';
    const r = only(lintOne(np), 'R21');
    expect(r.map((f) => f.line)).toEqual([5, 6]);
    expect(r[0]?.fix).toContain('routes: [{to: default, via: 10.0.0.254}]');
  });
  it('routes are silent', () =>
    expect(
      ids(lintOne('network:\n  ethernets:\n    eno1:\n      routes: [{to: default, via: 10.0.0.254}]\n')),
    ).not.toContain('R21'));
  it('a YAML error is a finding with its line, not a crash', () => {
    const f = only(lintOne('network:\n  ethernets:\n\tens1f0: {mtu: 9000}\n'), 'R21')[0];
    expect(f?.title).toBe('Netplan YAML does not parse');
    expect(f?.line).toBe(3);
  });
  const tmp = mkdtempSync(join(tmpdir(), 'l20-np-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  it('file mode: 0644 fires (from disk), 0600 does not', async () => {
    const a = join(tmp, 'a.yaml');
    const b = join(tmp, 'b.yaml');
    const np = 'network:\n  version: 2\n  ethernets: {ens1f0: {mtu: 9000, addresses: [192.168.101.1/24]}}\n';
    writeFileSync(a, np);
    writeFileSync(b, np);
    chmodSync(a, 0o644);
    chmodSync(b, 0o600);
    const r = await lintFiles([a, b]);
    expect(r.files[0]?.findings.find((f) => f.rule === 'R21')?.evidence).toContain('mode 0644');
    expect(r.files[1]?.findings.map((f) => f.rule)).not.toContain('R21');
  });
});

describe('R22 netplan try with bond parameters', () => {
  it('a bond or bridge with parameters fires (high) at the parameters line', () => {
    expect(only(lintOne(bond('ens1f0, ens1f1', 'mode: 802.3ad; mii-monitor-interval: 100')), 'R22')[0]).toMatchObject({
      severity: 'high',
      line: 6,
    });
    expect(
      ids(lintOne('network:\n  bridges:\n    br0:\n      interfaces: [eno1]\n      parameters: {stp: false}\n')),
    ).toContain('R22');
  });
  it('no parameters: silent', () => expect(ids(lintOne(bond('ens1f0, ens1f1', '')))).not.toContain('R22'));
});

describe('R25 DCB only on physical PFs', () => {
  it.each([
    ['sudo mlnx_qos -i bond0 --trust dscp', 'bond'],
    ['mlnx_qos -i ens1f0.100 --pfc 0,0,0,1,0,0,0,0', 'VLAN'],
    ['mlnx_qos --interface=br0 --trust dscp', 'bridge'],
    ['dcb pfc set dev bond1 prio-pfc all:off 3:on', 'bond'],
  ])('%s fires (blocker)', (cmd, what) => {
    const f = only(lintOne(`#!/bin/sh\n${cmd}\n`), 'R25')[0];
    expect(f).toMatchObject({ severity: 'blocker', line: 2 });
    expect(f?.evidence).toContain(what);
  });
  it('a device defined under bonds in the run fires whatever its name', () => {
    const np = 'network:\n  bonds:\n    fabric0: {interfaces: [ens1f0, ens1f1]}\n';
    expect(
      only(lintMany({ np, qos: '#!/bin/sh\nmlnx_qos -i fabric0 --trust dscp\n' }).qos ?? [], 'R25')[0]?.fix,
    ).toContain('mlnx_qos -i ens1f0');
  });
  it('a loop is expanded: only the bond value fires', () => {
    const r = only(lintOne('#!/bin/sh\nfor i in ens1f0 bond0; do\n  mlnx_qos -i $i --trust dscp\ndone\n'), 'R25');
    expect(r).toHaveLength(1);
    expect(r[0]?.line).toBe(3);
  });
  it('physical ports and unexpanded variables are silent', () => {
    expect(
      ids(lintOne('#!/bin/sh\nmlnx_qos -i ens1f0 --trust dscp --pfc 0,0,0,1,0,0,0,0\nmlnx_qos -i "$1" --trust dscp\n')),
    ).not.toContain('R25');
  });
});

describe('R27 QoS persistence', () => {
  const script = '#!/bin/sh\nmlnx_qos -i ens1f0 --trust dscp --pfc 0,0,0,1,0,0,0,0\n';
  it('a QoS script with nothing to re-apply it fires (high)', () =>
    expect(only(lintOne(script), 'R27')[0]).toMatchObject({ severity: 'high', line: 2 }));
  it('a unit in the run, or an enable in the script, is persistence', () => {
    expect(
      lintMany({ script, unit: '[Service]\nType=oneshot\nExecStart=/usr/local/sbin/l20-roce-qos\n' }).script,
    ).toEqual([]);
    expect(ids(lintOne(`${script}systemctl enable --now l20-roce-qos.service\n`))).not.toContain('R27');
    expect(ids(lintOne('[Service]\nType=oneshot\nExecStart=/usr/bin/mlnx_qos -i ens1f0 --trust dscp\n'))).not.toContain(
      'R27',
    );
  });
  it('read-only mlnx_qos is not QoS applied', () =>
    expect(ids(lintOne('#!/bin/sh\nmlnx_qos -i ens1f0\n'))).not.toContain('R27'));
});
