/**
 * GID tables and device → netdev maps as doctor kinds: `show_gids` (D19 RoCE v2 GID), `ibdev2netdev`,
 * `rdma link`.
 */
import type { Finding } from '../../../rules/types.js';
import type { KindDef } from '../../types.js';
import { parseIbdev2netdev, type Ibdev2netdevFacts } from '../../../parse/ibdev2netdev.js';
import { parseRdmaLink, type RdmaLinkFacts } from '../../../parse/rdma-link.js';
import { textLines } from '../../../parse/rdma-util.js';
import { parseShowGids, type ShowGidsFacts } from '../../../parse/show-gids.js';
import { d08PortNotActive } from '../../../rules/output/d08-port-not-active.js';
import { d19RoceV2Gid } from '../../../rules/output/d19-roce-v2-gid.js';
import { boundBlanks, by, countBy, escapeRe, idx, lineNo, portStatesInText, uniq } from './common.js';

// ---------------------------------------------------------------------------------------------------------
// show_gids

export const showGids: KindDef<ShowGidsFacts> = {
  kind: 'show_gids',
  detect(text) {
    const h = by(text, /^[ \t]*DEV[ \t]+PORT[ \t]+INDEX[ \t]+GID[ \t]+IPv4[ \t]+VER[ \t]+DEV[ \t]*$/m, 0.95);
    if (h > 0) return h;
    const rows =
      /^[ \t]*\S+[ \t]+\d+[ \t]+\d+[ \t]+[0-9a-fx]{4}(?::[0-9a-fx]{4}){7}[ \t]+(?:\d{1,3}(?:\.\d{1,3}){3}[ \t]+)?v[12]\b/m;
    const f = by(text, /^[ \t]*n_gids_found=\d+[ \t]*$/m, 0.9);
    if (f > 0 && rows.test(text)) return by(text, rows, 0.9);
    return by(text, rows, 0.7, 2);
  },
  parse: parseShowGids,
  findings(f, text) {
    const states = portStatesInText(text);
    const lines = textLines(text);
    const out: Finding[] = [];
    const ports = uniq(f.gids.map((g) => `${g.device}/${g.port}`));
    for (const key of ports) {
      const s = states.get(key);
      if (!s) continue;
      const gids = f.gids.filter((g) => `${g.device}/${g.port}` === key);
      const first = gids[0];
      if (!first) continue;
      const li = idx(lines, new RegExp(`^\\s*${escapeRe(first.device)}\\s+${first.port}\\s+`));
      // show_gids lists a DEV only for Ethernet ports; with no state source saying otherwise, a netdev means RoCE.
      const ethernet = s.ethernet ?? (gids.some((g) => g.netdev !== undefined) ? true : undefined);
      const d19 = d19RoceV2Gid({
        device: first.device,
        port: first.port,
        netdev: gids.find((g) => g.netdev)?.netdev,
        active: s.active,
        ethernet,
        gids,
        typed: true,
        stateEvidence: s.evidence,
        line: lineNo(li),
        kind: 'show_gids',
      });
      if (d19) out.push(d19);
    }
    return out;
  },
  summary(f) {
    const ports = uniq(f.gids.map((g) => `${g.device}/${g.port}`));
    const withV2 = ports.filter((k) =>
      f.gids.some((g) => `${g.device}/${g.port}` === k && g.version === 'v2' && g.ipv4),
    );
    const rows: Array<[string, string]> = [
      ['GIDs', `${f.gids.length}${f.nGidsFound !== undefined ? ` (n_gids_found=${f.nGidsFound})` : ''}`],
      ['ports', ports.join(', ')],
      [
        'RoCE v2 + IPv4',
        f.gids
          .filter((g) => g.version === 'v2' && g.ipv4)
          .map((g) => `${g.device}/${g.port} idx ${g.index} ${g.ipv4}${g.netdev ? ` (${g.netdev})` : ''}`)
          .join(', ') || 'none',
      ],
    ];
    const without = ports.filter((k) => !withV2.includes(k));
    if (without.length)
      rows.push(['no v2 IPv4 GID', `${without.join(', ')} (state not shown here: D19 needs the port active)`]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ibdev2netdev

export const ibdev2netdev: KindDef<Ibdev2netdevFacts> = {
  kind: 'ibdev2netdev',
  detect(text) {
    const s = by(
      text,
      /[ \t]port[ \t]+\d+[ \t]+(?:\([ \t]*[A-Z_]+[ \t]*\)[ \t]+)?==>[ \t]*\S+[ \t]+\((?:Up|Down)\)/m,
      0.98,
    );
    if (s > 0) return s;
    return by(text, /[ \t]port[ \t]+\d+[ \t]+\([ \t]*(?:ACTIVE|DOWN|INIT|ARMED)[ \t]*\)/m, 0.8);
  },
  parse: parseIbdev2netdev,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [
      [
        'links',
        `${f.links.length}: ${f.links.filter((l) => l.up === true).length} Up, ${f.links.filter((l) => l.up === false).length} Down`,
      ],
      [
        'map',
        f.links
          .map((l) => `${l.device}/${l.port}→${l.netdev ?? '?'}${l.up === undefined ? '' : l.up ? ' (Up)' : ' (Down)'}`)
          .join(', '),
      ],
    ];
    const ps = f.links.filter((l) => l.portState);
    if (ps.length) rows.push(['port states', countBy(ps, (l) => l.portState)]);
    const parts = uniq(f.links.map((l) => l.partType).filter((x) => x !== undefined));
    if (parts.length) rows.push(['parts', parts.join(', ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// rdma link

export const rdmaLink: KindDef<RdmaLinkFacts> = {
  kind: 'rdma-link',
  detect(text) {
    const json = /^\s*\[\s*\{[^\n]{0,200}"ifname"[^\n]{0,200}"physical_state"/.test(text) ? 0.9 : 0;
    return Math.max(
      json,
      by(text, /^[ \t]*(?:link[ \t]+|\d+\/\d+:[ \t]+)[^\s/]+\/\d+:?[ \t]+(?:state|subnet_prefix)[ \t]/m, 0.95),
    );
  },
  parse: (text) => parseRdmaLink(boundBlanks(text)),
  findings(f, text) {
    const lines = textLines(text);
    const out: Finding[] = [];
    for (const p of f.ports) {
      const i = idx(lines, new RegExp(`(?:^|\\s)${escapeRe(p.device)}/${p.port}:?\\s`));
      const d = d08PortNotActive({
        device: p.device,
        port: p.port,
        state: p.state,
        physState: p.physState,
        netdev: p.netdev,
        linkLayer: p.netdev ? 'Ethernet' : undefined,
        evidence: i >= 0 ? (lines[i] ?? '').trim() : `state ${p.state ?? '?'} physical_state ${p.physState ?? '?'}`,
        line: lineNo(i),
        kind: 'rdma-link',
      });
      if (d) out.push(d);
    }
    return out;
  },
  summary: (f) => [
    ['ports', `${f.ports.length}: ${countBy(f.ports, (p) => p.state)}`],
    ['map', f.ports.map((p) => `${p.device}/${p.port}${p.netdev ? `→${p.netdev}` : ''} ${p.state ?? '?'}`).join(', ')],
  ],
};
