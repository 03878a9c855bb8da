/**
 * Detection of the RDMA / NIC / host-software kinds on every real sample: the sample's kind scores highest
 * among these kinds (≥ 0.5), every other of these kinds stays below 0.5 unless the sample really holds that
 * output too, and none of these kinds claims a sample of another family.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rdmaKinds } from '../../src/doctor/kinds/rdma.js';
import { cleanText } from '../../src/parse/common.js';
import { RDMA_PREFIX, rdmaSamples } from './rdma-helpers.js';

const DIR = resolve(import.meta.dirname, '../fixtures');

/** Samples that hold a second output of another of these kinds (which may then score ≥ 0.5 too). */
const ALSO: Record<string, string[]> = {
  'ibdev2netdev-v__bluefield3-supernic-ib-and-eth-long-padded-desc-plus-ofed_info.txt': ['ofed_info'],
  'ibdev2netdev__cx6-ib-sriov-vfs-ibpXsYvZ-partial.txt': ['lspci'],
  // Its first lines are `# lsmod | grep nv_peer` and an empty `#` prompt: grep's empty answer, an lsmod output.
  'modinfo__nv_peer_mem-legacy-1.0-8-ubuntu1804.txt': ['lsmod'],
  'ofed_info-n__mofed-5.0-2.1.8-centos7-cx5.txt': ['lspci'],
  'ofed_info-s__command-not-found-plus-ibv_devinfo-vv-rdma-core17-raw-tabs-TRUNCATED.txt': ['ibv_devinfo'],
  'ofed_info-s__mofed-4.0-2.0.0.1-cx3-plus-lspci-network-controller.txt': ['lspci'],
  'roce-validate__ip-o-addr-sysfs-state-rdma-system-lsmod-peermem.txt': ['lsmod', 'ip-link'],
};

function body(path: string): string {
  const text = readFileSync(path, 'utf8');
  return text.startsWith('# source:') ? text.split('\n').slice(3).join('\n') : text;
}

function scores(text: string): Map<string, number> {
  const cleaned = cleanText(text);
  return new Map(rdmaKinds.map((k) => [k.kind, k.detect(cleaned)]));
}

describe('RDMA kinds: detection on every real sample of their families', () => {
  it('covers every kind with at least one sample', () => {
    const kinds = new Set(rdmaSamples().map((s) => s.kind));
    for (const k of rdmaKinds) expect(kinds.has(k.kind), k.kind).toBe(true);
  });

  for (const { file, kind } of rdmaSamples()) {
    it(`${file} → ${kind}`, () => {
      const s = scores(body(join(DIR, 'corpus', file)));
      const best = [...s.entries()].sort((a, b) => b[1] - a[1])[0]!;
      expect(best[0]).toBe(kind);
      expect(best[1]).toBeGreaterThanOrEqual(0.5);
      for (const [other, score] of s) {
        if (other === kind || ALSO[file]?.includes(other)) continue;
        expect(score, `${other} on ${file}`).toBeLessThan(0.5);
      }
    });
  }

  it('claims no sample of another family (corpus and h200-x2 captures)', () => {
    const foreign = readdirSync(join(DIR, 'corpus'))
      .filter((f) => f.includes('__') && RDMA_PREFIX[f.split('__')[0]!] === undefined)
      .map((f) => join(DIR, 'corpus', f))
      .concat(readdirSync(join(DIR, 'h200-x2')).map((f) => join(DIR, 'h200-x2', f)));
    expect(foreign.length).toBeGreaterThan(50);
    for (const path of foreign) {
      for (const [kind, score] of scores(body(path))) expect(score, `${kind} on ${path}`).toBeLessThan(0.5);
    }
  });

  it('stays fast on a large unrelated input', () => {
    const junk = 'x'.repeat(100) + ' 1234 abc: def\n';
    const big = junk.repeat(Math.ceil((2 * 1024 * 1024) / junk.length));
    const t0 = performance.now();
    for (const k of rdmaKinds) expect(k.detect(big)).toBeLessThan(0.5);
    expect(performance.now() - t0).toBeLessThan(3000);
  });

  it('stays linear on pathological lines (no catastrophic backtracking)', () => {
    const n = 1_000_000;
    const inputs = [
      'a'.repeat(n),
      ' \t'.repeat(n / 2),
      '1 '.repeat(n / 2),
      'port 1 '.repeat(n / 7),
      'MLNX_OFED_LINUX-5.4-' + 'a.'.repeat(n / 2),
      'rx_x: 1\n'.repeat(n / 8),
      "CA 'x\n".repeat(n / 6),
      '/sys/class/infiniband/' + 'a/'.repeat(n / 2),
      'GID[' + ' '.repeat(n),
      '0: ' + 'x:'.repeat(n / 2),
    ];
    const t0 = performance.now();
    for (const text of inputs) for (const k of rdmaKinds) k.detect(text);
    expect(performance.now() - t0).toBeLessThan(5000);
  });
});
