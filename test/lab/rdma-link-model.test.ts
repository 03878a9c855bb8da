/**
 * The RDMA model under the rdma-link tools: GID tables from addresses (slot order and reuse, bond
 * spill, the wrong-gid scenario), active MTU, which queue pairs connect, and the bandwidth model.
 */
import { describe, expect, it } from 'vitest';
import { createCluster, FABRIC_PORTS, type Cluster } from '../../lab/model/cluster.js';
import { linkLocalFromMac } from '../../lab/model/machine.js';
import { flowRate, headerEfficiency, type Flow } from '../../lab/model/perftest.js';
import { portQos } from '../../lab/model/qos.js';
import { activeMtu, gidTable, ipv4Gid, syncGids } from '../../lab/model/rdma.js';
import { qpPath, tcpPath } from '../../lab/model/rdma-path.js';
import type { IpAddress, Machine, NetDev } from '../../lab/model/types.js';
import { rng } from '../../lab/util/prng.js';
import { wrongGid } from '../../lab/scenarios/rdma.js';

const FOREVER = 4294967295;
const v4 = (ip: string): IpAddress => ({
  family: 'inet',
  local: ip,
  prefixlen: 24,
  broadcast: ip.replace(/\.\d+$/, '.255'),
  scope: 'global',
  validLft: FOREVER,
  preferredLft: FOREVER,
});
const ll = (mac: string): IpAddress => ({
  family: 'inet6',
  local: linkLocalFromMac(mac),
  prefixlen: 64,
  scope: 'link',
  validLft: FOREVER,
  preferredLft: FOREVER,
});
const dev = (m: Machine, name: string): NetDev => m.netdevs.find((d) => d.name === name)!;
const rdmaOf = (m: Machine, netdev: string) => m.rdma.find((r) => r.netdev === netdev)!;

/** Design A by hand: every port up at MTU 9000 with link-local then 192.168.10k.i. */
function designA(c: Cluster): void {
  for (const m of c.machines) {
    FABRIC_PORTS.forEach((n, k) => {
      const d = dev(m, n);
      d.adminUp = true;
      d.mtu = 9000;
      d.addresses = [ll(d.mac), v4(`192.168.10${k + 1}.${m.index}`)];
    });
  }
}

/** The tutorial's 4-port balance-xor bond0 (no RoCE LAG): slaves carry the bond's MAC. */
function tutorialBond(m: Machine): void {
  const slaves = FABRIC_PORTS.map((n) => dev(m, n));
  const mac = slaves[0]!.mac;
  const bond: NetDev = {
    ...slaves[0]!,
    ifindex: 20,
    name: 'bond0',
    altnames: [],
    pci: undefined,
    driver: 'bonding',
    mac,
    adminUp: true,
    mtu: 9000,
    addresses: [ll(mac), v4(`192.168.100.${m.index}`)],
    bond: {
      mode: 'balance-xor',
      miimon: 100,
      updelay: 0,
      downdelay: 0,
      xmitHashPolicy: 'layer3+4',
      lacpRate: 'slow',
      slaves: slaves.map((s) => s.name),
    },
  };
  for (const s of slaves) {
    s.master = 'bond0';
    s.permMac = s.mac;
    s.mac = mac;
    s.addresses = [];
    s.adminUp = true;
    s.mtu = 9000;
  }
  m.netdevs.push(bond);
}

