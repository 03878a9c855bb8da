/**
 * setpci (pciutils 3.7) on the ACS control register, the one register the stages touch:
 * `setpci -s <bdf> ECAP_ACS+0x6.w[=value[:mask]]`. ACS Control is the 16-bit word at offset 6 of
 * the ACS extended capability; bits 0–6 are SrcValid, TransBlk, ReqRedir, CmpltRedir, UpstreamFwd,
 * EgressCtrl, DirectTrans (the order lspci prints). A read prints the word as 4 hex digits. Writes
 * change the running device only: the BIOS setting returns at the next boot (model/nvidia boot hook).
 * Messages are source-derived (setpci.c).
 */
import type { AcsFlags } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

const BITS: Array<keyof AcsFlags> = [
  'srcValid',
  'transBlk',
  'reqRedir',
  'cmpltRedir',
  'upstreamFwd',
  'egressCtrl',
  'directTrans',
];

export function acsWord(f: AcsFlags): number {
  return BITS.reduce((w, k, i) => (f[k] ? w | (1 << i) : w), 0);
}

export function acsFlags(word: number): AcsFlags {
  return Object.fromEntries(BITS.map((k, i) => [k, (word & (1 << i)) !== 0])) as unknown as AcsFlags;
}

function normalize(sel: string): string {
  return /^[0-9a-f]{4}:/i.test(sel) ? sel.toLowerCase() : `0000:${sel.toLowerCase()}`;
}

export const setpci: Tool = {
  name: 'setpci',
  path: '/usr/bin/setpci',
  packages: ['pciutils'],
  run(args, { machine: m, root }) {
    let sel: string | undefined;
    const ops: string[] = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      if (a === '-s') sel = args[++i];
      else if (a.startsWith('-s')) sel = a.slice(2);
      else if (a === '-v' || a === '-f' || a === '-D') continue;
      else ops.push(a);
    }
    if (!sel) return fail(1, 'setpci: No devices selected for operation\n');
    if (ops.length === 0) return fail(1, 'setpci: Missing operation\n');
    const bdf = normalize(sel);
    const dev = m.pci.find((p) => p.bdf === bdf);
    if (!dev) return ok('', `setpci: Warning: No devices selected for "${sel}".\n`);
    let out = '';
    for (const op of ops) {
      const mm = /^ECAP_ACS\+0x0*6\.w(?:=([0-9a-fA-F]{1,4})(?::([0-9a-fA-F]{1,4}))?)?$/.exec(op);
      if (!mm) return fail(1, `setpci: Unknown register "${op.split(/[=.+]/)[0]}".\n`);
      if (!dev.acs) return fail(1, `setpci: Capability ECAP_ACS not found on ${bdf}\n`);
      if (mm[1] === undefined) {
        out += `${acsWord(dev.acs.ctl).toString(16).padStart(4, '0')}\n`;
        continue;
      }
      // Config space beyond the first 64 bytes is root-only (the sysfs config file).
      if (!root) return fail(1, `setpci: Unable to open /sys/bus/pci/devices/${bdf}/config: Permission denied\n`);
      const value = parseInt(mm[1], 16);
      const mask = mm[2] !== undefined ? parseInt(mm[2], 16) : 0xffff;
      const word = (acsWord(dev.acs.ctl) & ~mask) | (value & mask);
      dev.acs.ctl = acsFlags(word);
      m.revision++;
    }
    return ok(out);
  },
};
