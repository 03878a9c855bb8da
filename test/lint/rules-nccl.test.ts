/** NCCL rules R01–R06, R09–R15: each fires on its condition and stays silent otherwise. */
import { describe, expect, it } from 'vitest';
import { ids, lintMany, lintOne, only } from './helpers.js';

const DESIGN_A_NETPLAN = `network:
  version: 2
  ethernets:
    eno1: {addresses: [10.0.0.1/24], routes: [{to: default, via: 10.0.0.254}]}
    ens1f0: {mtu: 9000, addresses: [192.168.101.1/24]}
    ens1f1: {mtu: 9000, addresses: [192.168.102.1/24]}
    ens2f0: {mtu: 9000, addresses: [192.168.103.1/24]}
    ens2f1: {mtu: 9000, addresses: [192.168.104.1/24]}
`;
const LAG_NETPLAN = `network:
  version: 2
  ethernets: {ens1f0: {mtu: 9000}, ens1f1: {mtu: 9000}}
  bonds:
    bond0:
      interfaces: [ens1f0, ens1f1]
      mtu: 9000
      addresses: [192.168.110.1/24]
      parameters: {mode: 802.3ad, lacp-rate: fast, mii-monitor-interval: 100, transmit-hash-policy: layer3+4}
`;
const PIN = (v: string): string => `#!/bin/sh\npython3 -m venv /opt/v\n/opt/v/bin/pip install nvidia-nccl-cu12==${v}\n`;

describe('R01 NCCL_ALGO / NCCL_PROTO grammar', () => {
  it.each([
    ['NCCL_ALGO=COLLNET_CHAIN', 'Unrecognized element token "COLLNET_CHAIN" when parsing "COLLNET_CHAIN"'],
    ['NCCL_ALGO=allreduce:ring;tree', 'All entries except the first must have a prefix'],
    ['NCCL_ALGO=foo:ring', 'Unrecognized prefix token "foo"'],
    ['NCCL_ALGO=collnet', 'Unrecognized element token "collnet"'],
    ['NCCL_PROTO=LL,LL256', 'Unrecognized element token "LL256"'],
  ])('%s fires (blocker)', (line, msg) => {
    const r01 = only(lintOne(`${line}\n`), 'R01');
    expect(r01).toHaveLength(1);
    expect(r01[0]).toMatchObject({ severity: 'blocker', line: 1 });
    expect(r01[0]?.evidence).toContain(msg);
  });
  it.each([
    'NCCL_ALGO=Ring,TREE',
    'NCCL_ALGO=ring;allreduce:tree,collnetdirect',
    'NCCL_ALGO=^nvls',
    'NCCL_PROTO=LL,LL128,Simple',
    'NCCL_PROTO=^LL128',
    'NCCL_ALGO=PAT',
  ])('%s is silent', (line) => {
    expect(ids(lintOne(`${line}\n`))).not.toContain('R01');
  });
  it('an NCCL older than 2.24 ignored bad tokens: silent when the files pin one', () => {
    const r = lintMany({ conf: 'NCCL_ALGO=COLLNET_CHAIN\n', pin: PIN('2.21.5') });
    expect(ids(r.conf ?? [])).not.toContain('R01');
    expect(ids(r.conf ?? [])).toContain('R02');
  });
  it('tokens newer than the pinned NCCL fail', () => {
    const r = lintMany({ conf: 'NCCL_ALGO=PAT\n', pin: PIN('2.24.3') });
    expect(ids(r.conf ?? [])).not.toContain('R01');
    expect(
      lintMany({ conf: 'NCCL_ALGO=PAT,NVLSTREE,foo\n', pin: PIN('2.26.2') }).conf?.find((f) => f.rule === 'R01')
        ?.evidence,
    ).toContain('NCCL 2.26.2 (pinned in the files)');
  });
});

describe('R02 CollNet without SHARP', () => {
  it.each(['NCCL_ALGO=CollnetDirect,ring', 'NCCL_ALGO=COLLNET_CHAIN', 'NCCL_COLLNET_ENABLE=1'])(
    '%s fires (high)',
    (line) => {
      expect(only(lintOne(`${line}\n`), 'R02')[0]).toMatchObject({ severity: 'high', line: 1 });
    },
  );
  it.each(['NCCL_ALGO=^collnetdirect,collnetchain', 'NCCL_ALGO=ring', 'NCCL_COLLNET_ENABLE=0'])(
    '%s is silent',
    (line) => {
      expect(ids(lintOne(`${line}\n`))).not.toContain('R02');
    },
  );
});

