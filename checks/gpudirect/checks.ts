/** gpudirect verdicts (docs/STAGES.md §3.8; R34 GDR path, R36 ACS/IOMMU, R37 P2P, R39 locality). */
import type { CheckDef, StageContext, Verdict } from '../../src/engine/types.js';
import { toolMissingVerdict } from '../../src/engine/probe-health.js';
import { kernelAtLeast, type GpudirectFacts } from './facts.js';

const STACK_NAME = { inbox: 'inbox rdma-core', mlnx_ofed: 'MLNX_OFED', doca: 'DOCA-OFED' } as const;

function dmabufReady(f: GpudirectFacts): boolean {
  return f.driver?.open === true && kernelAtLeast(f.kernel, 5, 12) && f.dmabufDisabled.length === 0;
}

function pathEvidence(f: GpudirectFacts): string {
  return [
    f.driver?.line ?? '/proc/driver/nvidia/version: no module loaded',
    `kernel ${f.kernel ?? 'release not read (uname -r failed)'}`,
    f.stackEvidence,
    `/proc/modules nvidia_peermem: ${
      f.peermem.lines.join(' | ') || (f.peermem.read ? 'not loaded' : 'could not read /proc/modules')
    }`,
    `persisted: ${f.persisted.map((p) => `${p.file}: ${p.line}`).join(', ') || '(not in modules-load.d or /etc/modules)'}`,
    ...(f.dmabufDisabled.length > 0 ? [`NCCL_DMABUF_ENABLE: ${f.dmabufDisabled.join(', ')}`] : []),
    ...(f.dmesg.peermemErrors.length > 0 ? [`dmesg: ${f.dmesg.peermemErrors.join(' | ')}`] : []),
  ].join('\n');
}

export const pathCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.path',
  title: 'GPUDirect RDMA path (DMA-BUF or nvidia-peermem)',
  scope: 'host',
  needs: ['nvidia-version', 'modules', 'modules-load', 'ofed-info'],
  evaluate(f): Verdict {
    const evidence = pathEvidence(f);
    const rule = 'R34';
    if (!f.driver)
      return { status: 'skip', rule, summary: 'no NVIDIA driver loaded (gpu-driver stage first)', evidence };
    if (!f.peermem.read) {
      return {
        status: 'error',
        rule,
        summary: 'cannot tell: /proc/modules could not be read (is nvidia_peermem loaded?)',
        evidence,
        fix: 'check `cat /proc/modules` on the host',
      };
    }
    if (dmabufReady(f)) {
      return {
        status: 'pass',
        rule,
        summary: `DMA-BUF: open kernel module ${f.driver.version} on kernel ${f.kernel}; NCCL picks it automatically${f.peermem.loaded ? ' (nvidia_peermem loaded too, unused)' : ''}`,
        evidence,
      };
    }
    if (f.driver.open && f.dmabufDisabled.length > 0) {
      return {
        status: 'fail',
        rule,
        summary: `DMA-BUF turned off: ${f.dmabufDisabled.join(', ')}`,
        evidence,
        fix: 'remove NCCL_DMABUF_ENABLE=0 (the nccl stage writes /etc/nccl.conf without it)',
      };
    }
    const configured = f.peermem.loaded || f.persisted.length > 0;
    if (configured) {
      if (f.stack === 'inbox') {
        return {
          status: 'fail',
          rule,
          summary:
            "nvidia-peermem configured on the inbox RDMA stack: its ib_core has no peer-memory API (`could not insert 'nvidia_peermem': Invalid argument`)",
          evidence,
          fix: 'use DMA-BUF instead: the open kernel module (apply gpu-driver.install), and drop nvidia-peermem from modules-load.d',
        };
      }
      if (!f.peermem.loaded || f.dmesg.peermemErrors.length > 0) {
        return {
          status: 'fail',
          rule,
          summary: `nvidia-peermem is configured${f.persisted[0] ? ` (${f.persisted[0].file})` : ''} but not loaded${f.dmesg.peermemErrors.length ? ': the kernel refused it' : ''}`,
          evidence,
          fix: `apply gpudirect.peermem (modprobe nvidia-peermem); after a kernel or ${STACK_NAME[f.stack]} update rebuild the driver's DKMS modules (dkms autoinstall) first`,
        };
      }
      if (f.persisted.length === 0) {
        return {
          status: 'warn',
          rule,
          summary: 'nvidia_peermem is loaded but not persisted: the next boot has no GPUDirect RDMA',
          evidence,
          fix: 'apply gpudirect.peermem (/etc/modules-load.d/nvidia-peermem.conf)',
        };
      }
      return {
        status: 'pass',
        rule,
        summary: `nvidia-peermem: loaded on the ${STACK_NAME[f.stack]} ib_core, persisted in ${f.persisted[0]!.file}`,
        evidence,
      };
    }
    const why = !f.driver.open
      ? 'the proprietary module has no DMA-BUF path'
      : f.kernel
        ? `kernel ${f.kernel} is older than 5.12`
        : 'the kernel release was not read (DMA-BUF needs 5.12)';
    return {
      status: 'warn',
      rule,
      summary: `no GPUDirect RDMA path (${why}, nvidia-peermem not loaded): NCCL stages GPU data through host memory, fine at 25GbE but costs CPU and latency`,
      evidence,
      fix:
        f.stack === 'inbox'
          ? 'apply gpu-driver.install (open kernel module → DMA-BUF)'
          : `apply gpudirect.peermem (nvidia-peermem on the ${STACK_NAME[f.stack]} ib_core), or the open driver (gpu-driver.install) for DMA-BUF`,
    };
  },
};

