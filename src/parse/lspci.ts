/**
 * `lspci` device lines (`-D`, `-nn`, grepped) and `-v`/`-vv`/`-vvv` blocks.
 *
 * A device line is
 * `[domain:]bus:dev.fn <class>[ [cccc]]: <vendor device>[ [vvvv:dddd]][ (rev rr)][ (prog-if pp[ [name]])]`,
 * or under `-n` `[domain:]bus:dev.fn cccc: vvvv:dddd[ (rev rr)]`.
 * Verbose blocks follow their device line, indented (tabs, or spaces when pasted). Device lines are
 * found by their address, not by column 0, since pasted samples are often indented as a whole.
 * A device that fell off the bus reads back all-ones: `(rev ff)` and `!!! Unknown header type 7f`.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, normalizeBdf, toInt, toNum, validate } from './common.js';

const LinkSchema = z.object({
  /** GT/s as a number (2.5, 5, 8, 16, 32, 64); absent for `Speed unknown` (a reserved code, or a link that is down). */
  speedGTs: z.number().optional(),
  /** `Speed unknown`: the register holds no defined speed (LnkSta of a link that is down). */
  speedUnknown: z.boolean().optional(),
  /** Lanes; 0 (`Width x0`) when the link is down. */
  width: z.number().int().optional(),
  /**
   * The mark pciutils printed after the value: 3.6–3.7 always print `(ok)`, `(downgraded)` or `(strange)`;
   * 3.8+ print only `(downgraded)` or `(overdriven)`, and nothing when equal. True for `(downgraded)`.
   */
  speedDowngraded: z.boolean().optional(),
  widthDowngraded: z.boolean().optional(),
});
export type PciLink = z.infer<typeof LinkSchema>;

export const LspciDeviceSchema = z.object({
  /** Domain form `0000:bb:dd.f`, lower case. */
  bdf: z.string(),
  /** Class name as printed (`Ethernet controller`, `3D controller`, `PCI bridge`). */
  class: z.string(),
  /** `0200` from `[0200]` (`-nn`). */
  classId: z.string().optional(),
  vendorId: z.string().optional(),
  deviceId: z.string().optional(),
  /** Vendor and device name as printed, without ids, revision and prog-if. */
  description: z.string(),
  /** Vendor name, when the description starts with a known vendor. */
  vendor: z.string().optional(),
  /** Description without the vendor name, when the vendor was recognised. */
  deviceName: z.string().optional(),
  /** Revision as printed (`a1`, `ff`). */
  revision: z.string().optional(),
  progIf: z.string().optional(),
  /** True when the device reads back as all-ones: `(rev ff)` or `Unknown header type 7f`. */
  offBus: z.boolean().optional(),
  // ---- verbose (-v / -vv / -vvv) fields ----
  subsystem: z
    .object({ name: z.string().optional(), vendorId: z.string().optional(), deviceId: z.string().optional() })
    .optional(),
  physicalSlot: z.string().optional(),
  numaNode: z.number().int().optional(),
  /** PCIe port type from `Capabilities: [..] Express (v2) <type>`: `Endpoint`, `Root Port`, `Upstream Port`, `Downstream Port`, … */
  pcieType: z.string().optional(),
  lnkCap: LinkSchema.optional(),
  lnkSta: LinkSchema.optional(),
  /** Highest speed of `LnkCap2: Supported Link Speeds: 2.5-32GT/s` (GT/s). */
  lnkCap2MaxGTs: z.number().optional(),
  /** `LnkCtl2: Target Link Speed: 16GT/s` (GT/s). */
  lnkCtl2TargetGTs: z.number().optional(),
  /**
   * LnkSta below LnkCap in speed or width, by the numbers, whatever pciutils version printed them (3.8+
   * leave the mark off on root and downstream ports; 3.6–3.7 mark every port type). A `Speed unknown`
   * status counts by its `(downgraded)` mark, a `Width x0` by its number.
   */
  downgraded: z.boolean().optional(),
  acsCap: z.record(z.string(), z.boolean()).optional(),
  acsCtl: z.record(z.string(), z.boolean()).optional(),
  /** Bridges: `Bus: primary=17, secondary=18, subordinate=1a` (hex bus numbers as printed). */
  secondaryBus: z.string().optional(),
  subordinateBus: z.string().optional(),
  driver: z.string().optional(),
  modules: z.array(z.string()).optional(),
  /** `Capabilities: <access denied>`: lspci ran without root, link/ACS data is missing. */
  capabilitiesDenied: z.boolean().optional(),
});
export type LspciDevice = z.infer<typeof LspciDeviceSchema>;

