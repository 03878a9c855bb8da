/**
 * Kernel modules and the ring buffer over real SSH: lsmod's format and holders, modprobe/-r and
 * rmmod with their refusals, a registered module that fails to load (and says why in dmesg),
 * modinfo, and dmesg's restriction to root.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { registerKernelModule } from '../../lab/system/kernel.js';
import { closeLab, openLab, sh, type TextResult } from './helpers.js';

let lab: Lab;
let host: LabHost;
let conn: Client;

// A module whose load depends on the model: refused until the test flips the switch.
let peerApi = false;
registerKernelModule({
  name: 'lab_test_peer',
  size: 16384,
  version: '1.2-3',
  depends: ['ib_core'],
  description: 'lab test peer client',
  load: () =>
    peerApi
      ? undefined
      : { error: 'Invalid argument', dmesg: ['lab_test_peer: Unknown symbol ib_register_peer_memory_client (err -2)'] },
});

const run = (command: string): Promise<TextResult> => sh(conn, command);

beforeAll(async () => {
  ({ lab, host, conn } = await openLab());
});

afterAll(() => closeLab(lab, conn));

describe('kernel modules', () => {
  test('lsmod prints newest first with sizes and holders', async () => {
    const r = await run('lsmod');
    expect(r.code).toBe(0);
    expect(r.out.split('\n').slice(0, 1)).toEqual(['Module                  Size  Used by']);
    expect(r.out).toContain('\nib_core               417792  2 mlx5_ib,ib_uverbs\n');
    expect(r.out).toContain('\nmlxfw                  36864  1 mlx5_core\n');
    expect(r.out.trimEnd().split('\n').at(-1)).toBe('mlxfw                  36864  1 mlx5_core');
    expect((await run('cat /proc/modules')).out).toContain(
      'ib_core 417792 2 mlx5_ib,ib_uverbs, Live 0x0000000000000000\n',
    );
  });

  test('modprobe and modprobe -r load and unload with dependencies; refusals', async () => {
    expect(await run('modprobe dummy')).toEqual({
      out: '',
      err: "modprobe: ERROR: could not insert 'dummy': Operation not permitted\n",
      code: 1,
    });
    expect(await run('sudo modprobe nope_mod')).toEqual({
      out: '',
      err: 'modprobe: FATAL: Module nope_mod not found in directory /lib/modules/5.15.0-126-generic\n',
      code: 1,
    });
    expect(await run('sudo modprobe rdma_ucm && lsmod | grep -E "^(rdma_ucm|rdma_cm) "')).toEqual({
      out: 'rdma_ucm               28672  0\nrdma_cm               126976  1 rdma_ucm\n',
      err: '',
      code: 0,
    });
    expect(host.machine.modules.slice(-2)).toEqual(['rdma_cm', 'rdma_ucm']);
    expect(await run('sudo modprobe -r mlx5_core')).toEqual({
      out: '',
      err: 'modprobe: FATAL: Module mlx5_core is in use.\n',
      code: 1,
    });
    expect(await run('sudo rmmod ib_core')).toEqual({
      out: '',
      err: 'rmmod: ERROR: Module ib_core is in use by: rdma_ucm rdma_cm mlx5_ib ib_uverbs\n',
      code: 1,
    });
    expect(await run('sudo modprobe -r rdma_ucm; lsmod | grep -c rdma_')).toEqual({ out: '0\n', err: '', code: 1 });
    expect(await run('sudo modprobe -r rdma_ucm')).toEqual({
      out: '',
      err: 'modprobe: FATAL: Module rdma_ucm is not in kernel.\n',
      code: 1,
    });
  });

  test('a module that fails to load: modprobe reports it, dmesg says why', async () => {
    expect(await run('sudo modprobe lab-test-peer')).toEqual({
      out: '',
      err: "modprobe: ERROR: could not insert 'lab_test_peer': Invalid argument\n",
      code: 1,
    });
    expect((await run('sudo dmesg | grep -iE "peer_memory|lab_test_peer"')).out).toMatch(
      /^\[\s*\d+\.\d{6}\] lab_test_peer: Unknown symbol ib_register_peer_memory_client \(err -2\)\n$/,
    );
    expect((await run('lsmod | grep lab_test_peer')).code).toBe(1);
    peerApi = true;
    expect(await run('sudo modprobe lab-test-peer && lsmod | grep lab_test_peer')).toEqual({
      out: 'lab_test_peer          16384  0\nib_core               417792  3 lab_test_peer,mlx5_ib,ib_uverbs\n',
      err: '',
      code: 0,
    });
    expect((await run('lsmod | grep ^ib_core')).out).toMatch(/ lab_test_peer,/);
  });

  test('modinfo: fields of in-tree and versioned modules', async () => {
    expect(await run('modinfo -F version mlx5_core')).toEqual({ out: '', err: '', code: 0 });
    expect((await run('modinfo -F version lab_test_peer')).out).toBe('1.2-3\n');
    const info = (await run('modinfo mlx5_core')).out;
    expect(info).toMatch(
      /^filename: {7}\/lib\/modules\/5\.15\.0-126-generic\/kernel\/drivers\/net\/ethernet\/mellanox\/mlx5\/core\/mlx5_core\.ko\n/,
    );
    expect(info).toContain('\ndepends:        mlxfw\n');
    expect(info).toContain(
      '\nintree:         Y\nname:           mlx5_core\nvermagic:       5.15.0-126-generic SMP mod_unload modversions \n',
    );
    expect(await run('modinfo nope_mod')).toEqual({
      out: '',
      err: 'modinfo: ERROR: Module nope_mod not found.\n',
      code: 1,
    });
  });

  test('dmesg: the boot banner for root, refused to others', async () => {
    expect(await run('dmesg')).toEqual({
      out: '',
      err: 'dmesg: read kernel buffer failed: Operation not permitted\n',
      code: 1,
    });
    const lines = (await run('sudo dmesg')).out.split('\n');
    expect(lines[0]).toMatch(/^\[ {4}0\.000000\] Linux version 5\.15\.0-126-generic \(buildd@/);
    expect((await run('sudo dmesg | grep -i "Default domain type"')).out).toBe(
      '[    1.137402] iommu: Default domain type: Translated \n',
    );
    expect((await run('sudo dmesg -T | head -1')).out).toMatch(/^\[Mon Jan {2}6 08:50:00 2025\] Linux version /);
    host.machine.system.kernel.log('lab: a line from the model', 4);
    expect((await run('sudo dmesg -l warn')).out).toMatch(/\] lab: a line from the model\n$/);
  });
});
