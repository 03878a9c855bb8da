/**
 * Probe outputs of the shared fabric discovery (checks/common/fabric.ts) for the nic-stack and qos
 * check tests: two ConnectX-4 Lx cards (0000:1a:00.x, 0000:9a:00.x), ens1f0…ens2f1, in the formats
 * the real tools print (lspci -nn, ip -j, sysfs readlink, rdma link with its trailing spaces).
 */
import type { RunResult } from '../../src/transport/types.js';

export const run = (stdout: string, exitCode = 0, stderr = '', commandLine = 'x'): RunResult => ({
  commandLine,
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});

export const PORTS = [
  { netdev: 'ens1f0', bdf: '0000:1a:00.0', up: '0000:17:01.0/0000:18:00.0/0000:19:10.0' },
  { netdev: 'ens1f1', bdf: '0000:1a:00.1', up: '0000:17:01.0/0000:18:00.0/0000:19:10.0' },
  { netdev: 'ens2f0', bdf: '0000:9a:00.0', up: '0000:97:01.0/0000:98:00.0/0000:99:10.0' },
  { netdev: 'ens2f1', bdf: '0000:9a:00.1', up: '0000:97:01.0/0000:98:00.0/0000:99:10.0' },
] as const;

/** Host `n` (1-based): MACs differ per host; RDMA names `mlx5_N` or rdma-core's `rocep…`. */
export function fabricResults(
  n: number,
  opts: { naming?: 'kernel' | 'udev'; peer?: number } = {},
): Record<string, RunResult> {
  const mac = (i: number, host = n): string => `b8:59:9f:0${host}:00:0${i}`;
  const lspci = PORTS.map(
    (p) => `${p.bdf} Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]`,
  ).join('\n');
  const link = [
    {
      ifindex: 1,
      ifname: 'lo',
      flags: ['LOOPBACK', 'UP', 'LOWER_UP'],
      mtu: 65536,
      operstate: 'UNKNOWN',
      link_type: 'loopback',
      address: '00:00:00:00:00:00',
    },
    {
      ifindex: 2,
      ifname: 'eno1',
      flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
      mtu: 1500,
      operstate: 'UP',
      link_type: 'ether',
      address: `3c:ec:ef:00:00:0${n}`,
      parentbus: 'pci',
      parentdev: '0000:03:00.0',
    },
    ...PORTS.map((p, i) => ({
      ifindex: 3 + i,
      ifname: p.netdev,
      flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
      mtu: 9000,
      operstate: 'UP',
      link_type: 'ether',
      address: mac(i),
      parentbus: 'pci',
      parentdev: p.bdf,
    })),
  ];
  const addr = link.map((l, i) => ({
    ...l,
    addr_info:
      l.ifname === 'eno1'
        ? [{ family: 'inet', local: `10.0.0.${n}`, prefixlen: 24, scope: 'global' }]
        : i >= 2
          ? [{ family: 'inet', local: `192.168.${99 + i}.${n}`, prefixlen: 24, scope: 'global' }]
          : [],
  }));
  const sysfs = [
    '/sys/class/net/lo /sys/devices/virtual/net/lo',
    `/sys/class/net/eno1 /sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0`,
    ...PORTS.map((p) => `/sys/class/net/${p.netdev} /sys/devices/pci0000:${p.up.slice(5, 7)}/${p.up}/${p.bdf}`),
  ].join('\n');
  const name = (i: number): string =>
    opts.naming === 'udev' ? `rocep${parseInt(PORTS[i]!.bdf.slice(5, 7), 16)}s0f${i % 2}` : `mlx5_${i}`;
  const rdma = PORTS.map((p, i) => `link ${name(i)}/1 state ACTIVE physical_state LINK_UP netdev ${p.netdev} \n`).join(
    '',
  );
  const peer = opts.peer ?? (n === 1 ? 2 : 1);
  const neigh = PORTS.map(
    (p, i) =>
      `### neigh ${p.netdev}\n${JSON.stringify([{ dst: 'fe80::1', dev: p.netdev, lladdr: mac(i, peer), state: ['REACHABLE'] }])}`,
  ).join('\n');
  return {
    'lspci-nics': run(`${lspci}\n`),
    'ip-link': run(`${JSON.stringify(link)}\n`),
    'ip-addr': run(`${JSON.stringify(addr)}\n`),
    'sysfs-net': run(`${sysfs}\n`),
    'ssh-connection': run(`10.0.0.100 50000 10.0.0.${n} 22\n`),
    'route-default': run(
      `${JSON.stringify([{ dst: 'default', gateway: '10.0.0.254', dev: 'eno1', protocol: 'static', flags: [] }])}\n`,
    ),
    'rdma-link': run(rdma),
    lldp: run('', 127, 'bash: lldpcli: command not found\n'),
    neighbours: run(`${neigh}\n`),
  };
}

/** RDMA device names of fabricResults in port order. */
export function rdmaNames(naming: 'kernel' | 'udev'): string[] {
  return PORTS.map((p, i) => (naming === 'udev' ? `rocep${parseInt(p.bdf.slice(5, 7), 16)}s0f${i % 2}` : `mlx5_${i}`));
}
