/**
 * LnkCap/LnkSta as every pciutils version prints them. The oracle is the config space itself:
 * test/fixtures/lspci/links.dump.txt holds the registers, real lspci 3.6.4, 3.7.0, 3.9.0 and 3.14.0 decoded
 * them into the lspci-vv__pciutils-* fixtures, and the installed lspci decodes them again here (`lspci -F`).
 * Expected values are computed from the register bits, not copied from any lspci text.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLspci, type LspciDevice } from '../../src/parse/lspci.js';
import { decodePciDump } from '../helpers/pci-dump.js';
import { loadFixture } from './fixtures.js';

const VERSIONS = ['3.6.4', '3.7.0', '3.9.0', '3.14.0'] as const;
const DUMP = loadFixture('lspci/links.dump.txt');

const REGS = decodePciDump(DUMP);

function expectDecoded(devices: readonly LspciDevice[]): void {
  expect(devices.map((d) => d.bdf)).toEqual(REGS.map((r) => r.bdf));
  for (const r of REGS) {
    const d = devices.find((x) => x.bdf === r.bdf);
    const where = `${r.bdf} (${r.type})`;
    expect(d?.pcieType, where).toBe(r.type);
    expect(d?.lnkCap?.speedGTs, where).toBe(r.cap.speed);
    expect(d?.lnkCap?.width, where).toBe(r.cap.width);
    expect(d?.lnkSta?.speedGTs, where).toBe(r.sta.speed);
    expect(d?.lnkSta?.speedUnknown, where).toBe(r.sta.speed === undefined ? true : undefined);
    expect(d?.lnkSta?.width, where).toBe(r.sta.width);
    // Below capability in speed or width, whichever version printed it and for every port type.
    const slower = r.sta.speed === undefined || (r.cap.speed !== undefined && r.sta.speed < r.cap.speed);
    expect(d?.downgraded, where).toBe(slower || r.sta.width < r.cap.width);
  }
}

describe('lspci -vv link status in every pciutils format', () => {
  it('the dump covers each case the formats differ on', () => {
    expect(REGS.some((r) => r.sta.speed === undefined && r.sta.width === 0)).toBe(true); // link down
    expect(REGS.some((r) => r.type === 'Downstream Port' && r.sta.width < r.cap.width)).toBe(true); // 3.8+: no mark
    expect(REGS.some((r) => (r.sta.speed ?? 0) > (r.cap.speed ?? 0))).toBe(true); // strange / overdriven
    expect(REGS.some((r) => r.sta.speed === 32 && r.sta.width === 16)).toBe(true);
  });

  for (const v of VERSIONS) {
    it(`reads pciutils ${v}`, () => {
      expectDecoded(parseLspci(loadFixture(`lspci/lspci-vv__pciutils-${v}-links-dump.txt`)).devices);
    });
  }

  it('pciutils 3.8+ without marks: an equal link is not downgraded, its width is read', () => {
    const devices = parseLspci(loadFixture('lspci/lspci-vv__pciutils-3.9.0-links-dump.txt')).devices;
    const d = devices.find((x) => x.bdf === '0000:3b:00.0');
    expect(d?.lnkSta).toEqual({ speedGTs: 8, width: 8 });
    expect(d?.downgraded).toBe(false);
  });

  it('reads LnkCap2 and LnkCtl2 speeds, and leaves them out where lspci does (endpoint functions other than 0)', () => {
    const devs = parseLspci(loadFixture('lspci/lspci-vv__pciutils-3.14.0-links-dump.txt')).devices;
    expect(devs.find((x) => x.bdf === '0000:5e:00.0')).toMatchObject({ lnkCap2MaxGTs: 32, lnkCtl2TargetGTs: 32 });
    const fn1 = devs.find((x) => x.bdf === '0000:3b:00.1');
    expect(fn1?.lnkCap2MaxGTs).toBeUndefined();
    expect(fn1?.lnkSta?.width).toBe(4);
  });

  it('a LnkSta line that ends the input without a mark or comma may be cut: its width is not guessed', () => {
    const text = [
      '0000:18:00.0 3D controller: NVIDIA Corporation Device 26ba',
      '\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L1',
      '\t\tLnkSta:\tSpeed 16GT/s, Width x1',
    ].join('\n');
    const d = parseLspci(text).devices[0];
    expect(d?.lnkSta?.width).toBeUndefined();
    expect(d?.lnkSta?.speedGTs).toBe(16);
    // The same line with the status flags below it is complete.
    const whole = `${text}\n\t\t\tTrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-\n`;
    expect(parseLspci(whole).devices[0]?.lnkSta?.width).toBe(1);
  });

  it('reads the pre-3.6 form with the flags on the LnkSta line', () => {
    const text =
      '00:01.0 PCI bridge: Intel Corporation Device 347a\n\t\tLnkCap:\tPort #0, Speed 8GT/s, Width x16, ASPM L1\n' +
      '\t\tLnkSta:\tSpeed 8GT/s, Width x8, TrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-\n';
    expect(parseLspci(text).devices[0]).toMatchObject({ lnkSta: { speedGTs: 8, width: 8 }, downgraded: true });
  });
});

describe('the installed lspci (pciutils) decodes the same registers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lspci-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lspci -F links.dump -vv parses to the registers', () => {
    const file = join(dir, 'links.dump');
    writeFileSync(file, DUMP);
    let out: string;
    try {
      out = execFileSync('lspci', ['-F', file, '-vv'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (e) {
      throw new Error(`lspci -F failed (${(e as Error).message}); install the Debian package pciutils`, { cause: e });
    }
    expectDecoded(parseLspci(out).devices);
  });
});
