/**
 * lspci (pciutils 3.7.0, Ubuntu 22.04): terse lines, -n/-nn ids, -D domains, -d/-s filters, -k
 * drivers and -v/-vv blocks (header lines from lspci.c show_verbose/show_htype0/1, capabilities
 * from lspci-caps.ts). As a normal user only the first 64 bytes of config space are readable, so
 * -vv prints `Capabilities: <access denied>` where the capability list would start.
 */
import type { PciFunction } from '../model/types.js';
import { count, fail, getopt, has, ok, value } from '../shell/args.js';
import { capabilityLines } from './lspci-caps.js';
import { className, progIfName, subsystemName, vendorDeviceName } from './pciids.js';
import type { Tool } from './types.js';

const USAGE = `Usage: lspci [<switches>]\n`;

interface Filter {
  domain?: number;
  bus?: number;
  slot?: number;
  func?: number;
  vendor?: number;
  device?: number;
  cls?: number;
}

function parseSlot(spec: string, f: Filter): string | undefined {
  const m = /^(?:(?:([0-9a-fA-F]*):)?([0-9a-fA-F]*):)?([0-9a-fA-F]*)(?:\.([0-7*]?))?$/.exec(spec);
  if (!m) return 'Invalid slot number';
  const num = (s: string | undefined): number | undefined =>
    s === undefined || s === '' || s === '*' ? undefined : parseInt(s, 16);
  if (m[1] !== undefined) f.domain = num(m[1]);
  if (m[2] !== undefined) f.bus = num(m[2]);
  f.slot = num(m[3]);
  f.func = num(m[4]);
  return undefined;
}

function parseId(spec: string, f: Filter): string | undefined {
  const [v, d, c] = spec.split(':');
  if (d === undefined) return 'Invalid ID';
  const num = (s: string | undefined): number | undefined =>
    s === undefined || s === '' || s === '*' ? undefined : parseInt(s, 16);
  f.vendor = num(v);
  f.device = num(d);
  f.cls = num(c);
  return undefined;
}

function matches(p: PciFunction, f: Filter): boolean {
  const [dom, bus, devfn] = p.bdf.split(':');
  const [dev, fn] = (devfn ?? '').split('.');
  const eq = (want: number | undefined, have: string | undefined): boolean =>
    want === undefined || want === parseInt(have ?? '', 16);
  return (
    eq(f.domain, dom) &&
    eq(f.bus, bus) &&
    eq(f.slot, dev) &&
    eq(f.func, fn) &&
    (f.vendor === undefined || f.vendor === p.vendorId) &&
    (f.device === undefined || f.device === p.deviceId) &&
    (f.cls === undefined || f.cls === p.classCode >> 8)
  );
}

function sizeStr(x: bigint): string {
  const suffix = ['', 'K', 'M', 'G', 'T'];
  let i = 0;
  while (i < suffix.length - 1 && x % 1024n === 0n) {
    x /= 1024n;
    i++;
  }
  return ` [size=${x}${suffix[i]}]`;
}

function terse(p: PciFunction, numeric: number, domains: boolean, verbose: number): string {
  const slot = domains ? p.bdf : p.bdf.slice(5);
  const mixed = numeric >= 2;
  const h4 = (n: number): string => n.toString(16).padStart(4, '0');
  let line: string;
  if (numeric === 1) line = `${slot} ${h4(p.classCode >> 8)}: ${h4(p.vendorId)}:${h4(p.deviceId)}`;
  else line = `${slot} ${className(p, mixed)}: ${vendorDeviceName(p, mixed)}`;
  if (p.revision) line += ` (rev ${p.revision.toString(16).padStart(2, '0')})`;
  if (verbose > 0) {
    const progIf = p.classCode & 0xff;
    const name = progIfName(p);
    if (progIf || name) line += ` (prog-if ${progIf.toString(16).padStart(2, '0')}${name ? ` [${name}]` : ''})`;
  }
  return line;
}

function kernelLines(p: PciFunction): string[] {
  const out: string[] = [];
  if (p.driver) out.push(`\tKernel driver in use: ${p.driver}`);
  if (p.modules.length > 0) out.push(`\tKernel modules: ${p.modules.join(', ')}`);
  return out;
}

function barLines(p: PciFunction, verbose: number): string[] {
  const out = p.bars.map((b) => {
    const addr = b.address.toString(16).padStart(8, '0');
    const region = verbose > 1 ? `Region ${b.index}: ` : '';
    if (b.kind === 'io') return `\t${region}I/O ports at ${addr}${sizeStr(b.size)}`;
    const kind = `${b.kind === 'mem64' ? '64-bit' : '32-bit'}, ${b.prefetchable ? 'prefetchable' : 'non-prefetchable'}`;
    return `\t${region}Memory at ${addr} (${kind})${sizeStr(b.size)}`;
  });
  if (p.rom)
    out.push(
      `\tExpansion ROM at ${p.rom.address.toString(16).padStart(8, '0')}${p.rom.disabled ? ' [disabled]' : ''}${sizeStr(BigInt(p.rom.size))}`,
    );
  return out;
}

