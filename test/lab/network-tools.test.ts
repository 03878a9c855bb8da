/**
 * The network stage's lab tools over real SSH, read back with the parsers that read the corpus:
 * netplan get/try/apply, bonding (/proc/net/bonding, ip -d link, RoCE LAG), lldpcli, ufw, ping
 * across cables (MTU, jumbo), and the management path (a lost address drops SSH).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { parseBonding } from '../../src/parse/bonding.js';
import { parseIpJson } from '../../src/parse/ip-json.js';
import { parseIpLink } from '../../src/parse/ip-link.js';
import { parseLldpNeighbors } from '../../src/parse/lldp.js';
import { parseNetplanYaml } from '../../src/parse/netplan-yaml.js';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import { parseUfwStatus } from '../../checks/network/ufw-status.js';
import { addAddress } from '../../lab/tools/netdev-ops.js';
import { mergedSubtree } from '../../checks/network/steps.js';
import { notifyManagement } from '../../lab/tools/mgmt-path.js';
import { closeLab, connect, end, openLab, openLabPair, sh } from './helpers.js';

/** A new connection: `ok`, or `refused` when the server ends it before the handshake completes. */
async function tryConnect(lab: Lab, i: number): Promise<'ok' | 'refused'> {
  const c = new (await import('ssh2')).default.Client();
  const h = lab.hosts[i]!;
  return new Promise((resolve) => {
    c.once('ready', () => {
      c.end();
      resolve('ok');
    });
    c.once('error', () => resolve('refused'));
    c.once('close', () => resolve('refused'));
    c.connect({
      host: h.address,
      port: h.port,
      username: h.user,
      privateKey: lab.clientPrivateKey,
      readyTimeout: 10_000,
      hostVerifier: (k: Buffer) => k.equals(h.hostKeyBlob),
    });
  });
}

/** Writes a root-owned file through sudo, as an operator would. */
const put = (c: Client, path: string, content: string, mode = '600') =>
  sh(c, `sudo install -D -m ${mode} /dev/stdin ${path}`, content);

