/** nic-stack verdicts (docs/STAGES.md §3.3; R30 stack vs NIC generation, R47 version parity). */
import type { CheckDef, HostCheckDef, PairCheckDef } from '../../src/engine/types.js';
import { PORT_NEEDS, RDMA_PORT_NEEDS } from '../common/fabric.js';
import { oneHostSkip } from '../common/pair.js';
import { cmpVersion } from '../../src/rules/cfg/context.js';
import { OFED_LAST, OFED_LTS, OFED_UNPUBLISHED } from '../../src/rules/cfg/data.js';
import type { NicStackFacts } from './facts.js';
import { INBOX_PACKAGES } from './probes.js';

/** The last ConnectX-4 Lx firmware line (14.32.x): nothing newer will be published for the card. */
export const CX4LX_FINAL_FIRMWARE = '14.32.1010';
/** DOCA 2.9 LTS (OFED 24.10) is the last line that supports ConnectX-4 (non-Lx). */
const CX4_LAST_OFED = '24.10';

const INSTALL_INBOX =
  'apply nic-stack.install-inbox (sudo apt-get install -y rdma-core ibverbs-utils rdmacm-utils infiniband-diags perftest)';

/** `23.10-1.1.9.0` vs the loaded driver's `23.10-1.1.9`: the driver drops a trailing `.0`. */
export function sameOfedVersion(ofed: string, driver: string): boolean {
  return ofed === driver || ofed.replace(/\.0$/, '') === driver.replace(/\.0$/, '');
}

function models(f: NicStackFacts): { lx: number; cx4: number; other: string[] } {
  let lx = 0;
  let cx4 = 0;
  const other: string[] = [];
  for (const n of f.nics) {
    if (n.deviceId === '1015') lx++;
    else if (n.deviceId === '1013') cx4++;
    else other.push(`${n.bdf} ${n.description}`);
  }
  return { lx, cx4, other };
}

const nicLine = (f: NicStackFacts): string =>
  f.nics.map((n) => `${n.bdf} ${n.deviceId ? `[15b3:${n.deviceId}] ` : ''}${n.description}`).join('\n') ||
  '(no ConnectX function in lspci -D -nn -d 15b3:)';
const NOT_BY_ETHTOOL = 'not reported by ethtool -i';
/** What `ethtool -i` said of a port's driver, or that it said nothing. */
const driverText = (l: NicStackFacts['links'][number]): string =>
  `${l.netdev}: driver ${l.driver ?? NOT_BY_ETHTOOL}, version ${l.driverVersion ?? NOT_BY_ETHTOOL}`;