function bridgeLines(p: PciFunction, busHex: (n: number) => string): string[] {
  const b = p.bridge;
  if (!b) return [];
  const primary = parseInt(p.bdf.slice(5, 7), 16);
  const out = [
    `\tBus: primary=${busHex(primary)}, secondary=${busHex(b.secondary)}, subordinate=${busHex(b.subordinate)}, sec-latency=0`,
  ];
  out.push('\tI/O behind bridge: 0000f000-00000fff [disabled]');
  if (b.mem) {
    const [lo, hi] = b.mem;
    out.push(
      `\tMemory behind bridge: ${lo.toString(16).padStart(8, '0')}-${hi.toString(16).padStart(8, '0')}${sizeStr(BigInt(hi - lo + 1))}`,
    );
  } else out.push('\tMemory behind bridge: fff00000-000fffff [disabled]');
  if (b.pref) {
    const [lo, hi] = b.pref;
    out.push(
      `\tPrefetchable memory behind bridge: ${lo.toString(16).padStart(16, '0')}-${hi.toString(16).padStart(16, '0')}${sizeStr(hi - lo + 1n)}`,
    );
  } else out.push('\tPrefetchable memory behind bridge: 00000000fff00000-00000000000fffff [disabled]');
  out.push('\tSecondary status: 66MHz- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- <SERR- <PERR-');
  out.push('\tBridgeCtl: Parity- SERR+ NoISA- VGA- VGA16+ MAbort- >Reset- FastB2B-');
  out.push('\t\tPriDiscTmr- SecDiscTmr- DiscTmrStat- DiscTmrSERREn-');
  return out;
}

function verboseBlock(p: PciFunction, numeric: number, domains: boolean, verbose: number, root: boolean): string[] {
  const lines = [terse(p, numeric, domains, verbose)];
  const type0 = !p.bridge;
  if (type0 && p.subVendorId && p.subVendorId !== 0xffff) lines.push(`\tSubsystem: ${subsystemName(p, numeric >= 2)}`);
  if (p.slot !== undefined) lines.push(`\tPhysical Slot: ${p.slot}`);
  const master = p.driver !== undefined || p.kind === 'root-port';
  if (verbose > 1) {
    const io = p.kind === 'root-port' || p.kind === 'bmc-vga' ? '+' : '-';
    lines.push(
      `\tControl: I/O${io} Mem+ BusMaster${master ? '+' : '-'} SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR${p.bridge ? '+' : '-'} FastB2B- DisINTx${p.driver && p.kind !== 'gpu' ? '+' : '-'}`,
    );
    lines.push(
      '\tStatus: Cap+ 66MHz- UDF- FastB2B- ParErr- DEVSEL=fast >TAbort- <TAbort- <MAbort- >SERR- <PERR- INTx-',
    );
    if (master) lines.push(p.bridge ? '\tLatency: 0, Cache Line Size: 64 bytes' : '\tLatency: 0');
    if (p.irq) lines.push(`\tInterrupt: pin A routed to IRQ ${p.irq}`);
  } else {
    lines.push(
      `\tFlags: ${master ? 'bus master, ' : ''}fast devsel${master ? ', latency 0' : ''}${p.irq ? `, IRQ ${p.irq}` : ''}, NUMA node ${p.numaNode}`,
    );
  }
  if (verbose > 1) lines.push(`\tNUMA node: ${p.numaNode}`);
  if (type0) lines.push(...barLines(p, verbose));
  else lines.push(...bridgeLines(p, (n) => n.toString(16).padStart(2, '0')));
  if (verbose > 1) {
    if (!root) lines.push('\tCapabilities: <access denied>');
    else lines.push(...capabilityLines(p));
  } else if (root) {
    lines.push(
      ...capabilityLines(p)
        .filter((l) => l.startsWith('\tCapabilities: '))
        .map((l) => l.replace(/^(\tCapabilities: \[[0-9a-f]+) v\d+\]/, '$1]')),
    );
  } else lines.push('\tCapabilities: <access denied>');
  lines.push(...kernelLines(p));
  return lines;
}

export const lspci: Tool = {
  name: 'lspci',
  path: '/usr/bin/lspci',
  packages: ['pciutils'],
  run(args, { machine, root }) {
    const p = getopt(args, 'nvbxs:d:ti:mgp:qkMDQA:O:PFH:');
    if (p.error || p.operands.length > 0) {
      const why = p.error ? `lspci: invalid option -- '${p.error.option}'\n` : '';
      return fail(2, why + USAGE);
    }
    const filter: Filter = {};
    const slot = value(p, 's');
    const id = value(p, 'd');
    const err =
      (slot !== undefined ? parseSlot(slot, filter) : undefined) ??
      (id !== undefined ? parseId(id, filter) : undefined);
    if (err) return fail(1, `lspci: -${slot !== undefined ? 's' : 'd'}: ${err}\n`);
    const numeric = count(p, 'n');
    const verbose = count(p, 'v');
    const kernel = has(p, 'k');
    const domains = has(p, 'D') || machine.pci.some((f) => !f.bdf.startsWith('0000:'));
    const devices = machine.pci.filter((f) => matches(f, filter));
    const out: string[] = [];
    for (const dev of devices) {
      if (verbose > 0) {
        out.push(...verboseBlock(dev, numeric, domains, verbose, root), '');
      } else {
        out.push(terse(dev, numeric, domains, 0));
        if (kernel) {
          if (dev.subVendorId && !dev.bridge) out.push(`\tSubsystem: ${subsystemName(dev, numeric >= 2)}`);
          out.push(...kernelLines(dev));
        }
      }
    }
    return ok(out.length > 0 ? `${out.join('\n')}\n` : '');
  },
};
