import { describe, expect, it } from 'vitest';
import type { FabricFacts, FabricPort } from '../../checks/common/fabric.js';
import { activeMtuCheck, gidsCheck, portsCheck } from '../../checks/rdma-link/checks.js';
import { collectRdmaLink, parseGidLines, type RdmaLinkFacts } from '../../checks/rdma-link/facts.js';
import { rdmaLinkProbes } from '../../checks/rdma-link/probes.js';
import { cannotTellVerdict, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { ClusterInput } from '../../src/config/schema.js';
import type { HostCheckDef, HostFacts, PairCheckDef } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import type { RdmaLinkCluster } from '../../checks/rdma-link/cluster.js';
import { testContext } from '../helpers/stage-context.js';

const run = (stdout: string, exitCode = 0, stderr = ''): RunResult => ({
  commandLine: 'x',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

const NAMES: Array<[string, string, string]> = [
  ['ens1f0', '0000:1a:00.0', 'rocep26s0f0'],
  ['ens1f1', '0000:1a:00.1', 'rocep26s0f1'],
  ['ens2f0', '0000:9a:00.0', 'rocep154s0f0'],
  ['ens2f1', '0000:9a:00.1', 'rocep154s0f1'],
];
const mac = (h: number, p: number) => `b8:59:9f:0${h}:00:0${p}`;
const hexIp = (ip: string) =>
  ip
    .split('.')
    .map((x) => Number(x).toString(16).padStart(2, '0'))
    .reduce((a, b, i) => a + (i === 2 ? ':' : '') + b, '');
const v4gid = (ip: string) => `0000:0000:0000:0000:0000:ffff:${hexIp(ip)}`;
const llgid = (h: number, p: number) => `fe80:0000:0000:0000:ba59:9fff:fe0${h}:000${p}`;

interface HostSpec {
  /** Netdev MTU per port (default 9000). */
  mtu?: number[];
  down?: number[];
  /** Extra GID rows inserted before the IPv4 pair of a port (index shift). */
  extra?: Record<number, string[]>;
  nccl?: string;
  devinfo?: RunResult;
  bond?: boolean;
}

/** One host of design A (cable k ↔ 192.168.10k.h) as the probes would report it. */
function host(h: number, spec: HostSpec = {}): RdmaLinkFacts {
  const ports: FabricPort[] = NAMES.map(([n, b, d], p) => ({
    netdev: n,
    bdf: b,
    card: b.replace(/\.\d$/, ''),
    mac: mac(h, p),
    mtu: spec.mtu?.[p] ?? 9000,
    adminUp: true,
    operstate: spec.down?.includes(p) ? 'down' : 'up',
    addresses: spec.bond ? [] : [`192.168.10${p + 1}.${h}/24`],
    rdmaDevice: d,
    rdmaState: spec.down?.includes(p) ? 'DOWN' : 'ACTIVE',
    ...(spec.bond ? { master: 'bond0' } : {}),
  }));
  const fabric: FabricFacts = {
    host: `l20-n${h}`,
    ports,
    mgmt: {},
    netdevs: [
      ...ports.map((p) => ({
        name: p.netdev,
        bdf: p.bdf,
        mac: p.mac,
        mtu: p.mtu,
        adminUp: true,
        addresses: p.addresses,
        ...(p.master ? { master: p.master } : {}),
      })),
      ...(spec.bond
        ? [{ name: 'bond0', bdf: null, mtu: 9000, adminUp: true, kind: 'bond', addresses: [`192.168.100.${h}/24`] }]
        : []),
    ],
    rdma: NAMES.map(([n, , d], p) => ({
      device: d,
      port: 1,
      netdev: n,
      state: spec.down?.includes(p) ? 'DOWN' : 'ACTIVE',
      physState: spec.down?.includes(p) ? 'DISABLED' : 'LINK_UP',
    })),
    neighbours: NAMES.map(([n], p) => ({
      port: n,
      peerMacs: spec.down?.includes(p) ? [] : [mac(h === 1 ? 2 : 1, p)],
      state: spec.down?.includes(p) ? ('down' as const) : ('up' as const),
    })),
  };
  const gidLines = NAMES.flatMap(([n, , d], p) => {
    const ip = spec.bond ? `192.168.100.${h}` : `192.168.10${p + 1}.${h}`;
    const ndev = spec.bond ? 'bond0' : n;
    const extra = spec.extra?.[p] ?? [];
    const rows = [`${d} 0 IB/RoCE v1 ${n} ${llgid(h, p)}`, `${d} 1 RoCE v2 ${n} ${llgid(h, p)}`];
    extra.forEach((g, i) =>
      rows.push(`${d} ${2 + 2 * i} IB/RoCE v1 ${ndev} ${g}`, `${d} ${3 + 2 * i} RoCE v2 ${ndev} ${g}`),
    );
    const base = 2 + 2 * extra.length;
    rows.push(`${d} ${base} IB/RoCE v1 ${ndev} ${v4gid(ip)}`, `${d} ${base + 1} RoCE v2 ${ndev} ${v4gid(ip)}`);
    return rows;
  });
  const devinfo = NAMES.map(([, , d], p) => {
    const mtu = (spec.mtu?.[p] ?? 9000) >= 4192 ? 4096 : 1024;
    return `hca_id:\t${d}\n\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t14.32.1010\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\t${spec.down?.includes(p) ? 'PORT_DOWN (1)' : 'PORT_ACTIVE (4)'}\n\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tactive_mtu:\t\t${mtu} (${mtu === 4096 ? 5 : 3})\n\t\t\tlink_layer:\t\tEthernet\n\n`;
  }).join('');
  const facts = collectRdmaLink({
    host: `l20-n${h}`,
    results: {
      gids: run(`${gidLines.join('\n')}\n`),
      devinfo: spec.devinfo ?? run(devinfo),
      ibstat: run(
        NAMES.map(
          ([, , d], p) =>
            `CA '${d}'\n\tCA type: MT4117\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: ${spec.down?.includes(p) ? 'Down' : 'Active'}\n\t\tPhysical state: ${spec.down?.includes(p) ? 'Disabled' : 'LinkUp'}\n\t\tRate: ${spec.down?.includes(p) ? 40 : 25}\n\t\tLink layer: Ethernet\n`,
        ).join(''),
      ),
      ibdev2netdev: run('', 127, 'bash: line 1: ibdev2netdev: command not found\n'),
      'nccl-conf':
        spec.nccl !== undefined ? run(spec.nccl) : run('', 1, 'cat: /etc/nccl.conf: No such file or directory\n'),
      perftest: run('/usr/bin/ib_write_bw\n'),
    },
  });
  return { ...facts, fabric };
}

const pair = (a: RdmaLinkFacts, b: RdmaLinkFacts): Array<HostFacts<RdmaLinkFacts>> => [
  { host: a.host, facts: a },
  { host: b.host, facts: b },
];
const evalPair = (
  check: PairCheckDef<RdmaLinkFacts, RdmaLinkCluster>,
  all: Array<HostFacts<RdmaLinkFacts>>,
  settings: Partial<Omit<ClusterInput, 'hosts'>> = {},
) => check.evaluate(all, { ...testContext(undefined, settings), cluster: undefined });
const evalHost = (f: RdmaLinkFacts) => (portsCheck as HostCheckDef<RdmaLinkFacts>).evaluate(f, f.host, testContext());

describe('rdma-link facts', () => {
  it('reads the GID script lines, with unreadable type or netdev', () => {
    const rows = parseGidLines(
      [
        'rocep26s0f0 0 IB/RoCE v1 ens1f0 fe80:0000:0000:0000:ba59:9fff:fe01:0000',
        'rocep26s0f0 3 RoCE v2 ens1f0 0000:0000:0000:0000:0000:ffff:c0a8:6501',
        'mlx5_1 4  ens1f1 0000:0000:0000:0000:0000:ffff:c0a8:6601',
        'mlx5_1 5 RoCE v2  0000:0000:0000:0000:0000:ffff:c0a8:6601',
        'junk',
      ].join('\n'),
    );
    expect(rows.map((r) => [r.device, r.index, r.type, r.ndev, r.ipv4])).toEqual([
      ['rocep26s0f0', 0, 'IB/RoCE v1', 'ens1f0', undefined],
      ['rocep26s0f0', 3, 'RoCE v2', 'ens1f0', '192.168.101.1'],
      ['mlx5_1', 4, undefined, 'ens1f1', '192.168.102.1'],
      ['mlx5_1', 5, 'RoCE v2', undefined, '192.168.102.1'],
    ]);
  });
  it('takes the active MTU and NCCL_IB_GID_INDEX from the real formats', () => {
    const f = host(1, { mtu: [9000, 1500, 9000, 9000], nccl: '# tuned\nNCCL_IB_GID_INDEX=3\nNCCL_IB_TC=106\n' });
    expect(f.devinfo.map((d) => `${d.device} ${d.activeMtu} ${d.activeMtuCode}`)).toEqual([
      'rocep26s0f0 4096 5',
      'rocep26s0f1 1024 3',
      'rocep154s0f0 4096 5',
      'rocep154s0f1 4096 5',
    ]);
    expect(f.ncclGidIndex).toEqual({ value: '3', line: 2 });
    expect(f.ibstat.map((p) => p.state)).toEqual(['Active', 'Active', 'Active', 'Active']);
  });
});

describe('rdma-link.ports', () => {
  it('passes when every device is ACTIVE/LINK_UP', () => {
    expect(evalHost(host(1))).toMatchObject({ status: 'pass', summary: expect.stringContaining('4 RDMA devices') });
  });
  it('fails on a down port, naming it, with ibstat lines as evidence', () => {
    const v = evalHost(host(1, { down: [3] }));
    expect(v.status).toBe('fail');
    expect(v.summary).toBe('ens2f1 (rocep154s0f1): DOWN/DISABLED');
    expect(v.evidence).toContain('ibstat rocep154s0f1 port 1: State Down, Physical state Disabled, Rate 40');
    expect(v.fix).toMatch(/never means the link is up/);
  });
});

describe('rdma-link.gids', () => {
  it('passes with the IPv4 RoCE v2 GID at index 3 everywhere', () => {
    expect(evalPair(gidsCheck, pair(host(1), host(2)))).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('index 3'),
    });
  });
  it('fails R05 when a pinned index is not the IPv4 RoCE v2 GID on some host (wrong-gid)', () => {
    const conf = 'NCCL_IB_GID_INDEX=3\n';
    const v = evalPair(
      gidsCheck,
      pair(host(1, { nccl: conf }), host(2, { nccl: conf, extra: { 0: ['fd20:0101:0000:0000:0000:0000:0000:0002'] } })),
    );
    expect(v).toMatchObject({ status: 'fail', rule: 'R05' });
    expect(v.summary).toContain('l20-n2 rocep26s0f0');
    expect(v.evidence).toContain(
      'l20-n2 rocep26s0f0: index 3 is RoCE v2 fd20:0101:0000:0000:0000:0000:0000:0002 on ens1f0; the RoCE v2 IPv4 GID is index 5',
    );
    expect(v.evidence).toContain('/etc/nccl.conf:1 NCCL_IB_GID_INDEX=3');
    expect(v.fix).toMatch(/delete NCCL_IB_GID_INDEX/);
  });
  it('a pinned index in the cluster settings counts too', () => {
    expect(evalPair(gidsCheck, pair(host(1), host(2)), { nccl: { gidIndex: 2 } })).toMatchObject({
      status: 'fail',
      rule: 'R05',
    });
    expect(evalPair(gidsCheck, pair(host(1), host(2)), { nccl: { gidIndex: 3 } }).status).toBe('pass');
  });
  it('warns when the index differs between hosts without a pin', () => {
    const v = evalPair(
      gidsCheck,
      pair(host(1), host(2, { extra: { 0: ['fd20:0101:0000:0000:0000:0000:0000:0002'] } })),
    );
    expect(v.status).toBe('warn');
    expect(v.summary).toContain('3, 5');
  });
  it('fails when a port has no IPv4 GID', () => {
    const a = host(1);
    const b = host(2);
    b.gids = b.gids.filter((g) => !(g.device === 'rocep154s0f1' && g.ipv4));
    expect(evalPair(gidsCheck, pair(a, b))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('l20-n2 rocep154s0f1 (ens2f1)'),
    });
  });
  it("tutorial bond: every device carries bond0's GIDs → R16 evidence", () => {
    const v = evalPair(gidsCheck, pair(host(1, { bond: true }), host(2, { bond: true })), {
      network: { design: 'tutorial' },
    });
    expect(v).toMatchObject({ status: 'warn', rule: 'R16' });
    expect(v.evidence).toContain("l20-n1: rocep26s0f0, rocep26s0f1, rocep154s0f0, rocep154s0f1 all carry bond0's GIDs");
  });
});

