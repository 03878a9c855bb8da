/**
 * The gpu-driver and nccl stages' package steps against the lab over SSH: Ubuntu's driver
 * branches (one at a time: installing another removes the installed one), holds on the NVIDIA
 * packages, the CUDA repository through cuda-keyring, toolkit and NCCL from it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { closeLab, openLab, sh } from './helpers.js';

let lab: Lab;
let n1: Client;
const run = (cmd: string) => sh(n1, `LC_ALL=C ${cmd}`);
const METHOD =
  "dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}\\n' 'nvidia-driver-*' 'nvidia-dkms-*' 'linux-modules-nvidia-*' 'cuda-drivers*'";

beforeAll(async () => {
  ({ lab, conn: n1 } = await openLab({ hosts: 1 }));
});

afterAll(() => closeLab(lab, n1));

describe('NVIDIA driver packages', () => {
  test('the tutorial driver, then the 580 server-open driver replaces it', async () => {
    expect((await run('which nvidia-smi')).code).toBe(1);
    const old = await run('sudo apt-get install -y nvidia-driver-535');
    expect(old.code).toBe(0);
    // apt installs Recommends by default: the desktop branch brings nvidia-settings and nvidia-prime.
    expect(old.out).toMatch(
      /The following NEW packages will be installed:\n[^]*\bnvidia-prime\b[^]*\bnvidia-settings\b/,
    );
    expect(old.out).toContain(
      'Setting up nvidia-dkms-535 (535.183.01-0ubuntu0.22.04.1) ...\nupdate-initramfs: deferring update (trigger activated)\nLoading new nvidia-535.183.01 DKMS files...\n',
    );
    expect(old.out).toContain('nvidia-peermem.ko:\nRunning module version sanity check.\n');
    expect(old.out).toContain(
      'Processing triggers for initramfs-tools (0.140ubuntu13.4) ...\nupdate-initramfs: Generating /boot/initrd.img-5.15.0-126-generic\n',
    );
    expect((await run('which nvidia-smi')).out).toBe('/usr/bin/nvidia-smi\n');

    const policy = await run('apt-cache policy nvidia-driver-580-server-open');
    expect(policy.out).toContain('  Candidate: 580.126.09-0ubuntu0.22.04.1\n');
    const r = await run('sudo apt-get install -y nvidia-driver-580-server-open');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /The following packages will be REMOVED:\n {2}libnvidia-cfg1-535 libnvidia-common-535 libnvidia-compute-535/,
    );
    expect(r.out).toContain(' nvidia-driver-535 ');
    expect(r.out).toContain('Loading new nvidia-srv-580.126.09 DKMS files...\n');
    expect(r.out).toContain('Setting up nvidia-compute-utils-580-server (580.126.09-0ubuntu0.22.04.1) ...\n');
    expect((await run(METHOD)).out).toBe(
      'ii  nvidia-dkms-580-server-open 580.126.09-0ubuntu0.22.04.1\nii  nvidia-driver-580-server-open 580.126.09-0ubuntu0.22.04.1\n',
    );
    expect((await run("dpkg-query -W -f='${Package}\\n' 'libnvidia-compute-*'")).out).toBe(
      'libnvidia-compute-580-server\n',
    );
    expect((await run('which nvidia-smi')).out).toBe('/usr/bin/nvidia-smi\n');
    expect((await run('grep ExecStart /lib/systemd/system/nvidia-persistenced.service')).out).toBe(
      'ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --verbose\n',
    );
  });

  test('held driver packages refuse a downgrade without --allow-change-held-packages', async () => {
    const held = await run('sudo apt-mark hold nvidia-driver-580-server-open nvidia-dkms-580-server-open');
    expect(held.out).toBe('nvidia-driver-580-server-open set on hold.\nnvidia-dkms-580-server-open set on hold.\n');
    expect((await run(METHOD)).out).toBe(
      'hi  nvidia-dkms-580-server-open 580.126.09-0ubuntu0.22.04.1\nhi  nvidia-driver-580-server-open 580.126.09-0ubuntu0.22.04.1\n',
    );
    const down = await run('sudo apt-get install -y nvidia-driver-580-server-open=580.95.05-0ubuntu0.22.04.1');
    expect(down.out).toContain(
      'The following held packages will be changed:\n  nvidia-dkms-580-server-open nvidia-driver-580-server-open\n',
    );
    expect(down.out).toContain('The following packages will be DOWNGRADED:\n  libnvidia-cfg1-580-server ');
    expect(down.err).toBe('E: Held packages were changed and -y was used without --allow-change-held-packages.\n');
    expect(down.code).toBe(100);
    expect((await run('sudo apt-get install -y nvidia-driver-580-server-open=9.9')).err).toBe(
      "E: Version '9.9' for 'nvidia-driver-580-server-open' was not found\n",
    );
  });
});

describe('CUDA repository', () => {
  test('cuda-keyring adds the repository; toolkit and NCCL come from it after apt-get update', async () => {
    expect((await run('apt-cache policy libnccl2')).err).toBe('N: Unable to locate package libnccl2\n');
    const get = await run(
      'cd /tmp && wget -q https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/cuda-keyring_1.1-1_all.deb && ls cuda-keyring_1.1-1_all.deb',
    );
    expect(get).toEqual({ out: 'cuda-keyring_1.1-1_all.deb\n', err: '', code: 0 });
    const k = await run('cd /tmp && sudo dpkg -i cuda-keyring_1.1-1_all.deb');
    expect(k.out).toContain('Setting up cuda-keyring (1.1-1) ...\n');
    expect((await run('cat /etc/apt/sources.list.d/cuda-ubuntu2204-x86_64.list')).out).toBe(
      'deb [signed-by=/usr/share/keyrings/cuda-archive-keyring.gpg] https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64/ /\n',
    );
    const upd = await run('sudo apt-get update');
    expect(upd.out).toContain(
      'Get:5 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  InRelease [1581 B]\n',
    );
    expect(upd.out).toMatch(
      /Get:\d+ https:\/\/developer\.download\.nvidia\.com\/compute\/cuda\/repos\/ubuntu2204\/x86_64 {2}Packages \[2061 kB\]\n/,
    );
    expect((await run('apt-cache policy libnccl2')).out).toBe(
      'libnccl2:\n  Installed: (none)\n  Candidate: 2.28.9-1+cuda13.0\n  Version table:\n' +
        '     2.28.9-1+cuda13.0 500\n        500 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  Packages\n' +
        '     2.28.9-1+cuda12.9 500\n        500 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  Packages\n' +
        '     2.26.2-1+cuda12.8 500\n        500 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  Packages\n',
    );
    const t = await run(
      'sudo apt-get install -y cuda-toolkit-12-8 libnccl2=2.26.2-1+cuda12.8 libnccl-dev=2.26.2-1+cuda12.8',
    );
    expect(t.code).toBe(0);
    expect(t.out).toContain('Get:1 https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64  ');
    expect(t.out).toContain(
      'update-alternatives: using /usr/local/cuda-12.8 to provide /usr/local/cuda (cuda) in auto mode\n',
    );
    expect((await run('readlink -f /usr/local/cuda')).out).toBe('/usr/local/cuda-12.8\n');
    expect((await run("dpkg-query -W -f='${Package} ${Version}\\n' libnccl2 cuda-nvcc-12-8")).out).toBe(
      'cuda-nvcc-12-8 12.8.93-1\nlibnccl2 2.26.2-1+cuda12.8\n',
    );
    // The nvidia-driver packages were not touched: the toolkit does not pull a driver.
    expect((await run(METHOD)).out).not.toContain('cuda-drivers');
  });

  test('the cuda metapackage would pull a driver branch of its own', async () => {
    const s = await run('sudo apt-get install -s cuda');
    expect(s.out).toContain('Inst cuda-drivers ');
    expect(s.out).toContain('Inst nvidia-driver-580-open ');
  });
});
