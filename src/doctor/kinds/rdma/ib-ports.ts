/**
 * InfiniBand port tools as doctor kinds: `ibstat`, `ibstatus`, `ibv_devices`, `ibv_devinfo` (D08 port not
 * active, D09 Ethernet link, D25 ConnectX-4 Lx firmware).
 */
import type { Finding } from '../../../rules/types.js';
import type { KindDef } from '../../types.js';
import { parseIbstat, type IbstatFacts } from '../../../parse/ibstat.js';
import { parseIbstatus, type IbstatusFacts } from '../../../parse/ibstatus.js';
import { parseIbvDevices, type IbvDevicesFacts } from '../../../parse/ibv-devices.js';
import { parseIbvDevinfo, type IbvDevinfoFacts } from '../../../parse/ibv-devinfo.js';
import { countMatches, firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { d08PortNotActive, isActiveState } from '../../../rules/output/d08-port-not-active.js';
import { d19RoceV2Gid } from '../../../rules/output/d19-roce-v2-gid.js';
import { d25NicStack, nicGeneration } from '../../../rules/output/d25-nic-stack.js';
import { by, countBy, escapeRe, idx, lineNo, netdevsInText, nextIdx, nonEmptyCount, uniq } from './common.js';

// ---------------------------------------------------------------------------------------------------------
// ibstat

export const ibstat: KindDef<IbstatFacts> = {
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
      const i = idx(
        lines,
        new RegExp(`^\\s*Firmware version:\\s*${escapeRe(ca.firmware)}`),
        idx(lines, new RegExp(`^\\s*CA:? '${escapeRe(ca.device)}'`)),
      );
      out.push(
        ...d25NicStack({
          firmware: {
            version: ca.firmware,
            evidence: `${ca.device}: Firmware version: ${ca.firmware}`,
            line: lineNo(i),
          },
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
    const down = f.ports.filter(
      (p) => isActiveState(p.state) === false || (p.physState !== undefined && p.physState !== 'LinkUp'),
    );
    if (down.length)
      rows.push([
        'not active',
        down.map((p) => `${p.device}/${p.port} ${p.state ?? '?'}/${p.physState ?? '?'}`).join(', '),
      ]);
    const eth = f.ports.filter((p) => p.linkLayer === 'Ethernet').length;
    rows.push(['link layer', `${eth} Ethernet, ${f.ports.length - eth} other`]);
    const rates = uniq(
      f.ports
        .filter((p) => isActiveState(p.state))
        .map((p) => p.rateGbps)
        .filter((r) => r !== undefined),
    );
    if (rates.length) rows.push(['rate (active)', rates.map((r) => `${r} Gb/s`).join(', ')]);
    if (f.errors?.length) rows.push(['errors', f.errors.join(' | ')]);
    return rows;
  },
};
// ---------------------------------------------------------------------------------------------------------
// ibstatus

export const ibstatus: KindDef<IbstatusFacts> = {
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
      const state =
        p.state ??
        (p.stateCode !== undefined
          ? (['', 'DOWN', 'INIT', 'ARMED', 'ACTIVE', 'ACTIVE_DEFER'][p.stateCode] ?? undefined)
          : undefined);
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
    if (down.length)
      rows.push(['not active', down.map((p) => `${p.device}/${p.port} ${p.state}/${p.physState ?? '?'}`).join(', ')]);
    const rates = uniq(f.ports.map((p) => p.rate).filter((r) => r !== undefined));
    if (rates.length) rows.push(['rates', rates.join(', ')]);
    rows.push(['link layer', countBy(f.ports, (p) => p.linkLayer) || '?']);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// ibv_devices

export const ibvDevices: KindDef<IbvDevicesFacts> = {
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

export const ibvDevinfo: KindDef<IbvDevinfoFacts> = {
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
      const gen = nicGeneration({
        caType: d.vendorPartId !== undefined ? `MT${d.vendorPartId}` : undefined,
        firmware: d.fwVer,
      });
      if (gen !== 'ConnectX-4 Lx' || !d.fwVer) continue;
      const i = idx(lines, /^\s*fw_ver:/, idx(lines, new RegExp(`^\\s*hca_id:\\s*${escapeRe(d.device)}`)));
      out.push(
        ...d25NicStack({
          firmware: { version: d.fwVer, evidence: `${d.device}: fw_ver: ${d.fwVer}`, line: lineNo(i) },
          device: {
            generation: gen,
            evidence: d.vendorPartId !== undefined ? `vendor_part_id: ${d.vendorPartId}` : `fw ${d.fwVer}`,
          },
          kind: 'ibv_devinfo',
        }),
      );
    }
    return out;
  },
  summary(f) {
    const rows: Array<[string, string]> = [];
    if (f.hcas) rows.push(['HCAs', f.hcas.join(', ')]);
    if (f.devices.length)
      rows.push(['devices', f.devices.map((d) => `${d.device}${d.fwVer ? ` fw ${d.fwVer}` : ''}`).join(', ')]);
    if (f.ports.length)
      rows.push([
        'ports',
        f.ports
          .map((p) =>
            `${p.device ?? '?'}/${p.port} ${p.state ?? '?'} ${p.linkLayer ?? ''} mtu ${p.activeMtu ?? '?'}`.trim(),
          )
          .join('; '),
      ]);
    const small = f.ports.filter(
      (p) => p.activeMtu !== undefined && p.activeMtu < 4096 && /^ethernet$/i.test(p.linkLayer ?? ''),
    );
    if (small.length)
      rows.push([
        'active_mtu < 4096',
        `${small.map((p) => `${p.device ?? '?'}/${p.port}: ${p.activeMtu}`).join(', ')} (netdev MTU < 4200; R24)`,
      ]);
    if (f.gids) rows.push(['GIDs', `${f.gids.length} (${f.gids.filter((g) => g.ipv4).length} IPv4-mapped)`]);
    if (f.noDevices) rows.push(['devices', 'none (No IB devices found)']);
    return rows;
  },
};
