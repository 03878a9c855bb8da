import { testContext } from '../helpers/stage-context.js';
import { describe, expect, it } from 'vitest';
import * as c from '../../checks/inventory/checks.js';
import type { InventoryFacts } from '../../checks/inventory/facts.js';
import { pciRelation } from '../../checks/inventory/topology.js';
import type { HostCheckDef, PairCheckDef } from '../../src/engine/types.js';

function facts(over: Partial<InventoryFacts> = {}, host = 'n1', macBase = 0x10): InventoryFacts {
  const nicBdfs = ['0000:1a:00.0', '0000:1a:00.1', '0000:9a:00.0', '0000:9a:00.1'];
  const names = ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'];
  return {
    host,
    os: { id: 'ubuntu', versionId: '22.04', prettyName: 'Ubuntu 22.04.5 LTS', kernel: '5.15.0-126-generic' },
    cpu: { modelName: 'Intel(R) Xeon(R) Platinum 8462Y+', sockets: 2, cpus: 128, numaNodes: 2 },
    memTotalKiB: 1056000000,
    nics: nicBdfs.map((bdf) => ({
      bdf,
      vendorId: '15b3',
      deviceId: '1015',
      classId: '0200',
      description: 'Mellanox Technologies MT27710 Family [ConnectX-4 Lx]',
      offBus: false,
    })),
    gpus: Array.from({ length: 8 }, (_, i) => ({
      bdf: `0000:${(0x30 + i).toString(16)}:00.0`,
      vendorId: '10de',
      deviceId: '26ba',
      classId: '0302',
      description: 'NVIDIA Corporation AD102GL [L20]',
      offBus: false,
    })),
    pcie: [],
    netdevs: [
      { name: 'eno1', bdf: '0000:03:00.0', mac: 'aa:00:00:00:00:01', adminUp: true, addresses: ['10.0.0.1/24'] },
      ...names.map((name, i) => ({
        name,
        bdf: nicBdfs[i]!,
        mac: `b8:59:9f:00:${macBase.toString(16)}:0${i}`,
        adminUp: false,
        addresses: [],
      })),
    ],
    mgmt: { serverAddress: '10.0.0.1', serverPort: 22, netdev: 'eno1', gateway: '10.0.0.254', defaultDev: 'eno1' },
    rdma: names.map((n, i) => ({ device: `mlx5_${i}`, port: 1, state: 'DOWN', physState: 'DISABLED', netdev: n })),
    links: names.map((n) => ({
      netdev: n,
      linkDetected: false,
      driver: 'mlx5_core',
      firmware: '14.32.1010 (MT_2420110034)',
    })),
    topology: { source: 'pci', gpuToNic: [{ gpu: 'GPU0', nic: 'ens1f0', relation: 'PXB' }] },
    stack: { gpuDriverLoaded: false, packages: {}, packageStatus: {} },
    identity: { machineId: `${macBase.toString(16).padStart(2, '0')}`.repeat(16), gpuUuids: [] },
    neighbours: names.map((port) => ({ port, peerMacs: [], state: 'down' as const })),
    problems: [],
    ...over,
  };
}

const ctx = testContext();
const host = (check: unknown, f: InventoryFacts) => (check as HostCheckDef<InventoryFacts>).evaluate(f, f.host, ctx);
const pair = (check: unknown, fs: InventoryFacts[]) =>
  (check as PairCheckDef<InventoryFacts>).evaluate(
    fs.map((f) => ({ host: f.host, facts: f })),
    { ...ctx, cluster: undefined },
  );