export const flavorCheck: HostCheckDef<NicStackFacts> = {
  id: 'nic-stack.flavor',
  title: 'NIC software stack fits the NIC',
  scope: 'host',
  needs: ['lspci-nics', 'packages'],
  evaluate(f) {
    const { cx4 } = models(f);
    const evidence = `${f.stack.evidence}\n${nicLine(f)}`;
    const s = f.stack;
    if (f.nics.length === 0) {
      return {
        status: 'skip',
        summary: 'no ConnectX function: no NIC for a stack to fit (inventory.nics)',
        evidence,
        rule: 'R30',
      };
    }
    if (s.flavor === 'unknown') {
      return {
        status: 'warn',
        summary: 'could not tell which NIC stack is installed',
        evidence,
        rule: 'R30',
        fix: 'check `ofed_info -s` by hand: MLNX_OFED prints MLNX_OFED_LINUX-<ver>:, DOCA-OFED OFED-internal-<ver>:, the inbox stack has no ofed_info',
      };
    }
    if (s.flavor === 'inbox') {
      const rdmaCore = f.packages['rdma-core']
        ? `distribution rdma-core ${f.packages['rdma-core']}`
        : 'no rdma-core yet (nic-stack.userspace)';
      return {
        status: 'pass',
        summary: `inbox mlx5 driver + ${rdmaCore}${cx4 ? ' (ConnectX-4 supported inbox; pin MLNX_OFED 24.10 LTS / DOCA 2.9 LTS only if OFED tools are needed)' : ' (RoCE v2 and DMA-BUF GPUDirect on ConnectX-4 Lx)'}`,
        evidence,
        rule: 'R30',
      };
    }
    const version = s.version ?? 'without a version';
    const branch = s.release ?? version.split('-')[0] ?? '';
    const fixStack =
      'apply nic-stack.install-doca (current DOCA-OFED; ConnectX-4 Lx also runs the inbox stack: remove MLNX_OFED with `sudo /usr/sbin/ofed_uninstall.sh --force`, then nic-stack.install-inbox)';
    if (s.flavor === 'MLNX_OFED') {
      const ga = OFED_UNPUBLISHED[version];
      if (ga)
        return {
          status: 'fail',
          summary: `MLNX_OFED ${version} was never published (the ${branch} GA is ${ga})`,
          evidence,
          rule: 'R30',
          fix: fixStack,
        };
      if (cmpVersion(branch, OFED_LAST) > 0)
        return {
          status: 'fail',
          summary: `no MLNX_OFED ${branch} exists: ${OFED_LAST} LTS was the last standalone release`,
          evidence,
          rule: 'R30',
          fix: fixStack,
        };
      if (!OFED_LTS.includes(branch)) {
        return {
          status: 'warn',
          summary: `MLNX_OFED ${version} is on the short-lived ${branch} branch (LTS: ${OFED_LTS.join(', ')})`,
          evidence,
          rule: 'R30',
          fix: `move to MLNX_OFED ${OFED_LAST} LTS or ${fixStack}`,
        };
      }
      return {
        status: 'pass',
        summary: `MLNX_OFED ${version} (LTS branch ${branch}; MLNX_OFED ended with ${OFED_LAST} LTS, successor DOCA-OFED)`,
        evidence,
        rule: 'R30',
      };
    }
    if (cx4 > 0 && cmpVersion(branch, CX4_LAST_OFED) > 0) {
      return {
        status: 'fail',
        summary: `DOCA-OFED ${version} is newer than ConnectX-4 (15b3:1013) supports: pin DOCA 2.9 LTS (OFED ${CX4_LAST_OFED})`,
        evidence,
        rule: 'R30',
        fix: 'install DOCA-Host 2.9.x LTS (doca-ofed) and hold it: sudo apt-mark hold doca-ofed',
      };
    }
    return { status: 'pass', summary: `DOCA-OFED ${version}`, evidence, rule: 'R30' };
  },
};

export const driverCheck: HostCheckDef<NicStackFacts> = {
  id: 'nic-stack.driver',
  title: 'mlx5_core driver loaded from the installed stack',
  scope: 'host',
  needs: [...PORT_NEEDS, 'ethtool', 'kernel'],
  evaluate(f) {
    const lines = f.links.map(driverText);
    const modinfo =
      f.moduleVersion === undefined
        ? f.moduleEvidence.split('\n').slice(0, 2).join(': ')
        : f.moduleVersion || '(empty: in-tree module)';
    const evidence = [
      ...lines,
      `modinfo -F version mlx5_core → ${modinfo}`,
      `ofed_info: ${stackOf(f)}, kernel ${f.kernel ?? 'not read (uname -r)'}`,
    ].join('\n');
    if (f.links.length === 0)
      return {
        status: 'fail',
        summary: 'no ConnectX netdev to read the driver of',
        evidence,
        fix: 'see inventory.nics and inventory.netdevs',
      };
    const notMlx5 = f.links.filter((l) => l.driver !== 'mlx5_core');
    if (notMlx5.length > 0)
      return {
        status: 'fail',
        summary: `${notMlx5.map((l) => l.netdev).join(', ')} not on mlx5_core`,
        evidence,
        fix: 'load the mlx5 driver: sudo modprobe mlx5_core mlx5_ib',
      };
    const ofed = f.stack.flavor === 'MLNX_OFED' || f.stack.flavor === 'DOCA' ? f.stack.version : undefined;
    if (ofed) {
      const stale = f.links.filter((l) => !l.driverVersion || !sameOfedVersion(ofed, l.driverVersion));
      if (stale.length > 0) {
        return {
          status: 'fail',
          summary: `${f.stack.flavor} ${ofed} is installed but ${stale.map((l) => l.netdev).join(', ')} run${stale.length === 1 ? 's' : ''} mlx5_core ${stale[0]?.driverVersion ?? 'of no reported version'}: the new driver is not loaded`,
          evidence,
          fix: 'reload the driver: `sudo /etc/init.d/openibd restart` (drops every mlx5 link for seconds; never over a management mlx5 port) or reboot',
        };
      }
      return {
        status: 'pass',
        summary: `mlx5_core ${f.links[0]?.driverVersion} from ${f.stack.flavor} on ${f.links.length} ports`,
        evidence,
      };
    }
    if (!f.kernel) {
      return {
        status: 'error',
        summary: 'cannot tell: `uname -r` printed no kernel release to compare the driver with',
        evidence,
      };
    }
    const foreign = f.links.filter((l) => l.driverVersion !== f.kernel);
    if (foreign.length > 0) {
      return {
        status: 'warn',
        summary: `mlx5_core reports ${foreign[0]?.driverVersion ?? 'no version'}, not the kernel release ${f.kernel}: an out-of-tree driver without its ofed_info`,
        evidence,
        fix: 'remove the leftover OFED driver (sudo /usr/sbin/ofed_uninstall.sh --force) and reboot, or reinstall the stack completely',
      };
    }
    return { status: 'pass', summary: `inbox mlx5_core (kernel ${f.kernel}) on ${f.links.length} ports`, evidence };
  },
};