describe('rdma-link.active-mtu', () => {
  it('passes at 4096 everywhere', () => {
    expect(evalPair(activeMtuCheck, pair(host(1), host(2)))).toMatchObject({ status: 'pass' });
  });
  it('fails R24 when the ends of a cable differ (mtu-mismatch)', () => {
    const v = evalPair(activeMtuCheck, pair(host(1), host(2, { mtu: [9000, 1500, 9000, 9000] })));
    expect(v).toMatchObject({ status: 'fail', rule: 'R24' });
    expect(v.evidence).toContain('cable 2: l20-n1:ens1f1 4096 (netdev 9000) ↔ l20-n2:ens1f1 1024 (netdev 1500)');
  });
  it('warns R24 when both ends are at 1024', () => {
    const mtu = [1500, 1500, 1500, 1500];
    expect(evalPair(activeMtuCheck, pair(host(1, { mtu }), host(2, { mtu })))).toMatchObject({
      status: 'warn',
      rule: 'R24',
    });
  });
  it('a device whose ibv_devinfo shows no active_mtu is "cannot tell", not "4096 on every device"', () => {
    const noMtu = run(
      'hca_id:\trocep26s0f0\n\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tEthernet\n',
    );
    const v = evalPair(activeMtuCheck, pair(host(1, { devinfo: noMtu }), host(2)));
    expect(v).toMatchObject({
      status: 'error',
      summary: expect.stringMatching(/^cannot tell: ibv_devinfo shows no active_mtu for l20-n1 ens1f0 rocep26s0f0/),
    });
  });

  it('cannot tell without ibv_devinfo: the engine names its package, a failing one names the step that installs it', () => {
    const missing = run('', 127, 'ibv_devinfo: command not found (ibverbs-utils)\n');
    const problems = unreadableNeeds(rdmaLinkProbes, activeMtuCheck.needs, { devinfo: missing });
    expect(cannotTellVerdict(problems, 'l20-n1')).toMatchObject({
      status: 'error',
      summary: 'cannot tell: ibv_devinfo is not installed on l20-n1 (package ibverbs-utils)',
      fix: expect.stringContaining('sudo apt-get install -y ibverbs-utils'),
    });
    const v = evalPair(
      activeMtuCheck,
      pair(host(1, { devinfo: run('', 255, 'Failed to get IB devices list\n') }), host(2)),
    );
    expect(v).toMatchObject({
      status: 'error',
      summary: 'cannot tell: ibv_devinfo failed on l20-n1',
      fix: expect.stringContaining('nic-stack.install-inbox'),
    });
  });
});