export const peermemDmesgCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.peermem-dmesg',
  title: 'nvidia-peermem load errors in the kernel log',
  scope: 'host',
  needs: ['dmesg', 'modules', 'modules-load'],
  evaluate(f) {
    const peermemPath = f.peermem.loaded || f.persisted.length > 0 || f.dmesg.peermemLines.length > 0;
    if (!f.dmesg.ran) {
      return peermemPath
        ? {
            status: 'error',
            rule: 'R34',
            summary: 'cannot tell: the kernel log could not be read (sudo dmesg)',
            evidence: f.dmesg.evidence,
            fix: 'sudo dmesg needs passwordless sudo (os.sudo)',
          }
        : {
            status: 'skip',
            rule: 'R34',
            summary: 'the peermem path is not used (kernel log not read)',
            evidence: f.dmesg.evidence,
          };
    }
    if (f.dmesg.peermemErrors.length > 0) {
      return {
        status: f.peermem.loaded ? 'warn' : 'fail',
        rule: 'R34',
        summary: `nvidia-peermem failed to load: ${f.dmesg.peermemErrors[0]}`,
        evidence: f.dmesg.evidence,
        fix:
          f.stack === 'inbox'
            ? 'the inbox ib_core exports no ib_register_peer_memory_client: use DMA-BUF (open driver) instead of peermem'
            : "rebuild the driver's DKMS modules against the installed OFED (sudo dkms autoinstall), then apply gpudirect.peermem",
      };
    }
    // The kernel log was read (its grep is the evidence): no peermem error in it is an observation, not nothing.
    return {
      status: 'pass',
      rule: 'R34',
      summary: peermemPath
        ? 'no peermem load errors in the kernel log'
        : 'no peermem load errors in the kernel log (the path does not use nvidia-peermem)',
      evidence: f.dmesg.evidence,
    };
  },
};

export const acsCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.acs',
  title: 'PCIe ACS off above GPUs and fabric NICs',
  scope: 'host',
  needs: ['pcie'],
  evaluate(f) {
    if (f.pcieUnreadable) {
      return {
        status: 'error',
        rule: 'R36',
        summary: `cannot tell: lspci -vv of the bridges failed (${f.pcieUnreadable})`,
        evidence: f.pcieEvidence,
        fix: 'check `sudo lspci -vv` on the host',
      };
    }
    // Zero bridges is an answer: no GPU or NIC (nothing to disable), or devices straight on the root bus.
    if (f.gpus.length + f.nics.length === 0) {
      return {
        status: 'skip',
        rule: 'R36',
        summary: 'no NVIDIA GPU or ConnectX port on the PCIe bus: no bridge whose ACS matters',
        evidence: `${f.pcieEvidence}\nlspci -d 10de: and -d 15b3: listed no function`,
      };
    }
    if (f.bridges.length === 0) {
      return {
        status: 'pass',
        rule: 'R36',
        summary:
          `no bridge above ${f.gpus.length} GPUs and ${f.nics.length} NIC ports (on the root bus): ` +
          'no ACS to redirect P2P',
        evidence: `${f.pcieEvidence}\n${[...f.gpus, ...f.nics]
          .map((b) => `${b}: no bridge in its sysfs path`)
          .join('\n')}`,
      };
    }
    const on = f.bridges.filter((b) => b.srcValid);
    const lines = f.bridges.map((b) => `${b.bdf} ${b.acsCtlLine ?? '(no ACS capability)'}`);
    const evidence = `${f.pcieEvidence}\n${lines.join('\n')}`;
    if (on.length === 0)
      return {
        status: 'pass',
        rule: 'R36',
        summary: `ACS redirect off on all ${f.bridges.length} bridges above ${f.gpus.length} GPUs and ${f.nics.length} NIC ports`,
        evidence,
      };
    return {
      status: 'fail',
      rule: 'R36',
      summary: `ACS on (SrcValid+) on ${on.length} bridge${on.length > 1 ? 's' : ''} above GPUs/NICs: P2P and GPUDirect traffic detours through the root complex (half bandwidth, possible NCCL hangs)`,
      evidence: `${f.pcieEvidence}\n${on.map((b) => `${b.bdf} ${b.acsCtlLine} (above ${b.below.join(' ')})`).join('\n')}`,
      fix:
        f.vfio.length > 0
          ? `devices are assigned to VMs (${f.vfio.join(' ')}): ACS isolates them; disable it only on bare metal`
          : 'disable ACS in the BIOS, or apply gpudirect.acs-off (setpci -s <bdf> ECAP_ACS+0x6.w=0000 per bridge from a boot unit)',
    };
  },
};

