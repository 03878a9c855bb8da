/**
 * python3, the cluster venv and pip on the lab over real SSH (the nccl stage's bench-tools path,
 * reused by ray and vllm), and programs run by absolute path outside /usr/bin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import type { Host } from '../../src/transport/types.js';
import { runScript, type TextResult } from './helpers.js';

const sh = (h: Host, script: string, sudo = false, onStdout?: (c: string) => void): Promise<TextResult> =>
  runScript(h, script, { sudo, timeoutMs: 120_000, ...(onStdout ? { onStdout } : {}) });

describe('python3 and the cluster venv on a fresh host', () => {
  let t: LabTarget;
  let h: Host;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'fresh' });
    h = t.hosts[0]!;
  });
  afterAll(() => t.close());

  it('jammy python3 has no torch; a venv needs python3-venv (ensurepip), as on Ubuntu', async () => {
    expect(await sh(h, 'python3 --version')).toMatchObject({ out: 'Python 3.10.12\n', code: 0 });
    expect(await sh(h, "python3 -c 'import torch'")).toMatchObject({
      code: 1,
      err: 'Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nModuleNotFoundError: No module named \'torch\'\n',
    });
    const noVenv = await sh(h, 'python3 -m venv /opt/l20/venv', true);
    expect(noVenv.code).toBe(1);
    expect(noVenv.out).toContain('ensurepip is not\navailable.');
    expect(noVenv.out).toContain('apt install python3.10-venv');
    expect(await sh(h, '/opt/l20/venv/bin/pip --version')).toMatchObject({
      code: 127,
      err: 'bash: /opt/l20/venv/bin/pip: No such file or directory\n',
    });
  });

  it('with python3-venv: python3 -m venv, then pip install of the pinned stack, streamed while it runs', async () => {
    expect((await sh(h, 'DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv', true)).code).toBe(0);
    expect(await sh(h, 'python3 -m venv /opt/l20/venv', true)).toMatchObject({ code: 0, out: '' });
    expect(await sh(h, '/opt/l20/venv/bin/pip --version')).toMatchObject({
      out: 'pip 22.0.2 from /opt/l20/venv/lib/python3.10/site-packages/pip (python 3.10)\n',
    });
    // Not root: the venv belongs to root.
    const user = await sh(h, '/opt/l20/venv/bin/pip install vllm==0.11.0');
    expect(user.code).toBe(1);
    expect(user.err).toContain('ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied');
    const chunks: string[] = [];
    const r = await sh(h, '/opt/l20/venv/bin/pip install vllm==0.11.0 "ray[default]==2.49.2"', true, (c) =>
      chunks.push(c),
    );
    expect(r.code).toBe(0);
    expect(r.out).toMatch(
      /^Collecting vllm==0\.11\.0\n {2}Downloading vllm-0\.11\.0-cp38-abi3-manylinux1_x86_64\.whl \(438\.2 MB\)\n/,
    );
    expect(r.out).toMatch(
      /\nSuccessfully installed .*nvidia-nccl-cu12-2\.27\.3 .*ray-2\.49\.2 .*torch-2\.8\.0 .*vllm-0\.11\.0 /,
    );
    expect(chunks.length).toBeGreaterThan(5);
    expect(
      await sh(
        h,
        "/opt/l20/venv/bin/python -c 'import torch; print(torch.__version__); print(torch.cuda.nccl.version())'",
      ),
    ).toMatchObject({ out: '2.8.0+cu128\n(2, 27, 3)\n', code: 0 });
    expect((await sh(h, "/opt/l20/venv/bin/pip freeze | grep -E '^(vllm|ray|torch)=='")).out).toBe(
      'ray==2.49.2\ntorch==2.8.0\nvllm==0.11.0\n',
    );
    expect(await sh(h, '/opt/l20/venv/bin/pip install vllm==0.11.0 "ray[default]==2.49.2"', true)).toMatchObject({
      code: 0,
      out: expect.stringContaining(
        'Requirement already satisfied: vllm==0.11.0 in /opt/l20/venv/lib/python3.10/site-packages (0.11.0)',
      ),
    });
    const bad = await sh(h, '/opt/l20/venv/bin/pip install vllm==9.9.9', true);
    expect(bad).toMatchObject({
      code: 1,
      err: 'ERROR: Could not find a version that satisfies the requirement vllm==9.9.9 (from versions: 0.11.0)\nERROR: No matching distribution found for vllm==9.9.9\n',
    });
  });

  it('console scripts run by absolute or expanded path with every argument; the script must exist', async () => {
    const r = await sh(
      h,
      'X=/opt/l20/venv; "$X/bin/torchrun" --nnodes 1 --nproc-per-node 2 /tmp/none.py --a 1 --b 2 --c 3 --d 4 --e 5',
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "/opt/l20/venv/bin/python3: can't open file '/tmp/none.py': [Errno 2] No such file or directory",
    );
    expect(r.err).toContain('torch.distributed.elastic.multiprocessing.errors.ChildFailedError');
    expect(await sh(h, '/opt/l20/venv/bin/torchrun --bogus x')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unrecognized arguments: --bogus'),
    });
  });
});

describe('torchrun whose peer never comes', () => {
  let t: LabTarget;
  beforeAll(async () => {
    // A fast numeric speed: torch's 900 s store timeout is down to the 5 s of real time a peer is always given.
    t = await labTarget({ scenario: 'ready', speed: 100_000 });
  });
  afterAll(() => t.close());

  it('times out (900 s modelled, 5 s real at least), and the next run on the same port is not joined to it', async () => {
    const args =
      '--nnodes 2 --nproc-per-node 8 --node-rank 1 --master-addr 192.168.101.1 --master-port 29510 /opt/l20/bin/l20-allreduce-bench.py';
    const lone = await sh(t.hosts[1]!, `/opt/l20/venv/bin/torchrun ${args}`);
    expect(lone).toMatchObject({
      code: 1,
      err: expect.stringContaining('Timed out after 901 seconds waiting for clients. 1/2 clients joined.'),
    });
    const [a, b] = await Promise.all(
      [0, 1].map((i) =>
        sh(
          t.hosts[i]!,
          `/opt/l20/venv/bin/torchrun ${args.replace('--node-rank 1', `--node-rank ${i}`)} --max-bytes 1M`,
        ),
      ),
    );
    expect([a!.code, b!.code]).toEqual([0, 0]);
    expect(a!.out).toContain('# all_reduce sum float32, world=16');
  });
});
