/**
 * Robustness of the RDMA / NIC / host-software kinds on every real sample as captures distort it: CRLF, ANSI
 * colour, tabs ↔ spaces, a prompt + command line above, trailing spaces, and cuts at several points.
 * Never throw; keep what remains; never raise a finding a cut made up.
 */
import { describe, expect, it } from 'vitest';
import { kindOf, rdmaSamples, run } from './rdma-helpers.js';
import { cleanText } from '../../src/parse/common.js';
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
} from '../parse/fixtures.js';

/** The list-valued fact that holds a kind's items. */
const MAIN: Record<string, string> = {
  ibstat: 'ports',
  ibstatus: 'ports',
  ibv_devices: 'devices',
  ibv_devinfo: 'ports',
  show_gids: 'gids',
  ibdev2netdev: 'links',
  'rdma-link': 'ports',
  mlnx_qos: 'tcs',
  bonding: 'slaves',
  'ethtool-S': 'counters',
  perftest: 'results',
  lsmod: 'modules',
  show_counters: 'counters',
  'sysfs-infiniband': 'ports',
  modinfo: 'modules',
  'mst-status': 'devices',
  'dkms-status': 'modules',
  cma_roce_mode: 'history',
  'ip-link': 'netdevs',
  'roce-validate': 'modules',
  lspci: 'devices',
};

function items(facts: any, kind: string): Array<[string, unknown]> {
  const key = MAIN[kind];
  const v = key ? facts?.[key] : undefined;
  if (Array.isArray(v)) return v.map((x, i) => [String(i), x]);
  if (v && typeof v === 'object') return Object.entries(v);
  return [];
}

const isSubset = (part: unknown, whole: unknown): boolean => {
  if (part === whole) return true;
  if (Array.isArray(part) && Array.isArray(whole)) return part.every((p, i) => isSubset(p, whole[i]));
  if (part && whole && typeof part === 'object' && typeof whole === 'object') {
    return Object.entries(part as object).every(([k, v]) => isSubset(v, (whole as Record<string, unknown>)[k]));
  }
  return false;
};

const COMMAND: Record<string, string> = {
  ibstat: 'ibstat',
  ibstatus: 'ibstatus',
  ibv_devices: 'ibv_devices',
  ibv_devinfo: 'ibv_devinfo -v',
  show_gids: 'show_gids',
  ibdev2netdev: 'ibdev2netdev',
  'rdma-link': 'rdma link show',
  mlnx_qos: 'sudo mlnx_qos -i ens1f0',
  bonding: 'cat /proc/net/bonding/bond0',
  ethtool: 'ethtool ens1f0',
  'ethtool-S': 'ethtool -S ens1f0',
  'ethtool-i': 'ethtool -i ens1f0',
  ofed_info: 'ofed_info -s',
  lspci: 'lspci -nn',
  perftest: 'ib_write_bw -d mlx5_0 -x 3 --report_gbits 10.0.0.2',
  lsmod: 'lsmod',
  show_counters: 'show_counters mlx5_0',
  'sysfs-infiniband': 'grep -H . /sys/class/infiniband/*/ports/1/*',
  modinfo: 'modinfo nv_peer_mem',
  'mst-status': 'mst status -v',
  'dkms-status': 'dkms status',
  cma_roce_mode: 'cma_roce_mode -d mlx5_0 -p 1',
  'ip-link': 'ip -d link show',
  'roce-validate': './roce-validate.sh',
};

describe('RDMA kinds: real samples as captures distort them', () => {
  for (const { file, kind } of rdmaSamples()) {
    describe(file, () => {
      const raw = loadFixture(`corpus/${file}`);
      const k = kindOf(kind);
      const base = run(kind, raw);
      const ruleTitles = new Set(base.findings.map((f) => `${f.rule}|${f.title}`));

      it('CRLF, ANSI colour, a prompt line and trailing spaces change nothing', () => {
        for (const v of [toCrlf(raw), ansiWrap(raw), withPrompt(raw, COMMAND[kind] ?? kind), withTrailingSpaces(raw)]) {
          const t = cleanText(v);
          expect(k.detect(t)).toBeGreaterThanOrEqual(0.5);
          const r = run(kind, v);
          expect(items(r.facts, kind)).toEqual(items(base.facts, kind));
          expect(r.findings.map((f) => `${f.rule}|${f.title}|${f.evidence}`)).toEqual(
            base.findings.map((f) => `${f.rule}|${f.title}|${f.evidence}`),
          );
        }
      });

      it('tabs ↔ spaces: still detected, same number of items', () => {
        for (const v of [tabsToSpaces(raw), spacesToTabs(raw)]) {
          expect(k.detect(cleanText(v))).toBeGreaterThanOrEqual(0.5);
          expect(items(run(kind, v).facts, kind).length).toBe(items(base.facts, kind).length);
        }
      });

      it('cut at several points: no throw, complete items kept, no invented finding', () => {
        const full = items(base.facts, kind);
        for (const c of CUTS) {
          const cut = truncateAt(raw, c);
          const r = run(kind, cut);
          const got = items(r.facts, kind);
          expect(got.length).toBeLessThanOrEqual(full.length + 1);
          // Every item but the last (possibly cut) one is the full output's item, or part of it.
          for (const [key, value] of got.slice(0, -1)) {
            const whole = full.find(([k2]) => k2 === key)?.[1];
            expect(isSubset(value, whole), `${kind} cut ${c} item ${key}`).toBe(true);
          }
          for (const f of r.findings)
            expect(ruleTitles.has(`${f.rule}|${f.title}`), `${f.rule} ${f.title} at cut ${c}`).toBe(true);
          expect(() => k.summary(r.facts)).not.toThrow();
        }
      });
    });
  }

  it('junk input never throws in any parser, rule or summary', () => {
    const junk = [
      '',
      '\u0000\u0001\u001b[31m',
      "CA 'x'\nPort 1:\nState:",
      '#bytes\n1 2 3 x',
      'tc: 1 ratelimit:',
      'Slave Interface:\nSpeed: Mbps',
      '[{"ifname":',
      'x'.repeat(100000),
    ];
    for (const { kind } of rdmaSamples()) {
      const k = kindOf(kind);
      for (const j of junk) {
        expect(() => {
          const f = k.parse(j);
          k.findings(f, j);
          k.summary(f);
        }, `${kind}`).not.toThrow();
      }
    }
  });

  it('parsers stay linear on huge pathological lines', () => {
    const lines = [
      'a'.repeat(200000),
      ' '.repeat(200000) + 'x',
      'a' + ' '.repeat(200000) + ':',
      'tc: 1 ratelimit: ' + ' '.repeat(200000),
      '(MT4117 -' + ' '.repeat(200000),
      'GID[  1]: ' + '0'.repeat(200000) + ' x',
    ];
    const t0 = performance.now();
    for (const { kind } of rdmaSamples()) {
      const k = kindOf(kind);
      for (const l of lines) {
        const f = k.parse(l);
        k.findings(f, l);
      }
    }
    expect(performance.now() - t0).toBeLessThan(20000);
  });
});
