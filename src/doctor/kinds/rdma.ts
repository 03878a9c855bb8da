/**
 * Doctor kinds for RDMA, NIC and host-software outputs (DOCTOR.md "Kinds"): recognised by structure,
 * parsed by the src/parse parsers, checked by the output rules in src/rules/output. Detectors are cheap,
 * linear-time regex counts over the text; each scores by how much of the tool's fixed structure is present,
 * lowered slightly the later it starts (so the first output of a multi-output paste wins among equals).
 */
import type { Finding } from '../../rules/types.js';
import type { KindDef } from '../types.js';
import { parseBonding, type BondingFacts } from '../../parse/bonding.js';
import { parseCmaRoceMode, type CmaRoceModeFacts } from '../../parse/cma-roce-mode.js';
import { parseDkmsStatus, type DkmsStatusFacts } from '../../parse/dkms-status.js';
import { parseEthtool, parseEthtoolInfoAll, type EthtoolFacts, type EthtoolInfoFacts } from '../../parse/ethtool.js';
import { parseEthtoolStats, type EthtoolStatsFacts } from '../../parse/ethtool-stats.js';
import { parseIbdev2netdev, type Ibdev2netdevFacts } from '../../parse/ibdev2netdev.js';
import { parseIbstat, type IbstatFacts } from '../../parse/ibstat.js';
import { parseIbstatus, type IbstatusFacts } from '../../parse/ibstatus.js';
import { parseIbvDevices, type IbvDevicesFacts } from '../../parse/ibv-devices.js';
import { parseIbvDevinfo, type IbvDevinfoFacts } from '../../parse/ibv-devinfo.js';
import { parseIpJson, type IpJsonFacts } from '../../parse/ip-json.js';
import { parseIpLink, type IpLinkFacts } from '../../parse/ip-link.js';
import { parseLsmod, type LsmodFacts } from '../../parse/lsmod.js';
import { parseLspci, type LspciFacts } from '../../parse/lspci.js';
import { parseMlnxQos, type MlnxQosFacts } from '../../parse/mlnx-qos.js';
import { parseModinfo, type ModinfoFacts } from '../../parse/modinfo.js';
import { parseMstStatus, type MstStatusFacts } from '../../parse/mst-status.js';
import { parseOfedInfo, type OfedInfoFacts } from '../../parse/ofed-info.js';
import { parsePerftest, type PerftestFacts } from '../../parse/perftest.js';
import { parseRdmaLink, type RdmaLinkFacts } from '../../parse/rdma-link.js';
import { countMatches, firstMatch, scoreAt, textLines } from '../../parse/rdma-util.js';
import { parseShowCounters, type ShowCountersFacts } from '../../parse/show-counters.js';
import { parseShowGids, type ShowGidsFacts } from '../../parse/show-gids.js';
import { parseSysfsInfiniband, type SysfsInfinibandFacts } from '../../parse/sysfs-infiniband.js';
import { d08PortNotActive, isActiveState } from '../../rules/output/d08-port-not-active.js';
import { d09EthernetLink } from '../../rules/output/d09-ethernet-link.js';
import { d10BondDegraded } from '../../rules/output/d10-bond-degraded.js';
import { d11LosslessQos } from '../../rules/output/d11-lossless-qos.js';
import { d12PauseDrops } from '../../rules/output/d12-pause-drops.js';
import { d14Peermem } from '../../rules/output/d14-peermem.js';
import { d19RoceV2Gid } from '../../rules/output/d19-roce-v2-gid.js';
import { d20Bandwidth } from '../../rules/output/d20-bandwidth.js';
import { d25NicStack, nicGeneration, ofedVersionFromDriver, type D25Input } from '../../rules/output/d25-nic-stack.js';

// ---------------------------------------------------------------------------------------------------------
// Helpers

/** A confidence from a regex: `strength` when it matches at least `min` times, placed by the first match. */
function by(text: string, re: RegExp, strength: number, min = 1): number {
  if (min > 1 && countMatches(text, re, min) < min) return 0;
  return scoreAt(strength, firstMatch(text, re), text.length);
}

/** Non-empty lines, capped (detectors only need the head's shape). */
function nonEmptyCount(text: string, cap = 5000): number {
  return countMatches(text, /^[ \t]*\S/gm, cap);
}

const lineNo = (i: number): number | undefined => (i >= 0 ? i + 1 : undefined);

/** Index of the first line at/after `from` (before `to`) matching `re`. */
function idx(lines: readonly string[], re: RegExp, from = 0, to = lines.length): number {
  for (let i = Math.max(0, from); i < Math.min(to, lines.length); i++) if (re.test(lines[i] ?? '')) return i;
  return -1;
}

/** Device/port → netdev, from ibdev2netdev or rdma link lines anywhere in the text. */
function netdevsInText(text: string): Map<string, string> {
  const map = new Map<string, string>();
  if (text.includes('==>')) for (const l of parseIbdev2netdev(text).links) if (l.netdev) map.set(`${l.device}/${l.port}`, l.netdev);
  if (/\bnetdev\s+\S/.test(text)) for (const p of parseRdmaLink(boundBlanks(text)).ports) if (p.netdev) map.set(`${p.device}/${p.port}`, p.netdev);
  return map;
}

interface PortState {
  active?: boolean;
  ethernet?: boolean;
  evidence: string;
  rateGbps?: number;
}

