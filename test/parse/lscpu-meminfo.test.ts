import { describe, expect, it } from 'vitest';
import { parseLscpu } from '../../src/parse/lscpu.js';
import { parseMeminfo } from '../../src/parse/meminfo.js';
import { ansiWrap, CUTS, toCrlf, truncateAt, withPrompt } from './fixtures.js';

// `lscpu -J` from util-linux 2.37.2 (Ubuntu 22.04) on 2 × Xeon Platinum 8462Y+: hierarchical entries
// under `children`, section headers with `"data": null`, 3-space indentation. Vulnerabilities cut
// down to two entries.
const LSCPU_237 = `{
   "lscpu": [
      {
         "field": "Architecture:",
         "data": "x86_64",
         "children": [
            {
               "field": "CPU op-mode(s):",
               "data": "32-bit, 64-bit"
            },{
               "field": "Address sizes:",
               "data": "46 bits physical, 57 bits virtual"
            },{
               "field": "Byte Order:",
               "data": "Little Endian"
            }
         ]
      },{
         "field": "CPU(s):",
         "data": "128",
         "children": [
            {
               "field": "On-line CPU(s) list:",
               "data": "0-127"
            }
         ]
      },{
         "field": "Vendor ID:",
         "data": "GenuineIntel",
         "children": [
            {
               "field": "Model name:",
               "data": "Intel(R) Xeon(R) Platinum 8462Y+",
               "children": [
                  {
                     "field": "CPU family:",
                     "data": "6"
                  },{
                     "field": "Model:",
                     "data": "143"
                  },{
                     "field": "Thread(s) per core:",
                     "data": "2"
                  },{
                     "field": "Core(s) per socket:",
                     "data": "32"
                  },{
                     "field": "Socket(s):",
                     "data": "2"
                  },{
                     "field": "Stepping:",
                     "data": "8"
                  },{
                     "field": "CPU max MHz:",
                     "data": "4100.0000"
                  },{
                     "field": "CPU min MHz:",
                     "data": "800.0000"
                  },{
                     "field": "BogoMIPS:",
                     "data": "5600.00"
                  }
               ]
            }
         ]
      },{
         "field": "Virtualization features:",
         "data": null,
         "children": [
            {
               "field": "Virtualization:",
               "data": "VT-x"
            }
         ]
      },{
         "field": "Caches (sum of all):",
         "data": null,
         "children": [
            {
               "field": "L1d:",
               "data": "3 MiB (64 instances)"
            },{
               "field": "L3:",
               "data": "120 MiB (2 instances)"
            }
         ]
      },{
         "field": "NUMA:",
         "data": null,
         "children": [
            {
               "field": "NUMA node(s):",
               "data": "2"
            },{
               "field": "NUMA node0 CPU(s):",
               "data": "0-31,64-95"
            },{
               "field": "NUMA node1 CPU(s):",
               "data": "32-63,96-127"
            }
         ]
      },{
         "field": "Vulnerabilities:",
         "data": null,
         "children": [
            {
               "field": "Itlb multihit:",
               "data": "Not affected"
            },{
               "field": "Spectre v2:",
               "data": "Mitigation; Enhanced IBRS, IBPB conditional, RSB filling, PBRSB-eIBRS SW sequence"
            }
         ]
      }
   ]
}
`;

// util-linux 2.34 (Ubuntu 20.04): flat list, no children.
const LSCPU_FLAT = `{
   "lscpu": [
      {"field": "Architecture:", "data": "x86_64"},
      {"field": "CPU(s):", "data": "96"},
      {"field": "Thread(s) per core:", "data": "2"},
      {"field": "Core(s) per socket:", "data": "24"},
      {"field": "Socket(s):", "data": "2"},
      {"field": "NUMA node(s):", "data": "2"},
      {"field": "Vendor ID:", "data": "GenuineIntel"},
      {"field": "Model name:", "data": "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz"},
      {"field": "NUMA node0 CPU(s):", "data": "0-23,48-71"},
      {"field": "NUMA node1 CPU(s):", "data": "24-47,72-95"}
   ]
}`;

const EXPECTED = {
  architecture: 'x86_64',
  vendorId: 'GenuineIntel',
  modelName: 'Intel(R) Xeon(R) Platinum 8462Y+',
  sockets: 2,
  coresPerSocket: 32,
  threadsPerCore: 2,
  cpus: 128,
  onlineCpus: '0-127',
  numaNodes: 2,
  numaNodeCpus: { '0': '0-31,64-95', '1': '32-63,96-127' },
};

