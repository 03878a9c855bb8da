/**
 * QoS and bonding as doctor kinds: `mlnx_qos` (D11 lossless QoS) and `/proc/net/bonding/*` (D10 bond degraded).
 */
import type { KindDef } from '../../types.js';
import { parseBonding, type BondingFacts } from '../../../parse/bonding.js';
import { parseMlnxQos, type MlnxQosFacts } from '../../../parse/mlnx-qos.js';
import { firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { d10BondDegraded } from '../../../rules/output/d10-bond-degraded.js';
import { d11LosslessQos } from '../../../rules/output/d11-lossless-qos.js';
import { by } from './common.js';

// ---------------------------------------------------------------------------------------------------------
// mlnx_qos

export const mlnxQos: KindDef<MlnxQosFacts> = {
  kind: 'mlnx_qos',
  detect(text) {
    const pfc = firstMatch(text, /^[ \t]*PFC configuration:?[ \t]*$/m);
    const trust = firstMatch(text, /^[ \t]*(?:Priority trust (?:state|mode):|DCBX mode:)/m);
    const tc = /^[ \t]*tc:[ \t]*\d+[ \t]+ratelimit:/m.test(text);
    const enabled = /^[ \t]*enabled(?:[ \t]+[01]){8}/m.test(text);
    const first = [pfc, trust].filter((i) => i >= 0).sort((a, b) => a - b)[0] ?? -1;
    if (first < 0) return tc ? by(text, /^[ \t]*tc:[ \t]*\d+[ \t]+ratelimit:/m, 0.6) : 0;
    const strength = (pfc >= 0 && (enabled || tc)) || (trust >= 0 && (enabled || tc)) ? 0.95 : 0.7;
    return scoreAt(strength, first, text.length);
  },
  parse: parseMlnxQos,
  findings(f, text) {
    const d = d11LosslessQos(f, textLines(text));
    return d ? [d] : [];
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.netdev) rows.push(['interface', f.netdev]);
    rows.push(['trust', f.trust ?? 'not printed']);
    rows.push([
      'PFC',
      f.pfc
        ? `${f.pfc.join(' ')} (on: ${
            f.pfc
              .map((v, i) => (v ? i : -1))
              .filter((i) => i >= 0)
              .join(',') || 'none'
          })`
        : '?',
    ]);
    if (f.dscp2prio?.['26'] !== undefined) rows.push(['DSCP 26 →', `prio ${f.dscp2prio['26']}`]);
    if (f.dcbx) rows.push(['DCBX', f.dcbx]);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// bonding

export const bonding: KindDef<BondingFacts> = {
  kind: 'bonding',
  detect(text) {
    const d = by(text, /^[ \t]*Ethernet Channel Bonding Driver:/m, 0.97);
    if (d > 0) return d;
    const mode = firstMatch(text, /^[ \t]*Bonding Mode:[ \t]*\S/m);
    if (mode < 0) return 0;
    return scoreAt(
      /^[ \t]*Slave Interface:/m.test(text) || /^[ \t]*MII Status:/m.test(text) ? 0.9 : 0.7,
      mode,
      text.length,
    );
  },
  parse: parseBonding,
  findings: (f, text) => d10BondDegraded(f, textLines(text)),
  summary(f) {
    const rows: Array<[string, string]> = [
      ['mode', `${f.mode ?? '?'}${f.hashPolicy ? `, ${f.hashPolicy}` : ''}${f.lacpRate ? `, lacp ${f.lacpRate}` : ''}`],
    ];
    if (f.miimonMs !== undefined) rows.push(['miimon', `${f.miimonMs} ms`]);
    rows.push([
      'slaves',
      f.slaves.map((s) => `${s.name} ${s.mii ?? '?'}${s.speedMbps ? ` ${s.speedMbps} Mb/s` : ''}`).join(', ') || 'none',
    ]);
    if (f.activeAggregator)
      rows.push([
        'active aggregator',
        `id ${f.activeAggregator.id ?? '?'}, ${f.activeAggregator.ports ?? '?'} ports, partner ${f.activeAggregator.partnerMac ?? '?'}`,
      ]);
    if (f.noActiveAggregator) rows.push(['aggregator', 'none active']);
    return rows;
  },
};
