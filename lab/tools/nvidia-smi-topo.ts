/**
 * `nvidia-smi topo -m` / `-mp` and `topo -p2p r|w|n|a`, computed from the PCI tree.
 *
 * Formats: -m follows fixtures/corpus/nvidia-smi-topo-m__8x-h100-nv18-12nic-roce-tabs-nic-legend.txt
 * (tab-separated cells, ` X ` on the diagonal, GPU rows ending `CPU Affinity`, `NUMA Affinity`, an
 * empty cell and `GPU NUMA ID`, NIC rows ending in four tabs, `Legend:`, `NIC Legend:`) with the
 * underlined header that driver 580 prints even into a pipe (fixtures/h200-x2/topo_-m.txt). -p2p
 * follows a capture of 580.159.04 on an H200: ` \t<ESC>[4mGPU0\t…<ESC>[0m`, rows ` GPU0\tX\t…\t`.
 *
 * Codes are nvidia-smi's: two devices below one PCIe switch (or two functions of one card) are PIX,
 * below different switches of one root port PXB, on different root ports of one socket NODE (each
 * root port is its own host bridge on Sapphire Rapids), on different sockets SYS.
 */
import { numaCpuList } from '../fs/sysfs.js';
import { pciPath } from '../model/pci-topology.js';
import type { Machine, PciFunction } from '../model/types.js';

const U = '\u001b[4m';
const R = '\u001b[0m';

const LEGEND = [
  '  X    = Self',
  '  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)',
  '  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node',
  '  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)',
  '  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)',
  '  PIX  = Connection traversing at most a single PCIe bridge',
];
const NVLINK_LEGEND = '  NV#  = Connection traversing a bonded set of # NVLinks';

const P2P_LEGEND = [
  '  X    = Self',
  '  OK   = Status Ok',
  '  CNS  = Chipset not supported',
  '  GNS  = GPU not supported',
  '  TNS  = Topology not supported',
  '  NS   = Not supported',
  '  U    = Unknown',
];

/** The topology code between two PCI functions (nvidia-smi's, see the header). */
export function pciRelationCode(m: Machine, a: string, b: string): string {
  if (a === b) return 'X';
  const pa = pciPath(m.pci, a);
  const pb = pciPath(m.pci, b);
  let common = 0;
  while (common < pa.length && common < pb.length && pa[common]?.bdf === pb[common]?.bdf) common++;
  const fa = pa[pa.length - 1];
  const fb = pb[pb.length - 1];
  if (common === 0) {
    if (!fa || !fb) return 'SYS';
    if (fa.rootBus === fb.rootBus) return 'PHB';
    return fa.numaNode === fb.numaNode ? 'NODE' : 'SYS';
  }
  // Below one switch (or two functions of one card) the path crosses one bridge as nvidia-smi counts
  // it; meeting only at the root port means crossing several switches without the host bridge.
  return (pa[common - 1] as PciFunction).kind === 'root-port' ? 'PXB' : 'PIX';
}

interface TopoDevice {
  label: string;
  bdf: string;
}

function devices(m: Machine): { gpus: TopoDevice[]; nics: Array<TopoDevice & { name: string }> } {
  const gpus = [...m.gpus].sort((x, y) => x.index - y.index).map((g) => ({ label: `GPU${g.index}`, bdf: g.pci }));
  const nics = [...m.rdma]
    .sort((x, y) => x.pci.localeCompare(y.pci) || x.name.localeCompare(y.name))
    .map((r, i) => ({ label: `NIC${i}`, bdf: r.pci, name: r.name }));
  return { gpus, nics };
}

export function renderTopoMatrix(m: Machine, pcieOnly: boolean): string {
  const { gpus, nics } = devices(m);
  const all = [...gpus, ...nics];
  const lines: string[] = [];
  lines.push(`\t${U}${all.map((d) => d.label).join('\t')}\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID${R}`);
  for (const row of all) {
    const cells = all.map((col) =>
      col.bdf === row.bdf && col.label === row.label ? ' X ' : pciRelationCode(m, row.bdf, col.bdf),
    );
    const isGpu = row.label.startsWith('GPU');
    const numa = m.pci.find((p) => p.bdf === row.bdf)?.numaNode ?? 0;
    const tail = isGpu ? `\t${numaCpuList(m, numa)}\t${numa}\t\tN/A` : '\t\t\t\t';
    lines.push(`${row.label}\t${cells.join('\t')}${tail}`);
  }
  lines.push('', 'Legend:', '', ...LEGEND, ...(pcieOnly ? [] : [NVLINK_LEGEND]));
  if (nics.length > 0) lines.push('', 'NIC Legend:', '', ...nics.map((n) => `  ${n.label}: ${n.name}`), '');
  return `${lines.join('\n')}\n`;
}

/** P2P capability between two GPUs: PCIe peer reads and writes work within a socket, not across UPI. */
function p2pStatus(m: Machine, a: string, b: string, kind: string): string {
  if (a === b) return 'X';
  if (kind === 'n' || kind === 'a') return 'NS';
  return pciRelationCode(m, a, b) === 'SYS' ? 'CNS' : 'OK';
}

export function renderP2p(m: Machine, kind: string): string {
  const { gpus } = devices(m);
  const lines = [` \t${U}${gpus.map((g) => `${g.label}\t`).join('')}${R}`];
  for (const row of gpus)
    lines.push(` ${row.label}\t${gpus.map((col) => `${p2pStatus(m, row.bdf, col.bdf, kind)}\t`).join('')}`);
  lines.push('', 'Legend:', '', ...P2P_LEGEND);
  return `${lines.join('\n')}\n`;
}
