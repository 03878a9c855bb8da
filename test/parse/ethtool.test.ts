import { describe, expect, it } from 'vitest';
import { parseEthtool, parseEthtoolInfo, parseEthtoolInfoAll } from '../../src/parse/ethtool.js';
import {
  ansiWrap,
  CUTS,
  loadFixture,
  spacesToTabs,
  tabsToSpaces,
  toCrlf,
  truncateAt,
  withPrompt,
  withTrailingSpaces,
} from './fixtures.js';

const CX4_100G = 'corpus/ethtool__cx4-100g-qsfp28-forced-40g-unsupported-cable.txt';
const CX4LX_10G = 'corpus/ethtool__cx4lx-25g-at-10g-centos-old-ethtool-fec-BaseR.txt';
const XXV710 = 'corpus/ethtool__intel-xxv710-25g-dac-autoneg-off.txt';
const I_MOFED = 'corpus/ethtool-i__cx4lx-mofed-5.0-2.1.8-two-fw-versions.txt';
const I_INBOX = 'corpus/ethtool-i__cx4lx-ubuntu1804-inbox-5.0-0.txt';
const I_CX7 = 'corpus/ethtool-i__cx7-mofed-23.10.txt';

describe('parseEthtool', () => {
  it('reads the modern 25G layout (tabs, TAB-separated FEC, 8-space message level)', () => {
    const f = parseEthtool(loadFixture(XXV710));
    expect(f).toMatchObject({
      netdev: 'enp65s0f0',
      speedMbps: 25000,
      duplex: 'Full',
      autoneg: false,
      port: 'Direct Attach Copper',
      linkDetected: true,
      supportedLinkModes: ['25000baseCR/Full'],
      supportedFec: ['None', 'RS', 'BASER'],
      advertisedFec: ['None', 'RS', 'BASER'],
    });
    expect(f.linkReason).toBeUndefined();
    expect(f.fields['Current message level']).toBe('0x00000007 (7) drv probe link');
  });

  it('reads a down link with its reason and unknown speed/duplex omitted', () => {
    const f = parseEthtool(loadFixture(CX4_100G));
    expect(f).toMatchObject({
      netdev: 'ens16f1np1',
      linkDetected: false,
      linkReason: 'Cable issue, Unsupported cable',
      autoneg: false,
      port: 'FIBRE',
    });
    expect(f.speedMbps).toBeUndefined();
    expect(f.duplex).toBeUndefined();
    expect(f.supportedLinkModes).toHaveLength(15);
    expect(f.supportedLinkModes?.[14]).toBe('100000baseLR4_ER4/Full');
    expect(f.advertisedLinkModes).toEqual([
      '40000baseKR4/Full',
      '40000baseCR4/Full',
      '40000baseSR4/Full',
      '40000baseLR4/Full',
    ]);
  });

  it('reads the old CentOS ethtool (25G card at 10G, BaseR FEC)', () => {
    const f = parseEthtool(loadFixture(CX4LX_10G));
    expect(f).toMatchObject({
      netdev: 'p4p2',
      speedMbps: 10000,
      duplex: 'Full',
      autoneg: true,
      linkDetected: true,
      supportedFec: ['None', 'BaseR'],
      advertisedFec: ['None'],
    });
    expect(f.supportedLinkModes).toEqual([
      '1000baseKX/Full',
      '10000baseKR/Full',
      '25000baseCR/Full',
      '25000baseKR/Full',
      '25000baseSR/Full',
    ]);
  });

  it('reads Lanes and a link-training reason', () => {
    const text =
      'Settings for ens1f0np0:\n\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n\tLanes: 1\n\tLink detected: no (Link training failure, Remote side is not ready yet)\n';
    expect(parseEthtool(text)).toMatchObject({
      lanes: 1,
      linkDetected: false,
      linkReason: 'Link training failure, Remote side is not ready yet',
    });
  });

  it.each([CX4_100G, CX4LX_10G, XXV710])('%s: variations keep the facts', (name) => {
    const text = loadFixture(name);
    const base = parseEthtool(text);
    for (const v of [
      toCrlf(text),
      ansiWrap(text),
      tabsToSpaces(text),
      spacesToTabs(text),
      withPrompt(text, 'ethtool ens1f0'),
      withTrailingSpaces(text),
    ]) {
      const f = parseEthtool(v);
      expect(f.speedMbps).toEqual(base.speedMbps);
      expect(f.linkDetected).toEqual(base.linkDetected);
      expect(f.linkReason).toEqual(base.linkReason);
      expect(f.netdev).toEqual(base.netdev);
      expect(f.supportedLinkModes).toEqual(base.supportedLinkModes);
    }
  });

  it.each([CX4_100G, CX4LX_10G, XXV710])('%s: truncation never invents facts', (name) => {
    const text = loadFixture(name);
    const base = parseEthtool(text);
    for (const cut of CUTS) {
      const f = parseEthtool(truncateAt(text, cut));
      if (f.speedMbps !== undefined) expect(f.speedMbps).toBe(base.speedMbps);
      if (f.linkDetected !== undefined) expect(f.linkDetected).toBe(base.linkDetected);
      if (f.duplex !== undefined) expect(f.duplex).toBe(base.duplex);
    }
    expect(parseEthtool('Settings for x:\n\tSpeed: 250')).toMatchObject({ netdev: 'x' });
    expect(parseEthtool('Settings for x:\n\tSpeed: 250').speedMbps).toBeUndefined();
    expect(parseEthtool('Settings for x:\n\tLink detected: no (Cable iss').linkReason).toBeUndefined();
  });

  it('never throws on junk', () => {
    expect(parseEthtool('')).toEqual({ fields: {} });
    expect(parseEthtool('netlink error: no device matches name (offset 24)').linkDetected).toBeUndefined();
  });
});

