/**
 * `lspci -D -nn` (and `-n`) as doctor input: detected as lspci, every device read with its domain address,
 * class and vendor:device ids. The ids are checked against the config-space registers that real lspci
 * decoded (test/fixtures/lspci/links.dump.txt), and against the installed lspci's `-n` form.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { LspciFacts } from '../../src/parse/lspci.js';
import { decodePciDump } from '../helpers/pci-dump.js';
import { loadFixture } from '../parse/fixtures.js';

const DUMP = loadFixture('lspci/links.dump.txt');
const REGS = decodePciDump(DUMP);

function ids(text: string): Array<Record<string, string | undefined>> {
  const { report } = doctorText(text);
  expect(report.kind).toBe('lspci');
  const devices = (report.facts as LspciFacts).devices;
  return devices.map((d) => ({ bdf: d.bdf, classId: d.classId, vendorId: d.vendorId, deviceId: d.deviceId }));
}

const expected = REGS.map((r) => ({ bdf: r.bdf, classId: r.classId, vendorId: r.vendorId, deviceId: r.deviceId }));

describe('lspci -D -nn as doctor input', () => {
  it('reads every device of a real -D -nn listing, 3D controllers included', () => {
    const text = loadFixture('lspci/lspci-D-nn__pciutils-3.9.0-links-dump.txt');
    expect(ids(text)).toEqual(expected);
    const { report, summary } = doctorText(text);
    const gpu = (report.facts as LspciFacts).devices.find((d) => d.bdf === '0000:18:00.0');
    expect(gpu).toMatchObject({ class: '3D controller', description: 'NVIDIA Corporation Device', revision: 'a1' });
    expect(summary.find(([k]) => k === 'NVIDIA')?.[1]).toContain('0000:5e:00.0');
  });

  it('reads the GPU-only listing the gpu-driver probe takes (`lspci -D -nn -d 10de:`)', () => {
    const only = loadFixture('lspci/lspci-D-nn__pciutils-3.9.0-links-dump.txt')
      .split('\n')
      .filter((l) => l.includes('[10de:'))
      .join('\n');
    expect(ids(only)).toEqual(expected.filter((e) => e.vendorId === '10de'));
  });

  it("reads this build machine's real listing (virtio devices, an unnamed class)", () => {
    const devices = ids(loadFixture('lspci/lspci-D-nn__pciutils-3.9.0-kvm-virtio.txt'));
    expect(devices.length).toBe(6);
    const wellFormed = (d: (typeof devices)[number]): boolean =>
      /^0000:00:0[0-5]\.0$/.test(d.bdf ?? '') && /^[0-9a-f]{4}$/.test(d.vendorId ?? '');
    expect(devices.every(wellFormed)).toBe(true);
    const nic = { bdf: '0000:00:03.0', classId: '0200', vendorId: '1af4', deviceId: '1041' };
    expect(devices.find((d) => d.bdf === '0000:00:03.0')).toEqual(nic);
  });

  it('detects a listing pasted under its prompt and command line', () => {
    const listing = loadFixture('lspci/lspci-D-nn__pciutils-3.9.0-links-dump.txt');
    const text = `root@l20-n1:~# lspci -D -nn -d 10de:\n${listing}`;
    expect(ids(text)).toEqual(expected);
  });
});

describe('the installed lspci: -D -nn and -D -n agree with the registers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lspci-nn-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (args: string[]): string => {
    const file = join(dir, 'links.dump');
    writeFileSync(file, DUMP);
    try {
      return execFileSync('lspci', ['-F', file, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (e) {
      throw new Error(`lspci -F failed (${(e as Error).message}); install the Debian package pciutils`, { cause: e });
    }
  };

  it('-D -nn', () => expect(ids(run(['-D', '-nn']))).toEqual(expected));
  it('-D -n (numeric only)', () => expect(ids(run(['-D', '-n']))).toEqual(expected));
});