describe('R03 removed variables', () => {
  it('renamed NCCL_IB_GDR_LEVEL names its replacement', () => {
    const f = only(lintOne('NCCL_IB_GDR_LEVEL=2\n'), 'R03')[0];
    expect(f?.severity).toBe('high');
    expect(f?.fix).toContain('NCCL_NET_GDR_LEVEL');
  });
  it.each(['NCCL_LL_THRESHOLD=0', 'NCCL_TREE_THRESHOLD=0', 'NCCL_SINGLE_RING_THRESHOLD=1', 'NCCL_IB_CUDA_SUPPORT=1'])(
    '%s fires',
    (l) => {
      expect(ids(lintOne(`${l}\n`))).toContain('R03');
    },
  );
  it('current names are silent', () =>
    expect(ids(lintOne('NCCL_NET_GDR_LEVEL=PXB\nNCCL_IB_TC=106\n'))).not.toContain('R03'));
});

describe('R04 GDR / P2P levels', () => {
  it.each(['NCCL_NET_GDR_LEVEL=PHB', 'NCCL_NET_GDR_LEVEL=2', 'NCCL_P2P_LEVEL=SYS', 'NCCL_P2P_LEVEL=5'])(
    '%s fires (high)',
    (l) => {
      expect(only(lintOne(`${l}\n`), 'R04')[0]?.severity).toBe('high');
    },
  );
  it('spells out the legacy integer', () =>
    expect(only(lintOne('NCCL_NET_GDR_LEVEL=2\n'), 'R04')[0]?.evidence).toContain('→ PXB'));
  it.each(['NCCL_NET_GDR_LEVEL=PXB', 'NCCL_NET_GDR_LEVEL=LOC', 'NCCL_P2P_LEVEL=NVL', 'NCCL_P2P_LEVEL=PIX'])(
    '%s is silent',
    (l) => {
      expect(ids(lintOne(`${l}\n`))).not.toContain('R04');
    },
  );
});

describe('R05 NCCL_IB_GID_INDEX', () => {
  it('fires when set, version unknown, and says so', () => {
    const f = only(lintOne('NCCL_IB_GID_INDEX=3\n'), 'R05')[0];
    expect(f?.severity).toBe('high');
    expect(f?.evidence).toContain('assuming the current release');
  });
  it('-1 is the default (R10), not R05', () => expect(ids(lintOne('NCCL_IB_GID_INDEX=-1\n'))).toEqual(['R10']));
  it('silent on a pinned NCCL older than 2.21', () =>
    expect(ids(lintMany({ c: 'NCCL_IB_GID_INDEX=3\n', p: PIN('2.19.3') }).c ?? [])).not.toContain('R05'));
});

describe('R06 NCCL_IB_HCA', () => {
  it.each(['NCCL_IB_HCA=mlx5_0:2', 'NCCL_IB_HCA==mlx5_bond_0:2', 'NCCL_IB_HCA=mlx5_0:x'])('%s fires (high)', (l) => {
    expect(only(lintOne(`${l}\n`), 'R06')[0]?.severity).toBe('high');
  });
  it.each([
    'NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1',
    'NCCL_IB_HCA=mlx5',
    'NCCL_IB_HCA=^mlx5_0:2',
    'NCCL_IB_HCA=rocep65s0f0:1',
  ])('%s is silent', (l) => {
    expect(ids(lintOne(`${l}\n`))).not.toContain('R06');
  });
  it('design B: the fix names the LAG devices and QPs per connection', () => {
    const r = lintMany({ conf: 'NCCL_IB_HCA=mlx5_0:2\n', np: LAG_NETPLAN });
    expect(only(r.conf ?? [], 'R06')[0]?.fix).toContain('NCCL_IB_HCA==mlx5_bond_0:1,mlx5_bond_1:1');
  });
});

describe('R09 NCCL_IB_SL', () => {
  const pcp =
    '#!/bin/sh\nmlnx_qos -i ens1f0 --trust pcp --pfc 0,0,0,1,0,0,0,0\nmlnx_qos -i ens1f1 --trust pcp --pfc 0,0,0,1,0,0,0,0\n';
  const dscp = pcp.replace(/pcp/g, 'dscp');
  it('fires under PCP trust when SL & 7 is not the PFC priority', () => {
    const f = only(lintMany({ conf: 'NCCL_IB_SL=0\n', qos: pcp }).conf ?? [], 'R09')[0];
    expect(f).toMatchObject({ severity: 'low', line: 1 });
    expect(f?.evidence).toContain('SL & 7 = 0');
  });
  it('silent under PCP with SL 3, and under DSCP trust', () => {
    expect(ids(lintMany({ conf: 'NCCL_IB_SL=11\n', qos: pcp }).conf ?? [])).not.toContain('R09');
    expect(ids(lintMany({ conf: 'NCCL_IB_SL=0\n', qos: dscp }).conf ?? [])).not.toContain('R09');
    expect(ids(lintOne('NCCL_IB_SL=0\n'))).not.toContain('R09');
  });
});

