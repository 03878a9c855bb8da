/**
 * Every probe of the `inventory` stage (docs/STAGES.md §3.1) against the `fresh` lab, run the way the
 * tool runs them (LC_ALL=C, root probes through `sudo -n -- bash -c '<wrapper>' l20 env LC_ALL=C bash -s --`), asserting
 * concrete facts of the model and the real tools' formats.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { closeLab, ETHTOOL_SCRIPT, exec, openLab, openLabPair, PCIE_SCRIPT, ROOT_BASH, sh, text } from './helpers.js';

let lab: Lab;
let n1: Client;
let n2: Client;
const run = (c: Client, cmd: string) => sh(c, `LC_ALL=C ${cmd}`);
const root = (c: Client, script: string) => sh(c, ROOT_BASH, script);

beforeAll(async () => {
  ({ lab, n1, n2 } = await openLabPair());
});

afterAll(() => closeLab(lab, n1, n2));

describe('inventory probes on fresh', () => {
  test('os, kernel, hostname', async () => {
    const os = await run(n1, 'cat /etc/os-release');
    expect(os.out).toContain('VERSION_ID="22.04"\n');
    expect(os.out).toContain('PRETTY_NAME="Ubuntu 22.04.5 LTS"\n');
    expect(await run(n1, 'uname -r')).toEqual({ out: '5.15.0-126-generic\n', err: '', code: 0 });
    expect((await run(n2, 'hostname')).out).toBe('l20-n2\n');
  });

  test('lscpu -J and /proc/meminfo', async () => {
    const j = JSON.parse((await run(n1, 'lscpu -J')).out) as {
      lscpu: Array<{ field: string; data: string | null; children?: unknown[] }>;
    };
    const flat: Record<string, string | null> = {};
    const walk = (rows: Array<{ field: string; data: string | null; children?: unknown[] }>): void => {
      for (const r of rows) {
        flat[r.field] = r.data;
        if (r.children) walk(r.children as typeof rows);
      }
    };
    walk(j.lscpu);
    expect(flat['CPU(s):']).toBe('128');
    expect(flat['Model name:']).toBe('Intel(R) Xeon(R) Platinum 8462Y+');
    expect(flat['Socket(s):']).toBe('2');
    expect(flat['NUMA node(s):']).toBe('2');
    expect(flat['NUMA node1 CPU(s):']).toBe('32-63,96-127');
    const mem = (await run(n1, 'cat /proc/meminfo')).out;
    const total = Number(/^MemTotal:\s+(\d+) kB$/m.exec(mem)?.[1]);
    expect(total).toBeGreaterThan(1000 * 1024 * 1024);
    expect(mem).toMatch(/^HugePages_Total: {7}0$/m);
  });

  test('lspci -D -nn -d 15b3: lists two ConnectX-4 Lx cards', async () => {
    const r = await run(n1, 'lspci -D -nn -d 15b3:');
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    for (const l of lines)
      expect(l).toMatch(
        /^0000:[0-9a-f]{2}:00\.[01] Ethernet controller \[0200\]: Mellanox Technologies MT27710 Family \[ConnectX-4 Lx\] \[15b3:1015\]$/,
      );
    expect(new Set(lines.map((l) => l.slice(0, 10)))).toEqual(new Set(['0000:1a:00', '0000:9a:00']));
  });

  test('lspci lists eight L20s', async () => {
    const nn = (await run(n1, 'lspci -D -nn -d 10de:')).out.trimEnd().split('\n');
    expect(nn).toHaveLength(8);
    for (const l of nn)
      expect(l).toMatch(
        /^0000:[0-9a-f]{2}:00\.0 3D controller \[0302\]: NVIDIA Corporation AD102GL \[L20\] \[10de:26ba\] \(rev a1\)$/,
      );
    const plain = (await run(n1, 'lspci -D -d 10de:')).out.trimEnd().split('\n');
    expect(plain.map((l) => l.split(' ')[0])).toEqual(
      ['18', '19', '3a', '3b', '98', '99', 'ba', 'bb'].map((b) => `0000:${b}:00.0`),
    );
    expect(plain[0]).toBe('0000:18:00.0 3D controller: NVIDIA Corporation AD102GL [L20] (rev a1)');
  });

  test('lspci -vv needs root for capabilities', async () => {
    const user = await run(n1, 'lspci -D -vv -s 0000:18:00.0');
    expect(user.out).toContain('\tCapabilities: <access denied>\n');
    expect(user.out).toContain('\tKernel driver in use: nouveau\n\tKernel modules: nvidiafb, nouveau\n');
    expect(user.out).toContain('\tNUMA node: 0\n');
    const asRoot = await root(n1, 'lspci -D -vv -s 0000:18:00.0\nlspci -D -vv -s 0000:9a:00.1\n');
    expect(asRoot.out).toContain('\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n');
    expect(asRoot.out).toContain('\t\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)\n');
    expect(asRoot.out).toContain('\t\tLnkSta:\tSpeed 8GT/s (ok), Width x8 (ok)\n');
    expect(asRoot.out).toContain('\tNUMA node: 1\n');
    expect(asRoot.out).toContain('\tKernel driver in use: mlx5_core\n');
    expect(asRoot.out).not.toContain('access denied');
  });

  test('the PCIe script prints every GPU, NIC and bridge above them, with NUMA nodes', async () => {
    const r = await root(n1, PCIE_SCRIPT);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    const numa = [...r.out.matchAll(/^numa_node (\S+) (\d)$/gm)].map((m) => [m[1], m[2]]);
    expect(numa).toHaveLength(30); // 8 GPUs + 4 NIC functions + 4 root ports + 4 upstream + 10 downstream ports
    for (const [bdf, node] of numa) expect(node).toBe(parseInt((bdf as string).slice(5, 7), 16) < 0x80 ? '0' : '1');
    const blocks = r.out.split(/^numa_node .*\n/m).filter((b) => b.trim() !== '');
    expect(blocks).toHaveLength(30);
    const bridges = blocks.filter((b) => b.includes(' PCI bridge'));
    expect(bridges).toHaveLength(18);
    for (const b of bridges.filter((x) => !x.includes('Upstream Port'))) {
      expect(b).toContain(
        '\t\tACSCtl:\tSrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n',
      );
    }
    expect(blocks.filter((b) => b.includes('AD102GL [L20]'))).toHaveLength(8);
    expect(blocks.filter((b) => b.includes('ConnectX-4 Lx]'))).toHaveLength(4);
    const gpu = blocks.find((b) => b.startsWith('0000:98:00.0')) ?? '';
    expect(gpu).toContain('\t\tLnkSta:\tSpeed 16GT/s (ok), Width x16 (ok)\n');
    // The NIC's downstream port is wider than the card: 3.7.0 still calls that downgraded.
    expect(blocks.find((b) => b.startsWith('0000:17:02.0'))).toContain(
      '\t\tLnkSta:\tSpeed 8GT/s (downgraded), Width x8 (downgraded)\n',
    );
  });

  test('ip -j -d link, ip -j addr, default route, sysfs device links', async () => {
    const links = JSON.parse((await run(n1, 'ip -j -d link show')).out) as Array<Record<string, unknown>>;
    expect(links.map((l) => l.ifname)).toEqual(['lo', 'eno1', 'ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']);
    const ens1f0 = links[2] as Record<string, unknown>;
    expect(Object.keys(ens1f0)).toEqual([
      'ifindex',
      'ifname',
      'flags',
      'mtu',
      'qdisc',
      'operstate',
      'linkmode',
      'group',
      'txqlen',
      'link_type',
      'address',
      'broadcast',
      'promiscuity',
      'min_mtu',
      'max_mtu',
      'inet6_addr_gen_mode',
      'num_tx_queues',
      'num_rx_queues',
      'gso_max_size',
      'gso_max_segs',
      'parentbus',
      'parentdev',
      'altnames',
    ]);
    expect(ens1f0).toMatchObject({
      operstate: 'DOWN',
      flags: ['BROADCAST', 'MULTICAST'],
      mtu: 1500,
      parentdev: '0000:1a:00.0',
      altnames: ['enp26s0f0'],
    });
    const addrs = JSON.parse((await run(n1, 'ip -j addr show')).out) as Array<{
      ifname: string;
      addr_info: Array<Record<string, unknown>>;
    }>;
    const eno1 = addrs.find((a) => a.ifname === 'eno1');
    expect(eno1?.addr_info[0]).toEqual({
      family: 'inet',
      local: '10.0.0.1',
      prefixlen: 24,
      broadcast: '10.0.0.255',
      scope: 'global',
      label: 'eno1',
      valid_life_time: 4294967295,
      preferred_life_time: 4294967295,
    });
    expect(addrs.filter((a) => a.ifname.startsWith('ens')).every((a) => a.addr_info.length === 0)).toBe(true);
    const n2addrs = JSON.parse((await run(n2, 'ip -j addr show dev eno1')).out) as Array<{
      addr_info: Array<{ local: string }>;
    }>;
    expect(n2addrs[0]?.addr_info[0]?.local).toBe('10.0.0.2');
    expect((await run(n1, 'ip -j route show default')).out).toBe(
      '[{"dst":"default","gateway":"10.0.0.254","dev":"eno1","protocol":"static","flags":[]}]\n',
    );
    const dev = text(await exec(n1, 'for i in /sys/class/net/*; do echo "$i $(readlink -f $i/device)"; done')).out;
    expect(dev).toContain(
      '/sys/class/net/ens2f1 /sys/devices/pci0000:95/0000:95:01.0/0000:96:00.0/0000:97:02.0/0000:9a:00.1\n',
    );
    expect(dev).toContain('/sys/class/net/lo /sys/devices/virtual/net/lo/device\n');
    expect(dev.split('\n')[0]).toBe('/sys/class/net/eno1 /sys/devices/pci0000:00/0000:00:0f.0/0000:03:00.0');
  });

  test('management path', async () => {
    expect((await run(n2, 'echo "$SSH_CONNECTION"')).out).toMatch(/^10\.0\.0\.100 \d+ 10\.0\.0\.2 22\n$/);
  });

  test('rdma link show: four kernel-named ports, down, with trailing spaces', async () => {
    expect(await run(n1, 'rdma link show')).toEqual({
      out:
        'link mlx5_0/1 state DOWN physical_state DISABLED netdev ens1f0 \n' +
        'link mlx5_1/1 state DOWN physical_state DISABLED netdev ens1f1 \n' +
        'link mlx5_2/1 state DOWN physical_state DISABLED netdev ens2f0 \n' +
        'link mlx5_3/1 state DOWN physical_state DISABLED netdev ens2f1 \n',
      err: '',
      code: 0,
    });
  });

  test('ethtool and ethtool -i per ConnectX-4 Lx port', async () => {
    const r = await root(n1, ETHTOOL_SCRIPT);
    expect(r.code).toBe(0);
    const sections = r.out.split(/^### /m).filter(Boolean);
    expect(sections.map((s) => s.split('\n')[0])).toEqual(
      ['ens1f0', 'ens1f0', 'ens1f1', 'ens1f1', 'ens2f0', 'ens2f0', 'ens2f1', 'ens2f1'].map(
        (n, i) => `${i % 2 ? 'ethtool-i' : 'ethtool'} ${n}`,
      ),
    );
    const settings = sections[0] ?? '';
    expect(settings).toContain(
      'Settings for ens1f0:\n\tSupported ports: [ FIBRE ]\n\tSupported link modes:   1000baseKX/Full\n\t                        10000baseKR/Full\n',
    );
    expect(settings).toContain('\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n');
    expect(settings).toContain('\tSupports Wake-on: d\n');
    expect(settings).toContain('\tLink detected: no\n');
    expect(sections[1]).toBe(
      'ethtool-i ens1f0\ndriver: mlx5_core\nversion: 5.15.0-126-generic\nfirmware-version: 14.32.1010 (MT_2420110034)\n' +
        'expansion-rom-version: \nbus-info: 0000:1a:00.0\nsupports-statistics: yes\nsupports-test: yes\nsupports-eeprom-access: no\n' +
        'supports-register-dump: no\nsupports-priv-flags: yes\n',
    );
    const asUser = await run(n1, 'ethtool ens1f0');
    expect(asUser.err).toBe('netlink error: Operation not permitted\n');
    expect(asUser.out).not.toContain('Wake-on');
  });

  test('driver and NIC stack probes: not installed on fresh', async () => {
    const topo = await run(n1, 'nvidia-smi topo -m');
    expect(topo.code).toBe(127);
    expect(
      topo.err.startsWith(
        "Command 'nvidia-smi' not found, but can be installed with:\n\nsudo apt install nvidia-utils-535 ",
      ),
    ).toBe(true);
    expect(topo.err).toMatch(/# version 535\.183\.01-0ubuntu0\.22\.04\.1, or\n/);
    expect((await run(n1, 'nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv,noheader,nounits')).code).toBe(
      127,
    );
    expect(await run(n1, 'ofed_info -s')).toEqual({ out: '', err: 'bash: ofed_info: command not found\n', code: 127 });
    expect(await run(n1, 'cat /proc/driver/nvidia/version')).toEqual({
      out: '',
      err: 'cat: /proc/driver/nvidia/version: No such file or directory\n',
      code: 1,
    });
    const dpkg = await run(
      n1,
      "dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\\n' iproute2 rdma-core pciutils",
    );
    expect(dpkg).toEqual({
      out: 'ii  iproute2 5.15.0-1ubuntu2\nii  pciutils 1:3.7.0-6\n',
      err: 'dpkg-query: no packages found matching rdma-core\n',
      code: 1,
    });
  });

  test('cabling probes on down ports', async () => {
    expect(await run(n1, 'lldpcli -f json show neighbors')).toEqual({
      out: '',
      err: "Command 'lldpcli' not found, but can be installed with:\n\nsudo apt install lldpd\n",
      code: 127,
    });
    expect(await run(n1, 'ping -6 -c 2 -W 1 -I ens1f0 ff02::1')).toEqual({
      out: '',
      err: 'ping: connect: Network is unreachable\n',
      code: 2,
    });
    expect(await run(n1, 'ip -6 -j neigh show dev ens1f0')).toEqual({ out: '[]\n', err: '', code: 0 });
  });
});

describe('determinism', () => {
  const PROBES = [
    'ip -j -d link show',
    'rdma link show',
    'lspci -D -nn',
    'cat /proc/meminfo',
    'cat /sys/class/infiniband/mlx5_0/node_guid',
  ];

  test('hosts differ, the same seed gives byte-identical output, another seed does not', async () => {
    const macs = async (c: Client) =>
      (JSON.parse((await run(c, 'ip -j link show')).out) as Array<{ address: string }>).map((l) => l.address).slice(1);
    const m1 = await macs(n1);
    const m2 = await macs(n2);
    expect(m1.some((m) => m2.includes(m))).toBe(false);

    const { lab: again, conn: c2 } = await openLab();
    const { lab: other, conn: c3 } = await openLab({ seed: 2, hosts: 1 });
    try {
      for (const p of PROBES) {
        const [a, b] = await Promise.all([exec(n1, p), exec(c2, p)]);
        expect(b.stdout.equals(a.stdout), p).toBe(true);
        expect(b.stderr.equals(a.stderr), p).toBe(true);
      }
      expect(await macs(c3)).not.toEqual(m1);
    } finally {
      await Promise.all([closeLab(again, c2), closeLab(other, c3)]);
    }
  });
});
