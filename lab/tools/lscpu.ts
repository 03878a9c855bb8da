/**
 * lscpu (util-linux 2.37.2, Ubuntu 22.04): the sectioned tree layout introduced in 2.37, as text
 * or JSON. JSON is written the way libsmartcols' jsonwrt of 2.37 writes it (3-space indent,
 * siblings joined as `},{`, empty data as null) — source-derived, no real 2.37 JSON capture is in
 * the corpus; the field set is that of a real Sapphire Rapids host.
 */
import type { Machine } from '../model/types.js';
import { numaCpuList } from '../fs/sysfs.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

interface Row {
  field: string;
  data: string | null;
  children?: Row[];
}

const leaf = (field: string, data: string | null): Row => ({ field, data });

function size(kib: number, instances: number): string {
  const total = kib * instances;
  const units = ['KiB', 'MiB', 'GiB'];
  let v = total;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const num = Number.isInteger(v) ? String(v) : v.toFixed(1).replace(/\.0$/, '');
  return `${num} ${units[u]} (${instances} instance${instances === 1 ? '' : 's'})`;
}

function rows(m: Machine): Row[] {
  const c = m.cpu;
  const cores = c.sockets * c.coresPerSocket;
  const cpus = cores * c.threadsPerCore;
  const nodes = [...new Set(m.pci.map((p) => p.numaNode))].sort();
  return [
    {
      field: 'Architecture:',
      data: 'x86_64',
      children: [
        leaf('CPU op-mode(s):', '32-bit, 64-bit'),
        leaf('Address sizes:', c.addressSizes),
        leaf('Byte Order:', 'Little Endian'),
      ],
    },
    { field: 'CPU(s):', data: String(cpus), children: [leaf('On-line CPU(s) list:', `0-${cpus - 1}`)] },
    {
      field: 'Vendor ID:',
      data: c.vendor,
      children: [
        {
          field: 'Model name:',
          data: c.modelName,
          children: [
            leaf('CPU family:', String(c.family)),
            leaf('Model:', String(c.model)),
            leaf('Thread(s) per core:', String(c.threadsPerCore)),
            leaf('Core(s) per socket:', String(c.coresPerSocket)),
            leaf('Socket(s):', String(c.sockets)),
            leaf('Stepping:', String(c.stepping)),
            leaf('CPU max MHz:', c.maxMHz),
            leaf('CPU min MHz:', c.minMHz),
            leaf('BogoMIPS:', c.bogoMips),
            leaf('Flags:', c.flags),
          ],
        },
      ],
    },
    { field: 'Virtualization features:', data: null, children: [leaf('Virtualization:', 'VT-x')] },
    {
      field: 'Caches (sum of all):',
      data: null,
      children: [
        leaf('L1d:', size(c.cacheKiB.l1d, cores)),
        leaf('L1i:', size(c.cacheKiB.l1i, cores)),
        leaf('L2:', size(c.cacheKiB.l2, cores)),
        leaf('L3:', size(c.cacheKiB.l3, c.sockets)),
      ],
    },
    {
      field: 'NUMA:',
      data: null,
      children: [
        leaf('NUMA node(s):', String(nodes.length)),
        ...nodes.map((n) => leaf(`NUMA node${n} CPU(s):`, numaCpuList(m, n))),
      ],
    },
    { field: 'Vulnerabilities:', data: null, children: c.vulnerabilities.map(([k, v]) => leaf(`${k}:`, v)) },
  ];
}

/** libsmartcols 2.37 JSON writer. */
function toJson(list: Row[]): string {
  let out = '{\n   "lscpu": [\n';
  const ind = (n: number): string => '   '.repeat(n);
  const q = (s: string): string => JSON.stringify(s);
  const emit = (rs: Row[], depth: number): void => {
    rs.forEach((r, i) => {
      out += i === 0 ? `${ind(depth)}{\n` : ',{\n';
      out += `${ind(depth + 1)}"field": ${q(r.field)},\n${ind(depth + 1)}"data": ${r.data === null ? 'null' : q(r.data)}`;
      if (r.children && r.children.length > 0) {
        out += `,\n${ind(depth + 1)}"children": [\n`;
        emit(r.children, depth + 2);
        out += `\n${ind(depth + 1)}]`;
      }
      out += `\n${ind(depth)}}`;
    });
  };
  emit(list, 2);
  return `${out}\n   ]\n}\n`;
}

function toText(list: Row[]): string {
  const flat: Array<[string, string]> = [];
  const walk = (rs: Row[], depth: number): void => {
    for (const r of rs) {
      flat.push([`${'  '.repeat(depth)}${r.field}`, r.data ?? '']);
      if (r.children) walk(r.children, depth + 1);
    }
  };
  walk(list, 0);
  const width = Math.max(...flat.map(([f]) => f.length));
  return flat.map(([f, d]) => `${f.padEnd(width)} ${d}\n`).join('');
}

export const lscpu: Tool = {
  name: 'lscpu',
  path: '/usr/bin/lscpu',
  packages: ['util-linux'],
  run(args, { machine }) {
    const bad = args.find((a) => !['-J', '--json'].includes(a));
    if (bad)
      return fail(
        1,
        `lscpu: invalid option -- '${bad.replace(/^-+/, '')}'\nTry 'lscpu --help' for more information.\n`,
      );
    const list = rows(machine);
    return ok(args.length > 0 ? toJson(list) : toText(list));
  },
};
