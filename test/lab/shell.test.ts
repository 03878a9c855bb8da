/**
 * The machine shell without SSH: file-system views rendered from the model, command presence
 * following the dpkg database, GNU readlink over sysfs, and state changes showing up everywhere.
 */
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, test } from 'vitest';
import { createCluster, type Cluster } from '../../lab/model/cluster.js';
import type { Machine } from '../../lab/model/types.js';
import { createShell, type Shell } from '../../lab/shell/shell.js';
import { TOOLS } from '../../lab/tools/index.js';

const ENV = {
  HOME: '/home/l20',
  USER: 'l20',
  LANG: 'C.UTF-8',
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
};

let cluster: Cluster;
let m: Machine;
let sh: Shell;

async function run(commandLine: string, stdin = ''): Promise<{ out: string; err: string; code: number }> {
  const r = await sh.run({ commandLine, env: ENV, stdin: Buffer.from(stdin), signal: new AbortController().signal });
  return { out: r.stdout.toString(), err: r.stderr.toString(), code: r.exitCode };
}

beforeAll(async () => {
  cluster = createCluster(2, 1, 'max');
  m = cluster.machines[0] as Machine;
  sh = await createShell(m, cluster, TOOLS);
});

describe('machine shell', () => {
  test('sysfs: PCI hierarchy, attributes, errno of a down link', async () => {
    expect((await run('readlink /sys/bus/pci/devices/0000:1a:00.0')).out).toBe(
      '../../../devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0\n',
    );
    expect(
      (await run('cat /sys/bus/pci/devices/0000:18:00.0/vendor /sys/bus/pci/devices/0000:18:00.0/class')).out,
    ).toBe('0x10de\n0x030200\n');
    expect((await run('cat /sys/bus/pci/devices/0000:18:00.0/current_link_speed')).out).toBe('16.0 GT/s PCIe\n');
    expect((await run('readlink -f /sys/bus/pci/devices/0000:9a:00.0/driver')).out).toBe(
      '/sys/bus/pci/drivers/mlx5_core\n',
    );
    expect(await run('cat /sys/class/net/ens1f0/carrier')).toEqual({
      out: '',
      err: 'cat: /sys/class/net/ens1f0/carrier: Invalid argument\n',
      code: 1,
    });
    expect((await run('cat /sys/class/net/ens1f0/operstate /sys/class/net/eno1/operstate')).out).toBe('down\nup\n');
    expect((await run('ls /sys/class/infiniband')).out).toBe('mlx5_0\nmlx5_1\nmlx5_2\nmlx5_3\n');
    expect((await run('cat /sys/class/infiniband/mlx5_2/ports/1/state')).out).toBe('1: DOWN\n');
    expect(await run('echo 9000 > /sys/class/net/ens1f0/mtu')).toEqual({
      out: '',
      err: 'bash: /sys/class/net/ens1f0/mtu: Permission denied\n',
      code: 1,
    });
  });

  test('state changes show up in every view', async () => {
    const ports = ['ens1f0'];
    const set = (up: boolean): void => {
      for (const c of cluster.machines) for (const d of c.netdevs) if (ports.includes(d.name)) d.adminUp = up;
      for (const c of cluster.machines) c.revision++;
    };
    set(true);
    try {
      expect((await run('cat /sys/class/net/ens1f0/operstate /sys/class/net/ens1f0/speed')).out).toBe('up\n25000\n');
      expect((await run('rdma link show mlx5_0/1')).out).toBe(
        'link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens1f0 \n',
      );
      expect((await run('sudo ethtool ens1f0 | grep -E "Speed|Link detected"')).out).toBe(
        '\tSpeed: 25000Mb/s\n\tLink detected: yes\n',
      );
    } finally {
      set(false);
    }
    expect((await run('rdma link show mlx5_0')).out).toContain('state DOWN physical_state DISABLED');
  });

  test('a tool exists only while its package is installed', async () => {
    expect((await run('command -v lspci ethtool')).out).toBe('/usr/bin/lspci\n/usr/bin/ethtool\n');
    expect((await run('command -v nvidia-smi')).code).toBe(1);
    expect((await run('which ofed_info')).code).toBe(1);
    const removed = m.packages.get('pciutils');
    m.packages.delete('pciutils');
    await sh.syncCommands();
    expect(await run('lspci')).toEqual({ out: '', err: 'bash: lspci: command not found\n', code: 127 });
    if (removed) m.packages.set('pciutils', removed);
    await sh.syncCommands();
    expect((await run('lspci -d 10de: | wc -l')).out.trim()).toBe('8');
  });

  test('command-not-found hints depend on the user', async () => {
    expect((await run('lldpcli show neighbors')).err).toBe(
      "Command 'lldpcli' not found, but can be installed with:\n\nsudo apt install lldpd\n",
    );
    expect((await run('sudo bash -c "lldpcli show neighbors"')).err).toBe(
      "Command 'lldpcli' not found, but can be installed with:\n\napt install lldpd\n",
    );
    expect((await run('sudo -n lldpcli')).err).toBe('sudo: lldpcli: command not found\n');
  });

  test('GNU readlink, identity, simulated time', async () => {
    expect((await run('readlink -f /bin/cat; readlink -e /nope; echo $?; readlink -m /nope/a/../b')).out).toBe(
      '/usr/bin/cat\n1\n/nope/b\n',
    );
    expect((await run('id; sudo id -un; whoami')).out).toBe(
      'uid=1000(l20) gid=1000(l20) groups=1000(l20),4(adm),24(cdrom),27(sudo),30(dip),46(plugdev),110(lxd)\nroot\nl20\n',
    );
    expect((await run('date -u +%Y-%m-%d')).out).toBe('2025-01-06\n');
    expect((await run('touch /tmp/x; ls -l /tmp/x')).out).toMatch(/ Jan {2}6 {2}2025 \/tmp\/x\n$/);
  });

  test('lspci option forms', async () => {
    expect((await run('lspci -s 18:00.0')).out).toBe(
      '18:00.0 3D controller: NVIDIA Corporation AD102GL [L20] (rev a1)\n',
    );
    expect((await run('lspci -n -s 1a:00.1')).out).toBe('1a:00.1 0200: 15b3:1015\n');
    expect((await run('lspci -nnk -s 0000:1a:00.0')).out).toBe(
      '1a:00.0 Ethernet controller [0200]: Mellanox Technologies MT27710 Family [ConnectX-4 Lx] [15b3:1015]\n' +
        '\tSubsystem: Mellanox Technologies Stand-up ConnectX-4 Lx EN, 25GbE dual-port SFP28, PCIe3.0 x8, MCX4121A-ACAT [15b3:0003]\n' +
        '\tKernel driver in use: mlx5_core\n\tKernel modules: mlx5_core\n',
    );
    expect((await run('lspci -nn -s 15:01.0')).out).toBe(
      '15:01.0 PCI bridge [0604]: Intel Corporation Device [8086:352a] (rev 04)\n',
    );
    expect((await run('lspci -d 10de: -v -s bb:00.0')).out).toMatch(
      /\n\tFlags: bus master, fast devsel, latency 0, IRQ \d+, NUMA node 1\n/,
    );
    expect((await run('lspci -x')).code).toBe(0);
    expect((await run('lspci --bogus')).code).toBe(2);
  });

  test('dpkg-query forms', async () => {
    expect((await run("dpkg-query -W -f='${Package} ${Status}\\n' sudo")).out).toBe('sudo install ok installed\n');
    expect((await run('dpkg-query -W iproute2')).out).toBe('iproute2\t5.15.0-1ubuntu2\n');
    expect((await run("dpkg-query -W -f='${Package}\\n' 'linux-image-*'")).out).toBe(
      'linux-image-5.15.0-126-generic\nlinux-image-generic\n',
    );
  });
  test('grep with several -e matches a line against any of them, as the real GNU grep does', async () => {
    const input = 'A=1\nL20_API_KEY=x\nVLLM_API_KEY=y\nB=2\n';
    const forms = [
      "-v -e '^L20_API_KEY=' -e '^VLLM_API_KEY='",
      "-e '^L20' -e '^B'",
      "-c -E -e 'A=[0-9]' -e '^B'",
      "-ve '^A' -e '^B'",
      "-e '^B'",
    ];
    for (const args of forms) {
      const real = spawnSync('sh', ['-c', `grep ${args}`], { input, encoding: 'utf8' });
      expect(real.error, 'grep (Debian package grep) runs here').toBeUndefined();
      const lab = await run(`grep ${args}`, input);
      expect({ out: lab.out, code: lab.code }, args).toEqual({ out: real.stdout, code: real.status });
    }
  });
});
