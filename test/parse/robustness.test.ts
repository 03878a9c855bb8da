/**
 * Every parser over every copied sample (of its own tool or not), seeded random junk and cut texts:
 * none may throw, and every result must satisfy the parser's own schema.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { DpkgQueryFactsSchema, parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { EthtoolFactsSchema, EthtoolInfoFactsSchema, parseEthtool, parseEthtoolInfo } from '../../src/parse/ethtool.js';
import { IpJsonFactsSchema, IpRouteFactsSchema, parseIpJson, parseIpRoute } from '../../src/parse/ip-json.js';
import { IpNeighFactsSchema, LldpFactsSchema, parseIpNeigh, parseLldpNeighbors } from '../../src/parse/lldp.js';
import { LscpuFactsSchema, parseLscpu } from '../../src/parse/lscpu.js';
import { LspciFactsSchema, parseLspci } from '../../src/parse/lspci.js';
import { MeminfoFactsSchema, parseMeminfo } from '../../src/parse/meminfo.js';
import { NvidiaDriverVersionFactsSchema, parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { NvidiaSmiQueryGpuFactsSchema, parseNvidiaSmiQueryGpu } from '../../src/parse/nvidia-smi-query-gpu.js';
import { NvidiaSmiTopoFactsSchema, parseNvidiaSmiTopo } from '../../src/parse/nvidia-smi-topo.js';
import { OfedInfoFactsSchema, parseOfedInfo } from '../../src/parse/ofed-info.js';
import { OsReleaseFactsSchema, parseOsRelease } from '../../src/parse/os-release.js';
import { parseRdmaLink, RdmaLinkFactsSchema } from '../../src/parse/rdma-link.js';
import { parseSysfsNet, SysfsNetFactsSchema } from '../../src/parse/sysfs-net.js';
import { CUTS, loadFixture } from './fixtures.js';

const PARSERS: Array<[string, (t: string) => unknown, z.ZodType]> = [
  ['os-release', parseOsRelease, OsReleaseFactsSchema],
  ['lscpu', parseLscpu, LscpuFactsSchema],
  ['meminfo', parseMeminfo, MeminfoFactsSchema],
  ['lspci', parseLspci, LspciFactsSchema],
  ['ip-json', parseIpJson, IpJsonFactsSchema],
  ['ip-route', parseIpRoute, IpRouteFactsSchema],
  ['sysfs-net', parseSysfsNet, SysfsNetFactsSchema],
  ['rdma-link', parseRdmaLink, RdmaLinkFactsSchema],
  ['ethtool', parseEthtool, EthtoolFactsSchema],
  ['ethtool-i', parseEthtoolInfo, EthtoolInfoFactsSchema],
  ['topo', parseNvidiaSmiTopo, NvidiaSmiTopoFactsSchema],
  ['ofed_info', parseOfedInfo, OfedInfoFactsSchema],
  ['driver-version', parseNvidiaDriverVersion, NvidiaDriverVersionFactsSchema],
  ['dpkg-query', parseDpkgQuery, DpkgQueryFactsSchema],
  ['query-gpu', parseNvidiaSmiQueryGpu, NvidiaSmiQueryGpuFactsSchema],
  ['lldp', parseLldpNeighbors, LldpFactsSchema],
  ['ip-neigh', parseIpNeigh, IpNeighFactsSchema],
];

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const SAMPLES = ['corpus', 'h200-x2'].flatMap((dir) => readdirSync(join(FIXTURES, dir)).map((f) => `${dir}/${f}`));

// Deterministic junk: a small LCG over printable, control and structural characters.
function junk(seed: number, length: number): string {
  const alphabet = 'abcXYZ019 :\t\n\r[]{}",.-_/()=#$\u001b\u0000\u00ff€✓';
  let x = seed;
  let out = '';
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[x % alphabet.length];
  }
  return out;
}

describe('parsers never throw and always satisfy their schema', () => {
  it.each(PARSERS)('%s over every sample, cut at several points', (_name, parse, schema) => {
    for (const sample of SAMPLES) {
      const text = loadFixture(sample);
      for (const t of [text, ...CUTS.map((c) => text.slice(0, Math.floor(text.length * c)))]) {
        const out = parse(t);
        expect(schema.safeParse(out).success, `${sample}`).toBe(true);
      }
    }
  });

  it.each(PARSERS)('%s over seeded junk', (_name, parse, schema) => {
    for (let seed = 1; seed <= 200; seed++) {
      const out = parse(junk(seed, (seed * 37) % 600));
      expect(schema.safeParse(out).success).toBe(true);
    }
  });
});
