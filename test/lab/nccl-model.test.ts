/**
 * The lab's NCCL model (lab/tools/nccl*.ts) on a `ready` cluster, with one fault put into the
 * model at a time. Every rendered log is read back with the parsers and output rules `doctor`
 * applies to real NCCL logs.
 */
import { describe, expect, it } from 'vitest';
import { ncclLogFindings } from '../../src/doctor/kinds/gpu/nccl.js';
import { createCluster, type Cluster } from '../../lab/model/cluster.js';
import { portQos, setPfc } from '../../lab/model/qos.js';
import { syncGids } from '../../lab/model/rdma.js';
import type { Machine } from '../../lab/model/types.js';
import { resolveScenario } from '../../lab/scenarios/index.js';
import { HostLogger, type RankIds } from '../../lab/tools/nccl-log.js';
import { hostPlan, jobOutcome, type JobOutcome } from '../../lab/tools/nccl.js';
import { ncclSettings, parseAlgoList, parseNcclConfFile } from '../../lab/tools/nccl-settings.js';
import { scanNcclLog } from '../../src/parse/nccl-log.js';
import { rng } from '../../lab/util/prng.js';

const DEBUG = { NCCL_DEBUG: 'INFO', NCCL_DEBUG_SUBSYS: 'INIT,NET', HOME: '/home/l20' };

function ready(): Cluster {
  const c = createCluster(2, 1, 'max');
  for (const s of resolveScenario('ready')) s.apply(c);
  return c;
}

function files(m: Machine): Map<string, string> {
  return new Map([...(m.files ?? [])].filter(([p]) => p.endsWith('nccl.conf')).map(([p, f]) => [p, f.content]));
}

function job(c: Cluster, env: Record<string, string> = {}, nodes = c.machines): JobOutcome {
  const plans = nodes.map((m) => hostPlan(m, ncclSettings({ ...DEBUG, ...env }, files(m))));
  return jobOutcome(c, plans, 8);
}

/** Node n's log, every phase in order. */
function log(o: JobOutcome, n: number): string {
  const ranks: RankIds[] = Array.from({ length: 8 }, (_, i) => ({
    rank: n * 8 + i,
    localRank: i,
    pid: 1000 + i,
    proxyTid: 2000 + i,
    progressTid: 3000 + i,
    comm: `55${i}`,
  }));
  const l = new HostLogger({
    outcome: o,
    nodeRank: n,
    localRanks: 8,
    ranks,
    commId: 'abc',
    rng: rng(1, 'test', n),
  }).render();
  return [...l.init, ...l.connect, ...l.failure, ...l.complete, ...l.destroy].join('\n');
}

const rules = (text: string) =>
  ncclLogFindings(text)
    .filter((f) => f.severity !== 'info')
    .map((f) => f.rule);

describe('NCCL settings as NCCL reads them', () => {
  it('conf files: # in column 0 skipped, lines without = skipped, value verbatim (quotes and spaces included)', () => {
    expect(parseNcclConfFile('# c\nNCCL_A=1\n  # not a comment=x\nno equals\nNCCL_B="2" # x\n')).toEqual([
      ['NCCL_A', '1'],
      ['  # not a comment', 'x'],
      ['NCCL_B', '"2" # x'],
    ]);
  });
  it('the environment wins over ~/.nccl.conf, which wins over /etc/nccl.conf; NCCL_CONF_FILE replaces ~/.nccl.conf', () => {
    const f = new Map([
      ['/home/l20/.nccl.conf', 'NCCL_A=user\nNCCL_B=user\n'],
      ['/etc/nccl.conf', 'NCCL_A=etc\nNCCL_B=etc\nNCCL_C=etc\n'],
      ['/x.conf', 'NCCL_C=x\n'],
    ]);
    const s = ncclSettings({ HOME: '/home/l20', NCCL_A: 'env' }, f);
    expect([s.env.NCCL_A, s.env.NCCL_B, s.env.NCCL_C]).toEqual(['env', 'user', 'etc']);
    expect(s.source).toMatchObject({ NCCL_A: 'environment', NCCL_B: '/home/l20/.nccl.conf', NCCL_C: '/etc/nccl.conf' });
    expect(ncclSettings({ HOME: '/home/l20', NCCL_CONF_FILE: '/x.conf' }, f).env).toMatchObject({
      NCCL_B: 'etc',
      NCCL_C: 'x',
    });
  });
  it("NCCL_ALGO / NCCL_PROTO follow NCCL's list grammar", () => {
    for (const ok of ['Ring,Tree', 'ring', '^NVLS', 'allreduce:ring;broadcast:tree', 'CollNetChain', 'PAT'])
      expect(parseAlgoList(ok, false), ok).toBeUndefined();
    expect(parseAlgoList('COLLNET_CHAIN', false)).toBe(
      'Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"',
    );
    expect(parseAlgoList('collnet', false)).toContain('Unrecognized element token "collnet"');
    expect(parseAlgoList('bad:ring', false)).toBe('Unrecognized prefix token "bad" when parsing "bad:ring"');
    expect(parseAlgoList('LL128,Simple', true)).toBeUndefined();
  });
});