describe('netplan, bonding and RoCE LAG on the tutorial lab', () => {
  let lab: Lab;
  let c1: Client;
  beforeAll(async () => {
    ({ lab, conn: c1 } = await openLab({ scenario: 'tutorial' }));
  });
  afterAll(() => closeLab(lab, c1));

  it('netplan get merges the files as netplan prints them and warns about gateway4 and open modes', async () => {
    const r = await sh(c1, 'sudo netplan get');
    expect(r.code).toBe(0);
    const merged = parseNetplanYaml(r.out);
    expect(merged.bonds.map((b) => [b.name, b.interfaces, b.addresses])).toEqual([
      ['bond0', ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1'], ['192.168.100.1/24']],
    ]);
    expect(r.out).toContain('      - "192.168.100.1/24"\n');
    expect(r.err).toMatch(
      /\*\* \(process:\d+\): WARNING \*\*: \d\d:\d\d:\d\d\.\d{3}: Permissions for \/etc\/netplan\/02-bond-roce\.yaml are too open\./,
    );
    expect(r.err).toContain('`gateway4` has been deprecated, use default routes instead.');
    expect((await sh(c1, 'sudo netplan get ethernets.eno1.addresses')).out).toBe('- "10.0.0.1/24"\n');
    // network.write compares a device's subtree cut from the full view with what netplan prints for it.
    expect(`${mergedSubtree(r.out, 'eno1')}\n`).toBe((await sh(c1, 'sudo netplan get ethernets.eno1')).out);
    expect(mergedSubtree(r.out, 'ens9f9')).toBe((await sh(c1, 'sudo netplan get ethernets.ens9f9')).out.trim());
  });

  it('netplan try refuses bond parameters with exit 78 (R22)', async () => {
    const r = await sh(c1, 'sudo netplan try');
    expect(r.code).toBe(78);
    expect(r.out).toBe(
      "bond0: reverting custom parameters for bridges and bonds is not supported\n\nPlease carefully review the configuration and use 'netplan apply' directly.\n",
    );
  });

  it('the kernel kept balance-xor without lacp_rate fast, four slaves carrying the bond MAC, no LAG', async () => {
    const proc = await sh(c1, 'sudo cat /proc/net/bonding/bond0');
    const b = parseBonding(proc.out);
    expect(b).toMatchObject({ mode: 'balance-xor', hashPolicy: 'layer3+4', mii: 'up', miimonMs: 100 });
    expect(b.lacpRate).toBeUndefined();
    expect(b.slaves.map((s) => [s.name, s.mii, s.speedMbps])).toEqual([
      ['ens1f0', 'up', 25000],
      ['ens1f1', 'up', 25000],
      ['ens2f0', 'up', 25000],
      ['ens2f1', 'up', 25000],
    ]);
    const text = parseIpLink((await sh(c1, 'ip -d link show type bond')).out).netdevs;
    expect(text.map((n) => [n.ifname, n.bond?.mode, n.bond?.lacpRate, n.bond?.xmitHashPolicy])).toEqual([
      ['bond0', 'balance-xor', 'slow', 'layer3+4'],
    ]);
    const json = parseIpJson((await sh(c1, 'ip -j -d link show')).out).netdevs;
    const bond = json.find((n) => n.ifname === 'bond0');
    const slave = json.find((n) => n.ifname === 'ens2f1');
    expect(slave).toMatchObject({ master: 'bond0', mac: bond?.mac, slaveKind: 'bond', slaveState: 'ACTIVE' });
    expect(slave?.permMac).toBe(b.slaves[3]?.permanentMac);
    expect(slave?.permMac).not.toBe(bond?.mac);
    expect(parseRdmaLink((await sh(c1, 'rdma link show')).out).ports.map((p) => p.device)).toEqual([
      'mlx5_0',
      'mlx5_1',
      'mlx5_2',
      'mlx5_3',
    ]);
  });

  it('netplan apply never deletes an undescribed bond (R23); ip link delete does, and the ports take their addresses', async () => {
    await sh(c1, 'sudo mv /etc/netplan/02-bond-roce.yaml /root/');
    const a = 'network:\n  version: 2\n  ethernets:\n    ens1f0: {mtu: 9000, addresses: [192.168.101.1/24]}\n';
    await put(c1, '/etc/netplan/60-l20-fabric.yaml', a);
    expect((await sh(c1, 'sudo netplan apply')).code).toBe(0);
    let links = parseIpJson((await sh(c1, 'ip -j -d link show')).out).netdevs;
    expect(links.find((n) => n.ifname === 'bond0')).toBeDefined();
    expect(links.find((n) => n.ifname === 'ens1f0')?.master).toBe('bond0');
    expect((await sh(c1, 'sudo ip link delete dev bond0')).code).toBe(0);
    expect((await sh(c1, 'sudo netplan apply')).code).toBe(0);
    links = parseIpJson((await sh(c1, 'ip -j -d link show')).out).netdevs;
    expect(links.find((n) => n.ifname === 'bond0')).toBeUndefined();
    const addr = parseIpJson((await sh(c1, 'ip -j addr show dev ens1f0')).out).netdevs[0];
    expect(addr?.addresses?.filter((x) => x.family === 'inet').map((x) => `${x.local}/${x.prefixlen}`)).toEqual([
      '192.168.101.1/24',
    ]);
    expect(addr?.master).toBeUndefined();
    expect((await sh(c1, 'ip link delete dev ens1f0')).err).toBe('RTNETLINK answers: Operation not permitted\n');
  });

  it('both PFs of one card in 802.3ad form a RoCE LAG; partners follow the cables; deleting the bond restores the ports', async () => {
    const c2 = await connect(lab, lab.hosts[1]!);
    const lag = (i: number) =>
      `network:\n  version: 2\n  ethernets:\n    ens1f0: {mtu: 9000}\n    ens1f1: {mtu: 9000}\n  bonds:\n    bond7:\n      interfaces: [ens1f0, ens1f1]\n      mtu: 9000\n      addresses: [192.168.110.${i}/24]\n      parameters: {mode: 802.3ad, lacp-rate: fast, mii-monitor-interval: 100, transmit-hash-policy: layer3+4}\n`;
    for (const [c, i] of [
      [c1, 1],
      [c2, 2],
    ] as const) {
      await sh(
        c,
        'sudo rm -f /etc/netplan/60-l20-fabric.yaml /etc/netplan/02-bond-roce.yaml; sudo ip link delete dev bond0; true',
      );
      await put(c, '/etc/netplan/70-lag.yaml', lag(i));
      expect((await sh(c, 'sudo netplan apply')).code).toBe(0);
    }
    const rdma = parseRdmaLink((await sh(c1, 'rdma link show')).out).ports;
    expect(rdma.map((p) => [p.device, p.netdev])).toEqual([
      ['mlx5_bond_0', 'bond7'],
      ['mlx5_2', 'ens2f0'],
      ['mlx5_3', 'ens2f1'],
    ]);
    const peerMac = parseIpJson((await sh(c2, 'ip -j link show dev bond7')).out).netdevs[0]?.mac;
    const root = parseBonding((await sh(c1, 'sudo cat /proc/net/bonding/bond7')).out);
    expect(root).toMatchObject({
      mode: '802.3ad',
      lacpRate: 'fast',
      activeAggregator: { ports: 2, partnerMac: peerMac },
    });
    expect(new Set(root.slaves.map((s) => s.aggregatorId)).size).toBe(1);
    const user = parseBonding((await sh(c1, 'cat /proc/net/bonding/bond7')).out);
    expect(user.activeAggregator).toBeUndefined(); // details are root-only
    expect(await sh(c1, 'ping -c 3 -W 1 -M do -s 8972 -I bond7 192.168.110.2')).toMatchObject({
      code: 0,
      out: expect.stringContaining('3 received, 0% packet loss'),
    });
    expect((await sh(c1, 'sudo ip link delete dev bond7')).code).toBe(0);
    expect(parseRdmaLink((await sh(c1, 'rdma link show')).out).ports.map((p) => p.device)).toEqual([
      'mlx5_0',
      'mlx5_1',
      'mlx5_2',
      'mlx5_3',
    ]);
    await end(c2);
  });
});

describe('lldp, ufw, ping and the management path on the ready lab', () => {
  let lab: Lab;
  let c1: Client;
  let c2: Client;
  beforeAll(async () => {
    ({ lab, n1: c1, n2: c2 } = await openLabPair({ scenario: 'ready' }));
  });
  afterAll(() => closeLab(lab, c1, c2));

  it('lldpcli names the peer port of every cable, by its own MAC; the socket is root-only', async () => {
    const r = await sh(c1, 'sudo lldpcli -f json show neighbors');
    const n = parseLldpNeighbors(r.out);
    expect(n.error).toBeUndefined();
    const macs = parseIpJson((await sh(c2, 'ip -j link show')).out).netdevs;
    expect(n.neighbors.map((x) => [x.localPort, x.chassisName, x.peerPortDescr])).toEqual([
      ['ens1f0', 'l20-n2', 'ens1f0'],
      ['ens1f1', 'l20-n2', 'ens1f1'],
      ['ens2f0', 'l20-n2', 'ens2f0'],
      ['ens2f1', 'l20-n2', 'ens2f1'],
    ]);
    expect(n.neighbors[2]).toMatchObject({
      peerPortIdType: 'mac',
      peerPortId: macs.find((m) => m.ifname === 'ens2f0')?.mac,
    });
    const user = await sh(c1, 'lldpcli -f json show neighbors');
    expect(user.code).toBe(1);
    expect(user.err).toMatch(/unable to connect to socket \/run\/lldpd\.socket/);
    // The peer's lldpd stopped: it no longer announces itself (and its own lldpcli has no daemon).
    await sh(c2, 'sudo systemctl stop lldpd');
    expect(parseLldpNeighbors((await sh(c1, 'sudo lldpcli -f json show neighbors')).out).neighbors).toEqual([]);
    expect((await sh(c2, 'sudo lldpcli show neighbors')).code).toBe(1);
    await sh(c2, 'sudo systemctl start lldpd');
    expect(parseLldpNeighbors((await sh(c1, 'sudo lldpcli -f json show neighbors')).out).neighbors).toHaveLength(4);
  });

  it('netplan try without a terminal fails in tcgetattr before trying anything', async () => {
    expect(await sh(c1, 'sudo netplan try')).toEqual({
      code: 0,
      err: '',
      out: "\nAn error occured: (25, 'Inappropriate ioctl for device')\n\nReverting.\n",
    });
  });

  it('ufw status verbose lists ALLOW IN per fabric port and SSH on management', async () => {
    const u = parseUfwStatus((await sh(c1, 'sudo ufw status verbose')).out, '', 0);
    expect(u.active).toBe(true);
    expect(u.rules.filter((r) => !r.v6).map((r) => [r.iface, r.port, r.direction])).toEqual(
      expect.arrayContaining([
        ['eno1', 22, 'IN'],
        ['ens1f0', undefined, 'IN'],
        ['ens1f1', undefined, 'IN'],
        ['ens2f0', undefined, 'IN'],
        ['ens2f1', undefined, 'IN'],
      ]),
    );
    expect((await sh(c1, 'ufw status')).err).toBe('ERROR: You need to be root to run this script\n');
  });

  it('a firewall that drops the SSH port keeps the session but refuses new connections', async () => {
    expect((await sh(c2, 'sudo ufw delete allow in on eno1 to any port 22 proto tcp')).out).toBe(
      'Rule deleted\nRule deleted (v6)\n',
    );
    expect(await tryConnect(lab, 1)).toBe('refused');
    expect((await sh(c2, 'sudo ufw allow in on eno1 to any port 22 proto tcp')).out).toBe(
      'Rule added\nRule added (v6)\n',
    );
    expect(await tryConnect(lab, 1)).toBe('ok');
  });

  it('ping: jumbo frames pass at MTU 9000, are lost towards a 1500 port, and fail locally with -M do', async () => {
    expect((await sh(c1, 'ping -c 3 -W 1 -M do -s 8972 -I ens1f1 192.168.102.2')).out).toContain(
      '3 packets transmitted, 3 received, 0% packet loss',
    );
    await sh(c2, 'sudo ip link set dev ens1f1 mtu 1500');
    // The MTU change resets the port's channels: its carrier is gone for 2 s of modelled time.
    await lab.hosts[1]!.machine.clock.sleep(2500);
    const lost = await sh(c1, 'ping -c 3 -W 1 -M do -s 8972 -I ens1f1 192.168.102.2');
    expect(lost).toMatchObject({
      code: 1,
      out: expect.stringContaining('3 packets transmitted, 0 received, 100% packet loss'),
    });
    expect((await sh(c1, 'ping -c 3 -W 1 -I ens1f1 192.168.102.2')).code).toBe(0);
    const local = await sh(c2, 'ping -c 3 -W 1 -M do -s 8972 -I ens1f1 192.168.102.1');
    expect(local.err).toBe('ping: local error: message too long, mtu=1500\n'.repeat(3));
    expect(local.out).toContain('+3 errors, 100% packet loss');
    await sh(c2, 'sudo ip link set dev ens1f1 mtu 9000');
    await lab.hosts[1]!.machine.clock.sleep(2500);
    expect((await sh(c1, 'ping -c 1 -W 1 -I ens1f1 192.168.102.2')).code).toBe(0);
    const neigh = JSON.parse((await sh(c1, 'ip -j neigh show 192.168.102.2')).out) as Array<{
      dev: string;
      lladdr: string;
    }>;
    const peer = parseIpJson((await sh(c2, 'ip -j link show dev ens1f1')).out).netdevs[0]?.mac;
    expect(neigh).toEqual([{ dst: '192.168.102.2', dev: 'ens1f1', lladdr: peer, state: ['REACHABLE'] }]);
    expect(JSON.parse((await sh(c1, 'ip -j neigh show 192.168.199.9')).out)).toEqual([]);
  });

  it('a reboot keeps what netplan and ufw describe and drops runtime-only addresses', async () => {
    const c = await connect(lab, lab.hosts[0]!);
    await sh(c, 'sudo ip addr add 192.168.199.1/24 dev ens1f0');
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    c.exec('sudo reboot', () => undefined);
    await closed;
    let state: 'ok' | 'refused' = 'refused';
    for (let i = 0; i < 200 && state === 'refused'; i++) {
      state = await tryConnect(lab, 0);
      if (state === 'refused') await lab.hosts[0]!.machine.clock.sleep(5000);
    }
    expect(state).toBe('ok');
    c1 = await connect(lab, lab.hosts[0]!);
    const addr = parseIpJson((await sh(c1, 'ip -j addr show dev ens1f0')).out).netdevs[0];
    expect(addr?.addresses?.filter((a) => a.family === 'inet').map((a) => a.local)).toEqual(['192.168.101.1']);
    expect(addr?.mtu).toBe(9000);
    expect(parseUfwStatus((await sh(c1, 'sudo ufw status verbose')).out, '', 0).active).toBe(true);
    expect((await sh(c1, 'ping -c 3 -W 1 -M do -s 8972 -I ens2f1 192.168.104.2')).code).toBe(0);
  });

  it('removing the management address drops the sessions and refuses new ones until it is back', async () => {
    const closed = new Promise<void>((resolve) => c2.once('close', () => resolve()));
    c2.exec('sudo ip addr del 10.0.0.2/24 dev eno1', () => undefined);
    await closed;
    expect(await tryConnect(lab, 1)).toBe('refused');
    // The console (here: the model) puts it back.
    const m = lab.hosts[1]!.machine;
    addAddress(
      m,
      m.netdevs.find((d) => d.name === 'eno1')!,
      { family: 'inet', local: '10.0.0.2', prefixlen: 24 },
    );
    notifyManagement(m);
    expect(await tryConnect(lab, 1)).toBe('ok');
    c2 = await connect(lab, lab.hosts[1]!);
    expect((await sh(c2, 'hostname')).out).toBe('l20-n2\n');
  });
});