describe('GID table', () => {
  it('0/1 are the EUI-64 link-local GIDs, then a v1/v2 pair per address on the port netdev', () => {
    const c = createCluster(2, 1, 'max');
    designA(c);
    const n1 = c.machines[0]!;
    const t = gidTable(n1, rdmaOf(n1, 'ens1f0'));
    const ll0 = linkLocalFromMac(dev(n1, 'ens1f0').mac);
    expect(t[0]).toMatchObject({ type: 'IB/RoCE v1', ndev: 'ens1f0' });
    expect(t[0]!.gid.replace(/(^|:)0+(?=[0-9a-f])/g, '$1')).toBe(ll0.replace('fe80::', 'fe80:0:0:0:'));
    expect(t[1]).toMatchObject({ type: 'RoCE v2', gid: t[0]!.gid });
    expect(t[2]).toEqual({ gid: '0000:0000:0000:0000:0000:ffff:c0a8:6501', type: 'IB/RoCE v1', ndev: 'ens1f0' });
    expect(t[3]).toEqual({ gid: ipv4Gid('192.168.101.1'), type: 'RoCE v2', ndev: 'ens1f0' });
    expect(t.slice(4).every((e) => e === null)).toBe(true);
  });

  it('a removed address frees its slots for the next one; a surviving address keeps its index', () => {
    const c = createCluster(2, 1, 'max');
    designA(c);
    const n1 = c.machines[0]!;
    const r = rdmaOf(n1, 'ens1f0');
    const d = dev(n1, 'ens1f0');
    d.addresses.push(v4('10.9.9.1'));
    syncGids(n1);
    expect(gidTable(n1, r)[5]?.gid).toBe(ipv4Gid('10.9.9.1'));
    d.addresses = d.addresses.filter((a) => a.local !== '192.168.101.1');
    syncGids(n1);
    expect(gidTable(n1, r)[2]).toBeNull();
    d.addresses.push(v4('192.168.101.7'));
    const t = gidTable(n1, r);
    expect([t[2]?.gid, t[3]?.gid, t[5]?.gid]).toEqual([
      ipv4Gid('192.168.101.7'),
      ipv4Gid('192.168.101.7'),
      ipv4Gid('10.9.9.1'),
    ]);
  });

  it('wrong-gid: node 2 ens1f0 has the ULA at 2/3 and its IPv4 RoCE v2 GID at 5; nccl.conf pins 3 on both', () => {
    const c = createCluster(2, 1, 'max');
    designA(c);
    for (const m of c.machines) syncGids(m);
    wrongGid(c);
    const n2 = c.machines[1]!;
    const t = gidTable(n2, rdmaOf(n2, 'ens1f0'));
    expect(t[3]).toMatchObject({ type: 'RoCE v2', gid: 'fd20:0101:0000:0000:0000:0000:0000:0002' });
    expect(t[5]).toMatchObject({ type: 'RoCE v2', gid: ipv4Gid('192.168.101.2') });
    expect(gidTable(n2, rdmaOf(n2, 'ens1f1'))[3]?.gid).toBe(ipv4Gid('192.168.102.2'));
    for (const m of c.machines) expect(m.files?.get('/etc/nccl.conf')?.content).toMatch(/^NCCL_IB_GID_INDEX=3$/m);
  });

  it('a 4-port bond spills its GIDs onto every slave device; its own link-local shifts the IPv4 to 4/5', () => {
    const c = createCluster(2, 1, 'max');
    for (const m of c.machines) tutorialBond(m);
    const n1 = c.machines[0]!;
    for (const n of FABRIC_PORTS) {
      const t = gidTable(n1, rdmaOf(n1, n));
      expect(t[0]).toMatchObject({ ndev: n });
      expect(t[2]).toMatchObject({ ndev: 'bond0', type: 'IB/RoCE v1', gid: t[0]!.gid });
      expect(t[5]).toEqual({ gid: ipv4Gid('192.168.100.1'), type: 'RoCE v2', ndev: 'bond0' });
    }
  });
});

describe('active MTU', () => {
  it('is the largest IB MTU that fits the netdev MTU less the RoCE headers', () => {
    const c = createCluster(2, 1, 'max');
    const n1 = c.machines[0]!;
    const r = rdmaOf(n1, 'ens1f1');
    expect(activeMtu(n1, r)).toEqual({ bytes: 1024, code: 3 });
    dev(n1, 'ens1f1').mtu = 9000;
    expect(activeMtu(n1, r)).toEqual({ bytes: 4096, code: 5 });
    dev(n1, 'ens1f1').mtu = 4200;
    expect(activeMtu(n1, r)).toEqual({ bytes: 4096, code: 5 });
    dev(n1, 'ens1f1').mtu = 4191;
    expect(activeMtu(n1, r)).toEqual({ bytes: 2048, code: 4 });
  });
});