export const LspciFactsSchema = z.object({ devices: z.array(LspciDeviceSchema) });
export type LspciFacts = z.infer<typeof LspciFactsSchema>;

// Vendor names as pci.ids spells them, longest first where one is a prefix of another.
const KNOWN_VENDORS = [
  'Mellanox Technologies',
  'NVIDIA Corporation',
  'Intel Corporation',
  'Broadcom Inc. and subsidiaries',
  'Broadcom / LSI',
  'Broadcom Limited',
  'Advanced Micro Devices, Inc. [AMD/ATI]',
  'Advanced Micro Devices, Inc. [AMD]',
  'ASPEED Technology, Inc.',
  'PLX Technology, Inc.',
  'Microchip Technology / SMSC',
  'Microsemi / PMC / IDT',
  'PMC-Sierra Inc.',
  'Samsung Electronics Co Ltd',
  'Micron Technology Inc',
  'KIOXIA Corporation',
  'SK hynix',
  'Western Digital',
  'Seagate Technology PLC',
  'Huawei Technologies Co., Ltd.',
  'Marvell Technology Group Ltd.',
  'Realtek Semiconductor Co., Ltd.',
  'Matrox Electronics Systems Ltd.',
  'Emulex Corporation',
  'QLogic Corp.',
  'Cisco Systems Inc',
  'Chelsio Communications Inc',
  'Solarflare Communications',
  'Xilinx Corporation',
  'Red Hat, Inc.',
  'Amazon.com, Inc.',
  'Google, Inc.',
  'Microsoft Corporation',
  'VMware',
  'Ampere Computing, LLC',
  'Texas Instruments',
  'Renesas Technology Corp.',
  'ASMedia Technology Inc.',
  'Pericom Semiconductor',
];

// `bb:dd.f` with optional domain, at the start of a (possibly indented) line, then the class.
const DEVICE_LINE = /^\s*((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(\S.*)$/;

function splitIds(s: string): { rest: string; vendorId?: string; deviceId?: string } {
  const m = /^(.*?)\s*\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]$/.exec(s);
  if (!m) return { rest: s };
  return { rest: m[1] ?? '', vendorId: m[2]?.toLowerCase(), deviceId: m[3]?.toLowerCase() };
}

function splitVendor(description: string): { vendor?: string; deviceName?: string } {
  for (const v of KNOWN_VENDORS) {
    if (description === v) return { vendor: v };
    if (description.startsWith(`${v} `)) return { vendor: v, deviceName: description.slice(v.length + 1) };
  }
  return {};
}

function parseDeviceLine(bdfRaw: string, rest: string): LspciDevice | undefined {
  const bdf = normalizeBdf(bdfRaw);
  // Class names never contain `: `; the first one ends the class.
  const sep = rest.indexOf(': ');
  if (!bdf || sep <= 0) return undefined;
  let cls = rest.slice(0, sep).trim();
  let classId: string | undefined;
  const cm = /^(.*?)\s*\[([0-9a-fA-F]{4})\]$/.exec(cls);
  if (cm) {
    cls = cm[1] ?? cls;
    classId = cm[2]?.toLowerCase();
  }
  let tail = rest.slice(sep + 2).trim();
  let revision: string | undefined;
  let progIf: string | undefined;
  // Trailing `(rev rr)` and `(prog-if pp [name])`, in either order.
  for (;;) {
    const pm = /\s*\(prog-if ([0-9a-fA-F]{2})(?: \[[^\]]*\])?\)$/.exec(tail);
    if (pm) {
      progIf = pm[1]?.toLowerCase();
      tail = tail.slice(0, pm.index);
      continue;
    }
    const rm = /\s*\(rev ([0-9a-fA-F]{2})\)$/.exec(tail);
    if (rm) {
      revision = rm[1]?.toLowerCase();
      tail = tail.slice(0, rm.index);
      continue;
    }
    break;
  }
  // `-n`: the class id alone, then `vvvv:dddd` without brackets.
  const numeric = /^[0-9a-fA-F]{4}$/.test(cls) ? /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(tail) : null;
  if (numeric) {
    return compact({
      bdf,
      class: cls.toLowerCase(),
      classId: cls.toLowerCase(),
      vendorId: numeric[1]?.toLowerCase(),
      deviceId: numeric[2]?.toLowerCase(),
      description: '',
      revision,
      progIf,
      offBus: revision === 'ff' ? true : undefined,
    });
  }
  const ids = splitIds(tail);
  const description = ids.rest.trim();
  const { vendor, deviceName } = splitVendor(description);
  return compact({
    bdf,
    class: cls,
    classId,
    vendorId: ids.vendorId,
    deviceId: ids.deviceId,
    description,
    vendor,
    deviceName,
    revision,
    progIf,
    offBus: revision === 'ff' ? true : undefined,
  });
}

