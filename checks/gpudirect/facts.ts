/** What the gpudirect stage reads about one host. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseLspci } from '../../src/parse/lspci.js';
import { parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { parseNvidiaSmiTopo, type NvidiaSmiTopoFacts } from '../../src/parse/nvidia-smi-topo.js';
import { parseOfedInfo } from '../../src/parse/ofed-info.js';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import { pciPathOf } from '../../src/parse/sysfs-net.js';
import { procModuleNames } from '../gpu-driver/facts.js';
import { parseP2p, type P2pMatrix } from './p2p.js';

export type Stack = 'inbox' | 'mlnx_ofed' | 'doca';

/** A bridge between the root complex and a GPU or fabric NIC, with its ACS control as lspci prints it. */
export interface PathBridge {
  bdf: string;
  description: string;
  /** The `ACSCtl:` line verbatim (trimmed), when the bridge has the capability. */
  acsCtlLine?: string;
  srcValid: boolean;
  /** GPUs and NICs below it. */
  below: string[];
}

export interface GpudirectFacts {
  host: string;
  kernel?: string;
  driver?: { version: string; open: boolean; line: string };
  /** nvidia_peermem in /proc/modules; `read` false when /proc/modules could not be read. */
  peermem: { loaded: boolean; lines: string[]; read: boolean };
  /** modules-load.d / /etc/modules entries naming nvidia-peermem. */
  persisted: Array<{ file: string; line: string }>;
  stack: Stack;
  stackEvidence: string;
  /** `NCCL_DMABUF_ENABLE=0` lines found in NCCL's configuration files. */
  dmabufDisabled: string[];
  cmdline?: string;
  dmesg: {
    ran: boolean;
    peermemErrors: string[];
    peermemLines: string[];
    domainLine?: string;
    domainType?: string;
    evidence: string;
  };
  gpus: string[];
  nics: string[];
  bridges: PathBridge[];
  /** GPUs or NICs bound to vfio-pci (assigned to VMs: ACS must stay on). */
  vfio: string[];
  pcieEvidence: string;
  /** Why the pcie probe's lspci output cannot be trusted (it failed, or lspci complained); undefined when read. */
  pcieUnreadable?: string;
  topo?: NvidiaSmiTopoFacts;
  topoError?: string;
  p2p: P2pMatrix;
  /** RDMA device → netdev (rdma link show), for naming NICs in the locality table. */
  rdmaNetdev: Record<string, string>;
  acsUnit: string;
}

function text(r: RunResult | undefined): string {
  return r ? `${r.stdout}${r.stderr}` : '';
}

const DEVICE_LINE = /^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]\s/;

/** lspci -vv blocks by BDF, raw lines kept (the ACSCtl line is evidence verbatim). */
function lspciBlocks(textIn: string): Map<string, string[]> {
  const blocks = new Map<string, string[]>();
  let cur: string[] | undefined;
  for (const line of textIn.split('\n')) {
    if (DEVICE_LINE.test(line)) {
      const bdf = line.split(/\s/)[0]!;
      cur = [line];
      blocks.set(bdf.length === 7 ? `0000:${bdf}` : bdf, cur);
    } else cur?.push(line);
  }
  return blocks;
}

function collectPcie(out: string): Pick<GpudirectFacts, 'gpus' | 'nics' | 'bridges' | 'vfio'> {
  const paths = new Map<string, string[]>();
  const lspciText = out
    .split('\n')
    .filter((l) => {
      const p = /^pci_path (\S+) (.*)$/.exec(l);
      if (p) paths.set(p[1]!, pciPathOf(p[2]!).pciPath);
      return !p && !/^numa_node /.test(l);
    })
    .join('\n');
  const devices = new Map(parseLspci(lspciText).devices.map((d) => [d.bdf, d]));
  const blocks = lspciBlocks(lspciText);
  const gpus: string[] = [];
  const nics: string[] = [];
  for (const bdf of paths.keys()) {
    const d = devices.get(bdf);
    const desc = d?.description ?? '';
    if (/NVIDIA/i.test(desc)) gpus.push(bdf);
    else if (/Mellanox|ConnectX/i.test(desc) && !/Virtual Function/i.test(desc)) nics.push(bdf);
  }
  const bridges = new Map<string, PathBridge>();
  for (const leaf of [...gpus, ...nics]) {
    for (const b of (paths.get(leaf) ?? []).slice(0, -1)) {
      let e = bridges.get(b);
      if (!e) {
        const d = devices.get(b);
        const acsLine = blocks
          .get(b)
          ?.map((l) => l.trim())
          .find((l) => l.startsWith('ACSCtl:'));
        e = {
          bdf: b,
          description: d?.description ?? '',
          srcValid: d?.acsCtl?.['SrcValid'] === true,
          below: [],
          ...(acsLine ? { acsCtlLine: acsLine } : {}),
        };
        bridges.set(b, e);
      }
      e.below.push(leaf);
    }
  }
  const vfio = [...gpus, ...nics].filter((b) => devices.get(b)?.driver === 'vfio-pci');
  return {
    gpus: gpus.sort(),
    nics: nics.sort(),
    bridges: [...bridges.values()].sort((a, b) => a.bdf.localeCompare(b.bdf)),
    vfio,
  };
}