describe('R10 defaults restated', () => {
  it.each([
    'NCCL_BUFFSIZE=4194304',
    'NCCL_IB_TIMEOUT=20',
    'NCCL_IB_RETRY_CNT=7',
    'NCCL_CROSS_NIC=2',
    'NCCL_IB_GID_INDEX=-1',
  ])('%s fires (low)', (l) => {
    expect(only(lintOne(`${l}\n`), 'R10')[0]?.severity).toBe('low');
  });
  it.each(['NCCL_BUFFSIZE=8388608', 'NCCL_IB_TIMEOUT=22', 'NCCL_CROSS_NIC=0'])('%s is silent', (l) =>
    expect(ids(lintOne(`${l}\n`))).not.toContain('R10'),
  );
});

describe('R11 debug variables', () => {
  it.each([
    ['nccl.conf', 'NCCL_DEBUG=INFO\n'],
    ['nccl.conf', 'NCCL_DEBUG_SUBSYS=INIT,CALL\n'],
    ['nccl.conf', 'NCCL_DEBUG_SUBSYS=ALL\n'],
    ['script', '#!/bin/sh\nexport NCCL_DEBUG=TRACE\nvllm serve m\n'],
    ['script env prefix', '#!/bin/sh\nset -e\nNCCL_DEBUG=INFO vllm serve m\n'],
    ['unit', '[Service]\nEnvironment=NCCL_DEBUG=INFO\nExecStart=/usr/bin/vllm serve m\n'],
    ['Python', 'import os\nos.environ["NCCL_DEBUG"] = "INFO"\n'],
    ['Ray runtime env', 'import ray\nray.init(runtime_env={"env_vars": {"NCCL_DEBUG_SUBSYS": "COLL"}})\n'],
  ])('fires in %s', (_where, text) => {
    expect(only(lintOne(text), 'R11')[0]?.severity).toBe('high');
  });
  it.each([
    ['warn level', 'NCCL_DEBUG=WARN\n'],
    ['bring-up subsystems', 'NCCL_DEBUG_SUBSYS=INIT,NET\n'],
    ['exclusion list', 'NCCL_DEBUG_SUBSYS=^COLL\n'],
    ['one-off command line', 'NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET vllm serve m\n'],
  ])('silent for %s', (_what, text) => expect(ids(lintOne(text))).not.toContain('R11'));
});

describe('R12 nccl.conf syntax', () => {
  it.each([
    ['export NCCL_IB_TC=106', 'NCCL_IB_TC=106', '"export NCCL_IB_TC"'],
    ['NCCL_IB_TC = 106', 'NCCL_IB_TC=106', 'spaces around the name'],
    ['NCCL_IB_TC="106"', 'NCCL_IB_TC=106', 'quotes are kept'],
    ['NCCL_SOCKET_IFNAME==ens1f0 # cable 1', 'NCCL_SOCKET_IFNAME==ens1f0', 'inline comment'],
  ])('%s fires with the corrected line', (line, fixed, why) => {
    const f = only(lintOne(`NCCL_IB_HCA==mlx5_0:1\n${line}\n`), 'R12')[0];
    expect(f).toMatchObject({ severity: 'medium', line: 2 });
    expect(f?.evidence).toContain(why);
    expect(f?.fix).toContain(fixed);
  });
  it('malformed lines in a conf fire', () => {
    const r = only(lintOne('NCCL_IB_TC=106\n  # indented\nNCCL_CROSS_NIC\n'), 'R12');
    expect(r.map((f) => f.line)).toEqual([2, 3]);
  });
  it('silent for well-formed lines, for shell exports, and for non-NCCL env files', () => {
    expect(ids(lintOne('# c\nNCCL_IB_TC=106\nNCCL_CROSS_NIC=0\n'))).not.toContain('R12');
    expect(ids(lintOne('#!/bin/sh\nexport NCCL_IB_TC=106\n'))).not.toContain('R12');
    expect(ids(lintOne('L20_API_KEY="s3cret"\nHF_HOME=/data\n'))).not.toContain('R12');
  });
});

