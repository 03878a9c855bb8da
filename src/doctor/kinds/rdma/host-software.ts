/**
 * Host RDMA software as doctor kinds: `ofed_info`, `lspci`, `lsmod` (D14 peermem), `modinfo`, `dkms status`,
 * `mst status`, `cma_roce_mode` (D25 NIC stack).
 */
import type { KindDef } from '../../types.js';
import { parseCmaRoceMode, type CmaRoceModeFacts } from '../../../parse/cma-roce-mode.js';
import { parseDkmsStatus, type DkmsStatusFacts } from '../../../parse/dkms-status.js';
import { parseLsmod, type LsmodFacts } from '../../../parse/lsmod.js';
import { parseLspci, type LspciFacts } from '../../../parse/lspci.js';
import { parseModinfo, type ModinfoFacts } from '../../../parse/modinfo.js';
import { parseMstStatus, type MstStatusFacts } from '../../../parse/mst-status.js';
import { parseOfedInfo, type OfedInfoFacts } from '../../../parse/ofed-info.js';
import { countMatches, firstMatch, scoreAt, textLines } from '../../../parse/rdma-util.js';
import { d14Peermem } from '../../../rules/output/d14-peermem.js';
import { d25NicStack, nicGeneration, type D25Input } from '../../../rules/output/d25-nic-stack.js';
import { boundBlanks, by, escapeRe, idx, lineNo, nonEmptyCount, uniq } from './common.js';

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

export const ofedInfo: KindDef<OfedInfoFacts> = {
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

export const lspci: KindDef<LspciFacts> = {
  kind: 'lspci',
  detect(text) {
    // The class is a name (`Ethernet controller`, `3D controller`: pci.ids' one name led by a digit) or,
    // under `-n`, the bare class id.
    const re = new RegExp(
      String.raw`^[ \t]*(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7][ \t]+` +
        String.raw`(?:[A-Z][A-Za-z /-]*|3D [a-z ]+|[0-9a-f]{4})(?:[ \t]\[[0-9a-f]{4}\])?:[ \t]+\S`,
      'm',
    );
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
      stack: {
        version: ofed.version,
        ...(ofed.flavor ? { flavor: ofed.flavor } : {}),
        evidence: ofed.raw ?? ofed.version,
      },
      device: { generation: gen, evidence: `${dev.bdf} [15b3:${dev.deviceId}] ${dev.description}` },
      kind: 'lspci',
    });
  },
  summary(f) {
    const mlx = f.devices.filter((d) => d.vendorId === '15b3' || /Mellanox/i.test(d.description));
    const rows: Array<[string, string]> = [['devices', String(f.devices.length)]];
    if (mlx.length) rows.push(['Mellanox', mlx.map((d) => `${d.bdf} ${d.deviceName ?? d.description}`).join('; ')]);
    const nv = f.devices.filter((d) => d.vendorId === '10de' || /^NVIDIA\b/.test(d.description));
    if (nv.length) rows.push(['NVIDIA', nv.map((d) => `${d.bdf} ${d.deviceName ?? d.description}`).join('; ')]);
    const off = f.devices.filter((d) => d.offBus);
    if (off.length) rows.push(['off the bus', off.map((d) => d.bdf).join(', ')]);
    return rows;
  },
};

// ---------------------------------------------------------------------------------------------------------
// lsmod, modinfo, dkms, mst, cma_roce_mode

export const LSMOD_ROW = /^[ \t]*[A-Za-z0-9_]+[ \t]+\d+[ \t]+-?\d+(?:[ \t]+[\w,[\]-]+)?[ \t]*$/gm;

const LSMOD_GREP = /\blsmod\b[ \t]*\|[ \t]*[ef]?grep\b/;

/**
 * A pasted `lsmod | grep …` that printed nothing before the next prompt (or the end): an answer, not a cut.
 * It scores below a full output pasted after it (`# lsmod | grep nv_peer` + `#`, then `modinfo nv_peer_mem`
 * reads as modinfo, with lsmod under `also`).
 */
function lsmodGrepAnsweredEmpty(text: string): boolean {
  return LSMOD_GREP.test(text) && parseLsmod(text).grep?.empty === true;
}

export const lsmod: KindDef<LsmodFacts> = {
  kind: 'lsmod',
  detect(text) {
    const h = by(text, /^[ \t]*Module[ \t]+Size[ \t]+Used by[ \t]*$/m, 0.97);
    if (h > 0) return h;
    const rows = countMatches(text, LSMOD_ROW, 20);
    if (rows === 0) return lsmodGrepAnsweredEmpty(text) ? scoreAt(0.85, firstMatch(text, LSMOD_GREP), text.length) : 0;
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
    const users = f.modules
      .filter((m) => m.usedBy.some((u) => /^(nvidia_peermem|nv_peer_mem)$/.test(u)))
      .map((m) => m.name);
    return [
      [
        'modules',
        `${f.modules.length}${f.full ? ' (full listing)' : f.grep ? ` (grep ${f.grep.pattern})` : ' (filtered listing)'}`,
      ],
      [
        'peermem',
        peer.length
          ? `${peer.join(', ')} loaded`
          : users.length
            ? `used by ${users.join(', ')}`
            : f.grep?.empty
              ? `not loaded (grep ${f.grep.pattern} printed nothing)`
              : 'not listed',
      ],
      ['names', f.modules.map((m) => m.name).join(', ')],
    ];
  },
};

export const modinfo: KindDef<ModinfoFacts> = {
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

const DKMS_ROW =
  /^[ \t]*[\w.+-]+(?:\/|,[ \t]*)[\w.+~-]+(?:,[ \t]*[\w.+~-]+){0,2}:[ \t]*(?:installed|built|added|broken)\b/m;

export const dkmsStatus: KindDef<DkmsStatusFacts> = {
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
    [
      'modules',
      f.modules.map((m) => `${m.name} ${m.version} ${m.kernel ?? ''} ${m.status}`.replace(/\s+/g, ' ')).join('; ') ||
        'none',
    ],
  ],
};

export const mstStatus: KindDef<MstStatusFacts> = {
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
    [
      'MST modules',
      `pci ${f.pciModuleLoaded === undefined ? '?' : f.pciModuleLoaded ? 'loaded' : 'not loaded'}, pciconf ${f.pciConfModuleLoaded === undefined ? '?' : f.pciConfModuleLoaded ? 'loaded' : 'not loaded'}`,
    ],
    [
      'devices',
      f.devices
        .map((d) =>
          `${d.type ?? d.mst ?? '?'} ${d.bdf ?? ''} ${d.rdma ?? ''}${d.net ? `→${d.net}` : ''}`
            .replace(/\s+/g, ' ')
            .trim(),
        )
        .join('; ') || 'none',
    ],
  ],
};

export const cmaRoceMode: KindDef<CmaRoceModeFacts> = {
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
