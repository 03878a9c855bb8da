/**
 * `Speed: Unknown!` is the kernel's SPEED_UNKNOWN. A virtio NIC reports it (and `Duplex: Unknown! (255)`)
 * while its link is up; a physical port reports it when its link is down. Only the latter is D09.
 * Real sample: ethtool 6.1 on this build VM's virtio_net eth0.
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { EthtoolFacts, EthtoolInfoFacts } from '../../src/parse/ethtool.js';
import { loadFixture } from '../parse/fixtures.js';

const VIRTIO = loadFixture('ethtool/ethtool__virtio-net-speed-unknown-link-up.txt');

describe('ethtool on a virtio NIC', () => {
  it('link up with an unknown speed and duplex: facts say so, no D09', () => {
    const { report } = doctorText(VIRTIO);
    expect(report.kind).toBe('ethtool');
    const f = report.facts as EthtoolFacts;
    expect(f).toMatchObject({ netdev: 'eth0', linkDetected: true, port: 'Other', supportedLinkModes: [] });
    expect(f.speedMbps).toBeUndefined();
    expect(f.duplex).toBeUndefined();
    expect(report.findings.filter((x) => x.rule === 'D09')).toEqual([]);
  });

  it('the same NIC with its link down is D09', () => {
    const down = VIRTIO.replace('Link detected: yes', 'Link detected: no');
    expect(doctorText(down).report.findings.map((x) => x.rule)).toContain('D09');
  });

  it('a physical port (link modes listed) that is up yet reports no speed is still D09', () => {
    const physical = VIRTIO.replace('Supported link modes:   Not reported', 'Supported link modes:   25000baseCR/Full');
    const d09 = doctorText(physical).report.findings.find((x) => x.rule === 'D09');
    expect(d09?.evidence).toContain('Speed: Unknown!');
  });

  it('a paste cut before its Link detected line invents no D09', () => {
    const cut = VIRTIO.slice(0, VIRTIO.indexOf('Auto-negotiation: off'));
    expect(doctorText(cut).report.findings.filter((x) => x.rule === 'D09')).toEqual([]);
  });

  it('ethtool -i of the same NIC: driver and bus address, empty firmware left out', () => {
    const { report } = doctorText(loadFixture('ethtool/ethtool-i__virtio-net.txt'));
    expect(report.kind).toBe('ethtool-i');
    const f = report.facts as EthtoolInfoFacts;
    expect(f).toMatchObject({ driver: 'virtio_net', version: '1.0.0', busInfo: '0000:00:03.0' });
    expect(f.firmware).toBeUndefined();
  });
});