/** `14.32.1010 (MT_2420110034)` → `14.32.1010`. */
const fwVersion = (fw: string | undefined): string | undefined => fw?.trim().split(/\s+/)[0];

export const firmwareCheck: HostCheckDef<NicStackFacts> = {
  id: 'nic-stack.firmware',
  title: 'NIC firmware',
  scope: 'host',
  needs: [...PORT_NEEDS, 'ethtool'],
  evaluate(f) {
    const evidence =
      f.links.map((l) => `${l.netdev} (${l.bdf}): firmware-version: ${l.firmware ?? NOT_BY_ETHTOOL}`).join('\n') ||
      '(no ConnectX netdev)';
    const lxBdfs = new Set(f.nics.filter((n) => n.deviceId === '1015').map((n) => n.bdf));
    const versions = f.links.map((l) => fwVersion(l.firmware)).filter((v): v is string => !!v);
    if (f.links.length === 0) {
      return {
        status: 'skip',
        summary: 'no ConnectX netdev: no firmware to read (nic-stack.driver)',
        evidence,
      };
    }
    const unread = f.links.filter((l) => !fwVersion(l.firmware));
    if (unread.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: ethtool -i reports no firmware-version for ${unread.map((l) => l.netdev).join(', ')}`,
        evidence,
        fix: 'check `ethtool -i <port>` by hand',
      };
    }
    const old = f.links.filter(
      (l) => lxBdfs.has(l.bdf) && fwVersion(l.firmware) && cmpVersion(fwVersion(l.firmware)!, CX4LX_FINAL_FIRMWARE) < 0,
    );
    if (old.length > 0) {
      return {
        status: 'warn',
        summary: `${old.map((l) => `${l.netdev} ${fwVersion(l.firmware)}`).join(', ')} below the final ConnectX-4 Lx firmware ${CX4LX_FINAL_FIRMWARE}`,
        evidence,
        fix: `update during a maintenance window with mlxfwmanager or mstflint to ${CX4LX_FINAL_FIRMWARE} (l20-setup never flashes firmware)`,
      };
    }
    const distinct = [...new Set(versions)];
    if (distinct.length > 1)
      return {
        status: 'warn',
        summary: `ports run different firmware: ${distinct.join(', ')}`,
        evidence,
        fix: `bring every card to ${CX4LX_FINAL_FIRMWARE} (mlxfwmanager; l20-setup never flashes)`,
      };
    return { status: 'pass', summary: `firmware ${distinct[0]} on ${versions.length} ports`, evidence };
  },
};

export const firmwareParityCheck: PairCheckDef<NicStackFacts> = {
  id: 'nic-stack.firmware-parity',
  title: 'same NIC firmware on every host',
  scope: 'pair',
  needs: [...PORT_NEEDS, 'ethtool'],
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const per = all.map((a) => ({
      host: a.host,
      ports: a.facts.links.length,
      fw: [...new Set(a.facts.links.map((l) => fwVersion(l.firmware)).filter(Boolean))].join(', '),
    }));
    const evidence = per
      .map((p) => `${p.host}: ${p.ports === 0 ? 'no ConnectX netdev' : p.fw || 'no firmware-version from ethtool -i'}`)
      .join('\n');
    const portless = per.filter((p) => p.ports === 0);
    if (portless.length > 0) {
      return {
        status: 'skip',
        summary: `no ConnectX netdev on ${portless.map((p) => p.host).join(', ')}: no firmware to compare`,
        evidence,
      };
    }
    const unread = per.filter((p) => !p.fw);
    if (unread.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: no firmware version read on ${unread.map((p) => p.host).join(', ')}`,
        evidence,
        fix: 'check `ethtool -i <port>` by hand',
      };
    }
    const first = per[0]?.fw;
    const differ = per.filter((p) => p.fw !== first);
    if (differ.length > 0)
      return {
        status: 'warn',
        summary: `firmware differs: ${per.map((p) => `${p.host} ${p.fw}`).join(' vs ')}`,
        evidence,
        fix: `bring every card to ${CX4LX_FINAL_FIRMWARE} (mlxfwmanager; l20-setup never flashes)`,
      };
    return { status: 'pass', summary: `firmware ${first} on ${per.length} hosts`, evidence };
  },
};

