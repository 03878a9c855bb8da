/**
 * `mokutil --sb-state` (mokutil 0.6, jammy): `SecureBoot enabled` / `SecureBoot disabled` from the
 * EFI variables (source-derived). The lab's servers boot UEFI; Secure Boot is off unless a scenario
 * turns it on (machine.nvidia.secureBoot).
 */
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

export const mokutil: Tool = {
  name: 'mokutil',
  path: '/usr/bin/mokutil',
  // shim-signed depends on mokutil; grub-efi-amd64-signed is on every UEFI Ubuntu server.
  packages: ['mokutil', 'shim-signed', 'grub-efi-amd64-signed'],
  run(args, { machine }) {
    if (args.includes('--sb-state')) return ok(`SecureBoot ${machine.nvidia?.secureBoot ? 'enabled' : 'disabled'}\n`);
    return fail(255, 'Usage:\n  mokutil OPTIONS [ARGS...]\n');
  },
};