describe('the NCCL model on the ready cluster', () => {
  it('four rails with GDR: busbw 4 × 2.9 × 0.72; the log passes the doctor rules and lists the four devices', () => {
    const o = job(ready());
    expect(o.failure).toBeUndefined();
    expect(o).toMatchObject({ network: 'IB', gdr: true });
    expect(o.rails).toHaveLength(4);
    expect(o.busbwGBps).toBeCloseTo(4 * 2.9 * 0.72, 5);
    for (const n of [0, 1]) {
      const text = log(o, n);
      expect(rules(text)).toEqual([]);
      const scan = scanNcclLog(text);
      expect(scan.facts).toMatchObject({
        network: 'IB',
        ncclVersion: '2.27.3',
        nNodes: 2,
        nRanks: 16,
        initComplete: 8,
        gdr: true,
      });
      expect(scan.facts.hcas).toEqual([
        'rocep26s0f0:1/RoCE',
        'rocep26s0f1:1/RoCE',
        'rocep154s0f0:1/RoCE',
        'rocep154s0f1:1/RoCE',
      ]);
      expect(scan.facts.gdrdmaChannels).toBeGreaterThan(0);
      expect(text).toContain('Bootstrap: Using ens1f0:192.168.10');
    }
  });

  it('one node: intra-node ≈ 19 GB/s; ACS redirecting P2P halves it to ≈ 9', () => {
    const c = ready();
    expect(job(c, {}, [c.machines[0]!]).busbwGBps).toBe(19);
    const m = c.machines[0]!;
    for (const b of m.pci) if (b.acs && b.kind === 'switch-down') b.acs.ctl.srcValid = true;
    expect(job(c, {}, [m]).busbwGBps).toBe(9);
  });

  it('NCCL_IB_HCA naming nothing: No device found, the socket transport at ≈ 1.5 GB/s, D01 high', () => {
    const o = job(ready(), { NCCL_IB_HCA: 'mlx5_0:1,mlx5_1:1' });
    expect(o).toMatchObject({ network: 'Socket', busbwGBps: 1.5 });
    const text = log(o, 0);
    expect(text).toContain('NET/IB : No device found.');
    expect(text).toContain('Using network Socket');
    expect(ncclLogFindings(text).find((f) => f.rule === 'D01')?.severity).toBe('high');
  });

  it('NCCL_ALGO=COLLNET_CHAIN: every rank fails with invalid usage after the rings connect (D03)', () => {
    const o = job(ready(), { NCCL_ALGO: 'COLLNET_CHAIN' });
    expect(o.failure).toMatchObject({ kind: 'invalid-usage' });
    const text = log(o, 1);
    expect(text).toMatch(
      /l20-n2:\d+:\d+ \[0\] graph\/tuning\.cc:\d+ NCCL WARN Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"/,
    );
    expect(text).toMatch(/NCCL INFO graph\/tuning\.cc:\d+ -> 5/);
    expect(rules(text)).toContain('D03');
    expect(text).not.toContain('Init COMPLETE');
  });

  it('a pinned GID index that is an IPv6 GID on one host: ibv_modify_qp 101 Network is unreachable (D05)', () => {
    const c = ready();
    const n2 = c.machines[1]!;
    const port = n2.netdevs.find((d) => d.name === 'ens1f0')!;
    // The IPv4 address goes and comes back after a ULA: the kernel hands the ULA GID slots 2/3.
    const v4 = port.addresses.filter((a) => a.family === 'inet');
    port.addresses = port.addresses.filter((a) => a.family !== 'inet');
    syncGids(n2);
    port.addresses.push({
      family: 'inet6',
      local: 'fd20:101::2',
      prefixlen: 64,
      scope: 'global',
      validLft: 4294967295,
      preferredLft: 4294967295,
    });
    syncGids(n2);
    port.addresses.push(...v4);
    const o = job(c, { NCCL_IB_GID_INDEX: '3' });
    expect(o.failure).toMatchObject({ kind: 'modify-qp', errno: 101 });
    const text = log(
      o,
      c.machines.indexOf(c.machines.find((m) => m.hostname === (o.failure as { host: string }).host)!),
    );
    expect(text).toMatch(
      /misc\/ibvwrap\.cc:\d+ NCCL WARN Call to ibv_modify_qp failed with 101 Network is unreachable, on dev rocep26s0f0:1, curr state INIT, next state RTR, local GID index 3/,
    );
    expect(rules(text)).toContain('D05');
  });

  it('an MTU that differs on a rail: a local length completion error on the smaller side (D04)', () => {
    const c = ready();
    c.machines[1]!.netdevs.find((d) => d.name === 'ens1f1')!.mtu = 1500;
    const o = job(c);
    expect(o.failure).toMatchObject({ kind: 'completion', status: 1, host: 'l20-n2', afterBytes: 1024 });
    const text = log(o, 1);
    expect(text).toMatch(
      /NET\/IB : Got completion from peer 192\.168\.101\.1<\d+> with status=1 opcode=128 len=0 vendor err 105 \(Recv\) localGid ::ffff:192\.168\.102\.2 remoteGids ::ffff:192\.168\.102\.1 hca rocep26s0f1/,
    );
    expect(ncclLogFindings(text).find((f) => f.rule === 'D04')?.title).toContain('completion error 1');
  });

  it('PFC on one end of a rail only: × 0.6', () => {
    const c = ready();
    setPfc(portQos(c.machines[1]!, 'ens1f0')!, [false, false, false, false, false, false, false, false]);
    const o = job(c);
    expect(o.rails[0]?.pfcMismatch).toBe(true);
    expect(o.busbwGBps).toBeCloseTo(4 * 2.9 * 0.72 * 0.6, 5);
  });

  it('no GDR path (proprietary module, no peermem): −10 %, GPU Direct RDMA Disabled per HCA (D02)', () => {
    const c = ready();
    for (const m of c.machines) {
      if (m.nvidia?.loaded) m.nvidia.loaded.open = false;
      m.modules = m.modules.filter((x) => x !== 'nvidia_peermem');
    }
    const o = job(c);
    expect(o.gdr).toBe(false);
    expect(o.busbwGBps).toBeCloseTo(4 * 2.9 * 0.72 * 0.9, 5);
    const text = log(o, 0);
    expect(text).toContain("NET/IB : GPU Direct RDMA Disabled for HCA 0 'rocep26s0f0'");
    expect(text).toContain('Connected all rings, use ring PXN 0 GDR 0');
    expect(rules(text)).toEqual(['D02']);
  });

  it('a cable unplugged: its port is not ACTIVE, NCCL leaves it out, three rails remain', () => {
    const c = ready();
    c.cables[3]!.plugged = false;
    const o = job(c);
    expect(o.failure).toBeUndefined();
    expect(o.rails).toHaveLength(3);
    expect(scanNcclLog(log(o, 0)).facts.hcas).toHaveLength(3);
  });

  it('the bootstrap address out of reach (cable 1 unplugged): the other node cannot connect, node 1 sees it go', () => {
    const c = ready();
    c.cables[0]!.plugged = false;
    const o = job(c);
    expect(o.failure).toMatchObject({ kind: 'bootstrap', host: 'l20-n2', peer: '192.168.101.1' });
    expect(log(o, 1)).toMatch(
      /NCCL WARN socketStartConnect: Connect to 192\.168\.101\.1<\d+> failed : Software caused connection abort/,
    );
    expect(log(o, 0)).toMatch(/NCCL WARN socketProgress: Connection closed by remote peer l20-n2<\d+>/);
    expect(log(o, 0)).not.toContain('Init COMPLETE');
  });

  it('no NVIDIA driver: CUDA fails before NCCL says anything', () => {
    const c = ready();
    delete c.machines[0]!.nvidia?.loaded;
    const o = job(c);
    expect(o.failure).toMatchObject({ kind: 'cuda', host: 'l20-n1' });
    expect(log(o, 0)).toBe('');
  });
});
