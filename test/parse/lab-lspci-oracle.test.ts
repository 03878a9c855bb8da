/**
 * The lab's `lspci -vv` link lines against real pciutils. Every PCIe function of a lab node is written as
 * the config space it models (ids, class, port type, LnkCap/LnkSta/LnkCap2/LnkCtl2 registers); the
 * installed lspci decodes that dump (`lspci -F`), and both texts must parse to the same link facts.
 * The lab prints pciutils 3.7.0's forms (Ubuntu 22.04), checked against real 3.7.0 output of
 * test/fixtures/lspci/links.dump.txt: `(ok)` marks on LnkSta, no LnkCap2/LnkCtl2 on endpoint
 * functions other than 00.0.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPciTree } from '../../lab/model/pci-topology.js';
import type { PciFunction } from '../../lab/model/types.js';
import { capabilityLines } from '../../lab/tools/lspci-caps.js';
import { rng } from '../../lab/util/prng.js';
import { parseLspci, type LspciDevice } from '../../src/parse/lspci.js';
import { loadFixture } from './fixtures.js';

/** PCIe device/port type of each lab profile (0 Endpoint, 1 Legacy Endpoint, 4 Root Port, 5/6 switch ports). */
const PORT_TYPE: Partial<Record<PciFunction['profile'], number>> = {
  l20: 1,
  cx4lx: 0,
  i210: 0,
  'pex-up': 5,
  'pex-down': 6,
  'spr-rp': 4,
  'pch-rp': 4,
};

/** The function's config space (256 bytes) in the `lspci -xxx` text format. */
function dump(p: PciFunction, type: number): string {
  const c = new Uint8Array(256);
  const put = (o: number, v: number, n: number): void => {
    for (let i = 0; i < n; i++) c[o + i] = (v >>> (8 * i)) & 0xff;
  };
  put(0, p.vendorId, 2);
  put(2, p.deviceId, 2);
  put(4, 0x0006, 2);
  put(6, 0x0010, 2); // capability list present
  c[8] = p.revision;
  put(9, p.classCode, 3);
  if (p.bridge) {
    c[14] = 1;
    c[0x19] = p.bridge.secondary;
    c[0x1a] = p.bridge.subordinate;
  }
  c[0x34] = 0x40;
  const l = p.link!;
  put(0x40, 0x10, 1);
  put(0x42, 0x2 | (type << 4), 2);
  put(0x40 + 0x0c, l.capGen | (l.capWidth << 4) | (l.port << 24), 4);
  put(0x40 + 0x12, l.staGen | (l.staWidth << 4) | (1 << 13), 2);
  // Supported speeds: every one up to the maximum; reserved (0) before PCIe 3.0.
  put(0x40 + 0x2c, l.capGen >= 3 ? ((1 << l.capGen) - 1) << 1 : 0, 4);
  put(0x40 + 0x30, l.capGen, 2);
  const rows = [`${p.bdf} lab`];
  const hex = (n: number): string => n.toString(16).padStart(2, '0');
  for (let r = 0; r < 256; r += 16) rows.push(`${hex(r)}: ${[...c.slice(r, r + 16)].map(hex).join(' ')}`);
  return rows.join('\n');
}

const LINK_FACTS = (d: LspciDevice | undefined) => ({
  pcieType: d?.pcieType,
  lnkCap: d?.lnkCap && { speedGTs: d.lnkCap.speedGTs, width: d.lnkCap.width },
  lnkSta: d?.lnkSta && { speedGTs: d.lnkSta.speedGTs, width: d.lnkSta.width },
  downgraded: d?.downgraded,
  lnkCap2MaxGTs: d?.lnkCap2MaxGTs,
  lnkCtl2TargetGTs: d?.lnkCtl2TargetGTs,
});

const functions = buildPciTree(rng(1, 'l20-n1', 'pci')).filter((p) => p.link && PORT_TYPE[p.profile] !== undefined);
const labText = (p: PciFunction): string => [`${p.bdf} Device: lab`, ...capabilityLines(p)].join('\n');

describe('lab lspci -vv links agree with real lspci', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lab-lspci-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('covers the lab node: GPUs, NIC functions, switch ports and root ports', () => {
    const profiles = ['l20', 'cx4lx', 'i210', 'pex-up', 'pex-down', 'spr-rp', 'pch-rp'];
    expect(new Set(functions.map((p) => p.profile))).toEqual(new Set(profiles));
  });

  it('the installed lspci decodes the lab model to the link facts the lab prints', () => {
    const file = join(dir, 'lab.dump');
    writeFileSync(file, `${functions.map((p) => dump(p, PORT_TYPE[p.profile]!)).join('\n\n')}\n`);
    let out: string;
    try {
      out = execFileSync('lspci', ['-F', file, '-vv'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (e) {
      throw new Error(`lspci -F failed (${(e as Error).message}); install the Debian package pciutils`, { cause: e });
    }
    const real = parseLspci(out).devices;
    for (const p of functions) {
      const lab = LINK_FACTS(parseLspci(labText(p)).devices[0]);
      const want = LINK_FACTS(real.find((d) => d.bdf === p.bdf));
      // The lab's I210 block (a PCIe 2.1 part, LnkCap2 reserved) stops before the v2 registers; real lspci
      // would print LnkCtl2/LnkSta2 there. Not modelled: compare its link status only.
      if (p.profile === 'i210') want.lnkCap2MaxGTs = want.lnkCtl2TargetGTs = undefined;
      expect(lab, p.bdf).toEqual(want);
    }
  });

  it('prints LnkSta as pciutils 3.7.0 does: a mark after speed and width', () => {
    const real37 = loadFixture('lspci/lspci-vv__pciutils-3.7.0-links-dump.txt')
      .split('\n')
      .filter((l) => l.includes('LnkSta:'));
    const shape = (l: string): string =>
      l
        .replace(/Speed [\d.]+GT\/s/, 'Speed S')
        .replace(/x\d+/, 'xW')
        .replace(/\((?:ok|downgraded|strange)\)/g, '(M)');
    const realShapes = new Set(real37.map(shape));
    const forms = ['\t\tLnkSta:\tSpeed S (M), Width xW (M)', '\t\tLnkSta:\tSpeed unknown (M), Width xW (M)'];
    expect(realShapes).toEqual(new Set(forms));
    for (const p of functions) {
      for (const l of capabilityLines(p).filter((x) => x.includes('LnkSta:'))) {
        expect(realShapes.has(shape(l)), `${p.bdf}: ${l}`).toBe(true);
      }
    }
  });
});
