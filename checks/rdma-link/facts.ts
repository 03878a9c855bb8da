/** What the rdma-link stage reads about one host: fabric names, port states, GID table, active MTU, NCCL's GID pin. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import { parseIbstat, type IbstatPort } from '../../src/parse/ibstat.js';
import { parseIbvDevinfo } from '../../src/parse/ibv-devinfo.js';
import { parseNcclConf } from '../../src/parse/nccl-conf.js';
import { gidIpv4 } from '../../src/parse/rdma-util.js';
import { collectFabric, type FabricFacts, type FabricPort } from '../common/fabric.js';

export interface GidRow {
  device: string;
  index: number;
  /** `RoCE v2`, `IB/RoCE v1`; absent when the attribute was unreadable. */
  type?: string;
  ndev?: string;
  gid: string;
  ipv4?: string;
  /** The line as the probe printed it (evidence). */
  line: string;
}

export interface DevinfoPort {
  device: string;
  state?: string;
  activeMtu?: number;
  activeMtuCode?: number;
  line: string;
}

export interface RdmaLinkFacts {
  host: string;
  fabric: FabricFacts;
  gids: GidRow[];
  gidsOk: boolean;
  gidsEvidence: string;
  devinfo: DevinfoPort[];
  /** Whether ibv_devinfo ran (ibverbs-utils installed). */
  devinfoOk: boolean;
  devinfoEvidence: string;
  ibstat: IbstatPort[];
  ibstatText: string;
  ibdev2netdev?: string;
  /** `NCCL_IB_GID_INDEX` as /etc/nccl.conf sets it (NCCL reads the first definition). */
  ncclGidIndex?: { value: string; line: number };
  /** Path of ib_write_bw; absent without perftest. */
  perftest?: string;
  problems: Array<{ probe: string; evidence: string }>;
}

type Result = ProbeOutputs['results'][string];
const text = (r: Result | undefined): string => (r ? `${r.stdout}${r.stderr}` : '');

const GID_RE = /^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$/i;

/** `<dev> <index> <type words> <ndev> <gid>`; type and ndev may be missing (unreadable attributes). */
export function parseGidLines(out: string): GidRow[] {
  const rows: GidRow[] = [];
  for (const line of out.split('\n')) {
    const tok = line.trim().split(/\s+/);
    if (tok.length < 3) continue;
    const [device, idx] = tok;
    const gid = tok[tok.length - 1] ?? '';
    if (device === undefined || !/^\d+$/.test(idx ?? '') || !GID_RE.test(gid)) continue;
    const middle = tok.slice(2, -1);
    let ndev: string | undefined;
    if (
      middle.length > 0 &&
      !/^v\d$/.test(middle[middle.length - 1] ?? '') &&
      !/^(?:RoCE|IB\/RoCE|IB)$/.test(middle[middle.length - 1] ?? '')
    )
      ndev = middle.pop();
    const type = middle.length > 0 ? middle.join(' ') : undefined;
    const ipv4 = gidIpv4(gid);
    rows.push({
      device,
      index: Number(idx),
      gid: gid.toLowerCase(),
      line: line.trim(),
      ...(type ? { type } : {}),
      ...(ndev ? { ndev } : {}),
      ...(ipv4 ? { ipv4 } : {}),
    });
  }
  return rows;
}

export function collectRdmaLink(outputs: ProbeOutputs): RdmaLinkFacts {
  const { host, results } = outputs;
  const problems: RdmaLinkFacts['problems'] = [];
  const fabric = collectFabric(outputs);

  const g = results.gids;
  const gidsOk = g?.exitCode === 0;
  if (g && !gidsOk)
    problems.push({ probe: 'gids', evidence: `GID table script → exit ${g.exitCode}\n${text(g).trim()}` });
  const gids = parseGidLines(g?.stdout ?? '');

  const d = results.devinfo;
  const devinfoOk = d?.exitCode === 0;
  const parsed = parseIbvDevinfo(d?.stdout ?? '');
  const dLines = (d?.stdout ?? '').split('\n');
  const devinfo: DevinfoPort[] = parsed.ports
    .filter((p) => p.device)
    .map((p) => {
      // The `active_mtu:` line of this device's block, verbatim, for evidence.
      const start = dLines.findIndex((l) =>
        new RegExp(`^hca_id:\\s*${p.device!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`).test(l.trim()),
      );
      const line =
        dLines
          .slice(Math.max(0, start))
          .find((l) => /active_mtu:/.test(l))
          ?.trim() ?? '';
      const code = /\((\d)\)/.exec(line)?.[1];
      return {
        device: p.device!,
        line,
        ...(p.state ? { state: p.state } : {}),
        ...(p.activeMtu !== undefined ? { activeMtu: p.activeMtu } : {}),
        ...(code ? { activeMtuCode: Number(code) } : {}),
      };
    });

  const ib = results.ibstat;
  const ibstatText = ib?.exitCode === 0 ? ib.stdout : '';
  const ibstat = ibstatText ? parseIbstat(ibstatText).ports : [];

  const i2n = results.ibdev2netdev;
  const conf = results['nccl-conf'];
  const ncclEntry =
    conf?.exitCode === 0 ? parseNcclConf(conf.stdout).entries.find((e) => e.key === 'NCCL_IB_GID_INDEX') : undefined;
  const pt = results.perftest;
  const perftest = pt?.exitCode === 0 ? pt.stdout.trim().split('\n')[0] : undefined;

  return {
    host,
    fabric,
    gids,
    gidsOk,
    gidsEvidence: g ? `GID table (sysfs) → exit ${g.exitCode}` : 'not run',
    devinfo,
    devinfoOk,
    devinfoEvidence: d
      ? devinfoOk
        ? 'ibv_devinfo -d <each device>'
        : `ibv_devinfo → exit ${d.exitCode}: ${text(d).trim().split('\n')[0] ?? ''}`
      : 'not run',
    ibstat,
    ibstatText,
    ...(i2n?.exitCode === 0 ? { ibdev2netdev: i2n.stdout } : {}),
    ...(ncclEntry ? { ncclGidIndex: { value: ncclEntry.value, line: ncclEntry.line } } : {}),
    ...(perftest ? { perftest } : {}),
    problems,
  };
}

/** The fabric ports with the RDMA device each one uses (a LAG member reports the bond device). */
export function rdmaPorts(f: RdmaLinkFacts): FabricPort[] {
  return f.fabric.ports.filter((p) => p.rdmaDevice !== undefined);
}

/** The netdev whose addresses a port's GIDs carry: its bond when enslaved. */
export function l3Of(f: RdmaLinkFacts, port: FabricPort): { name: string; addresses: string[] } {
  const master = port.master ? f.fabric.netdevs.find((n) => n.name === port.master) : undefined;
  if (master) return { name: master.name, addresses: master.addresses.filter((a) => !a.includes(':')) };
  return { name: port.netdev, addresses: port.addresses };
}
