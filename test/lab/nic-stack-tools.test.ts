/**
 * The nic-stack stage's commands on the lab, over real SSH, read with the parsers that read the
 * corpus: the inbox stack of `ready`, the tutorial's MLNX_OFED, and what installing rdma-core and
 * reloading the driver do to device names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { parseEthtoolInfo } from '../../src/parse/ethtool.js';
import { parseIbdev2netdev } from '../../src/parse/ibdev2netdev.js';
import { parseIbvDevices } from '../../src/parse/ibv-devices.js';
import { parseIbvDevinfo } from '../../src/parse/ibv-devinfo.js';
import { parseOfedInfo } from '../../src/parse/ofed-info.js';
import { parseRdmaLink } from '../../src/parse/rdma-link.js';
import { closeLab, openLab, rebootAndReconnect, sh } from './helpers.js';

const ROCE = ['rocep26s0f0', 'rocep26s0f1', 'rocep154s0f0', 'rocep154s0f1'];
const KERNEL = ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3'];

describe('nic-stack tools: ready (inbox rdma-core, rebooted)', () => {
  let lab: Lab;
  let c: Client;
  beforeAll(async () => {
    ({ lab, conn: c } = await openLab({ scenario: 'ready' }, 0));
  });
  afterAll(() => closeLab(lab, c));

  it('ibv_devices and ibv_devinfo list one Ethernet port per rocep… device, vendor_part_id 4117', async () => {
    const devs = await sh(c, 'ibv_devices');
    expect(devs.out).toMatch(/^ {4}device {10}\t {3}node GUID\n {4}------ {10}\t-{16}\n/);
    expect(parseIbvDevices(devs.out).devices.map((d) => d.device)).toEqual(ROCE);
    const info = parseIbvDevinfo((await sh(c, 'ibv_devinfo')).out);
    expect(info.devices.map((d) => d.device)).toEqual(ROCE);
    for (const d of info.devices)
      expect(d).toMatchObject({
        physPortCnt: 1,
        vendorPartId: 4117,
        fwVer: '14.32.1010',
        vendorId: '0x02c9',
        boardId: 'MT_2420110034',
      });
    expect(info.ports.map((p) => p.linkLayer)).toEqual(['Ethernet', 'Ethernet', 'Ethernet', 'Ethernet']);
    const one = await sh(c, 'ibv_devinfo -d rocep26s0f0');
    expect(parseIbvDevinfo(one.out).devices).toHaveLength(1);
    expect(await sh(c, 'ibv_devinfo -d mlx5_0')).toMatchObject({ code: 255, err: "IB device 'mlx5_0' wasn't found\n" });
    // rdma link and ibv_devices agree on the names.
    expect(parseRdmaLink((await sh(c, 'rdma link show')).out).ports.map((p) => p.device)).toEqual(ROCE);
  });

  it('the inbox stack: no ofed_info, mlx5_core reports the kernel release, the module has no version', async () => {
    const ofed = await sh(c, 'ofed_info -s');
    expect(ofed.code).toBe(127);
    expect(parseOfedInfo(`${ofed.out}${ofed.err}`).notInstalled).toBe(true);
    expect(parseEthtoolInfo((await sh(c, 'ethtool -i ens2f1')).out)).toMatchObject({
      driver: 'mlx5_core',
      version: '5.15.0-126-generic',
      firmware: '14.32.1010 (MT_2420110034)',
      busInfo: '0000:9a:00.1',
    });
    expect(await sh(c, 'modinfo -F version mlx5_core')).toMatchObject({ out: '', code: 0 });
    expect((await sh(c, "dpkg-query -W -f='${Version}\\n' rdma-core")).out).toBe('39.0-1\n');
  });
});

describe('nic-stack tools: fresh → install rdma-core → names change only at the driver reload', () => {
  let lab: Lab;
  let c: Client;
  beforeAll(async () => {
    ({ lab, conn: c } = await openLab({ scenario: 'fresh' }, 1));
  });
  afterAll(() => closeLab(lab, c));

  it('fresh has kernel names and no verbs tools', async () => {
    expect(await sh(c, 'ibv_devices')).toMatchObject({ code: 127 });
    expect(parseRdmaLink((await sh(c, 'rdma link show')).out).ports.map((p) => p.device)).toEqual(KERNEL);
  });

  it('installing the inbox packages keeps mlx5_N until mlx5_ib registers the devices again', async () => {
    const inst = await sh(
      c,
      'sudo apt-get update >/dev/null && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y rdma-core ibverbs-utils rdmacm-utils infiniband-diags perftest',
    );
    expect(inst.code).toBe(0);
    expect(inst.out).toContain('Setting up rdma-core (39.0-1)');
    expect(parseIbvDevices((await sh(c, 'ibv_devices')).out).devices.map((d) => d.device)).toEqual(KERNEL);
    expect((await sh(c, 'cat /lib/udev/rules.d/60-rdma-persistent-naming.rules')).out).toContain('NAME_FALLBACK');
    // A driver reload (what openibd does): the udev rule names the devices now.
    expect((await sh(c, 'sudo modprobe -r mlx5_ib && sudo modprobe mlx5_ib; echo rc=$?')).out).toBe('rc=0\n');
    expect(parseIbvDevices((await sh(c, 'ibv_devices')).out).devices.map((d) => d.device)).toEqual(ROCE);
    expect(parseRdmaLink((await sh(c, 'rdma link show')).out).ports.map((p) => p.device)).toEqual(ROCE);
  });

  it('the tutorial MLNX_OFED URL is a 404 (the 23.10 GA is 1.1.9.0)', async () => {
    const r = await sh(
      c,
      'wget https://content.mellanox.com/ofed/MLNX_OFED-23.10-1.1.8.0/MLNX_OFED_LINUX-23.10-1.1.8.0-ubuntu22.04-x86_64.tgz',
    );
    expect(r.code).toBe(8);
    expect(r.err).toContain('HTTP request sent, awaiting response... 404 Not Found\n');
    expect(r.err).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ERROR 404: Not Found\.\n/);
    expect((await sh(c, 'ls MLNX_OFED_LINUX-23.10-1.1.8.0-ubuntu22.04-x86_64.tgz')).code).not.toBe(0);
    const ga = await sh(
      c,
      'wget -q https://content.mellanox.com/ofed/MLNX_OFED-23.10-1.1.9.0/MLNX_OFED_LINUX-23.10-1.1.9.0-ubuntu22.04-x86_64.tgz; echo rc=$?; ls',
    );
    expect(ga.out).toContain('rc=0\n');
    expect(ga.out).toContain('MLNX_OFED_LINUX-23.10-1.1.9.0-ubuntu22.04-x86_64.tgz');
  });
});

describe('nic-stack tools: tutorial (MLNX_OFED 23.10-1.1.9.0 loaded)', () => {
  let lab: Lab;
  let c: Client;
  beforeAll(async () => {
    ({ lab, conn: c } = await openLab({ scenario: 'tutorial' }, 0));
  });
  afterAll(() => closeLab(lab, c));

  it('ofed_info, ethtool -i and modinfo report the OFED release; devices keep kernel names', async () => {
    expect(parseOfedInfo((await sh(c, 'ofed_info -s')).out)).toMatchObject({
      flavor: 'MLNX_OFED',
      version: '23.10-1.1.9.0',
    });
    expect((await sh(c, 'ofed_info -n')).out).toBe('23.10-1.1.9.0\n');
    expect(parseEthtoolInfo((await sh(c, 'ethtool -i ens1f0')).out).version).toBe('23.10-1.1.9');
    expect((await sh(c, 'modinfo -F version mlx5_core')).out).toBe('23.10-1.1.9\n');
    expect(parseIbvDevices((await sh(c, 'ibv_devices')).out).devices.map((d) => d.device)).toEqual(KERNEL);
    const map = parseIbdev2netdev((await sh(c, 'ibdev2netdev')).out);
    expect(map.links.map((e) => `${e.device}:${e.netdev}`)).toEqual([
      'mlx5_0:ens1f0',
      'mlx5_1:ens1f1',
      'mlx5_2:ens2f0',
      'mlx5_3:ens2f1',
    ]);
    const v = await sh(c, 'ibdev2netdev -v');
    expect(parseIbdev2netdev(v.out).links[0]).toMatchObject({
      bdf: '0000:1a:00.0',
      device: 'mlx5_0',
      partType: 'MT4117',
      psid: 'MT_2420110034',
      fw: '14.32.1010',
      netdev: 'ens1f0',
    });
    expect(v.out.split('\n')[0]).toMatch(
      /^0000:1a:00\.0 mlx5_0 \(MT4117 - MT_2420110034\) CX4121A - ConnectX-4 LX SFP28 fw 14\.32\.1010 port 1 \((ACTIVE|DOWN {2})\) ==> ens1f0 \((Up|Down)\)$/,
    );
  });

  it('openibd restart reloads the driver: names stay mlx5_N (OFED rule) and the runtime QoS is gone', async () => {
    expect((await sh(c, 'sudo mlnx_qos -i ens1f0')).out).toContain('Priority trust state: dscp');
    const r = await sh(c, 'sudo /etc/init.d/openibd restart');
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      `${'Unloading HCA driver:'.padEnd(58)}[  OK  ]\n${'Loading HCA driver and Access Layer:'.padEnd(58)}[  OK  ]\n`,
    );
    expect(parseIbvDevices((await sh(c, 'ibv_devices')).out).devices.map((d) => d.device)).toEqual(KERNEL);
    const q = await sh(c, 'sudo mlnx_qos -i ens1f0');
    expect(q.out).toContain('Priority trust state: pcp');
    expect(q.out).toContain('        enabled     0   0   0   0   0   0   0   0   \n');
  });

  it('a reboot loads the installed OFED driver; devices keep kernel names', async () => {
    c = await rebootAndReconnect(lab, c, 0);
    expect(parseIbvDevices((await sh(c, 'ibv_devices')).out).devices.map((d) => d.device)).toEqual(KERNEL);
    expect(parseEthtoolInfo((await sh(c, 'ethtool -i ens1f0')).out).version).toBe('23.10-1.1.9');
  });
});
