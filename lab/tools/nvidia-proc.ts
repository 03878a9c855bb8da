/**
 * /proc/driver/nvidia, present while the nvidia module is loaded. `version` follows the two real
 * formats: open (fixtures/h200-x2/proc_driver_nvidia_version.txt: `NVRM version: NVIDIA UNIX Open
 * Kernel Module for x86_64  <ver>  Release Build  (<user>@<host>)  <date>`) and proprietary
 * (fixtures/corpus/proc-driver-nvidia-version__proprietary-515-and-580.txt: `NVRM version: NVIDIA
 * UNIX x86_64 Kernel Module  <ver>  <date>`), each followed by the GCC line with its trailing space.
 * `gpus/<bdf>/information` is source-derived (nv-procfs.c).
 */
import { dir, file, type VNode } from '../fs/vfs.js';
import { nvrmLine } from '../model/nvidia.js';
import type { Machine } from '../model/types.js';

/** jammy's gcc, which DKMS (and Ubuntu's prebuilt modules) compile the module with. */
const GCC = 'GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) ';

export function procDriverVersion(m: Machine): string | undefined {
  const l = m.nvidia?.loaded;
  return l ? `${nvrmLine(l)}\n${GCC}\n` : undefined;
}

function information(m: Machine, bdf: string): string {
  const g = m.gpus.find((x) => x.pci === bdf);
  const irq = m.pci.find((p) => p.bdf === bdf)?.irq ?? 0;
  return [
    `Model: \t\t ${g?.name ?? 'NVIDIA L20'}`,
    `IRQ:   \t\t ${irq}`,
    `GPU UUID: \t ${g?.uuid ?? ''}`,
    `Video BIOS: \t ${(g?.vbios ?? '').toLowerCase()}`,
    'Bus Type: \t PCIe',
    'DMA Size: \t 52 bits',
    'DMA Mask: \t 0xfffffffffffff',
    `Bus Location: \t ${bdf}`,
    `Device Minor: \t ${g?.index ?? 0}`,
    'GPU Excluded:\t No',
    '',
  ].join('\n');
}

/** Entries for /proc/driver: `nvidia` while the module is loaded, nothing otherwise. */
export function nvidiaProcEntries(m: Machine): Record<string, VNode> {
  const version = procDriverVersion(m);
  if (version === undefined) return {};
  return {
    nvidia: dir(() => ({
      version: file(() => procDriverVersion(m) ?? ''),
      gpus: dir(() =>
        Object.fromEntries(m.gpus.map((g) => [g.pci, dir(() => ({ information: file(() => information(m, g.pci)) }))])),
      ),
      params: file(
        () =>
          'ResmanDebugLevel: 4294967295\nRmLogonRC: 1\nModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\n',
      ),
    })),
  };
}
