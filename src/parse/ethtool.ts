/**
 * `ethtool <if>` and `ethtool -i <if>`.
 *
 * `ethtool <if>` prints `Settings for <if>:` then `\tKey: value` lines; list values (link modes,
 * message-level names) continue on following lines without a key. Older/newer ethtool differ in FEC
 * spelling (`None BaseR` vs `None\t RS\t BASER`), add `Lanes:`, and indent `Current message level`
 * with spaces. Unknown speed/duplex print `Unknown!`; a down link may carry a reason:
 * `Link detected: no (Cable issue, Unsupported cable)`.
 *
 * `ethtool -i` prints `key: value` lines (`driver`, `version`, `firmware-version`, `bus-info`, …).
 * mlx5 firmware reads `14.32.1010 (MT_2420110034)`: version then the board PSID.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, normalizeBdf, toInt, validate } from './common.js';

export const EthtoolFactsSchema = z.object({
  netdev: z.string().optional(),
  /** Mb/s; omitted when ethtool prints `Unknown!`. */
  speedMbps: z.number().int().optional(),
  duplex: z.string().optional(),
  autoneg: z.boolean().optional(),
  port: z.string().optional(),
  lanes: z.number().int().optional(),
  linkDetected: z.boolean().optional(),
  /** The parenthesised reason after `Link detected: no`. */
  linkReason: z.string().optional(),
  supportedPorts: z.array(z.string()).optional(),
  supportedLinkModes: z.array(z.string()).optional(),
  advertisedLinkModes: z.array(z.string()).optional(),
  partnerLinkModes: z.array(z.string()).optional(),
  supportedFec: z.array(z.string()).optional(),
  advertisedFec: z.array(z.string()).optional(),
  /** Every `Key: value` line, continuation lines joined with a space. */
  fields: z.record(z.string(), z.string()),
});
export type EthtoolFacts = z.infer<typeof EthtoolFactsSchema>;

const KEY_LINE = /^\s*([A-Za-z][A-Za-z0-9 ./()-]*?):\s*(.*)$/;

function list(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  const items = v.split(/\s+/).filter((s) => s !== '' && s !== '[' && s !== ']');
  // `Not reported` is ethtool's "no list", not a mode.
  if (items.join(' ') === 'Not reported') return [];
  return items;
}

function yesNo(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  const t = v.trim().toLowerCase();
  if (t === 'on' || t === 'yes') return true;
  if (t === 'off' || t === 'no') return false;
  return undefined;
}

/** Parses `ethtool <if>` (the first `Settings for` block when several are pasted). */
export function parseEthtool(text: string): EthtoolFacts {
  return guard(
    () => {
      const fields: Record<string, string> = {};
      let netdev: string | undefined;
      let lastKey: string | undefined;
      let seenSettings = false;
      for (const line of cleanLines(text, { commands: ['ethtool'] })) {
        if (line.trim() === '') continue;
        const s = /^\s*Settings for (\S+?):?\s*$/.exec(line);
        if (s) {
          if (seenSettings) break; // a second interface's block
          seenSettings = true;
          netdev = s[1];
          lastKey = undefined;
          continue;
        }
        const m = KEY_LINE.exec(line);
        if (m && m[1] !== undefined && !/^\s*\d/.test(line)) {
          const key = m[1].trim();
          if (!(key in fields)) {
            fields[key] = (m[2] ?? '').trim();
            lastKey = key;
          } else {
            lastKey = undefined;
          }
          continue;
        }
        // A continuation of the previous list value (link modes, message-level names).
        if (lastKey !== undefined && /^\s/.test(line)) fields[lastKey] = `${fields[lastKey]} ${line.trim()}`.trim();
      }
      const speedRaw = fields['Speed'];
      const sm = speedRaw !== undefined ? /^(\d+)\s*Mb\/s$/.exec(speedRaw) : null;
      const duplex = fields['Duplex'];
      const link = fields['Link detected'];
      const lm = link !== undefined ? /^(yes|no)\b\s*(?:\((.*)\))?/i.exec(link) : null;
      return validate(
        EthtoolFactsSchema,
        compact({
          netdev,
          speedMbps: sm ? toInt(sm[1]) : undefined,
          duplex: duplex === 'Full' || duplex === 'Half' ? duplex : undefined,
          autoneg: yesNo(fields['Auto-negotiation']),
          port: fields['Port'] || undefined,
          lanes: toInt(fields['Lanes']),
          linkDetected: lm ? lm[1]?.toLowerCase() === 'yes' : undefined,
          linkReason: lm?.[2]?.trim() || undefined,
          supportedPorts: list(fields['Supported ports']),
          supportedLinkModes: list(fields['Supported link modes']),
          advertisedLinkModes: list(fields['Advertised link modes']),
          partnerLinkModes: list(fields['Link partner advertised link modes']),
          supportedFec: list(fields['Supported FEC modes']),
          advertisedFec: list(fields['Advertised FEC modes']),
          fields,
        }),
      );
    },
    () => ({ fields: {} }),
  );
}

