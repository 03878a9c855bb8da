/** What the nic-stack stage reads about one host (docs/STAGES.md §3.3). */
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { parseIbvDevices } from '../../src/parse/ibv-devices.js';
import { parseIbvDevinfo, type IbvDevinfoFacts } from '../../src/parse/ibv-devinfo.js';
import { parseOfedInfo } from '../../src/parse/ofed-info.js';
import { fabricFromInventory, type FabricFacts } from '../common/fabric.js';
import { collectInventory } from '../inventory/collect.js';

export type StackFlavor = 'inbox' | 'MLNX_OFED' | 'DOCA' | 'unknown';

export interface PfLink {
  netdev: string;
  bdf: string;
  driver?: string;
  driverVersion?: string;
  /** `14.32.1010 (MT_2420110034)` as ethtool prints it. */
  firmware?: string;
}

export interface NicStackFacts {
  host: string;
  fabric: FabricFacts;
  /** ConnectX physical functions by PCI id (`1015` ConnectX-4 Lx, `1013` ConnectX-4). */
  nics: Array<{ bdf: string; deviceId?: string; description: string }>;
  kernel?: string;
  stack: { flavor: StackFlavor; version?: string; release?: string; evidence: string };
  links: PfLink[];
  /** `modinfo -F version mlx5_core`: the module on disk (empty for the inbox module). */
  moduleVersion?: string;
  moduleEvidence: string;
  /** Installed package → version. */
  packages: Record<string, string>;
  packagesEvidence: string;
  /** ibv_devices ran (ibverbs-utils present) and listed these devices. */
  ibvDevices?: string[];
  ibvDevicesEvidence: string;
  devinfo: IbvDevinfoFacts;
  devinfoEvidence: string;
  problems: Array<{ probe: string; evidence: string }>;
}

export function output(r: RunResult | undefined): string {
  return r ? `${r.stdout}${r.stderr}` : '';
}

/** `cmd → exit N` and the output, for evidence. */
export function evidenceOf(r: RunResult | undefined, what: string): string {
  if (!r) return `${what}: not run`;
  const text = output(r).trimEnd();
  return `${r.commandLine} → exit ${r.exitCode}${text ? `\n${text}` : ''}`;
}

const NOT_FOUND = /command not found|not found, but can be installed|No such file or directory/;

export function collectNicStack(outputs: ProbeOutputs): NicStackFacts {
  const { host, results } = outputs;
  const inv = collectInventory(outputs);
  const fabric = fabricFromInventory(inv);
  const problems: NicStackFacts['problems'] = [];

  const ofedR = results['ofed-info'];
  const ofed = parseOfedInfo(output(ofedR));
  let flavor: StackFlavor = 'unknown';
  if (ofed.flavor === 'MLNX_OFED' || ofed.flavor === 'DOCA') flavor = ofed.flavor;
  else if (ofed.notInstalled || (ofedR?.exitCode === 127 && NOT_FOUND.test(output(ofedR)))) flavor = 'inbox';
  if (flavor === 'unknown') problems.push({ probe: 'ofed-info', evidence: evidenceOf(ofedR, 'ofed_info -s') });

  const links: PfLink[] = fabric.ports.map((p) => {
    const l = inv.links.find((x) => x.netdev === p.netdev);
    return {
      netdev: p.netdev,
      bdf: p.bdf,
      ...(l?.driver ? { driver: l.driver } : {}),
      ...(l?.driverVersion ? { driverVersion: l.driverVersion } : {}),
      ...(l?.firmware ? { firmware: l.firmware } : {}),
    };
  });

  const mod = results.modinfo;
  const moduleVersion = mod?.exitCode === 0 ? mod.stdout.trim() : undefined;

  const pk = results.packages;
  const packages: Record<string, string> = {};
  for (const p of parseDpkgQuery(output(pk)).packages) if (p.installed && p.version) packages[p.name] = p.version;

  const devR = results['ibv-devices'];
  const ibvDevices = devR?.exitCode === 0 ? parseIbvDevices(devR.stdout).devices.map((d) => d.device) : undefined;
  const infoR = results['ibv-devinfo'];
  const devinfo = infoR ? parseIbvDevinfo(output(infoR)) : { devices: [], ports: [] };

  return {
    host,
    fabric,
    nics: inv.nics
      .filter((n) => !/Virtual Function/i.test(n.description))
      .map((n) => ({
        bdf: n.bdf,
        description: n.description,
        ...(n.deviceId ? { deviceId: n.deviceId.toLowerCase() } : {}),
      })),
    ...(inv.os.kernel ? { kernel: inv.os.kernel } : {}),
    stack: {
      flavor,
      ...(ofed.version ? { version: ofed.version } : {}),
      ...(ofed.release ? { release: ofed.release } : {}),
      evidence: evidenceOf(ofedR, 'ofed_info -s'),
    },
    links,
    ...(moduleVersion !== undefined ? { moduleVersion } : {}),
    moduleEvidence: evidenceOf(mod, 'modinfo -F version mlx5_core'),
    packages,
    packagesEvidence: evidenceOf(pk, 'dpkg-query'),
    ...(ibvDevices ? { ibvDevices } : {}),
    ibvDevicesEvidence: evidenceOf(devR, 'ibv_devices'),
    devinfo,
    devinfoEvidence: evidenceOf(infoR, 'ibv_devinfo'),
    problems: [...problems, ...inv.problems.filter((p) => ['lspci-nics', 'ip-link', 'rdma-link'].includes(p.probe))],
  };
}