export const iommuCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.iommu',
  title: 'IOMMU passthrough',
  scope: 'host',
  needs: ['cmdline', 'dmesg'],
  evaluate(f) {
    const words = (f.cmdline ?? '').split(/\s+/);
    const evidence = `/proc/cmdline: ${f.cmdline ?? 'could not be read'}\n${f.dmesg.domainLine ?? f.dmesg.evidence}`;
    const off = words.some((w) => /^(?:intel_iommu|amd_iommu|iommu)=off$/.test(w));
    if (f.dmesg.domainType === 'Passthrough' || words.includes('iommu=pt'))
      return {
        status: 'pass',
        rule: 'R36',
        summary: 'IOMMU in passthrough (iommu=pt): DMA is not translated',
        evidence,
      };
    if (off) return { status: 'pass', rule: 'R36', summary: 'IOMMU off on the kernel command line', evidence };
    if (f.dmesg.domainType === 'Translated' || !f.dmesg.ran) {
      return {
        status: 'warn',
        rule: 'R36',
        summary: f.dmesg.domainType
          ? 'IOMMU translates DMA (Default domain type: Translated): every GPU/NIC DMA pays IOTLB lookups'
          : 'IOMMU mode unknown (kernel log unreadable) and iommu=pt not set',
        evidence,
        fix: 'apply gpudirect.iommu-pt (iommu=pt in /etc/default/grub.d/90-l20-iommu.cfg, update-grub, reboot)',
      };
    }
    return {
      status: 'pass',
      rule: 'R36',
      summary: `IOMMU default domain: ${f.dmesg.domainType ?? 'not enabled'}`,
      evidence,
    };
  },
};

/** GPUs that will talk P2P: one group per NUMA node, or all of them when the plan is tensor-parallel. */
export function p2pGroups(f: GpudirectFacts, ctx: StageContext): string[][] {
  const gpus = f.p2p.gpus;
  if (ctx.config.vllm.layout === 'tp-pp') return [gpus];
  const byNode = new Map<string, string[]>();
  for (const g of gpus) {
    const node = f.topo?.affinity[g]?.numaAffinity ?? '?';
    byNode.set(node, [...(byNode.get(node) ?? []), g]);
  }
  return [...byNode.values()];
}