describe('inventory checks', () => {
  it('os: 22.04 + 5.15 generic passes, HWE warns, other releases fail', () => {
    expect(host(c.osCheck, facts()).status).toBe('pass');
    expect(
      host(c.osCheck, facts({ os: { id: 'ubuntu', versionId: '22.04', kernel: '6.8.0-45-generic' } })).status,
    ).toBe('warn');
    const v = host(
      c.osCheck,
      facts({ os: { id: 'ubuntu', versionId: '20.04', prettyName: 'Ubuntu 20.04.6 LTS', kernel: '5.4.0-1-generic' } }),
    );
    expect(v.status).toBe('fail');
    expect(v.evidence).toContain('VERSION_ID="20.04"');
  });

  it('nics: two dual-port CX-4 Lx pass; ConnectX-4 warns with R30; missing ports and off-bus fail', () => {
    expect(host(c.nicsCheck, facts()).status).toBe('pass');
    const cx4 = facts();
    cx4.nics = cx4.nics.map((n) => ({ ...n, deviceId: '1013' }));
    expect(host(c.nicsCheck, cx4)).toMatchObject({ status: 'warn', rule: 'R30' });
    const few = facts();
    few.nics = few.nics.slice(0, 2);
    expect(host(c.nicsCheck, few).status).toBe('fail');
    const off = facts();
    off.nics[1] = { ...off.nics[1]!, offBus: true, revision: 'ff' };
    expect(host(c.nicsCheck, off).summary).toContain('fell off');
  });

  it('gpus: 8 × L20 pass, 7 fail', () => {
    expect(host(c.gpusCheck, facts()).summary).toContain('8 × NVIDIA L20');
    const seven = facts();
    seven.gpus = seven.gpus.slice(1);
    expect(host(c.gpusCheck, seven).status).toBe('fail');
  });

  it('pcie: compares width always, GPU speed only from LnkCap (idle downclock), NIC speed from LnkSta', () => {
    const f = facts();
    f.pcie = [
      {
        bdf: f.gpus[0]!.bdf,
        staSpeedGTs: 2.5,
        staWidth: 16,
        capSpeedGTs: 16,
        capWidth: 16,
        capabilitiesHidden: false,
        path: [],
      },
      {
        bdf: f.nics[0]!.bdf,
        staSpeedGTs: 8,
        staWidth: 8,
        capSpeedGTs: 8,
        capWidth: 8,
        capabilitiesHidden: false,
        path: [],
      },
    ];
    expect(host(c.pcieCheck, f)).toMatchObject({ status: 'pass' });
    f.pcie[0] = { ...f.pcie[0]!, staWidth: 8 };
    expect(host(c.pcieCheck, f)).toMatchObject({ status: 'warn', rule: 'R38' });
    f.pcie[0] = { ...f.pcie[0]!, staWidth: 16 };
    f.pcie[1] = { ...f.pcie[1]!, staSpeedGTs: 5 };
    expect(host(c.pcieCheck, f).status).toBe('warn');
    f.pcie[1] = { ...f.pcie[1]!, capabilitiesHidden: true };
    expect(host(c.pcieCheck, f).summary).toContain('not run as root');
  });

  it('mgmt: fails when SSH arrives over a fabric port or a bond of them', () => {
    expect(host(c.mgmtCheck, facts()).status).toBe('pass');
    expect(host(c.mgmtCheck, facts({ mgmt: { serverAddress: '192.168.101.1', netdev: 'ens1f0' } })).status).toBe(
      'fail',
    );
    const bonded = facts({ mgmt: { serverAddress: '192.168.100.1', netdev: 'bond0' } });
    bonded.netdevs = bonded.netdevs.map((n) => (n.name.startsWith('ens') ? { ...n, master: 'bond0' } : n));
    expect(host(c.mgmtCheck, bonded).status).toBe('fail');
  });

  it('rdma: each fabric port needs a device (R07); bond members may share the bond device', () => {
    expect(host(c.rdmaCheck, facts()).summary).toContain('kernel names (mlx5_N)');
    const missing = facts();
    missing.rdma = missing.rdma.slice(0, 3);
    expect(host(c.rdmaCheck, missing)).toMatchObject({ status: 'fail', rule: 'R07' });
  });

  it('links: admin-down ports are deferred, an up port without link fails with the reason, 10G warns', () => {
    expect(host(c.linksCheck, facts()).summary).toContain('administratively down');
    const up = facts();
    up.netdevs = up.netdevs.map((n) => ({ ...n, adminUp: true }));
    up.links = up.links.map((l, i) =>
      i === 0
        ? { ...l, linkDetected: false, linkReason: 'No cable' }
        : { ...l, linkDetected: true, speedMbps: i === 1 ? 10000 : 25000 },
    );
    const v = host(c.linksCheck, up);
    expect(v.status).toBe('fail');
    expect(v.summary).toContain('ens1f0: Link detected: no (No cable)');
    up.links[0] = { ...up.links[0]!, linkDetected: true, speedMbps: 25000 };
    expect(host(c.linksCheck, up)).toMatchObject({ status: 'warn' });
  });

  it('pair-hardware: hosts with different GPU counts fail', () => {
    const a = facts();
    const b = facts({}, 'n2', 0x20);
    expect(pair(c.pairHardwareCheck, [a, b]).status).toBe('pass');
    b.gpus = b.gpus.slice(0, 4);
    expect(pair(c.pairHardwareCheck, [a, b])).toMatchObject({ status: 'fail' });
  });

  it('cabling: maps peers by MAC, fails on a port cabled to its own host or missing cables', () => {
    const a = facts({}, 'n1', 0x10);
    const b = facts({}, 'n2', 0x20);
    expect(pair(c.cablingCheck, [a, b]).summary).toContain('fabric ports are down');
    const macs = (f: InventoryFacts) => f.netdevs.filter((n) => n.name.startsWith('ens')).map((n) => n.mac!);
    a.neighbours = a.neighbours.map((nb, i) => ({ ...nb, state: 'up', peerMacs: [macs(b)[i]!] }));
    b.neighbours = b.neighbours.map((nb, i) => ({ ...nb, state: 'up', peerMacs: [macs(a)[i]!] }));
    const ok = pair(c.cablingCheck, [a, b]);
    expect(ok.status).toBe('pass');
    expect(ok.summary).toContain('n1:ens1f0 ↔ n2:ens1f0');
    a.neighbours[3] = { ...a.neighbours[3]!, peerMacs: [macs(a)[2]!] };
    b.neighbours[3] = { ...b.neighbours[3]!, peerMacs: [] };
    expect(pair(c.cablingCheck, [a, b]).status).toBe('fail');
  });

  it('PCI relation codes', () => {
    const root = '0000:15:01.0';
    const up = '0000:16:00.0';
    expect(pciRelation([root, up, '0000:17:00.0', '0000:18:00.0'], [root, up, '0000:17:01.0', '0000:1a:00.0'])).toBe(
      'PXB',
    );
    expect(pciRelation([root, up, '0000:17:00.0', '0000:18:00.0'], [root, up, '0000:17:00.0', '0000:18:00.1'])).toBe(
      'PIX',
    );
    expect(pciRelation(['0000:15:01.0', '0000:18:00.0'], ['0000:15:02.0', '0000:19:00.0'])).toBe('PHB');
    expect(pciRelation(['0000:15:01.0', '0000:18:00.0'], ['0000:97:01.0', '0000:9a:00.0'], 0, 1)).toBe('SYS');
    expect(pciRelation(['0000:15:01.0', '0000:18:00.0'], ['0000:37:01.0', '0000:38:00.0'], 0, 0)).toBe('NODE');
  });
});
