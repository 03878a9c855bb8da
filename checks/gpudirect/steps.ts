/**
 * gpudirect apply steps (docs/STAGES.md §3.8): persist nvidia-peermem where it is the path, turn ACS off
 * from a boot unit (setpci writes last until the next reboot), and put the IOMMU in passthrough.
 */
import type { StepDef } from '../../src/engine/types.js';
import { kernelAtLeast, type GpudirectFacts } from './facts.js';
import { ACS_SCRIPT_PATH, ACS_UNIT, ACS_UNIT_PATH, IOMMU_GRUB_FILE, PEERMEM_CONF } from './probes.js';

export const PEERMEM_CONTENT =
  '# l20-setup: GPUDirect RDMA through the OFED/DOCA peer-memory ib_core (proprietary driver)\nnvidia-peermem\n';

/** ExecStart names the interpreter, so the boot unit still runs if the script lost its exec bit (copied by hand, config management). */
export const ACS_UNIT_CONTENT = `[Unit]
Description=l20-setup: PCIe ACS off above the GPUs and fabric NICs (P2P and GPUDirect RDMA)
Before=nvidia-persistenced.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh ${ACS_SCRIPT_PATH}

[Install]
WantedBy=multi-user.target
`;

export const IOMMU_GRUB_CONTENT =
  '# l20-setup: IOMMU passthrough for GPU and NIC DMA (RULES.md R36)\nGRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt"\n';

/** The boot script: one setpci per bridge (BDFs are discovered, never typed in). */
export function acsScript(bridges: readonly string[]): string {
  return [
    '#!/bin/sh',
    '# l20-setup: ACS redirect off on the PCIe bridges above the GPUs and fabric NICs (RULES.md R36), so',
    '# P2P and GPUDirect RDMA stay below the switches instead of detouring through the root complex.',
    '# The BIOS turns it back on at every boot; l20-acs-off.service runs this before nvidia-persistenced.',
    'set -e',
    ...bridges.map((b) => `setpci -s ${b} ECAP_ACS+0x6.w=0000`),
    '',
  ].join('\n');
}

export const peermem: StepDef<GpudirectFacts> = {
  id: 'gpudirect.peermem',
  title: 'load and persist nvidia-peermem (peermem path only)',
  danger: 'safe',
  guards: ['gpudirect.path'],
  plan(ctx) {
    const f = ctx.facts;
    // DMA-BUF needs nothing loaded; on the inbox stack peermem cannot load at all.
    if (!f.driver || (f.driver.open && kernelAtLeast(f.kernel, 5, 12)) || f.stack === 'inbox') return null;
    return {
      summary: `${PEERMEM_CONF} and modprobe nvidia-peermem (${f.stack === 'doca' ? 'DOCA-OFED' : 'MLNX_OFED'} ib_core, proprietary driver)`,
      files: [{ path: PEERMEM_CONF, content: PEERMEM_CONTENT, mode: 0o644 }],
      commands: [{ command: { argv: ['modprobe', 'nvidia-peermem'] } }],
      rollback: [{ command: { argv: ['modprobe', '-r', 'nvidia-peermem'] } }],
    };
  },
};

export const acsOff: StepDef<GpudirectFacts> = {
  id: 'gpudirect.acs-off',
  title: 'ACS off from a boot unit',
  danger: 'disruptive',
  guards: ['gpudirect.acs'],
  plan(ctx) {
    const f = ctx.facts;
    // Devices passed through to VMs rely on ACS for isolation.
    if (f.vfio.length > 0) return null;
    const bridges = f.bridges.filter((b) => b.acsCtlLine !== undefined).map((b) => b.bdf);
    if (bridges.length === 0) return null;
    return {
      summary: `setpci ACS off on ${bridges.length} bridges now and at every boot (${ACS_UNIT}, before nvidia-persistenced)`,
      files: [
        { path: ACS_SCRIPT_PATH, content: acsScript(bridges), mode: 0o755 },
        { path: ACS_UNIT_PATH, content: ACS_UNIT_CONTENT, mode: 0o644 },
      ],
      commands: [
        { command: { argv: ['systemctl', 'daemon-reload'] } },
        { command: { argv: ['systemctl', 'enable', ACS_UNIT] } },
        // restart, not start: a oneshot that already ran stays active and would not run again.
        { command: { argv: ['systemctl', 'restart', ACS_UNIT] } },
      ],
      // ACS comes back from the BIOS at the next boot.
      rollback: [{ command: { argv: ['systemctl', 'disable', ACS_UNIT] } }],
    };
  },
};

export const iommuPt: StepDef<GpudirectFacts> = {
  id: 'gpudirect.iommu-pt',
  title: 'IOMMU passthrough (iommu=pt), reboot',
  danger: 'reboot',
  guards: ['gpudirect.iommu'],
  plan: () => ({
    summary: `iommu=pt in ${IOMMU_GRUB_FILE}, update-grub, reboot`,
    files: [{ path: IOMMU_GRUB_FILE, content: IOMMU_GRUB_CONTENT, mode: 0o644 }],
    commands: [{ command: { argv: ['update-grub'] }, timeoutMs: 5 * 60_000 }],
    reboot: true,
    rollback: [{ command: { argv: ['update-grub'] }, timeoutMs: 5 * 60_000 }],
  }),
};

export const gpudirectSteps: readonly StepDef<GpudirectFacts>[] = [peermem, acsOff, iommuPt];