describe('parseEthtoolInfo', () => {
  it('reads MLNX_OFED driver info with firmware and PSID', () => {
    const f = parseEthtoolInfo(loadFixture(I_MOFED));
    expect(f).toMatchObject({
      driver: 'mlx5_core',
      version: '5.0-2.1.8',
      firmware: '14.28.2006 (MT_2420110034)',
      firmwareVersion: '14.28.2006',
      psid: 'MT_2420110034',
      busInfo: '0000:2f:00.0',
      bdf: '0000:2f:00.0',
      supportsStatistics: true,
      supportsPrivFlags: true,
    });
    expect(f.expansionRom).toBeUndefined();
  });

  it('splits four pasted runs (two firmware levels)', () => {
    const all = parseEthtoolInfoAll(loadFixture(I_MOFED));
    expect(all.map((b) => [b.busInfo, b.firmwareVersion])).toEqual([
      ['0000:2f:00.0', '14.28.2006'],
      ['0000:2f:00.1', '14.28.2006'],
      ['0000:30:00.0', '14.32.1010'],
      ['0000:30:00.1', '14.32.1010'],
    ]);
  });

  it('reads the inbox driver and a CX-7 with MLNX_OFED 23.10', () => {
    expect(parseEthtoolInfo(loadFixture(I_INBOX))).toMatchObject({
      driver: 'mlx5_core',
      version: '5.0-0',
      firmwareVersion: '14.23.1020',
      psid: 'MT_2420110034',
      busInfo: '0000:af:00.0',
    });
    const cx7 = parseEthtoolInfo(loadFixture(I_CX7));
    expect(cx7).toMatchObject({
      version: '23.10-1.1.9',
      firmwareVersion: '28.39.3560',
      psid: 'MT_0000000838',
      busInfo: '0000:e6:00.0',
    });
    expect(cx7.expansionRom).toBeUndefined();
  });

  it.each([I_MOFED, I_INBOX, I_CX7])('%s: variations keep the facts and truncation never throws', (name) => {
    const text = loadFixture(name);
    const base = parseEthtoolInfo(text);
    for (const v of [toCrlf(text), ansiWrap(text), withPrompt(text, 'ethtool -i ens1f0'), withTrailingSpaces(text)]) {
      expect(parseEthtoolInfo(v)).toEqual(base);
    }
    for (const cut of CUTS) {
      const f = parseEthtoolInfo(truncateAt(text, cut));
      if (f.driver !== undefined) expect(f.driver).toBe(base.driver);
    }
  });

  it('returns empty facts for junk', () => {
    expect(parseEthtoolInfo('')).toEqual({ fields: {} });
    expect(parseEthtoolInfo('Cannot get driver information: No such device').driver).toBeUndefined();
  });
});