// `Speed 16GT/s`, `Speed 2.5GT/s`, `Speed unknown`, each optionally followed by a mark: `(ok)`,
// `(downgraded)`, `(strange)` (pciutils 3.6–3.7), `(downgraded)`, `(overdriven)` (3.8+).
const SPEED = /\bSpeed\s+(?:([\d.]+)\s*GT\/s|(unknown))(?:\s*\((\w+)\))?/i;
// The width ends in a mark, a comma (LnkCap; LnkSta before 3.6) or the end of the line (LnkSta 3.8+).
const WIDTH = /\bWidth\s+x(\d+)(?:\s*\((\w+)\)|(?=\s*,)|\s*$)/i;

/**
 * One LnkCap/LnkSta value. `cut` says the line is the input's last one: a width that merely ends the text
 * may then be cut short (`x1` of `x16`), so it is read only with a mark or a comma after it.
 */
function parseLink(value: string, cut: boolean): PciLink {
  const speed = SPEED.exec(value);
  const width = WIDTH.exec(value);
  const after = width ? value.slice(width.index + width[0].length) : '';
  const widthEndsText = width !== null && width[2] === undefined && !/^\s*,/.test(after);
  const mark = (m: string | undefined): boolean | undefined => (m ? m.toLowerCase() === 'downgraded' : undefined);
  return compact({
    speedGTs: speed?.[1] !== undefined ? toNum(speed[1]) : undefined,
    speedUnknown: speed?.[2] !== undefined ? true : undefined,
    width: width && !(cut && widthEndsText) ? toInt(width[1]) : undefined,
    speedDowngraded: mark(speed?.[3]),
    widthDowngraded: mark(width?.[2]),
  });
}

/** `2.5-32GT/s` or `2.5GT/s` → 32 / 2.5. */
function maxSpeed(value: string): number | undefined {
  const m = /(?:[\d.]+-)?([\d.]+)\s*GT\/s/.exec(value);
  return m ? toNum(m[1]) : undefined;
}