describe('R13 sourced / exported NCCL settings', () => {
  it('source of a KEY=VALUE file fires', () => {
    expect(only(lintOne('#!/bin/bash\nsource /etc/nccl.conf\nvllm serve m\n'), 'R13')[0]).toMatchObject({
      severity: 'high',
      line: 2,
    });
    expect(ids(lintOne('#!/bin/bash\n. ./cluster.env\nvllm serve m\n'))).toContain('R13');
  });
  it('set -a and a venv activate are silent', () => {
    expect(ids(lintOne('#!/bin/bash\nset -a\nsource /etc/nccl.conf\nset +a\nvllm serve m\n'))).not.toContain('R13');
    expect(ids(lintOne('#!/bin/bash\nsource /opt/l20/venv/bin/activate\nvllm serve m\n'))).not.toContain('R13');
  });
  it('exported NCCL_* where vLLM starts with Ray fires; with data parallelism it does not', () => {
    const ray =
      '#!/bin/bash\nexport NCCL_IB_HCA==mlx5_0:1\nvllm serve m -tp 8 -pp 2 --distributed-executor-backend ray\n';
    expect(only(lintOne(ray), 'R13')[0]).toMatchObject({ severity: 'high', line: 2 });
    expect(
      ids(lintOne('#!/bin/bash\nexport NCCL_IB_HCA==mlx5_0:1\nvllm serve m --data-parallel-size 16\n')),
    ).not.toContain('R13');
  });
});

describe('R14 NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME', () => {
  const run = (conf: string): ReturnType<typeof only> =>
    only(lintMany({ conf, np: DESIGN_A_NETPLAN }).conf ?? [], 'R14');
  it('an interface absent from the netplan (bond0 under design A) is high', () => {
    const f = run('NCCL_SOCKET_IFNAME==bond0\n')[0];
    expect(f?.severity).toBe('high');
    expect(f?.fix).toContain('NCCL_SOCKET_IFNAME==ens1f0');
  });
  it('the management interface is medium', () => expect(run('NCCL_SOCKET_IFNAME==eno1\n')[0]?.severity).toBe('medium'));
  it('a value without = is low (prefix)', () => expect(run('NCCL_SOCKET_IFNAME=ens1f0\n')[0]?.severity).toBe('low'));
  it('Gloo has no = syntax', () => expect(run('GLOO_SOCKET_IFNAME==ens1f0\n')[0]?.severity).toBe('high'));
  it('silent for ==ens1f0, exclusions, and Gloo by plain name', () => {
    expect(run('NCCL_SOCKET_IFNAME==ens1f0\nGLOO_SOCKET_IFNAME=ens1f0\nNCCL_SOCKET_IFNAME=^docker,lo\n')).toEqual([]);
  });
  it('without netplan only the prefix form is judged', () =>
    expect(only(lintOne('NCCL_SOCKET_IFNAME=bond0\n'), 'R14').map((f) => f.severity)).toEqual(['low']));
});

describe('R15 NCCL_CROSS_NIC under design A', () => {
  it('unset or ≠ 0 fires (low)', () => {
    expect(
      only(lintMany({ conf: 'NCCL_IB_HCA==mlx5_0:1\n', np: DESIGN_A_NETPLAN }).conf ?? [], 'R15')[0],
    ).toMatchObject({ severity: 'low', line: 1 });
    expect(only(lintMany({ conf: 'NCCL_CROSS_NIC=1\n', np: DESIGN_A_NETPLAN }).conf ?? [], 'R15')[0]?.line).toBe(1);
  });
  it('silent with NCCL_CROSS_NIC=0, and outside design A', () => {
    expect(ids(lintMany({ conf: 'NCCL_CROSS_NIC=0\n', np: DESIGN_A_NETPLAN }).conf ?? [])).not.toContain('R15');
    expect(ids(lintMany({ conf: 'NCCL_IB_TC=106\n', np: LAG_NETPLAN }).conf ?? [])).not.toContain('R15');
    expect(ids(lintOne('NCCL_IB_TC=106\n'))).not.toContain('R15');
  });
});

describe('design detection across both hosts', () => {
  it("two hosts' design-A netplans together are still design A (R15 fires, R14 accepts the cable-1 port)", () => {
    const node2 = DESIGN_A_NETPLAN.replace(/\.1\/24/g, '.2/24');
    const r = lintMany({
      n1: DESIGN_A_NETPLAN,
      n2: node2,
      conf: 'NCCL_SOCKET_IFNAME==ens1f0\nNCCL_IB_HCA==mlx5_0:1\n',
    });
    expect(ids(r.conf ?? [])).toEqual(['R15']);
    expect(ids(r.n1 ?? [])).toEqual([]);
    expect(ids(r.n2 ?? [])).toEqual([]);
  });
});
