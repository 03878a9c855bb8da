/**
 * D13 NVIDIA driver not usable — blocker (docs/RULES.md §3). Read by nvidia-smi (and its CSV / -q forms, which print
 * the same texts): `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver …`,
 * `No devices were found`, `Failed to initialize NVML: Driver/library version mismatch`,
 * `NVRM: No NVIDIA graphics adapter probed!`.
 */
import type { Finding } from '../types.js';

export interface D13Hit {
  line?: number;
  text: string;
}

export function d13NvidiaDriver(hits: readonly D13Hit[]): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const all = hits.map((h) => h.text).join('\n');
  const mismatch = /version mismatch/i.test(all);
  const noDevices = /No devices were found|No NVIDIA graphics adapter probed/i.test(all);
  const hint = mismatch
    ? 'The loaded kernel module and the user-space libraries differ: a driver upgrade without a reboot (unattended-upgrades) is the usual cause; reboot, then hold the driver packages (`apt-mark hold`) on both nodes.'
    : noDevices
      ? 'The module is loaded but sees no GPU: a GPU off the bus (D21: `lspci | grep -i nvidia`, look for `(rev ff)`), or nouveau bound to the device.'
      : 'The kernel module is not loaded: no DKMS build for the running kernel, nouveau, or Secure Boot rejecting the module.';
  return {
    rule: 'D13',
    severity: 'blocker',
    title: 'NVIDIA driver not usable',
    evidence: hits
      .slice(0, 3)
      .map((h) => (h.line !== undefined ? `line ${h.line}: ${h.text}` : h.text))
      .join('\n'),
    fix:
      `${hint} Next, on the host: \`cat /proc/driver/nvidia/version\`, \`dkms status\`, \`mokutil --sb-state\`, \`dmesg | grep NVRM\`. ` +
      'Use one install method (R32).',
    ...(first.line !== undefined ? { line: first.line } : {}),
  };
}