function parseFlags(value: string): Record<string, boolean> | undefined {
  const out: Record<string, boolean> = {};
  for (const m of value.matchAll(/([A-Za-z][A-Za-z0-9]*)([+-])(?=\s|,|$)/g)) {
    if (m[1] !== undefined) out[m[1]] = m[2] === '+';
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Applies one indented detail line to the device it belongs to; `last`: no line follows it in the input. */
function applyDetail(dev: LspciDevice, line: string, last: boolean): void {
  const t = line.trim();
  let m: RegExpExecArray | null;
  if (/^!!! Unknown header type 7f/i.test(t)) dev.offBus = true;
  else if ((m = /^Subsystem:\s*(.*)$/.exec(t))) {
    const ids = splitIds((m[1] ?? '').trim());
    dev.subsystem = compact({ name: ids.rest.trim() || undefined, vendorId: ids.vendorId, deviceId: ids.deviceId });
  } else if ((m = /^Physical Slot:\s*(\S.*)$/.exec(t))) dev.physicalSlot = m[1];
  else if ((m = /^NUMA node:\s*(-?\d+)/.exec(t))) {
    const n = toInt(m[1]);
    if (n !== undefined) dev.numaNode = n;
  } else if (
    (m = /^Capabilities:\s*\[[0-9a-fA-F]+\]\s*Express\s*(?:\(v\d+\)\s*)?(.+?)(?:,\s*(?:MSI|IntMsgNum)\b.*)?$/.exec(t))
  ) {
    dev.pcieType = (m[1] ?? '').replace(/\s*\(.*\)$/, '').trim();
  } else if (/^Capabilities:\s*<access denied>/.test(t)) dev.capabilitiesDenied = true;
  else if ((m = /^LnkCap:\s*(.*)$/.exec(t))) dev.lnkCap = parseLink(m[1] ?? '', last);
  else if ((m = /^LnkSta:\s*(.*)$/.exec(t))) dev.lnkSta = parseLink(m[1] ?? '', last);
  else if ((m = /^LnkCap2:\s*Supported Link Speeds:\s*([^,]*)/.exec(t))) {
    const v = maxSpeed(m[1] ?? '');
    if (v !== undefined) dev.lnkCap2MaxGTs = v;
  } else if ((m = /^LnkCtl2:\s*Target Link Speed:\s*([^,]*)/.exec(t))) {
    const v = maxSpeed(m[1] ?? '');
    if (v !== undefined) dev.lnkCtl2TargetGTs = v;
  } else if ((m = /^ACSCap:\s*(.*)$/.exec(t))) {
    const f = parseFlags(m[1] ?? '');
    if (f) dev.acsCap = f;
  } else if ((m = /^ACSCtl:\s*(.*)$/.exec(t))) {
    const f = parseFlags(m[1] ?? '');
    if (f) dev.acsCtl = f;
  } else if ((m = /^Bus:\s*primary=([0-9a-fA-F]+),\s*secondary=([0-9a-fA-F]+),\s*subordinate=([0-9a-fA-F]+)/.exec(t))) {
    dev.secondaryBus = m[2]?.toLowerCase();
    dev.subordinateBus = m[3]?.toLowerCase();
  } else if ((m = /^Kernel driver in use:\s*(\S+)/.exec(t))) dev.driver = m[1];
  else if ((m = /^Kernel modules:\s*(\S.*)$/.exec(t))) {
    dev.modules = (m[1] ?? '').split(/[,\s]+/).filter((s) => s !== '');
  }
}

function finish(dev: LspciDevice): LspciDevice {
  const cap = dev.lnkCap;
  const sta = dev.lnkSta;
  if (cap && sta) {
    const speedKnown = cap.speedGTs !== undefined && sta.speedGTs !== undefined;
    const slower = speedKnown
      ? sta.speedGTs! < cap.speedGTs!
      : sta.speedUnknown === true && sta.speedDowngraded === true;
    const widthKnown = cap.width !== undefined && sta.width !== undefined;
    const narrower = widthKnown && sta.width! < cap.width!;
    if (speedKnown || widthKnown || slower) dev.downgraded = slower || narrower;
  } else if (sta && (sta.speedDowngraded !== undefined || sta.widthDowngraded !== undefined)) {
    // LnkCap cut off or not pasted: the marks are all there is.
    dev.downgraded = sta.speedDowngraded === true || sta.widthDowngraded === true;
  }
  return validate(LspciDeviceSchema, compact(dev));
}

/** Parses lspci output: plain, `-D`, `-nn`, grepped, or verbose blocks. */
export function parseLspci(text: string): LspciFacts {
  return guard(
    () => {
      const devices: LspciDevice[] = [];
      let current: LspciDevice | undefined;
      // ACS flag lists wrapped onto a second line (mail/paste) continue the previous ACS line.
      let lastAcs: 'acsCap' | 'acsCtl' | undefined;
      const lines = cleanLines(text, { commands: ['lspci'] });
      let lastNonBlank = lines.length - 1;
      while (lastNonBlank >= 0 && (lines[lastNonBlank] ?? '').trim() === '') lastNonBlank--;
      for (const [i, line] of lines.entries()) {
        const m = DEVICE_LINE.exec(line);
        const parsed = m ? parseDeviceLine(m[1] ?? '', m[2] ?? '') : undefined;
        if (parsed) {
          if (current) devices.push(finish(current));
          current = parsed;
          lastAcs = undefined;
          continue;
        }
        if (!current || line.trim() === '') continue;
        if (lastAcs && /^\s*(?:[A-Za-z][A-Za-z0-9]*[+-]\s*)+$/.test(line)) {
          const more = parseFlags(line.trim());
          if (more) current[lastAcs] = { ...(current[lastAcs] ?? {}), ...more };
          continue;
        }
        // Detail lines are matched by their key, so unrelated lines in between (a prompt, another
        // command's output, a wrapped line) are ignored rather than ending the block.
        applyDetail(current, line, i === lastNonBlank);
        const key = /^\s*(ACSCap|ACSCtl):/.exec(line)?.[1];
        lastAcs = key === 'ACSCap' ? 'acsCap' : key === 'ACSCtl' ? 'acsCtl' : undefined;
      }
      if (current) devices.push(finish(current));
      return validate(LspciFactsSchema, { devices });
    },
    () => ({ devices: [] }),
  );
}

/** Groups device addresses by `domain:bus:dev` (one physical card's functions). */
export function groupBySlot(devices: readonly LspciDevice[]): Record<string, LspciDevice[]> {
  const out: Record<string, LspciDevice[]> = {};
  for (const d of devices) {
    const slot = d.bdf.replace(/\.[0-7]$/, '');
    (out[slot] ??= []).push(d);
  }
  return out;
}
