/** `inventory.stack`: ofed_info, /proc/driver/nvidia/version, dpkg-query. */
import { describe, expect, it } from 'vitest';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { parseOfedInfo } from '../../src/parse/ofed-info.js';
import {
  ansiWrap,
  CUTS,
  loadFixture,
  splitSamples,
  toCrlf,
  truncateAt,
  withPrompt,
  withTrailingSpaces,
} from './fixtures.js';

const OFED = {
  s54: 'corpus/ofed_info-s-and-n__mofed-5.4-3.1.0.0.txt',
  s51: 'corpus/ofed_info-s__mofed-5.1-0.6.6.0-centos.txt',
  s40: 'corpus/ofed_info-s__mofed-4.0-2.0.0.1-cx3-plus-lspci-network-controller.txt',
  s5436: 'corpus/ofed_info-s__mofed-5.4-3.6.8-three-part-build-ubuntu.txt',
  n50: 'corpus/ofed_info-n__mofed-5.0-2.1.8-centos7-cx5.txt',
  full52: 'corpus/ofed_info__full-head-mofed-5.2-centos7-TRUNCATED.txt',
  notFound: 'corpus/ofed_info-s__command-not-found-plus-ibv_devinfo-vv-rdma-core17-raw-tabs-TRUNCATED.txt',
  doca: 'corpus/ibdev2netdev-v__bluefield3-supernic-ib-and-eth-long-padded-desc-plus-ofed_info.txt',
};

describe('parseOfedInfo', () => {
  it('reads MLNX_OFED -s lines (four- and three-part builds)', () => {
    expect(parseOfedInfo(loadFixture(OFED.s54))).toEqual({
      version: '5.4-3.1.0.0',
      flavor: 'MLNX_OFED',
      release: '5.4',
      build: '3.1.0.0',
      raw: 'MLNX_OFED_LINUX-5.4-3.1.0.0:',
    });
    expect(parseOfedInfo(loadFixture(OFED.s51))).toMatchObject({ version: '5.1-0.6.6.0', flavor: 'MLNX_OFED' });
    expect(parseOfedInfo(loadFixture(OFED.s40))).toMatchObject({
      version: '4.0-2.0.0.1',
      flavor: 'MLNX_OFED',
      release: '4.0',
    });
    expect(parseOfedInfo(loadFixture(OFED.s5436))).toMatchObject({ version: '5.4-3.6.8', build: '3.6.8' });
  });

  it('reads the head of plain ofed_info', () => {
    expect(parseOfedInfo(loadFixture(OFED.full52))).toMatchObject({ version: '5.2-1.0.4.0', flavor: 'MLNX_OFED' });
  });

  it('reads -n without claiming a flavour', () => {
    const f = parseOfedInfo(loadFixture(OFED.n50));
    expect(f).toMatchObject({ version: '5.0-2.1.8', release: '5.0' });
    expect(f.flavor).toBeUndefined();
  });

  it('reads the DOCA OFED-internal form among other output', () => {
    expect(parseOfedInfo(loadFixture(OFED.doca))).toMatchObject({
      version: '24.07-0.6.1',
      flavor: 'DOCA',
      release: '24.07',
      build: '0.6.1',
    });
    expect(parseOfedInfo('OFED-internal-25.10-1.7.1.413:\n')).toMatchObject({
      version: '25.10-1.7.1.413',
      flavor: 'DOCA',
    });
  });

  it('reports a missing ofed_info (inbox stack)', () => {
    expect(parseOfedInfo(loadFixture(OFED.notFound))).toEqual({ notInstalled: true });
    expect(parseOfedInfo('bash: ofed_info: command not found\n')).toEqual({ notInstalled: true });
    expect(parseOfedInfo("Command 'ofed_info' not found, did you mean:")).toEqual({ notInstalled: true });
  });

  it.each(Object.values(OFED))('%s: variations keep the facts', (name) => {
    const text = loadFixture(name);
    const base = parseOfedInfo(text);
    for (const v of [toCrlf(text), ansiWrap(text), withPrompt(text, 'ofed_info -s'), withTrailingSpaces(text)]) {
      expect(parseOfedInfo(v)).toEqual(base);
    }
  });

  it('does not read a version from a line cut before its colon', () => {
    expect(parseOfedInfo('MLNX_OFED_LINUX-5.4-3.1')).toEqual({});
    for (const cut of CUTS) {
      const f = parseOfedInfo(truncateAt(loadFixture(OFED.s54), cut));
      if (f.flavor) expect(f.version).toBe('5.4-3.1.0.0');
    }
    expect(parseOfedInfo('')).toEqual({});
  });
});