export const p2pCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.p2p',
  title: 'GPU peer-to-peer inside tensor-parallel groups',
  scope: 'host',
  needs: ['nvidia-version', 'p2p'],
  evaluate(f, host, ctx) {
    if (!f.driver) {
      return {
        status: 'skip',
        rule: 'R37',
        summary: 'no NVIDIA driver loaded',
        evidence: `nvidia-smi topo -p2p r: ${f.p2p.error ?? 'no matrix'}`,
      };
    }
    const missing = toolMissingVerdict(f.p2p.error ?? '', 'nvidia-smi', 'p2p', host);
    if (missing && f.p2p.gpus.length === 0) return { ...missing, rule: 'R37' };
    if (f.p2p.gpus.length === 0)
      return {
        status: 'fail',
        rule: 'R37',
        summary: `nvidia-smi topo -p2p r: ${f.p2p.error ?? 'no matrix'}`,
        evidence: f.p2p.error ?? '',
        fix: 'check the driver (gpu-driver.gpus)',
      };
    const groups = p2pGroups(f, ctx);
    const bad: string[] = [];
    const across: string[] = [];
    for (const a of f.p2p.gpus) {
      for (const b of f.p2p.gpus) {
        if (a >= b) continue;
        const s = f.p2p.status[a]?.[b] ?? 'U';
        if (s === 'OK') continue;
        const same = groups.some((g) => g.includes(a) && g.includes(b));
        (same ? bad : across).push(`${a}↔${b} ${s}`);
      }
    }
    const evidence = `groups: ${groups.map((g) => g.join(',')).join(' | ')} (vllm.layout ${ctx.config.vllm.layout})\n${bad.length ? `inside groups: ${bad.join(', ')}\n` : ''}${across.length ? `across groups: ${across.join(', ')}` : 'every pair OK'}`;
    if (bad.length > 0) {
      return {
        status: 'warn',
        rule: 'R37',
        summary: `P2P not supported between ${bad.length} GPU pair(s) of one group: NCCL copies through host memory there`,
        evidence,
        fix: 'keep tensor-parallel groups inside one PCIe root (NUMA node); check ACS (gpudirect.acs) and the BIOS P2P settings',
      };
    }
    return {
      status: 'pass',
      rule: 'R37',
      summary: `P2P OK inside ${groups.length} group(s) of ${groups[0]?.length ?? 0} GPUs${across.length ? ` (${across.length} pairs across groups are not)` : ''}`,
      evidence,
    };
  },
};

export const localityCheck: CheckDef<GpudirectFacts> = {
  id: 'gpudirect.locality',
  title: 'GPU↔NIC locality (which GPUs get GPUDirect RDMA)',
  scope: 'host',
  needs: ['nvidia-version', 'topo'],
  evaluate(f, host) {
    const t = f.topo;
    const topoError = `nvidia-smi topo -m: ${f.topoError || 'no output'}`;
    if (!t && !f.driver)
      return {
        status: 'skip',
        rule: 'R39',
        summary: 'no NVIDIA driver loaded: no GPU topology to read',
        evidence: topoError,
      };
    const missing = toolMissingVerdict(f.topoError ?? '', 'nvidia-smi', 'topo', host);
    if (!t && missing) return { ...missing, rule: 'R39' };
    if (!t)
      return {
        status: 'error',
        rule: 'R39',
        summary: 'cannot tell: nvidia-smi topo -m printed no matrix',
        evidence: topoError,
        fix: 'check `nvidia-smi topo -m` on the host (gpu-driver.gpus)',
      };
    const name = (nic: string): string => {
      const dev = t.nicLegend[nic] ?? nic;
      return f.rdmaNetdev[dev] ? `${dev}(${f.rdmaNetdev[dev]})` : dev;
    };
    const rows = t.gpus.map((g) => {
      const near = t.nics.filter((n) => ['PIX', 'PXB'].includes(t.matrix[g]?.[n] ?? ''));
      return {
        g,
        near,
        line: `${g}: ${
          t.nics.map((n) => `${name(n)} ${t.matrix[g]?.[n] ?? 'not in the matrix'}`).join(', ') || 'no NIC column'
        }`,
      };
    });
    if (t.nics.length === 0) {
      return {
        status: 'warn',
        rule: 'R39',
        summary: 'nvidia-smi topo -m shows no NIC: no GPU gets GPUDirect RDMA',
        evidence: rows.map((r) => r.line).join('\n'),
        fix: 'see inventory.nics and inventory.rdma (the NICs must be RDMA devices to appear)',
      };
    }
    const gdr = rows.filter((r) => r.near.length > 0);
    const summary =
      gdr.length === 0
        ? 'no GPU shares a PCIe switch with a NIC: every transfer stages through host memory'
        : `${gdr.map((r) => r.g).join(', ')} reach a NIC at ≤ PXB (GPUDirect RDMA by default); ${rows.length - gdr.length} GPUs go through the host bridge`;
    return {
      status: 'pass',
      rule: 'R39',
      summary,
      evidence: `${rows.map((r) => r.line).join('\n')}\n(never widen NCCL_NET_GDR_LEVEL to force it: R04)`,
    };
  },
};

export const gpudirectChecks: readonly CheckDef<GpudirectFacts>[] = [
  pathCheck,
  peermemDmesgCheck,
  acsCheck,
  iommuCheck,
  p2pCheck,
  localityCheck,
];