export const userspaceCheck: HostCheckDef<NicStackFacts> = {
  id: 'nic-stack.userspace',
  title: 'RDMA userspace installed',
  scope: 'host',
  needs: ['packages'],
  evaluate(f) {
    const ofed = f.stack.flavor === 'MLNX_OFED' || f.stack.flavor === 'DOCA';
    const want = [...INBOX_PACKAGES, ...(ofed ? ['mlnx-ofed-kernel-utils'] : [])];
    const missing = want.filter((p) => !f.packages[p]);
    const evidence = want
      .map((p) => `${f.packages[p] ? 'ii' : '--'} ${p} ${f.packages[p] ?? '(not installed)'}`)
      .join('\n');
    if (missing.length > 0) {
      return {
        status: 'fail',
        summary: `missing: ${missing.join(', ')}`,
        evidence,
        fix: ofed
          ? `reinstall the ${f.stack.flavor} userspace (sudo apt-get install -y ${missing.join(' ')} from its repository)`
          : INSTALL_INBOX,
      };
    }
    const rc = f.packages['rdma-core'] ?? '';
    if (!ofed && /mlnx/.test(rc)) {
      return {
        status: 'warn',
        summary: `rdma-core ${rc} is MLNX_OFED's, but no ofed_info: a partly removed OFED`,
        evidence,
        fix: 'sudo apt-get install -y --reinstall rdma-core=<jammy version> (or purge the leftover OFED packages and run nic-stack.install-inbox)',
      };
    }
    return { status: 'pass', summary: `${want.length} packages installed (rdma-core ${rc})`, evidence };
  },
};

export const devicesCheck: HostCheckDef<NicStackFacts> = {
  id: 'nic-stack.devices',
  title: 'one RDMA device per port, RoCE on ConnectX-4 Lx',
  scope: 'host',
  needs: [...RDMA_PORT_NEEDS, 'ibv-devices', 'ibv-devinfo'],
  evaluate(f) {
    const mapping =
      f.fabric.ports.map((p) => `${p.netdev} → ${p.rdmaDevice ?? '(no RDMA device)'}`).join('\n') ||
      '(no ConnectX port)';
    const evidence = `${mapping}\n${f.ibvDevicesEvidence}\n${f.devinfoEvidence}`;
    if (f.ibvDevices === undefined) {
      return {
        status: 'error',
        summary: 'cannot tell: ibv_devices failed',
        evidence: `${mapping}\n${f.ibvDevicesEvidence}`,
        fix: INSTALL_INBOX,
      };
    }
    if (f.fabric.ports.length === 0)
      return { status: 'fail', summary: 'no ConnectX port found', evidence, fix: 'see inventory.nics' };
    const problems: string[] = [];
    const unbound = f.fabric.ports.filter((p) => !p.rdmaDevice);
    if (unbound.length > 0)
      problems.push(`${unbound.map((p) => p.netdev).join(', ')} without an RDMA device (mlx5_ib not loaded?)`);
    const devs = [...new Set(f.fabric.ports.map((p) => p.rdmaDevice).filter((d): d is string => !!d))];
    const unlisted = devs.filter((d) => !f.ibvDevices!.includes(d));
    if (unlisted.length > 0)
      problems.push(
        `${unlisted.join(', ')} not listed by ibv_devices (libibverbs provider missing: ibverbs-providers)`,
      );
    for (const d of devs) {
      const info = f.devinfo.devices.find((x) => x.device === d);
      const ports = f.devinfo.ports.filter((x) => x.device === d);
      if (!info) {
        problems.push(`${d}: not in ibv_devinfo`);
        continue;
      }
      const unreported = 'not reported by ibv_devinfo';
      if (info.physPortCnt !== 1)
        problems.push(`${d}: phys_port_cnt ${info.physPortCnt ?? unreported} (expected 1: one device per port)`);
      if (ports.length === 0 || ports.some((x) => x.linkLayer !== 'Ethernet')) {
        problems.push(
          `${d}: link_layer ${ports.map((x) => x.linkLayer ?? unreported).join(',') || `${unreported} (no port)`} (expected Ethernet for RoCE)`,
        );
      }
      if (info.vendorPartId !== 4117)
        problems.push(`${d}: vendor_part_id ${info.vendorPartId ?? unreported} (ConnectX-4 Lx is 4117)`);
    }
    if (problems.length > 0) {
      const fixable = unlisted.length > 0 || f.ibvDevices.length === 0;
      return {
        status: 'fail',
        summary: problems.join('; '),
        evidence,
        ...(fixable
          ? { fix: INSTALL_INBOX }
          : { fix: 'check the card and driver: lspci -nn -d 15b3:, rdma link show, sudo modprobe mlx5_ib' }),
      };
    }
    return {
      status: 'pass',
      summary: `${devs.length} RDMA devices (${devs.join(', ')}): 1 Ethernet port each, vendor_part_id 4117`,
      evidence,
    };
  },
};

