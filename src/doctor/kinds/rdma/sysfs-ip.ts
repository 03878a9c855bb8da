/**
 * sysfs and ip outputs as doctor kinds: `show_counters` (D12), `/sys/class/infiniband` dumps, `ip link` /
 * `ip addr` (text and JSON), and the `roce-validate` runbook bundle (D08).
 */
import type { Finding } from '../../../rules/types.js';
import type { KindDef } from '../../types.js';
import { parseIpJson, type IpJsonFacts } from '../../../parse/ip-json.js';
import { parseIpLink, type IpLinkFacts } from '../../../parse/ip-link.js';
import { parseLsmod, type LsmodFacts } from '../../../parse/lsmod.js';
import { countMatches, firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { parseShowCounters, type ShowCountersFacts } from '../../../parse/show-counters.js';
import { parseSysfsInfiniband, type SysfsInfinibandFacts } from '../../../parse/sysfs-infiniband.js';
import { d08PortNotActive } from '../../../rules/output/d08-port-not-active.js';
import { d12PauseDrops } from '../../../rules/output/d12-pause-drops.js';
import { boundBlanks, by, escapeRe, idx, lineNo, netdevsInText } from './common.js';
import { LSMOD_ROW } from './host-software.js';

// ---------------------------------------------------------------------------------------------------------
// show_counters, sysfs infiniband

export const showCounters: KindDef<ShowCountersFacts> = {
  kind: 'show_counters',
  detect: (text) => by(text, /^[ \t]*Port[ \t]+\d+[ \t]+(?:hw[ \t]+)?counters:?[ \t]*$/m, 0.95),
  parse: parseShowCounters,
  findings(f, text) {
    const d = d12PauseDrops({
      counters: f.counters,
      lines: textLines(text),
      where: f.device,
      netdev: f.device
        ? (netdevsInText(text).get(`${f.device}/${f.sections[0]?.port ?? 1}`) ?? `<netdev of ${f.device}>`)
        : undefined,
      kind: 'show_counters',
    });
    return d ? [d] : [];
  },
  summary(f) {
    const err = Object.entries(f.counters).filter(([n, v]) => v > 0 && /err|out_of|retry|timeout|nak|cnp|ecn/i.test(n));
    return [
      ['device', f.device ?? '?'],
      ['sections', f.sections.map((s) => `port ${s.port} ${s.set} (${Object.keys(s.counters).length})`).join(', ')],
      ['non-zero error/congestion', err.map(([n, v]) => `${n}=${v}`).join(', ') || 'none'],
    ];
  },
};

export const sysfsInfiniband: KindDef<SysfsInfinibandFacts> = {
  kind: 'sysfs-infiniband',
  detect(text) {
    const re = /^[ \t]*\/sys\/class\/infiniband\/[^/\s]+\/[^\s:]+:/gm;
    const n = countMatches(text, re, 10);
    if (n === 0) return 0;
    return scoreAt(n >= 3 ? 0.95 : 0.75, firstMatch(text, re), text.length);
  },
  parse: parseSysfsInfiniband,
  findings(f, text) {
    const lines = textLines(text);
    const out: Finding[] = [];
    for (const p of f.ports) {
      const st = idx(lines, new RegExp(`/sys/class/infiniband/${escapeRe(p.device)}/ports/${p.port}/state:`));
      const ph = idx(lines, new RegExp(`/sys/class/infiniband/${escapeRe(p.device)}/ports/${p.port}/phys_state:`));
      const ev = [st, ph].filter((i) => i >= 0).map((i) => (lines[i] ?? '').trim());
      const state =
        p.state ??
        (p.stateCode !== undefined ? ['', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER'][p.stateCode] : undefined);
      const d = d08PortNotActive({
        device: p.device,
        port: p.port,
        state: state || undefined,
        physState: p.physState,
        linkLayer: p.linkLayer,
        evidence: ev.join(', ') || `state ${state ?? '?'}`,
        line: lineNo(st >= 0 ? st : ph),
        kind: 'sysfs-infiniband',
      });
      if (d) out.push(d);
    }
    for (const [key, counters] of Object.entries(f.counters)) {
      const d = d12PauseDrops({
        counters,
        lines,
        where: key,
        netdev: `<netdev of ${key.split('/')[0]}>`,
        kind: 'sysfs-infiniband',
      });
      if (d) out.push(d);
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.devices.length)
      rows.push([
        'devices',
        f.devices
          .map((d) => `${d.device}${d.hcaType ? ` ${d.hcaType}` : ''}${d.fwVer ? ` fw ${d.fwVer}` : ''}`)
          .join(', '),
      ]);
    if (f.ports.length)
      rows.push([
        'ports',
        f.ports
          .map((p) =>
            `${p.device}/${p.port} ${p.state ?? '?'} ${p.rate ?? ''} ${p.linkLayer ?? ''}`.replace(/\s+/g, ' ').trim(),
          )
          .join('; '),
      ]);
    const keys = Object.keys(f.counters);
    if (keys.length)
      rows.push(['counters', keys.map((k) => `${k} (${Object.keys(f.counters[k] ?? {}).length})`).join(', ')]);
    if (f.gids?.length) rows.push(['GIDs', String(f.gids.length)]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ip link / addr (text and JSON)

type IpKindFacts = (IpLinkFacts | IpJsonFacts) & { format?: 'text' | 'json' };

const IP_HEAD = /^[ \t]*\d+:[ \t]+[^\s:@]+(?:@[^\s:]+)?:[ \t]+<[A-Z0-9_,-]*>[ \t]+mtu[ \t]+\d+/m;
const IP_ONELINE = /^[ \t]*\d+:[ \t]+[^\s:@]+[ \t]+inet6?[ \t]+[0-9a-fA-F:.]+\/\d+/m;

export const ipLink: KindDef<IpKindFacts> = {
  kind: 'ip-link',
  detect(text) {
    if (/^\s*\[\s*\{[^\n]{0,300}"ifname"/.test(text) && /"(?:operstate|addr_info|link_type)"/.test(text.slice(0, 4096)))
      return 0.9;
    const h = by(text, IP_HEAD, 0.9);
    if (h > 0) return h;
    return by(text, IP_ONELINE, 0.85);
  },
  parse(text) {
    if (/^\s*[[{]/.test(text)) return { ...parseIpJson(boundBlanks(text)), format: 'json' as const };
    return { ...parseIpLink(text), format: 'text' as const };
  },
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [
      [
        'interfaces',
        f.netdevs
          .map(
            (n) =>
              `${n.ifname} ${n.operstate ?? '?'}${n.mtu ? ` mtu ${n.mtu}` : ''}${n.linkKind ? ` ${n.linkKind}` : ''}`,
          )
          .join(', '),
      ],
    ];
    const addrs = f.netdevs.flatMap((n) =>
      (n.addresses ?? []).filter((a) => a.family === 'inet').map((a) => `${n.ifname} ${a.local}/${a.prefixlen ?? '?'}`),
    );
    if (addrs.length) rows.push(['IPv4', addrs.join(', ')]);
    const bonds = f.netdevs.filter((n) => n.bond);
    if (bonds.length)
      rows.push([
        'bonds',
        bonds
          .map(
            (b) =>
              `${b.ifname} mode ${b.bond?.mode ?? '?'}${b.bond?.miimon !== undefined ? ` miimon ${b.bond.miimon}` : ''}`,
          )
          .join(', '),
      ]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// roce-validate: a runbook bundle — ip -o addr / ip link, sysfs port state and link_layer values,
// `rdma system show`, `lsmod | grep peermem`.

interface RoceValidateFacts {
  netdevs: IpLinkFacts['netdevs'];
  /** The bare `<n>: <STATE>` line (cat …/ports/N/state). */
  portState?: string;
  portStateCode?: number;
  /** The bare `Ethernet`/`InfiniBand` line (cat …/ports/N/link_layer). */
  linkLayer?: string;
  rdmaSystem?: { netns?: string; copyOnFork?: string };
  modules: LsmodFacts['modules'];
}

const RV_STATE = /^[ \t]*(\d):[ \t]+(NOP|DOWN|INIT|ARMED|ACTIVE|ACTIVE_DEFER)[ \t]*$/m;
const RV_LL = /^[ \t]*(Ethernet|InfiniBand)[ \t]*$/m;
const RV_SYS = /^[ \t]*netns[ \t]+(shared|exclusive)(?:[ \t]+copy-on-fork[ \t]+(on|off))?[ \t]*$/m;

export const roceValidate: KindDef<RoceValidateFacts> = {
  kind: 'roce-validate',
  detect(text) {
    const parts = [
      RV_STATE.test(text),
      RV_LL.test(text),
      RV_SYS.test(text),
      IP_HEAD.test(text) || IP_ONELINE.test(text),
      countMatches(text, LSMOD_ROW, 2) >= 1,
    ];
    const n = parts.filter(Boolean).length;
    if (n >= 3 && (parts[0] || parts[2])) return 0.97;
    return 0;
  },
  parse(text) {
    const st = RV_STATE.exec(text);
    const ll = RV_LL.exec(text);
    const sys = RV_SYS.exec(text);
    const out: RoceValidateFacts = { netdevs: parseIpLink(text).netdevs, modules: parseLsmod(text).modules };
    if (st) {
      out.portState = st[2];
      out.portStateCode = Number(st[1]);
    }
    if (ll) out.linkLayer = ll[1];
    if (sys) out.rdmaSystem = { netns: sys[1], ...(sys[2] ? { copyOnFork: sys[2] } : {}) };
    return out;
  },
  findings(f, text) {
    if (!f.portState) return [];
    const lines = textLines(text);
    const i = idx(lines, new RegExp(`^\\s*\\d:\\s+${f.portState}\\s*$`));
    const nd = f.netdevs.find((n) => n.addresses?.length) ?? f.netdevs[0];
    const d = d08PortNotActive({
      state: f.portState,
      linkLayer: f.linkLayer,
      netdev: nd?.ifname,
      evidence: i >= 0 ? `ports/N/state: ${(lines[i] ?? '').trim()}` : `state ${f.portState}`,
      line: lineNo(i),
      kind: 'roce-validate',
    });
    return d ? [d] : [];
  },
  summary(f) {
    return [
      [
        'interfaces',
        f.netdevs
          .map((n) =>
            `${n.ifname} ${n.operstate ?? ''} mtu ${n.mtu ?? '?'} ${(n.addresses ?? []).map((a) => `${a.local}/${a.prefixlen ?? '?'}`).join(' ')}`
              .replace(/\s+/g, ' ')
              .trim(),
          )
          .join('; '),
      ],
      ['RDMA port', `${f.portState ?? '?'} ${f.linkLayer ?? ''}`.trim()],
      [
        'rdma system',
        f.rdmaSystem
          ? `netns ${f.rdmaSystem.netns}${f.rdmaSystem.copyOnFork ? `, copy-on-fork ${f.rdmaSystem.copyOnFork}` : ''}`
          : '?',
      ],
      [
        'peermem',
        f.modules.some((m) => m.name === 'nvidia_peermem' || m.name === 'nv_peer_mem') ? 'loaded' : 'not listed',
      ],
    ];
  },
};
