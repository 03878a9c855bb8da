/**
 * The ethtool family as doctor kinds: `ethtool <if>` (D09), `ethtool -i` (D25 driver/firmware) and
 * `ethtool -S` (D12 pause/drop counters).
 */
import type { Finding } from '../../../rules/types.js';
import type { KindDef } from '../../types.js';
import { parseEthtool, parseEthtoolInfoAll, type EthtoolFacts, type EthtoolInfoFacts } from '../../../parse/ethtool.js';
import { parseEthtoolStats, type EthtoolStatsFacts } from '../../../parse/ethtool-stats.js';
import { countMatches, firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { d09EthernetLink } from '../../../rules/output/d09-ethernet-link.js';
import { d12PauseDrops } from '../../../rules/output/d12-pause-drops.js';
import {
  d25NicStack,
  nicGeneration,
  ofedVersionFromDriver,
  type D25Input,
} from '../../../rules/output/d25-nic-stack.js';
import { boundBlanks, by, escapeRe, idx, lineNo, nonEmptyCount, uniq } from './common.js';

// ---------------------------------------------------------------------------------------------------------
// ethtool, ethtool -i, ethtool -S

export const ethtool: KindDef<EthtoolFacts> = {
  kind: 'ethtool',
  detect(text) {
    const s = firstMatch(text, /^[ \t]*Settings for [^\s:]+:[ \t]*$/m);
    const keys = ['Supported link modes:', 'Speed:', 'Link detected:', 'Duplex:', 'Auto-negotiation:'].filter((k) =>
      text.includes(k),
    ).length;
    if (s >= 0) return scoreAt(keys >= 1 ? 0.95 : 0.7, s, text.length);
    if (keys >= 3 && /^[ \t]*Link detected:[ \t]*(?:yes|no)/m.test(text))
      return by(text, /^[ \t]*(?:Supported ports|Supported link modes|Speed):/m, 0.8);
    return 0;
  },
  parse: (text) => parseEthtool(boundBlanks(text)),
  findings(f, text) {
    const d = d09EthernetLink(f, textLines(text));
    return d ? [d] : [];
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.netdev) rows.push(['interface', f.netdev]);
    rows.push(['speed', f.speedMbps !== undefined ? `${f.speedMbps} Mb/s` : (f.fields['Speed'] ?? '?')]);
    rows.push([
      'link',
      f.linkDetected === undefined
        ? '?'
        : f.linkDetected
          ? 'detected'
          : `not detected${f.linkReason ? ` (${f.linkReason})` : ''}`,
    ]);
    if (f.supportedLinkModes?.length) rows.push(['supported', f.supportedLinkModes.join(' ')]);
    if (f.autoneg !== undefined) rows.push(['autoneg', f.autoneg ? 'on' : 'off']);
    return rows;
  },
};

interface EthtoolInfoKindFacts extends EthtoolInfoFacts {
  /** Every `ethtool -i` block when several interfaces were pasted. */
  interfaces?: EthtoolInfoFacts[];
}