describe('parseNvidiaDriverVersion', () => {
  it('reads the open kernel module wording (H200 capture)', () => {
    expect(parseNvidiaDriverVersion(loadFixture('h200-x2/proc_driver_nvidia_version.txt'))).toEqual({
      present: true,
      version: '580.159.04',
      openKernelModule: true,
      arch: 'x86_64',
      build: 'Release Build  (nixbld@)',
      gccVersion: '15.3.0',
      nvrmLine: 'NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)',
    });
  });

  it("reads the proprietary wording, through the author's `## ` prefix", () => {
    const [a, b] = splitSamples(loadFixture('corpus/proc-driver-nvidia-version__proprietary-515-and-580.txt'));
    expect(parseNvidiaDriverVersion(a ?? '')).toMatchObject({
      present: true,
      version: '515.76',
      openKernelModule: false,
      gccVersion: '7.5.0',
      build: 'Mon Sep 12 19:21:56 UTC 2022',
    });
    expect(parseNvidiaDriverVersion(b ?? '')).toMatchObject({ version: '580.159.04', openKernelModule: false });
    expect(parseNvidiaDriverVersion(b ?? '').gccVersion).toBeUndefined();
  });

  it('reads the lab driver line and reports a missing file', () => {
    const lab =
      'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.126.09  Release Build  (dvs-builder@U22-I3-AF03-09-1)  Fri Jan 23 17:04:04 UTC 2026\nGCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n';
    expect(parseNvidiaDriverVersion(lab)).toMatchObject({
      version: '580.126.09',
      openKernelModule: true,
      gccVersion: '11.4.0',
    });
    expect(parseNvidiaDriverVersion('cat: /proc/driver/nvidia/version: No such file or directory\n')).toEqual({
      present: false,
    });
  });

  it('survives variations; a line cut at the version yields no version', () => {
    const text = loadFixture('h200-x2/proc_driver_nvidia_version.txt');
    const base = parseNvidiaDriverVersion(text);
    for (const v of [toCrlf(text), ansiWrap(text), withPrompt(text, 'cat /proc/driver/nvidia/version')]) {
      expect(parseNvidiaDriverVersion(v)).toEqual(base);
    }
    expect(
      parseNvidiaDriverVersion('NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.1').version,
    ).toBeUndefined();
    for (const cut of CUTS) {
      const f = parseNvidiaDriverVersion(truncateAt(text, cut));
      if (f.version !== undefined) expect(f.version).toBe('580.159.04');
    }
    expect(parseNvidiaDriverVersion('')).toEqual({});
  });
});

// dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\n' over the stack's package set, with
// the stderr lines of names dpkg has never seen (jammy, DOCA-OFED host).
const DPKG = `ii  rdma-core 2410mlnx54-1.2410068
ii  ibverbs-utils 2410mlnx54-1.2410068
ii  infiniband-diags 2410mlnx54-1.2410068
ii  doca-ofed 2.9.1-1
hi  nvidia-driver-580-open 580.126.09-0ubuntu0.22.04.1
rc  nvidia-driver-535 535.183.01-0ubuntu0.22.04.1
un  mlnx-ofed-kernel-dkms 
iU  libnccl2 2.28.9-1+cuda13.0
iFR perftest 24.10.0-0.65.g9093bae.2410068
dpkg-query: no packages found matching mlnx-ofed-all
dpkg-query: no packages found matching nvidia-peermem-dkms
`;

describe('parseDpkgQuery', () => {
  it('reads status, name and version; stderr names are not installed', () => {
    const { packages } = parseDpkgQuery(DPKG);
    expect(packages).toHaveLength(11);
    expect(packages[0]).toEqual({ name: 'rdma-core', version: '2410mlnx54-1.2410068', status: 'ii', installed: true });
    expect(packages[4]).toEqual({
      name: 'nvidia-driver-580-open',
      version: '580.126.09-0ubuntu0.22.04.1',
      status: 'hi',
      installed: true,
      held: true,
    });
    expect(packages[5]).toMatchObject({ name: 'nvidia-driver-535', status: 'rc', installed: false });
    expect(packages[6]).toEqual({ name: 'mlnx-ofed-kernel-dkms', status: 'un', installed: false });
    expect(packages[7]).toMatchObject({ name: 'libnccl2', status: 'iU', installed: false });
    expect(packages[8]).toMatchObject({ name: 'perftest', status: 'iFR', installed: false });
    expect(packages[9]).toEqual({ name: 'mlnx-ofed-all', installed: false, notFound: true });
    expect(packages[10]?.name).toBe('nvidia-peermem-dkms');
  });

  it('reads an empty version and an arch qualifier', () => {
    const { packages } = parseDpkgQuery('un  ofed-scripts \nii  libibverbs1:amd64 39.0-1\n');
    expect(packages).toEqual([
      { name: 'ofed-scripts', status: 'un', installed: false },
      { name: 'libibverbs1', arch: 'amd64', version: '39.0-1', status: 'ii', installed: true },
    ]);
  });

  it('survives variations and truncation', () => {
    const base = parseDpkgQuery(DPKG);
    for (const v of [
      toCrlf(DPKG),
      ansiWrap(DPKG),
      withPrompt(DPKG, "dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\\n' rdma-core"),
    ]) {
      expect(parseDpkgQuery(v)).toEqual(base);
    }
    for (const cut of CUTS) {
      const { packages } = parseDpkgQuery(truncateAt(DPKG, cut));
      packages.slice(0, -1).forEach((p, i) => expect(p).toEqual(base.packages[i]));
      for (const p of packages) if (p.installed) expect(p.version).toBeDefined();
    }
    expect(parseDpkgQuery('ii  rdma-core').packages).toEqual([]);
    expect(parseDpkgQuery('')).toEqual({ packages: [] });
  });
});
