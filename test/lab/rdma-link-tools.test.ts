/**
 * The rdma-link tools on the lab over real SSH: ib_write_bw across the two machines, ibstat, ethtool -S
 * and the GID script, each read by the parser that reads the real samples.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GIDS_SCRIPT } from '../../checks/rdma-link/probes.js';
import { parseGidLines } from '../../checks/rdma-link/facts.js';
import { parseEthtoolStats } from '../../src/parse/ethtool-stats.js';
import { parseIbstat } from '../../src/parse/ibstat.js';
import { parsePerftest } from '../../src/parse/perftest.js';
import type { RunResult } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { ensureDesignA, startServer } from './rdma-link-helpers.js';

describe('rdma-link tools on the ready lab', () => {
  let t: LabTarget;
  const run = (h: number, argv: string[], sudo = false): Promise<RunResult> => t.hosts[h]!.run({ argv }, { sudo });
  const script = (h: number, s: string, args: string[] = []): Promise<RunResult> =>
    t.hosts[h]!.run({ script: s, args });
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    ensureDesignA(t.lab);
  });
  afterAll(() => t.close());

  const dev = (h: number, netdev: string) => t.lab.hosts[h]!.machine.rdma.find((r) => r.netdev === netdev)!.name;

  it('ib_write_bw: server then client per cable, ≈ 24 Gb/s in the real output format on both sides', async () => {
    const d1 = dev(0, 'ens1f0');
    const d2 = dev(1, 'ens1f0');
    const args = ['-i', '1', '-x', '3', '-F', '--report_gbits', '-q', '4', '-D', '10', '--tclass=106', '-p', '18515'];
    const server = await startServer(t.lab, t.hosts[1]!, 1, ['ib_write_bw', '-d', d2, ...args], 18515);
    const client = await run(0, ['ib_write_bw', '-d', d1, ...args, '192.168.101.2']);
    const s = await server.done;
    expect(client.exitCode, client.stderr).toBe(0);
    expect(s.exitCode, s.stderr).toBe(0);
    const c = parsePerftest(client.stdout);
    expect(c).toMatchObject({
      side: 'client',
      device: d1,
      linkType: 'Ethernet',
      gidIndex: 3,
      mtu: 4096,
      qps: 4,
      unit: 'Gb/sec',
      localIpv4: '192.168.101.1',
      remoteIpv4: '192.168.101.2',
    });
    expect(c.results).toHaveLength(1);
    expect(c.results[0]!.bwAvgGbps).toBeGreaterThan(24.0);
    expect(c.results[0]!.bwAvgGbps).toBeLessThan(24.3);
    const sv = parsePerftest(s.stdout);
    expect(sv).toMatchObject({
      side: 'server',
      device: d2,
      gidIndex: 3,
      localIpv4: '192.168.101.2',
      remoteIpv4: '192.168.101.1',
    });
    expect(sv.results[0]!.bwAvgGbps).toBe(c.results[0]!.bwAvgGbps);
    expect(client.stdout).toContain(' Dual-port       : OFF\t\tDevice         : ');
    expect(client.stdout).toContain(' rdma_cm QPs\t : OFF\n');
    expect(s.stdout.startsWith('\n************************************\n* Waiting for client to connect... *\n')).toBe(
      true,
    );
  });

  it('a client with nobody listening is refused; a crossed pair has no route between the cable subnets', async () => {
    const refused = await run(0, ['ib_write_bw', '-d', dev(0, 'ens1f0'), '-x', '3', '-p', '18600', '192.168.101.2']);
    expect(refused).toMatchObject({
      exitCode: 1,
      stderr: "Couldn't connect to 192.168.101.2:18600\n Unable to init the socket connection\n",
    });
    const server = await startServer(
      t.lab,
      t.hosts[1]!,
      1,
      ['ib_write_bw', '-d', dev(1, 'ens1f1'), '-x', '3', '-p', '18601'],
      18601,
    );
    const client = await run(0, ['ib_write_bw', '-d', dev(0, 'ens1f0'), '-x', '3', '-p', '18601', '192.168.102.2']);
    expect(client.exitCode).toBe(1);
    expect(client.stderr).toContain("Unable to Connect the HCA's through the link");
    expect((await server.done).exitCode).toBe(1);
  });

  it('counters move with the traffic and parse as ethtool -S does', async () => {
    const r = await run(1, ['ethtool', '-S', 'ens1f0']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.startsWith('NIC statistics:\n     rx_packets: ')).toBe(true);
    const c = parseEthtoolStats(r.stdout).counters;
    expect(c.rx_vport_rdma_unicast_bytes).toBeGreaterThan(25e9);
    expect(c.rx_prio3_bytes).toBeGreaterThan(0);
    expect(c.rx_prio3_pause).toBeDefined();
    expect(c.rx_global_pause).toBeUndefined();
    expect(c.rx_discards_phy).toBe(0);
    expect(Object.keys(c).length).toBeGreaterThan(700);
  });

  it('ibstat prints MT4117, Rate 25 and Active for every port', async () => {
    const r = await run(0, ['ibstat']);
    const f = parseIbstat(r.stdout);
    expect(f.cas.map((x) => x.caType)).toEqual(['MT4117', 'MT4117', 'MT4117', 'MT4117']);
    expect(
      f.ports.every(
        (p) => p.state === 'Active' && p.physState === 'LinkUp' && p.rateGbps === 25 && p.linkLayer === 'Ethernet',
      ),
    ).toBe(true);
  });

  it('the GID script reads the table from sysfs: link-local at 0/1, the port IPv4 at 2/3', async () => {
    const r = await script(0, GIDS_SCRIPT);
    expect(r.exitCode).toBe(0);
    const rows = parseGidLines(r.stdout).filter((g) => g.device === dev(0, 'ens1f0'));
    expect(rows.map((g) => `${g.index} ${g.type} ${g.ndev} ${g.ipv4 ?? 'll'}`)).toEqual([
      '0 IB/RoCE v1 ens1f0 ll',
      '1 RoCE v2 ens1f0 ll',
      '2 IB/RoCE v1 ens1f0 192.168.101.1',
      '3 RoCE v2 ens1f0 192.168.101.1',
    ]);
  });
});

describe("ib_write_bw over the tutorial's 4-port bond", () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
  });
  afterAll(() => t.close());
  const dev = (h: number, netdev: string) => t.lab.hosts[h]!.machine.rdma.find((r) => r.netdev === netdev)!.name;
  const pairTest = async (serverPort: string, port: number): Promise<RunResult> => {
    const server = await startServer(
      t.lab,
      t.hosts[1]!,
      1,
      [
        'ib_write_bw',
        '-d',
        dev(1, serverPort),
        '-x',
        '3',
        '-F',
        '--report_gbits',
        '-q',
        '4',
        '-D',
        '10',
        '--tclass=106',
        '-p',
        String(port),
      ],
      port,
    );
    const client = await t.hosts[0]!.run({
      argv: [
        'ib_write_bw',
        '-d',
        dev(0, 'ens1f0'),
        '-x',
        '3',
        '-F',
        '--report_gbits',
        '-q',
        '4',
        '-D',
        '10',
        '--tclass=106',
        '-p',
        String(port),
        '192.168.100.2',
      ],
    });
    await server.done;
    return client;
  };

  it("the cabled pair runs at line rate on bond0's GIDs", async () => {
    const c = await pairTest('ens1f0', 18515);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(parsePerftest(c.stdout)).toMatchObject({
      gidIndex: 3,
      localIpv4: '192.168.100.1',
      remoteIpv4: '192.168.100.2',
    });
  });

  it('a crossed pair reaches an HCA that does not own the QP: completion error, status 12', async () => {
    const c = await pairTest('ens1f1', 18516);
    expect(c.exitCode).toBe(1);
    expect(c.stderr).toBe(
      ' Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n',
    );
    expect(parsePerftest(`${c.stdout}${c.stderr}`).errors).toContain('Completion with error at client');
  });
});