describe('paths', () => {
  const idx3 = (m: Machine, netdev: string) => ({ machine: m, device: rdmaOf(m, netdev), gidIndex: 3 });

  it('design A: the cabled pair connects; a crossed pair has no route between the subnets', () => {
    const c = createCluster(2, 1, 'max');
    designA(c);
    const [n1, n2] = c.machines as [Machine, Machine];
    expect(qpPath(c, idx3(n1, 'ens1f0'), idx3(n2, 'ens1f0'))).toMatchObject({
      ok: true,
      requesterPort: 'ens1f0',
      responderPort: 'ens1f0',
    });
    expect(qpPath(c, idx3(n1, 'ens1f0'), idx3(n2, 'ens1f1'))).toMatchObject({ ok: false, kind: 'rtr', errno: 101 });
    expect(qpPath(c, { ...idx3(n1, 'ens1f0'), gidIndex: 9 }, idx3(n2, 'ens1f0'))).toMatchObject({
      ok: false,
      kind: 'rtr',
      errno: 22,
    });
  });

  it('tutorial bond: cabled pairs work, a crossed pair ends in retry-exceeded', () => {
    const c = createCluster(2, 1, 'max');
    for (const m of c.machines) tutorialBond(m);
    const [n1, n2] = c.machines as [Machine, Machine];
    const at5 = (m: Machine, n: string) => ({ machine: m, device: rdmaOf(m, n), gidIndex: 5 });
    expect(qpPath(c, at5(n1, 'ens1f0'), at5(n2, 'ens1f0'))).toMatchObject({ ok: true });
    expect(qpPath(c, at5(n1, 'ens1f0'), at5(n2, 'ens1f1'))).toMatchObject({ ok: false, kind: 'retry-exceeded' });
  });

  it('TCP control connection: through the cable, not without it, not through a closed firewall', () => {
    const c = createCluster(2, 1, 'max');
    designA(c);
    const [n1, n2] = c.machines as [Machine, Machine];
    expect(tcpPath(c, n1, '192.168.101.2', 18515)).toMatchObject({ ok: true, ingress: 'ens1f0' });
    expect(tcpPath(c, n1, '10.0.0.2', 18515)).toMatchObject({ ok: true, ingress: 'eno1' });
    expect(tcpPath(c, n1, '172.16.0.1', 18515)).toEqual({ ok: false, reason: 'noroute' });
    c.cables.find((x) => x.a.ifname === 'ens2f1')!.plugged = false;
    expect(tcpPath(c, n1, '192.168.104.2', 18515)).toEqual({ ok: false, reason: 'unreachable' });
    n2.firewall = { active: true, allowIn: [{ iface: 'eno1', port: 22, proto: 'tcp' }] };
    expect(tcpPath(c, n1, '192.168.101.2', 18515)).toEqual({ ok: false, reason: 'filtered' });
    n2.firewall.allowIn.push({ iface: 'ens1f0' });
    expect(tcpPath(c, n1, '192.168.101.2', 18515).ok).toBe(true);
  });
});

describe('bandwidth model', () => {
  function flow(c: Cluster, mtuBytes: number, tclass: number | 'none' = 106): Flow {
    const [n1, n2] = c.machines as [Machine, Machine];
    return {
      sender: n1,
      senderPort: 'ens1f0',
      senderDevice: 'mlx5_0',
      receiver: n2,
      receiverPort: 'ens1f0',
      receiverDevice: 'mlx5_0',
      tclass: tclass === 'none' ? undefined : tclass,
      sl: 0,
      mtuBytes,
      linkGbps: 25,
      share: 1,
    };
  }
  const lossless = (m: Machine) => {
    const q = portQos(m, 'ens1f0')!;
    q.trust = 'dscp';
    q.pfc[3] = true;
  };

  it('25 Gb/s × header efficiency × 0.985 ± 0.4 %: ≈ 24.1 at 4096, ≈ 22.8 at 1024', () => {
    expect(headerEfficiency(4096)).toBeCloseTo(0.98, 2);
    expect(headerEfficiency(1024)).toBeCloseTo(0.926, 3);
    const c = createCluster(2, 1, 'max');
    for (const m of c.machines) lossless(m);
    const r = rng(1, 'test');
    const a = flowRate(flow(c, 4096), r);
    expect(a).toMatchObject({ lossless: true, pfcMismatch: false, senderPriority: 3, receiverPriority: 3 });
    expect(a.gbps).toBeGreaterThan(24.0);
    expect(a.gbps).toBeLessThan(24.25);
    const b = flowRate(flow(c, 1024), r);
    expect(b.gbps).toBeGreaterThan(22.7);
    expect(b.gbps).toBeLessThan(22.9);
  });

  it('PFC on one end only: 55–80 %; without --tclass the test runs on priority 0', () => {
    const c = createCluster(2, 1, 'max');
    lossless(c.machines[0]!);
    portQos(c.machines[1]!, 'ens1f0')!.trust = 'dscp';
    const r = rng(2, 'test');
    const m = flowRate(flow(c, 4096), r);
    expect(m.pfcMismatch).toBe(true);
    expect(m.gbps / (25 * headerEfficiency(4096) * 0.985)).toBeGreaterThan(0.54);
    expect(m.gbps / (25 * headerEfficiency(4096) * 0.985)).toBeLessThan(0.81);
    expect(flowRate(flow(c, 4096, 'none'), r)).toMatchObject({ senderPriority: 0, pfcMismatch: false });
  });
});