const stackOf = (f: NicStackFacts): string => `${f.stack.flavor}${f.stack.version ? ` ${f.stack.version}` : ''}`;

export const parityCheck: PairCheckDef<NicStackFacts> = {
  id: 'nic-stack.parity',
  title: 'same NIC stack and version on every host',
  scope: 'pair',
  needs: ['packages', ...PORT_NEEDS, 'ethtool'],
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const rows = all.map((a) => ({
      host: a.host,
      stack: stackOf(a.facts),
      rdmaCore: a.facts.packages['rdma-core'] ?? 'not installed',
      driver:
        a.facts.links[0]?.driverVersion ?? (a.facts.links.length ? `version ${NOT_BY_ETHTOOL}` : 'no ConnectX netdev'),
    }));
    const evidence = rows
      .map((r) => `${r.host}: ${r.stack}, rdma-core ${r.rdmaCore}, mlx5_core ${r.driver}`)
      .join('\n');
    const unknown = all.filter((a) => a.facts.stack.flavor === 'unknown').map((a) => a.host);
    if (unknown.length > 0) {
      return {
        status: 'error',
        summary: `cannot tell: which NIC stack ${unknown.join(', ')} run${unknown.length === 1 ? 's' : ''} is unknown (nic-stack.flavor)`,
        evidence,
        rule: 'R47',
      };
    }
    const first = rows[0];
    const differ = rows.filter((r) => r.stack !== first?.stack || r.rdmaCore !== first?.rdmaCore);
    if (first && differ.length > 0) {
      return {
        status: 'fail',
        summary: `stacks differ: ${rows.map((r) => `${r.host} ${r.stack} (rdma-core ${r.rdmaCore})`).join(' vs ')}`,
        evidence,
        rule: 'R47',
        fix: `bring every host to ${first.host}'s stack (${first.stack}): nic-stack.install-inbox for the inbox stack, or the same OFED bundle`,
      };
    }
    if (!all.some((a) => a.facts.packages['rdma-core'])) {
      return {
        status: 'skip',
        summary: `rdma-core is installed on no host: no userspace version to compare (nic-stack.userspace)`,
        evidence,
        rule: 'R47',
      };
    }
    return {
      status: 'pass',
      summary: `${first!.stack} (rdma-core ${first!.rdmaCore}) on ${rows.length} hosts`,
      evidence,
      rule: 'R47',
    };
  },
};

export const nicStackChecks: readonly CheckDef<NicStackFacts>[] = [
  flavorCheck,
  driverCheck,
  firmwareCheck,
  firmwareParityCheck,
  userspaceCheck,
  devicesCheck,
  parityCheck,
];