/** What the same text says about each device/port's state, link layer and rate (for D19, D20). */
function portStatesInText(text: string): Map<string, PortState> {
  const map = new Map<string, PortState>();
  const put = (key: string, s: PortState): void => {
    const prev = map.get(key);
    map.set(key, {
      evidence: prev?.evidence ?? s.evidence,
      active: s.active ?? prev?.active,
      ethernet: s.ethernet ?? prev?.ethernet,
      rateGbps: s.rateGbps ?? prev?.rateGbps,
    });
  };
  const ll = (l: string | undefined): boolean | undefined => (l === undefined ? undefined : /^ethernet$/i.test(l));
  if (/^\s*CA:? '/m.test(text))
    for (const p of parseIbstat(text).ports)
      put(`${p.device}/${p.port}`, { active: isActiveState(p.state), ethernet: ll(p.linkLayer), rateGbps: p.rateGbps, evidence: `ibstat State: ${p.state ?? '?'}` });
  if (/Infiniband device '/.test(text))
    for (const p of parseIbstatus(text).ports)
      put(`${p.device}/${p.port}`, { active: isActiveState(p.state), ethernet: ll(p.linkLayer), rateGbps: p.rateGbps, evidence: `ibstatus state: ${p.state ?? '?'}` });
  if (/^\s*hca_id:/m.test(text))
    for (const p of parseIbvDevinfo(text).ports)
      if (p.device) put(`${p.device}/${p.port}`, { active: isActiveState(p.state), ethernet: ll(p.linkLayer), evidence: `ibv_devinfo state: ${p.state ?? '?'}` });
  if (/\bstate\s+[A-Z_]+\s+physical_state/.test(text))
    for (const p of parseRdmaLink(boundBlanks(text)).ports) put(`${p.device}/${p.port}`, { active: isActiveState(p.state), evidence: `rdma link state ${p.state ?? '?'}` });
  if (text.includes('==>'))
    for (const l of parseIbdev2netdev(text).links)
      if (l.portState) put(`${l.device}/${l.port}`, { active: isActiveState(l.portState), evidence: `ibdev2netdev -v (${l.portState})` });
  return map;
}

/** Link speed of a device's port (Gb/s) stated in the same text: ibstat/ibstatus `Rate:` or ethtool `Speed:`. */
function lineRateInText(text: string, device: string | undefined): number | undefined {
  const states = portStatesInText(text);
  if (device) {
    for (const [k, s] of states) if (k.startsWith(`${device}/`) && s.active !== false && s.rateGbps !== undefined) return s.rateGbps;
  }
  if (/^\s*Settings for \S+:/m.test(text)) {
    const e = parseEthtool(boundBlanks(text));
    if (e.speedMbps !== undefined && e.linkDetected !== false) return e.speedMbps / 1000;
  }
  if (!device) {
    const rates = [...states.values()].filter((s) => s.active === true && s.rateGbps !== undefined).map((s) => s.rateGbps!);
    if (rates.length > 0 && rates.every((r) => r === rates[0])) return rates[0];
  }
  return undefined;
}

function uniq<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

function countBy<T>(xs: readonly T[], f: (x: T) => string | undefined): string {
  const m = new Map<string, number>();
  for (const x of xs) {
    const k = f(x);
    if (k !== undefined) m.set(k, (m.get(k) ?? 0) + 1);
  }
  return [...m.entries()].map(([k, n]) => `${n} ${k}`).join(', ');
}

/**
 * Bounds runs of blanks before handing text to the shared parsers whose `cleanLines` trims with `/\s+$/`
 * (quadratic on a long blank run inside a line). Real outputs pad with at most a few dozen blanks.
 */
function boundBlanks(text: string): string {
  return text.replace(/[ \t]{256,}/g, (m) => m.slice(0, 255));
}

const fmtGbps = (n: number | undefined): string => (n === undefined ? '?' : `${Math.round(n * 100) / 100} Gb/s`);

// ---------------------------------------------------------------------------------------------------------
// ibstat

const ibstat: KindDef<IbstatFacts> = {
  kind: 'ibstat',
  detect(text) {
    const ca = firstMatch(text, /^[ \t]*CA:? '[^'\n]+'[ \t]*$/m);
    if (ca < 0) return 0;
    const port = /^[ \t]*Port \d+:[ \t]*$/m.test(text);
    const state = /^[ \t]*State:[ \t]+\S/m.test(text);
    const caType = /^[ \t]*CA type:/m.test(text);
    const strength = port && state ? 0.95 : caType || state ? 0.8 : 0.55;
    return scoreAt(strength, ca, text.length);
  },
  parse: parseIbstat,
  findings(f, text) {
    const lines = textLines(text);
    const netdevs = netdevsInText(text);
    const out: Finding[] = [];
    for (const p of f.ports) {
      const caIdx = idx(lines, new RegExp(`^\\s*CA:? '${escapeRe(p.device)}'\\s*$`));
      const portIdx = caIdx >= 0 ? idx(lines, new RegExp(`^\\s*Port\\s+${p.port}:\\s*$`), caIdx) : -1;
      const end = portIdx >= 0 ? nextIdx(lines, /^\s*(?:CA:? '|Port\s+\d+:)/, portIdx + 1) : -1;
      const stIdx = portIdx >= 0 ? idx(lines, /^\s*State:/, portIdx, end) : -1;
      const phIdx = portIdx >= 0 ? idx(lines, /^\s*Physical state:/, portIdx, end) : -1;
      const ev = [stIdx, phIdx].filter((i) => i >= 0).map((i) => (lines[i] ?? '').trim());
      const notActive = isActiveState(p.state) === false;
      const finding = d08PortNotActive({
        device: p.device,
        port: p.port,
        state: p.state,
        physState: p.physState,
        linkLayer: p.linkLayer,
        netdev: netdevs.get(`${p.device}/${p.port}`),
        evidence: ev.length ? ev.join(', ') : `State: ${p.state ?? '?'}, Physical state: ${p.physState ?? '?'}`,
        line: lineNo(notActive ? stIdx : phIdx >= 0 ? phIdx : stIdx),
        kind: 'ibstat',
      });
      if (finding) out.push(finding);
    }
    for (const ca of f.cas) {
      const gen = nicGeneration({ caType: ca.caType });
      if (gen !== 'ConnectX-4 Lx' || !ca.firmware) continue;
      const i = idx(lines, new RegExp(`^\\s*Firmware version:\\s*${escapeRe(ca.firmware)}`), idx(lines, new RegExp(`^\\s*CA:? '${escapeRe(ca.device)}'`)));
      out.push(
        ...d25NicStack({
          firmware: { version: ca.firmware, evidence: `${ca.device}: Firmware version: ${ca.firmware}`, line: lineNo(i) },
          device: { generation: gen, evidence: `CA type: ${ca.caType}` },
          kind: 'ibstat',
        }),
      );
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [
      ['CAs', `${f.cas.length}${f.cas.length ? ` (${countBy(f.cas, (c) => c.caType)})` : ''}`],
      ['ports', `${f.ports.length}: ${countBy(f.ports, (p) => p.state)}`],
    ];
    const down = f.ports.filter((p) => isActiveState(p.state) === false || (p.physState !== undefined && p.physState !== 'LinkUp'));
    if (down.length) rows.push(['not active', down.map((p) => `${p.device}/${p.port} ${p.state ?? '?'}/${p.physState ?? '?'}`).join(', ')]);
    const eth = f.ports.filter((p) => p.linkLayer === 'Ethernet').length;
    rows.push(['link layer', `${eth} Ethernet, ${f.ports.length - eth} other`]);
    const rates = uniq(f.ports.filter((p) => isActiveState(p.state)).map((p) => p.rateGbps).filter((r) => r !== undefined));
    if (rates.length) rows.push(['rate (active)', rates.map((r) => `${r} Gb/s`).join(', ')]);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function nextIdx(lines: readonly string[], re: RegExp, from: number): number {
  const i = idx(lines, re, from);
  return i >= 0 ? i : lines.length;
}

// ---------------------------------------------------------------------------------------------------------
// ibstatus

const ibstatus: KindDef<IbstatusFacts> = {
  kind: 'ibstatus',
  detect(text) {
    const head = /^[ \t]*Infiniband device '[^'\n]+' port \d+ status:?[ \t]*$/m;
    if (!/[ \t](?:phys )?state:/.test(text)) return by(text, head, 0.7);
    return by(text, head, 0.95);
  },
  parse: parseIbstatus,
  findings(f, text) {
    const lines = textLines(text);
    const netdevs = netdevsInText(text);
    const out: Finding[] = [];
    for (const p of f.ports) {
      const h = idx(lines, new RegExp(`Infiniband device '${escapeRe(p.device)}' port ${p.port} status`));
      const end = h >= 0 ? nextIdx(lines, /Infiniband device '/, h + 1) : -1;
      const st = h >= 0 ? idx(lines, /^\s*state:/, h, end) : -1;
      const ph = h >= 0 ? idx(lines, /^\s*phys state:/, h, end) : -1;
      const ev = [st, ph].filter((i) => i >= 0).map((i) => (lines[i] ?? '').trim().replace(/\s+/g, ' '));
      const state = p.state ?? (p.stateCode !== undefined ? (['', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER'][p.stateCode] ?? undefined) : undefined);
      const finding = d08PortNotActive({
        device: p.device,
        port: p.port,
        state: state || undefined,
        physState: p.physState,
        linkLayer: p.linkLayer,
        netdev: netdevs.get(`${p.device}/${p.port}`),
        evidence: ev.join(', ') || `state: ${state ?? '?'}`,
        line: lineNo(isActiveState(state || undefined) === false ? st : ph),
        kind: 'ibstatus',
      });
      if (finding) out.push(finding);
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [['ports', `${f.ports.length}: ${countBy(f.ports, (p) => p.state)}`]];
    const down = f.ports.filter((p) => isActiveState(p.state) === false);
    if (down.length) rows.push(['not active', down.map((p) => `${p.device}/${p.port} ${p.state}/${p.physState ?? '?'}`).join(', ')]);
    const rates = uniq(f.ports.map((p) => p.rate).filter((r) => r !== undefined));
    if (rates.length) rows.push(['rates', rates.join(', ')]);
    rows.push(['link layer', countBy(f.ports, (p) => p.linkLayer) || '?']);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ibv_devices

const ibvDevices: KindDef<IbvDevicesFacts> = {
  kind: 'ibv_devices',
  detect(text) {
    const h = by(text, /^[ \t]*device[ \t]+node GUID[ \t]*$/m, 0.95);
    if (h > 0) return h;
    const rows = countMatches(text, /^[ \t]*[A-Za-z][\w.-]*[ \t]+[0-9a-f]{16}[ \t]*$/gm, 50);
    if (rows >= 2 && rows * 2 >= nonEmptyCount(text, 100)) return 0.6;
    return 0;
  },
  parse: parseIbvDevices,
  findings: () => [],
  summary: (f) => [
    ['devices', String(f.devices.length)],
    ['names', f.devices.map((d) => d.device).join(', ')],
  ],
};

// ---------------------------------------------------------------------------------------------------------
// ibv_devinfo

const ibvDevinfo: KindDef<IbvDevinfoFacts> = {
  kind: 'ibv_devinfo',
  detect(text) {
    const hca = firstMatch(text, /^[ \t]*hca_id:[ \t]*\S+[ \t]*$/m);
    if (hca >= 0 && /^[ \t]*(?:transport|fw_ver|node_guid):/m.test(text)) return scoreAt(0.9, hca, text.length);
    const list = by(text, /^[ \t]*\d+ HCAs? found:[ \t]*$/m, 0.9);
    if (list > 0) return list;
    const port = firstMatch(text, /^[ \t]*port:[ \t]+\d+[ \t]*$/m);
    if (port >= 0 && /^[ \t]*state:[ \t]+PORT_[A-Z_]+/m.test(text)) return scoreAt(0.85, port, text.length);
    if (/^[ \t]*No IB devices found/m.test(text)) return 0.6;
    return 0;
  },
  parse: parseIbvDevinfo,
  findings(f, text) {
    const lines = textLines(text);
    const netdevs = netdevsInText(text);
    const out: Finding[] = [];
    for (const p of f.ports) {
      const h = p.device ? idx(lines, new RegExp(`^\\s*hca_id:\\s*${escapeRe(p.device)}\\s*$`)) : 0;
      const pi = idx(lines, new RegExp(`^\\s*port:\\s*${p.port}\\s*$`), Math.max(0, h));
      const end = pi >= 0 ? nextIdx(lines, /^\s*(?:port:\s*\d|hca_id:)/, pi + 1) : -1;
      const st = pi >= 0 ? idx(lines, /^\s*state:/, pi, end) : -1;
      const ph = pi >= 0 ? idx(lines, /^\s*phys_state:/, pi, end) : -1;
      const ev = [st, ph].filter((i) => i >= 0).map((i) => (lines[i] ?? '').trim().replace(/\s+/g, ' '));
      const d08 = d08PortNotActive({
        device: p.device,
        port: p.port,
        state: p.state,
        physState: p.physState,
        linkLayer: p.linkLayer,
        netdev: p.device ? netdevs.get(`${p.device}/${p.port}`) : undefined,
        evidence: ev.join(', ') || `state: ${p.state ?? '?'}`,
        line: lineNo(st),
        kind: 'ibv_devinfo',
      });
      if (d08) out.push(d08);
      if (f.gids !== undefined) {
        const gids = f.gids.filter((g) => g.device === p.device && g.port === p.port);
        const typed = gids.some((g) => g.version !== undefined);
        const d19 = d19RoceV2Gid({
          device: p.device,
          port: p.port,
          netdev: p.device ? netdevs.get(`${p.device}/${p.port}`) : undefined,
          active: isActiveState(p.state),
          ethernet: p.linkLayer === undefined ? undefined : /^ethernet$/i.test(p.linkLayer),
          gids,
          typed,
          stateEvidence: ev[0],
          line: lineNo(st),
          kind: 'ibv_devinfo',
        });
        if (d19) out.push(d19);
      }
    }
    for (const d of f.devices) {
      const gen = nicGeneration({ caType: d.vendorPartId !== undefined ? `MT${d.vendorPartId}` : undefined, firmware: d.fwVer });
      if (gen !== 'ConnectX-4 Lx' || !d.fwVer) continue;
      const i = idx(lines, /^\s*fw_ver:/, idx(lines, new RegExp(`^\\s*hca_id:\\s*${escapeRe(d.device)}`)));
      out.push(
        ...d25NicStack({
          firmware: { version: d.fwVer, evidence: `${d.device}: fw_ver: ${d.fwVer}`, line: lineNo(i) },
          device: { generation: gen, evidence: d.vendorPartId !== undefined ? `vendor_part_id: ${d.vendorPartId}` : `fw ${d.fwVer}` },
          kind: 'ibv_devinfo',
        }),
      );
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.hcas) rows.push(['HCAs', f.hcas.join(', ')]);
    if (f.devices.length) rows.push(['devices', f.devices.map((d) => `${d.device}${d.fwVer ? ` fw ${d.fwVer}` : ''}`).join(', ')]);
    if (f.ports.length) rows.push(['ports', f.ports.map((p) => `${p.device ?? '?'}/${p.port} ${p.state ?? '?'} ${p.linkLayer ?? ''} mtu ${p.activeMtu ?? '?'}`.trim()).join('; ')]);
    const small = f.ports.filter((p) => p.activeMtu !== undefined && p.activeMtu < 4096 && /^ethernet$/i.test(p.linkLayer ?? ''));
    if (small.length) rows.push(['active_mtu < 4096', `${small.map((p) => `${p.device ?? '?'}/${p.port}: ${p.activeMtu}`).join(', ')} (netdev MTU < 4200; R24)`]);
    if (f.gids) rows.push(['GIDs', `${f.gids.length} (${f.gids.filter((g) => g.ipv4).length} IPv4-mapped)`]);
    if (f.noDevices) rows.push(['devices', 'none (No IB devices found)']);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// show_gids

const showGids: KindDef<ShowGidsFacts> = {
  kind: 'show_gids',
  detect(text) {
    const h = by(text, /^[ \t]*DEV[ \t]+PORT[ \t]+INDEX[ \t]+GID[ \t]+IPv4[ \t]+VER[ \t]+DEV[ \t]*$/m, 0.95);
    if (h > 0) return h;
    const rows = /^[ \t]*\S+[ \t]+\d+[ \t]+\d+[ \t]+[0-9a-fx]{4}(?::[0-9a-fx]{4}){7}[ \t]+(?:\d{1,3}(?:\.\d{1,3}){3}[ \t]+)?v[12]\b/m;
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
    const withV2 = ports.filter((k) => f.gids.some((g) => `${g.device}/${g.port}` === k && g.version === 'v2' && g.ipv4));
    const rows: Array<[string, string]> = [
      ['GIDs', `${f.gids.length}${f.nGidsFound !== undefined ? ` (n_gids_found=${f.nGidsFound})` : ''}`],
      ['ports', ports.join(', ')],
      ['RoCE v2 + IPv4', f.gids.filter((g) => g.version === 'v2' && g.ipv4).map((g) => `${g.device}/${g.port} idx ${g.index} ${g.ipv4}${g.netdev ? ` (${g.netdev})` : ''}`).join(', ') || 'none'],
    ];
    const without = ports.filter((k) => !withV2.includes(k));
    if (without.length) rows.push(['no v2 IPv4 GID', `${without.join(', ')} (state not shown here: D19 needs the port active)`]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ibdev2netdev

const ibdev2netdev: KindDef<Ibdev2netdevFacts> = {
  kind: 'ibdev2netdev',
  detect(text) {
    const s = by(text, /[ \t]port[ \t]+\d+[ \t]+(?:\([ \t]*[A-Z_]+[ \t]*\)[ \t]+)?==>[ \t]*\S+[ \t]+\((?:Up|Down)\)/m, 0.98);
    if (s > 0) return s;
    return by(text, /[ \t]port[ \t]+\d+[ \t]+\([ \t]*(?:ACTIVE|DOWN|INIT|ARMED)[ \t]*\)/m, 0.8);
  },
  parse: parseIbdev2netdev,
  findings: () => [],
  summary(f) {
    const rows: Array<[string, string]> = [
      ['links', `${f.links.length}: ${f.links.filter((l) => l.up === true).length} Up, ${f.links.filter((l) => l.up === false).length} Down`],
      ['map', f.links.map((l) => `${l.device}/${l.port}→${l.netdev ?? '?'}${l.up === undefined ? '' : l.up ? ' (Up)' : ' (Down)'}`).join(', ')],
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

const rdmaLink: KindDef<RdmaLinkFacts> = {
  kind: 'rdma-link',
  detect(text) {
    const json = /^\s*\[\s*\{[^\n]{0,200}"ifname"[^\n]{0,200}"physical_state"/.test(text) ? 0.9 : 0;
    return Math.max(json, by(text, /^[ \t]*(?:link[ \t]+|\d+\/\d+:[ \t]+)[^\s/]+\/\d+:?[ \t]+(?:state|subnet_prefix)[ \t]/m, 0.95));
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

// ---------------------------------------------------------------------------------------------------------
// mlnx_qos

const mlnxQos: KindDef<MlnxQosFacts> = {
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
    rows.push(['PFC', f.pfc ? `${f.pfc.join(' ')} (on: ${f.pfc.map((v, i) => (v ? i : -1)).filter((i) => i >= 0).join(',') || 'none'})` : '?']);
    if (f.dscp2prio?.['26'] !== undefined) rows.push(['DSCP 26 →', `prio ${f.dscp2prio['26']}`]);
    if (f.dcbx) rows.push(['DCBX', f.dcbx]);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// bonding

const bonding: KindDef<BondingFacts> = {
  kind: 'bonding',
  detect(text) {
    const d = by(text, /^[ \t]*Ethernet Channel Bonding Driver:/m, 0.97);
    if (d > 0) return d;
    const mode = firstMatch(text, /^[ \t]*Bonding Mode:[ \t]*\S/m);
    if (mode < 0) return 0;
    return scoreAt(/^[ \t]*Slave Interface:/m.test(text) || /^[ \t]*MII Status:/m.test(text) ? 0.9 : 0.7, mode, text.length);
  },
  parse: parseBonding,
  findings: (f, text) => d10BondDegraded(f, textLines(text)),
  summary(f) {
    const rows: Array<[string, string]> = [['mode', `${f.mode ?? '?'}${f.hashPolicy ? `, ${f.hashPolicy}` : ''}${f.lacpRate ? `, lacp ${f.lacpRate}` : ''}`]];
    if (f.miimonMs !== undefined) rows.push(['miimon', `${f.miimonMs} ms`]);
    rows.push(['slaves', f.slaves.map((s) => `${s.name} ${s.mii ?? '?'}${s.speedMbps ? ` ${s.speedMbps} Mb/s` : ''}`).join(', ') || 'none']);
    if (f.activeAggregator) rows.push(['active aggregator', `id ${f.activeAggregator.id ?? '?'}, ${f.activeAggregator.ports ?? '?'} ports, partner ${f.activeAggregator.partnerMac ?? '?'}`]);
    if (f.noActiveAggregator) rows.push(['aggregator', 'none active']);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ethtool, ethtool -i, ethtool -S

const ethtool: KindDef<EthtoolFacts> = {
  kind: 'ethtool',
  detect(text) {
    const s = firstMatch(text, /^[ \t]*Settings for [^\s:]+:[ \t]*$/m);
    const keys = ['Supported link modes:', 'Speed:', 'Link detected:', 'Duplex:', 'Auto-negotiation:'].filter((k) => text.includes(k)).length;
    if (s >= 0) return scoreAt(keys >= 1 ? 0.95 : 0.7, s, text.length);
    if (keys >= 3 && /^[ \t]*Link detected:[ \t]*(?:yes|no)/m.test(text)) return by(text, /^[ \t]*(?:Supported ports|Supported link modes|Speed):/m, 0.8);
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
    rows.push(['speed', f.speedMbps !== undefined ? `${f.speedMbps} Mb/s` : f.fields['Speed'] ?? '?']);
    rows.push(['link', f.linkDetected === undefined ? '?' : f.linkDetected ? 'detected' : `not detected${f.linkReason ? ` (${f.linkReason})` : ''}`]);
    if (f.supportedLinkModes?.length) rows.push(['supported', f.supportedLinkModes.join(' ')]);
    if (f.autoneg !== undefined) rows.push(['autoneg', f.autoneg ? 'on' : 'off']);
    return rows;
  },
};

interface EthtoolInfoKindFacts extends EthtoolInfoFacts {
  /** Every `ethtool -i` block when several interfaces were pasted. */
  interfaces?: EthtoolInfoFacts[];
}

const ethtoolI: KindDef<EthtoolInfoKindFacts> = {
  kind: 'ethtool-i',
  detect(text) {
    const d = firstMatch(text, /^[ \t]*driver:[ \t]*\S/m);
    if (d < 0) return 0;
    const more = ['firmware-version:', 'bus-info:', 'supports-statistics:', 'expansion-rom-version:'].filter((k) => text.includes(k)).length;
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
      if (stack) input.stack = { ...stack, evidence: `version: ${b.version} (driver ${b.driver ?? '?'}${b.busInfo ? `, ${b.busInfo}` : ''})`, line: lineNo(vi) };
      if (b.firmwareVersion) input.firmware = { version: b.firmwareVersion, evidence: `firmware-version: ${b.firmware}${b.busInfo ? ` (${b.busInfo})` : ''}`, line: lineNo(fi) };
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

const ethtoolS: KindDef<EthtoolStatsFacts> = {
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
    if (rxtx >= 4 && rxtx * 3 >= all * 2 && all * 2 >= nonEmptyCount(head, 5000)) return by(text, /^[ \t]*(?:rx|tx)[\w.[\]-]*:[ \t]*\d+[ \t]*$/m, 0.85);
    return 0;
  },
  parse: parseEthtoolStats,
  findings(f, text) {
    const d = d12PauseDrops({ counters: f.counters, lines: textLines(text), where: f.netdev, netdev: f.netdev, kind: 'ethtool-S' });
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

// ---------------------------------------------------------------------------------------------------------
// show_counters, sysfs infiniband

const showCounters: KindDef<ShowCountersFacts> = {
  kind: 'show_counters',
  detect: (text) => by(text, /^[ \t]*Port[ \t]+\d+[ \t]+(?:hw[ \t]+)?counters:?[ \t]*$/m, 0.95),
  parse: parseShowCounters,
  findings(f, text) {
    const d = d12PauseDrops({ counters: f.counters, lines: textLines(text), where: f.device, netdev: f.device ? netdevsInText(text).get(`${f.device}/${f.sections[0]?.port ?? 1}`) ?? `<netdev of ${f.device}>` : undefined, kind: 'show_counters' });
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

const sysfsInfiniband: KindDef<SysfsInfinibandFacts> = {
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
      const state = p.state ?? (p.stateCode !== undefined ? ['', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER'][p.stateCode] : undefined);
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
      const d = d12PauseDrops({ counters, lines, where: key, netdev: `<netdev of ${key.split('/')[0]}>`, kind: 'sysfs-infiniband' });
      if (d) out.push(d);
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.devices.length) rows.push(['devices', f.devices.map((d) => `${d.device}${d.hcaType ? ` ${d.hcaType}` : ''}${d.fwVer ? ` fw ${d.fwVer}` : ''}`).join(', ')]);
    if (f.ports.length) rows.push(['ports', f.ports.map((p) => `${p.device}/${p.port} ${p.state ?? '?'} ${p.rate ?? ''} ${p.linkLayer ?? ''}`.replace(/\s+/g, ' ').trim()).join('; ')]);
    const keys = Object.keys(f.counters);
    if (keys.length) rows.push(['counters', keys.map((k) => `${k} (${Object.keys(f.counters[k] ?? {}).length})`).join(', ')]);
    if (f.gids?.length) rows.push(['GIDs', String(f.gids.length)]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ofed_info, lspci

/** The NIC generation and its evidence from lspci ids, ibstat CA types or ethtool -i firmware in the text. */
function deviceInText(text: string): D25Input['device'] {
  const id = /\[(15b3:10(?:13|15))\]/i.exec(text);
  if (id && id[1]) {
    const gen = nicGeneration({ pciId: id[1] });
    if (gen) return { generation: gen, evidence: `lspci [${id[1]}]` };
  }
  const ca = /^\s*CA type:\s*(MT41(?:15|17))\s*$/m.exec(text);
  if (ca && ca[1]) {
    const gen = nicGeneration({ caType: ca[1] });
    if (gen) return { generation: gen, evidence: `CA type: ${ca[1]}` };
  }
  const named = /MT27710 Family \[ConnectX-4 Lx\]|\bConnectX-4 Lx\b/.exec(text);
  if (named) return { generation: 'ConnectX-4 Lx', evidence: named[0] };
  return undefined;
}

const ofedInfo: KindDef<OfedInfoFacts> = {
  kind: 'ofed_info',
  detect(text) {
    const named = by(text, /(?:^|\s)(?:MLNX_OFED_LINUX|OFED-internal)-\d+\.\d+-[\w.-]*?(?::|[ \t]*\()/m, 0.95);
    if (named > 0) return named;
    const nf = by(text, /ofed_info:[ \t]*(?:command )?not found|Command 'ofed_info' not found/, 0.93);
    if (nf > 0) return nf;
    const bare = /^[ \t]*\d+\.\d+-\d+(?:\.\d+){1,4}[ \t]*$/m;
    if (/\bofed_info\b/.test(text)) return by(text, bare, 0.95);
    if (nonEmptyCount(text, 5) <= 2) return by(text, bare, 0.55);
    return 0;
  },
  parse: (text) => parseOfedInfo(boundBlanks(text)),
  findings(f, text) {
    if (!f.version) return [];
    const lines = textLines(text);
    const i = idx(lines, new RegExp(escapeRe(f.version)));
    const flavor = f.flavor ?? (/^[45]\./.test(f.version) ? 'MLNX_OFED' : undefined);
    return d25NicStack({
      stack: { version: f.version, ...(flavor ? { flavor } : {}), evidence: f.raw ?? f.version, line: lineNo(i) },
      device: deviceInText(text),
      kind: 'ofed_info',
    });
  },
  summary(f) {
    if (f.notInstalled) return [['OFED', 'not installed (inbox rdma-core)']];
    return [
      ['version', f.version ?? '?'],
      ['flavor', f.flavor ?? (f.version ? 'not stated (-n)' : '?')],
      ...(f.release ? ([['release', f.release]] as Array<[string, string]>) : []),
    ];
  },
};

const lspci: KindDef<LspciFacts> = {
  kind: 'lspci',
  detect(text) {
    const re = /^[ \t]*(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7][ \t]+[A-Z][A-Za-z /-]*(?:[ \t]\[[0-9a-f]{4}\])?:[ \t]+\S/m;
    return by(text, re, 0.9);
  },
  parse: (text) => parseLspci(boundBlanks(text)),
  findings(f, text) {
    const ofed = /(?:MLNX_OFED_LINUX|OFED-internal)-\d/.test(text) ? parseOfedInfo(boundBlanks(text)) : undefined;
    if (!ofed?.version) return [];
    const dev = f.devices.find((d) => d.vendorId === '15b3' && (d.deviceId === '1013' || d.deviceId === '1015'));
    if (!dev) return [];
    const gen = nicGeneration({ pciId: `15b3:${dev.deviceId}` });
    if (!gen) return [];
    return d25NicStack({
      stack: { version: ofed.version, ...(ofed.flavor ? { flavor: ofed.flavor } : {}), evidence: ofed.raw ?? ofed.version },
      device: { generation: gen, evidence: `${dev.bdf} [15b3:${dev.deviceId}] ${dev.description}` },
      kind: 'lspci',
    });
  },
  summary(f) {
    const mlx = f.devices.filter((d) => d.vendorId === '15b3' || /Mellanox/i.test(d.description));
    const rows: Array<[string, string]> = [['devices', String(f.devices.length)]];
    if (mlx.length) rows.push(['Mellanox', mlx.map((d) => `${d.bdf} ${d.deviceName ?? d.description}`).join('; ')]);
    const off = f.devices.filter((d) => d.offBus);
    if (off.length) rows.push(['off the bus', off.map((d) => d.bdf).join(', ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// perftest

const perftest: KindDef<PerftestFacts> = {
  kind: 'perftest',
  detect(text) {
    const title = firstMatch(text, /^[ \t]*(?:RDMA_Write|RDMA_Read|Send|Atomic\w*|Raw Ethernet)(?: Post List)? (?:BW|Latency) Test[ \t]*$/m);
    const table = /^[ \t]*#bytes[ \t]+#iterations/m.test(text);
    const labels = /^[ \t]*(?:Dual-port|Number of qps|Connection type|Link type)[ \t]*:/m.test(text);
    if (title >= 0) return scoreAt(table || labels ? 0.97 : 0.8, title, text.length);
    if (table && labels) return by(text, /^[ \t]*(?:Dual-port|Number of qps)[ \t]*:/m, 0.85);
    if (table) return by(text, /^[ \t]*#bytes[ \t]+#iterations/m, 0.7);
    return 0;
  },
  parse: parsePerftest,
  findings(f, text) {
    if (f.metric === 'lat' || f.results.length === 0) return [];
    const largest = [...f.results].filter((r) => r.bwAvgGbps !== undefined).sort((a, b) => b.bytes - a.bytes)[0];
    if (!largest || largest.bwAvgGbps === undefined) return [];
    const lines = textLines(text);
    const li = idx(lines, new RegExp(`^\\s*${largest.bytes}\\s+${largest.iterations ?? ''}`));
    const rate = lineRateInText(text, f.device);
    const d = d20Bandwidth({
      kind: 'perftest',
      bwAvgGbps: largest.bwAvgGbps,
      ports: 1,
      ...(rate !== undefined ? { lineRateGbps: rate } : {}),
      ...(f.mtu !== undefined ? { mtu: f.mtu } : {}),
      ...(f.device ? { device: f.device } : {}),
      ...(f.gidIndex !== undefined ? { gidIndex: f.gidIndex } : {}),
      evidence: `${f.test ?? 'perftest'} on ${f.device ?? '?'}: ${li >= 0 ? (lines[li] ?? '').trim().replace(/\s+/g, ' ') : `${largest.bytes} B`} (${f.unit ?? '?'}) → BW average ${fmtGbps(largest.bwAvgGbps)}; link ${rate} Gb/s`,
      ...(li >= 0 ? { line: li + 1 } : {}),
    });
    return d ? [d] : [];
  },
  summary(f) {
    const rows: Array<[string, string]> = [[`test`, `${f.test ?? '?'}${f.side ? ` (${f.side})` : ''}`]];
    rows.push(['device', `${f.device ?? '?'}${f.linkType ? `, link ${f.linkType}` : ''}${f.gidIndex !== undefined ? `, GID index ${f.gidIndex}` : ''}${f.mtu ? `, MTU ${f.mtu}` : ''}`]);
    const last = [...f.results].sort((a, b) => b.bytes - a.bytes)[0];
    if (last && f.metric !== 'lat') rows.push(['BW average', `${fmtGbps(last.bwAvgGbps)} at ${last.bytes} B (peak ${fmtGbps(last.bwPeakGbps)})`]);
    if (last && f.metric === 'lat') rows.push(['latency', `typical ${last.tTypicalUs ?? '?'} µs, avg ${last.tAvgUs ?? '?'} µs at ${last.bytes} B`]);
    if (!last) rows.push(['results', 'none (cut before the result row)']);
    if (f.mtu === 1024 && /ethernet/i.test(f.linkType ?? '')) rows.push(['note', 'Mtu 1024: netdev MTU < 4200 (R24), ≈ 5 % goodput lost']);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// lsmod, modinfo, dkms, mst, cma_roce_mode

const LSMOD_ROW = /^[ \t]*[A-Za-z0-9_]+[ \t]+\d+[ \t]+-?\d+(?:[ \t]+[\w,[\]-]+)?[ \t]*$/gm;

const lsmod: KindDef<LsmodFacts> = {
  kind: 'lsmod',
  detect(text) {
    const h = by(text, /^[ \t]*Module[ \t]+Size[ \t]+Used by[ \t]*$/m, 0.97);
    if (h > 0) return h;
    const rows = countMatches(text, LSMOD_ROW, 20);
    if (rows === 0) return 0;
    const first = firstMatch(text, LSMOD_ROW);
    if (rows >= 3) return scoreAt(0.92, first, text.length);
    if (/\blsmod\b/.test(text)) return scoreAt(0.85, first, text.length);
    return rows * 2 >= nonEmptyCount(text, 20) ? scoreAt(0.6, first, text.length) : 0;
  },
  parse: parseLsmod,
  findings(f, text) {
    const d = d14Peermem(f, textLines(text));
    return d ? [d] : [];
  },
  summary(f) {
    const peer = f.modules.filter((m) => /^(nvidia_peermem|nv_peer_mem)$/.test(m.name)).map((m) => m.name);
    const users = f.modules.filter((m) => m.usedBy.some((u) => /^(nvidia_peermem|nv_peer_mem)$/.test(u))).map((m) => m.name);
    return [
      ['modules', `${f.modules.length}${f.full ? ' (full listing)' : f.grep ? ` (grep ${f.grep.pattern})` : ' (filtered listing)'}`],
      ['peermem', peer.length ? `${peer.join(', ')} loaded` : users.length ? `used by ${users.join(', ')}` : 'not listed'],
      ['names', f.modules.map((m) => m.name).join(', ')],
    ];
  },
};

const modinfo: KindDef<ModinfoFacts> = {
  kind: 'modinfo',
  detect(text) {
    const f = firstMatch(text, /^[ \t]*filename:[ \t]+\/\S+\.ko(?:\.[a-z]+)?[ \t]*$/m);
    const others = ['vermagic:', 'depends:', 'srcversion:', 'license:'].filter((k) => text.includes(k)).length;
    if (f >= 0) return scoreAt(others >= 1 ? 0.95 : 0.75, f, text.length);
    if (others >= 3 && /^[ \t]*vermagic:/m.test(text)) return by(text, /^[ \t]*(?:version|license|vermagic):/m, 0.8);
    return by(text, /^modinfo: ERROR: Module \S+ not found/m, 0.8);
  },
  parse: parseModinfo,
  findings: () => [],
  summary: (f) => [
    ['modules', f.modules.map((m) => `${m.name ?? '?'} ${m.version ?? ''}`.trim()).join(', ') || 'none'],
    ['depends', uniq(f.modules.flatMap((m) => m.depends ?? [])).join(', ') || '-'],
    ['kernel', uniq(f.modules.map((m) => m.kernel).filter((k) => k !== undefined)).join(', ') || '?'],
    ...(f.errors?.length ? ([['errors', f.errors.join(' | ')]] as Array<[string, string]>) : []),
  ],
};

const DKMS_ROW = /^[ \t]*[\w.+-]+(?:\/|,[ \t]*)[\w.+~-]+(?:,[ \t]*[\w.+~-]+){0,2}:[ \t]*(?:installed|built|added|broken)\b/m;

const dkmsStatus: KindDef<DkmsStatusFacts> = {
  kind: 'dkms-status',
  detect(text) {
    const rows = countMatches(text, new RegExp(DKMS_ROW.source, 'gm'), 50);
    if (rows === 0) return 0;
    if (/\bdkms[ \t]+status\b/.test(text)) return by(text, DKMS_ROW, 0.95);
    return rows * 2 >= nonEmptyCount(text, 100) ? by(text, DKMS_ROW, 0.85) : by(text, DKMS_ROW, 0.55);
  },
  parse: parseDkmsStatus,
  findings: () => [],
  summary: (f) => [
    ['modules', f.modules.map((m) => `${m.name} ${m.version} ${m.kernel ?? ''} ${m.status}`.replace(/\s+/g, ' ')).join('; ') || 'none'],
  ],
};

const mstStatus: KindDef<MstStatusFacts> = {
  kind: 'mst-status',
  detect(text) {
    const m = by(text, /^[ \t]*MST modules:[ \t]*$/m, 0.95);
    if (m > 0) return m;
    const t = by(text, /^[ \t]*DEVICE_TYPE[ \t]+MST[ \t]+PCI[ \t]+RDMA[ \t]+NET[ \t]+NUMA/m, 0.95);
    if (t > 0) return t;
    return by(text, /^[ \t]*\/dev\/mst\/mt\d+_\S+[ \t]+-[ \t]/m, 0.8);
  },
  parse: parseMstStatus,
  findings: () => [],
  summary: (f) => [
    ['MST modules', `pci ${f.pciModuleLoaded === undefined ? '?' : f.pciModuleLoaded ? 'loaded' : 'not loaded'}, pciconf ${f.pciConfModuleLoaded === undefined ? '?' : f.pciConfModuleLoaded ? 'loaded' : 'not loaded'}`],
    ['devices', f.devices.map((d) => `${d.type ?? d.mst ?? '?'} ${d.bdf ?? ''} ${d.rdma ?? ''}${d.net ? `→${d.net}` : ''}`.replace(/\s+/g, ' ').trim()).join('; ') || 'none'],
  ],
};

const cmaRoceMode: KindDef<CmaRoceModeFacts> = {
  kind: 'cma_roce_mode',
  detect(text) {
    const re = /^[ \t]*(?:IB\/)?RoCE v[12][ \t]*$/m;
    if (/\bcma_roce_mode\b/.test(text)) return by(text, re, 0.95);
    const n = countMatches(text, new RegExp(re.source, 'gm'), 20);
    return n > 0 && n * 2 >= nonEmptyCount(text, 20) ? by(text, re, 0.6) : 0;
  },
  parse: parseCmaRoceMode,
  findings: () => [],
  summary: (f) => [
    ['device', `${f.device ?? '?'}${f.port !== undefined ? ` port ${f.port}` : ''}`],
    ['rdma_cm default RoCE mode', f.mode ? (f.mode === 'v2' ? 'RoCE v2' : 'RoCE v1 (IB/RoCE v1)') : '?'],
  ],
};

// ---------------------------------------------------------------------------------------------------------
// ip link / addr (text and JSON)

type IpKindFacts = (IpLinkFacts | IpJsonFacts) & { format?: 'text' | 'json' };

const IP_HEAD = /^[ \t]*\d+:[ \t]+[^\s:@]+(?:@[^\s:]+)?:[ \t]+<[A-Z0-9_,-]*>[ \t]+mtu[ \t]+\d+/m;
const IP_ONELINE = /^[ \t]*\d+:[ \t]+[^\s:@]+[ \t]+inet6?[ \t]+[0-9a-fA-F:.]+\/\d+/m;

const ipLink: KindDef<IpKindFacts> = {
  kind: 'ip-link',
  detect(text) {
    if (/^\s*\[\s*\{[^\n]{0,300}"ifname"/.test(text) && /"(?:operstate|addr_info|link_type)"/.test(text.slice(0, 4096))) return 0.9;
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
      ['interfaces', f.netdevs.map((n) => `${n.ifname} ${n.operstate ?? '?'}${n.mtu ? ` mtu ${n.mtu}` : ''}${n.linkKind ? ` ${n.linkKind}` : ''}`).join(', ')],
    ];
    const addrs = f.netdevs.flatMap((n) => (n.addresses ?? []).filter((a) => a.family === 'inet').map((a) => `${n.ifname} ${a.local}/${a.prefixlen ?? '?'}`));
    if (addrs.length) rows.push(['IPv4', addrs.join(', ')]);
    const bonds = f.netdevs.filter((n) => n.bond);
    if (bonds.length) rows.push(['bonds', bonds.map((b) => `${b.ifname} mode ${b.bond?.mode ?? '?'}${b.bond?.miimon !== undefined ? ` miimon ${b.bond.miimon}` : ''}`).join(', ')]);
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

const roceValidate: KindDef<RoceValidateFacts> = {
  kind: 'roce-validate',
  detect(text) {
    const parts = [RV_STATE.test(text), RV_LL.test(text), RV_SYS.test(text), IP_HEAD.test(text) || IP_ONELINE.test(text), countMatches(text, LSMOD_ROW, 2) >= 1];
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
      ['interfaces', f.netdevs.map((n) => `${n.ifname} ${n.operstate ?? ''} mtu ${n.mtu ?? '?'} ${(n.addresses ?? []).map((a) => `${a.local}/${a.prefixlen ?? '?'}`).join(' ')}`.replace(/\s+/g, ' ').trim()).join('; ')],
      ['RDMA port', `${f.portState ?? '?'} ${f.linkLayer ?? ''}`.trim()],
      ['rdma system', f.rdmaSystem ? `netns ${f.rdmaSystem.netns}${f.rdmaSystem.copyOnFork ? `, copy-on-fork ${f.rdmaSystem.copyOnFork}` : ''}` : '?'],
      ['peermem', f.modules.some((m) => m.name === 'nvidia_peermem' || m.name === 'nv_peer_mem') ? 'loaded' : 'not listed'],
    ];
  },
};

export const rdmaKinds: KindDef[] = [
  ibstat,
  ibstatus,
  ibvDevices,
  ibvDevinfo,
  showGids,
  ibdev2netdev,
  rdmaLink,
  mlnxQos,
  bonding,
  ethtool,
  ethtoolS,
  ethtoolI,
  ofedInfo,
  lspci,
  perftest,
  lsmod,
  showCounters,
  sysfsInfiniband,
  modinfo,
  mstStatus,
  dkmsStatus,
  cmaRoceMode,
  ipLink,
  roceValidate,
] as KindDef[];