describe('parseLscpu', () => {
  it('reads util-linux 2.37 nested JSON', () => {
    const f = parseLscpu(LSCPU_237);
    expect(f).toMatchObject(EXPECTED);
    expect(f.fields['L3']).toBe('120 MiB (2 instances)');
    expect(f.fields['Caches (sum of all)']).toBeUndefined();
    expect(f.error).toBeUndefined();
  });

  it('reads the flat pre-2.37 JSON', () => {
    expect(parseLscpu(LSCPU_FLAT)).toMatchObject({
      sockets: 2,
      coresPerSocket: 24,
      cpus: 96,
      numaNodes: 2,
      numaNodeCpus: { '1': '24-47,72-95' },
    });
  });

  it('reads plain lscpu text as a fallback, omitting `-` counts', () => {
    const text = [
      'Architecture:             aarch64',
      '  CPU op-mode(s):         64-bit',
      'CPU(s):                   20',
      'Vendor ID:                ARM',
      '  Model name:             Cortex-X925',
      '    Socket(s):            -',
      '    Core(s) per cluster:  10',
    ].join('\n');
    const f = parseLscpu(text);
    expect(f).toMatchObject({ architecture: 'aarch64', cpus: 20, modelName: 'Cortex-X925' });
    expect(f.sockets).toBeUndefined();
  });

  it('survives CRLF, ANSI and a prompt', () => {
    for (const v of [toCrlf(LSCPU_237), ansiWrap(LSCPU_237), withPrompt(LSCPU_237, 'lscpu -J')]) {
      expect(parseLscpu(v)).toMatchObject(EXPECTED);
    }
  });

  it('recovers complete fields from cut JSON and never throws', () => {
    for (const cut of CUTS) {
      const f = parseLscpu(truncateAt(LSCPU_237, cut));
      expect(f.fields).toBeDefined();
      for (const [k, v] of Object.entries(f.fields)) expect(v).toBe(parseLscpu(LSCPU_237).fields[k]);
    }
    expect(parseLscpu(truncateAt(LSCPU_237, 0.5))).toMatchObject({ architecture: 'x86_64', cpus: 128, sockets: 2 });
    expect(parseLscpu('').error).toBe('empty output');
    expect(parseLscpu('{"lscpu": 5}').fields).toEqual({});
    expect(parseLscpu('bash: lscpu: command not found').error).toBeDefined();
  });
});

// /proc/meminfo head of a 1 TiB host (kernel 5.15).
const MEMINFO = `MemTotal:       1056446876 kB
MemFree:        1021553316 kB
MemAvailable:   1027795504 kB
Buffers:          226808 kB
Cached:          9380876 kB
SwapCached:            0 kB
SwapTotal:       8388604 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap1G:    1039138816 kB
`;

describe('parseMeminfo', () => {
  it('reads the whole file', () => {
    expect(parseMeminfo(MEMINFO)).toMatchObject({
      memTotalKiB: 1056446876,
      memFreeKiB: 1021553316,
      memAvailableKiB: 1027795504,
      swapTotalKiB: 8388604,
      hugePagesTotal: 0,
      hugePageSizeKiB: 2048,
    });
    expect(parseMeminfo(MEMINFO).fields['DirectMap1G']).toBe(1039138816);
  });

  it('reads the grep MemTotal line the inventory runs, with prompt and CRLF', () => {
    const line = 'MemTotal:       1056446876 kB\n';
    for (const v of [
      line,
      toCrlf(line),
      withPrompt(line, 'grep MemTotal /proc/meminfo'),
      ansiWrap(line),
      '/proc/meminfo:MemTotal:  1056446876 kB',
    ]) {
      expect(parseMeminfo(v).memTotalKiB).toBe(1056446876);
    }
  });

  it('drops a line cut before its unit and never throws', () => {
    expect(parseMeminfo('MemTotal:       10564').memTotalKiB).toBeUndefined();
    for (const cut of CUTS) {
      const f = parseMeminfo(truncateAt(MEMINFO, cut));
      for (const [k, v] of Object.entries(f.fields)) expect(v).toBe(parseMeminfo(MEMINFO).fields[k]);
    }
    expect(parseMeminfo('')).toEqual({ fields: {} });
  });
});