// ---- ethtool -i ----

export const EthtoolInfoFactsSchema = z.object({
  driver: z.string().optional(),
  /** Driver version: the kernel release (in-tree), `5.0-0` (old inbox), or the OFED version. */
  version: z.string().optional(),
  /** As printed, e.g. `14.32.1010 (MT_2420110034)`. */
  firmware: z.string().optional(),
  /** The version part of `firmware`. */
  firmwareVersion: z.string().optional(),
  /** The board PSID in parentheses (Mellanox). */
  psid: z.string().optional(),
  expansionRom: z.string().optional(),
  /** As printed (`0000:1a:00.0`). */
  busInfo: z.string().optional(),
  /** `busInfo` normalised when it is a PCI address. */
  bdf: z.string().optional(),
  supportsStatistics: z.boolean().optional(),
  supportsPrivFlags: z.boolean().optional(),
  fields: z.record(z.string(), z.string()),
});
export type EthtoolInfoFacts = z.infer<typeof EthtoolInfoFactsSchema>;

function infoFromFields(fields: Record<string, string>): EthtoolInfoFacts {
  const fw = fields['firmware-version'] || undefined;
  const fm = fw !== undefined ? /^(\S+)(?:\s+\(([^)]*)\))?/.exec(fw) : null;
  const busInfo = fields['bus-info'] || undefined;
  return validate(
    EthtoolInfoFactsSchema,
    compact({
      driver: fields['driver'] || undefined,
      version: fields['version'] || undefined,
      firmware: fw,
      firmwareVersion: fm?.[1],
      psid: fm?.[2]?.trim() || undefined,
      expansionRom: fields['expansion-rom-version'] || undefined,
      busInfo,
      bdf: normalizeBdf(busInfo),
      supportsStatistics: yesNo(fields['supports-statistics']),
      supportsPrivFlags: yesNo(fields['supports-priv-flags']),
      fields,
    }),
  );
}

/** Parses every `ethtool -i` block in the text (a new block starts at each `driver:` line). */
export function parseEthtoolInfoAll(text: string): EthtoolInfoFacts[] {
  return guard(
    () => {
      const blocks: Record<string, string>[] = [];
      let cur: Record<string, string> | undefined;
      for (const line of cleanLines(text, { commands: ['ethtool'] })) {
        const m = /^\s*([a-z][a-z-]*):(?:\s(.*))?$/.exec(line);
        if (!m || m[1] === undefined) continue;
        const key = m[1];
        if (key === 'driver' || !cur) {
          cur = {};
          blocks.push(cur);
        }
        if (!(key in cur)) cur[key] = (m[2] ?? '').trim();
      }
      return blocks.map(infoFromFields);
    },
    () => [],
  );
}

/** Parses `ethtool -i <if>` (the first block). */
export function parseEthtoolInfo(text: string): EthtoolInfoFacts {
  return parseEthtoolInfoAll(text)[0] ?? { fields: {} };
}