export function collectGpudirect({ host, results }: ProbeOutputs): GpudirectFacts {
  const r = (id: string): RunResult | undefined => results[id];
  const ok = (id: string): boolean => r(id)?.exitCode === 0;

  const drv = parseNvidiaDriverVersion(ok('nvidia-version') ? r('nvidia-version')!.stdout : '');
  const modulesRead = ok('modules');
  const modulesText = modulesRead ? r('modules')!.stdout : '';
  const peermemLoaded = procModuleNames(modulesText).includes('nvidia_peermem');
  const peermemLines = modulesText.split('\n').filter((l) => /^nvidia_peermem /.test(l));

  const persisted: GpudirectFacts['persisted'] = [];
  let file = '';
  for (const line of (r('modules-load')?.stdout ?? '').split('\n')) {
    const m = /^### file (\S+)/.exec(line);
    if (m) {
      file = m[1]!;
      continue;
    }
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
    if (/^nvidia[-_]peermem\b/.test(t)) persisted.push({ file, line: t });
  }

  const ofed = parseOfedInfo(text(r('ofed-info')));
  const stack: Stack = ofed.flavor === 'DOCA' ? 'doca' : ofed.flavor === 'MLNX_OFED' ? 'mlnx_ofed' : 'inbox';

  const dm = r('dmesg');
  const dmLines = (dm?.stdout ?? '').split('\n').filter((l) => l.trim() !== '');
  const domain = dmLines.find((l) => /Default domain type/i.test(l));
  const dmesg = {
    ran: dm !== undefined && dm.exitCode === 0 && !/Operation not permitted|read kernel buffer failed/.test(dm.stderr),
    peermemLines: dmLines.filter((l) => /peermem|ib_register_peer_memory_client/i.test(l)),
    peermemErrors: dmLines.filter(
      (l) =>
        /peermem|ib_register_peer_memory_client/i.test(l) && /Unknown symbol|Invalid argument|-22\b|err -2/i.test(l),
    ),
    ...(domain ? { domainLine: domain.trim(), domainType: /Default domain type:\s*(\w+)/i.exec(domain)?.[1] } : {}),
    evidence: dm
      ? `$ sudo dmesg | grep -iE 'peermem|ib_register_peer_memory_client|Default domain type'\n${dmLines.join('\n') || '(no matching lines)'}${dm.stderr.trim() ? `\n${dm.stderr.trim()}` : ''}`
      : 'dmesg: not run',
  };

  const topoText = ok('topo') ? r('topo')!.stdout : '';
  const topo = topoText ? parseNvidiaSmiTopo(topoText) : undefined;
  const rdmaNetdev: Record<string, string> = {};
  for (const p of parseRdmaLink(ok('rdma-link') ? r('rdma-link')!.stdout : '').ports)
    if (p.netdev) rdmaNetdev[p.device] = p.netdev;

  const kernel = ok('kernel') ? r('kernel')!.stdout.trim() : undefined;
  const cmdline = ok('cmdline') ? r('cmdline')!.stdout.trim() : undefined;
  const pcieRun = r('pcie');
  const pcieOut = pcieRun?.stdout ?? '';
  const lspciComplaint = (pcieRun?.stderr ?? '').split('\n').find((l) => /lspci|pcilib/.test(l));
  const pcieUnreadable = !pcieRun
    ? 'the pcie probe did not run'
    : pcieRun.exitCode !== 0
      ? `exit ${pcieRun.exitCode ?? 'none'} ${pcieRun.stderr.trim().split('\n')[0] ?? ''}`.trim()
      : lspciComplaint
        ? lspciComplaint.trim()
        : undefined;
  return {
    host,
    ...(kernel ? { kernel } : {}),
    ...(drv.version
      ? {
          driver: {
            version: drv.version,
            open: drv.openKernelModule ?? false,
            line: `NVRM version: ${drv.nvrmLine ?? ''}`,
          },
        }
      : {}),
    peermem: { loaded: peermemLoaded, lines: peermemLines, read: modulesRead },
    persisted,
    stack,
    stackEvidence: `$ ofed_info -s → ${text(r('ofed-info')).trim().split('\n')[0] || '(no output)'}`,
    dmabufDisabled: (r('dmabuf-env')?.stdout ?? '').split('\n').filter((l) => /NCCL_DMABUF_ENABLE\s*=\s*0\b/.test(l)),
    ...(cmdline ? { cmdline } : {}),
    dmesg,
    ...collectPcie(pcieOut),
    pcieEvidence: pcieRun
      ? `$ sudo bash -s (lspci -vv of every bridge above the GPUs and NICs) → exit ${pcieRun.exitCode ?? 'none'}` +
        `${pcieUnreadable ? `\n${pcieUnreadable}` : ''}`
      : 'pcie: not run',
    ...(pcieUnreadable ? { pcieUnreadable } : {}),
    ...(topo && topo.devices.length > 0
      ? { topo }
      : { topoError: text(r('topo')).trim().split('\n')[0] ?? 'nvidia-smi topo -m: no output' }),
    p2p: parseP2p(text(r('p2p'))),
    rdmaNetdev,
    acsUnit: (r('acs-unit')?.stdout ?? '').trim() || 'not-found',
  };
}

/** Kernel ≥ 5.12 (DMA-BUF for RDMA arrived in 5.12). */
export function kernelAtLeast(release: string | undefined, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(release ?? '');
  if (!m) return false;
  const a = Number(m[1]);
  const b = Number(m[2]);
  return a > major || (a === major && b >= minor);
}