export const ethtoolI: KindDef<EthtoolInfoKindFacts> = {
  kind: 'ethtool-i',
  detect(text) {
    const d = firstMatch(text, /^[ \t]*driver:[ \t]*\S/m);
    if (d < 0) return 0;
    const more = ['firmware-version:', 'bus-info:', 'supports-statistics:', 'expansion-rom-version:'].filter((k) =>
      text.includes(k),
    ).length;
    return more >= 2 ? scoreAt(0.95, d, text.length) : more === 1 ? scoreAt(0.75, d, text.length) : 0;
  },
  parse(text) {
    const all = parseEthtoolInfoAll(boundBlanks(text));
    const first = all[0] ?? { fields: {} };
    return all.length > 1 ? { ...first, interfaces: all } : first;
  },
  findings(f, text) {
    const lines = textLines(text);
    const blocks = f.interfaces ?? [f];
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const b of blocks) {
      const stack = ofedVersionFromDriver(b.version);
      const vi = b.version ? idx(lines, new RegExp(`^\\s*version:\\s*${escapeRe(b.version)}\\s*$`)) : -1;
      const fi = b.firmware ? idx(lines, new RegExp(`^\\s*firmware-version:\\s*${escapeRe(b.firmware)}`)) : -1;
      const gen = nicGeneration({ firmware: b.firmwareVersion });
      const input: D25Input = { kind: 'ethtool-i' };
      if (stack)
        input.stack = {
          ...stack,
          evidence: `version: ${b.version} (driver ${b.driver ?? '?'}${b.busInfo ? `, ${b.busInfo}` : ''})`,
          line: lineNo(vi),
        };
      if (b.firmwareVersion)
        input.firmware = {
          version: b.firmwareVersion,
          evidence: `firmware-version: ${b.firmware}${b.busInfo ? ` (${b.busInfo})` : ''}`,
          line: lineNo(fi),
        };
      if (gen) input.device = { generation: gen, evidence: `firmware ${b.firmwareVersion} → ${gen}` };
      for (const d of d25NicStack(input)) {
        // One finding per stack version and per firmware level, however many interfaces share it.
        const key = `${d.title}|${d.severity === 'low' ? b.firmwareVersion : stack?.version}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(d);
      }
    }
    return out;
  },
  summary(f) {
    const blocks = f.interfaces ?? [f];
    return [
      ['driver', uniq(blocks.map((b) => b.driver ?? '?')).join(', ')],
      ['version', uniq(blocks.map((b) => b.version ?? '?')).join(', ')],
      ['firmware', uniq(blocks.map((b) => b.firmware ?? '?')).join(', ')],
      ['bus-info', blocks.map((b) => b.busInfo ?? '?').join(', ')],
    ];
  },
};

export const ethtoolS: KindDef<EthtoolStatsFacts> = {
  kind: 'ethtool-S',
  detect(text) {
    const h = by(text, /^[ \t]*NIC statistics:[ \t]*$/m, 0.95);
    if (h > 0) return h;
    if (/^[ \t]*Port \d+ (?:hw )?counters:/m.test(text) || /^\s*\/sys\/class\//m.test(text)) return 0;
    const cmd = /\bethtool[ \t]+(?:-S|--statistics)[ \t]/.test(text);
    const head = text.slice(0, 65536);
    const rxtx = countMatches(head, /^[ \t]*(?:rx|tx)[\w.[\]-]*:[ \t]*\d+[ \t]*$/gm, 5000);
    const all = countMatches(head, /^[ \t]*[A-Za-z][\w.[\]-]*:[ \t]*\d+[ \t]*$/gm, 5000);
    if (rxtx >= 1 && cmd) return by(text, /^[ \t]*(?:rx|tx)[\w.[\]-]*:[ \t]*\d+[ \t]*$/m, 0.9);
    if (rxtx >= 4 && rxtx * 3 >= all * 2 && all * 2 >= nonEmptyCount(head, 5000))
      return by(text, /^[ \t]*(?:rx|tx)[\w.[\]-]*:[ \t]*\d+[ \t]*$/m, 0.85);
    return 0;
  },
  parse: parseEthtoolStats,
  findings(f, text) {
    const d = d12PauseDrops({
      counters: f.counters,
      lines: textLines(text),
      where: f.netdev,
      netdev: f.netdev,
      kind: 'ethtool-S',
    });
    return d ? [d] : [];
  },
  summary(f) {
    const names = Object.keys(f.counters);
    const nz = names.filter((n) => /discard|drop|pause|out_of_buffer|err/i.test(n) && (f.counters[n] ?? 0) > 0);
    const rows: Array<[string, string]> = [['counters', String(names.length)]];
    if (f.netdev) rows.push(['interface', f.netdev]);
    if (f.grep) rows.push(['grep', f.grep]);
    rows.push(['non-zero drop/pause/error', nz.map((n) => `${n}=${f.counters[n]}`).join(', ') || 'none']);
    return rows;
  },
};
