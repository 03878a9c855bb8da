import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNetplanStatus } from '../../src/parse/netplan-status.js';
import { doctorText } from '../../src/doctor/doctor.js';

const load = (name: string) =>
  readFileSync(resolve(import.meta.dirname, '../fixtures/corpus', name), 'utf8')
    .split('\n')
    .slice(3)
    .join('\n');

describe('netplan status', () => {
  it('reads the interface blocks with state, backend, MAC and addresses', () => {
    const f = parseNetplanStatus(load('netplan-status__doc-tutorial-all-lxd-vm-lo-enp5s0-enp6s0-down.txt'));
    expect(f.onlineState).toBe('online');
    expect(f.interfaces.map((i) => `${i.index}:${i.name}:${i.state}:${i.up}`)).toEqual([
      '1:lo:UNKNOWN/UP:true',
      '2:enp5s0:UP:true',
      '3:enp6s0:DOWN:false',
    ]);
    const enp5s0 = f.interfaces[1]!;
    expect(enp5s0).toMatchObject({ type: 'ethernet', backend: 'networkd', mac: '00:16:3e:13:ae:10' });
    expect(enp5s0.addresses).toEqual([
      '10.86.126.221/24',
      'fd42:bc43:e20e:8cf7:216:3eff:fe13:ae10/64',
      'fe80::216:3eff:fe13:ae10/64',
    ]);
    expect(enp5s0.routes[0]).toBe('default via 10.86.126.1 from 10.86.126.221 metric 100 (dhcp)');
    expect(f.interfaces[2]!.backend).toBe('unmanaged');
  });

  it('reads a bond block and the hidden-interfaces footer; survives CRLF and cuts', () => {
    const text = load('netplan-status__doc-bond-isp-bond0-one-iface.txt');
    const f = parseNetplanStatus(text);
    expect(f.interfaces).toEqual([
      expect.objectContaining({ index: 4, name: 'isp-bond0', type: 'bond', up: true, addresses: ['172.16.0.1/24'] }),
    ]);
    expect(f.hiddenInactive).toBe(3);
    expect(parseNetplanStatus(text.replace(/\n/g, '\r\n')).interfaces[0]?.mac).toBe('b2:6b:19:b1:9a:86');
    for (let cut = 0; cut < text.length; cut += 31) expect(() => parseNetplanStatus(text.slice(0, cut))).not.toThrow();
  });

  it('doctor detects it by content', () => {
    const { report, summary } = doctorText(
      load('netplan-status__test-fixture-bond-bridge-vrf-members-activation-mode.txt'),
    );
    expect(report.kind).toBe('netplan-status');
    expect(summary.find(([k]) => k === 'interfaces')?.[1]).toMatch(/^\d+: /);
  });
});
