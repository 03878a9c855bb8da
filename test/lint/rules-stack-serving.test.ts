/** Stack rules R30–R33, R35 and serving rules R40–R50: fire / do not fire. */
import { describe, expect, it } from 'vitest';
import { ids, lintMany, lintOne, only } from './helpers.js';

const sh = (...lines: string[]): string => `#!/bin/sh\n${lines.join('\n')}\n`;

describe('R30 NIC software stack', () => {
  it('an unpublished MLNX_OFED is high, with the published URL in the fix', () => {
    const f = only(
      lintOne(
        sh(
          'wget https://content.mellanox.com/ofed/MLNX_OFED-23.10-1.1.8.0/MLNX_OFED_LINUX-23.10-1.1.8.0-ubuntu22.04-x86_64.tgz',
        ),
      ),
      'R30',
    )[0];
    expect(f?.severity).toBe('high');
    expect(f?.fix).toContain('MLNX_OFED-23.10-1.1.9.0/MLNX_OFED_LINUX-23.10-1.1.9.0-ubuntu22.04-x86_64.tgz');
  });
  it('a short-lived branch is medium; a release after 24.10 is high', () => {
    expect(only(lintOne(sh('tar xzf MLNX_OFED_LINUX-5.9-0.5.6.0-ubuntu22.04-x86_64.tgz')), 'R30')[0]?.severity).toBe(
      'medium',
    );
    expect(only(lintOne(sh('tar xzf MLNX_OFED_LINUX-25.01-0.1.0.0-ubuntu22.04-x86_64.tgz')), 'R30')[0]?.severity).toBe(
      'high',
    );
  });
  it('an LTS release is silent', () =>
    expect(ids(lintOne(sh('tar xzf MLNX_OFED_LINUX-24.10-1.1.4.0-ubuntu22.04-x86_64.tgz')))).not.toContain('R30'));
});

describe('R31 OFED installer flags', () => {
  it('needless flags fire (low)', () =>
    expect(only(lintOne(sh('sudo ./mlnxofedinstall --enable-gds --force')), 'R31')[0]?.evidence).toContain(
      '--enable-gds',
    ));
  it('the plain install is silent', () =>
    expect(
      ids(lintOne(sh('sudo ./mlnxofedinstall --skip-unsupported-devices-check --without-fw-update'))),
    ).not.toContain('R31'));
});

describe('R32 one GPU-driver install method', () => {
  it('apt driver + runfile driver fires (blocker), also across files', () => {
    expect(
      only(
        lintOne(
          sh(
            'apt-get install -y nvidia-driver-580-server-open',
            'sh cuda_13.0.2_580.95.05_linux.run --silent --driver',
          ),
        ),
        'R32',
      )[0]?.severity,
    ).toBe('blocker');
    const r = lintMany({
      a: sh('apt-get install -y nvidia-driver-580-open'),
      b: sh('sudo ./NVIDIA-Linux-x86_64-580.95.05.run --silent'),
    });
    expect(only(r.b ?? [], 'R32')[0]?.evidence).toContain('a:2');
  });
  it('two branches fire', () =>
    expect(ids(lintOne(sh('apt-get install -y nvidia-driver-535', 'apt-get install -y nvidia-driver-550')))).toContain(
      'R32',
    ));
  it('apt driver + toolkit-only runfile is silent', () => {
    expect(
      ids(
        lintOne(
          sh(
            'apt-get install -y nvidia-driver-580-server-open',
            'sh cuda_12.8.1_570.124.06_linux.run --silent --toolkit',
          ),
        ),
      ),
    ).not.toContain('R32');
  });
});

describe('R33 driver branch and CUDA', () => {
  it('an EOL branch is high; a feature branch is high', () => {
    expect(only(lintOne(sh('apt-get install -y nvidia-driver-535')), 'R33')[0]?.severity).toBe('high');
    expect(only(lintOne(sh('apt-get install -y nvidia-driver-575-open')), 'R33')[0]?.evidence).toContain(
      'New Feature Branch',
    );
  });
  it('a CUDA major above the driver is a blocker; a newer minor is medium', () => {
    expect(
      only(lintOne(sh('apt-get install -y nvidia-driver-570-server-open cuda-toolkit-13-0')), 'R33')[0]?.severity,
    ).toBe('blocker');
    expect(
      only(lintOne(sh('apt-get install -y nvidia-driver-570-server-open cuda-toolkit-12-9')), 'R33')[0]?.severity,
    ).toBe('medium');
  });
  it('R580 with CUDA 12.x or 13.0 is silent', () => {
    expect(
      ids(
        lintOne(
          sh(
            'apt-get install -y nvidia-driver-580-server-open cuda-toolkit-13-0',
            '/opt/v/bin/pip install torch==2.8.0+cu128',
          ),
        ),
      ),
    ).not.toContain('R33');
  });
});

describe('R35 locked memory', () => {
  it('a unit starting Ray without LimitMEMLOCK fires (high)', () => {
    expect(
      only(
        lintOne('[Service]\nExecStart=/opt/l20/venv/bin/ray start --head --block --node-ip-address=192.168.101.1\n'),
        'R35',
      )[0]?.severity,
    ).toBe('high');
    expect(
      ids(lintOne('[Service]\nLimitMEMLOCK=65536\nExecStart=/usr/bin/vllm serve m --host 10.0.0.1 --api-key k\n')),
    ).toContain('R35');
  });
  it('LimitMEMLOCK=infinity is silent; so is a unit that starts no job', () => {
    expect(
      ids(
        lintOne(
          '[Service]\nLimitMEMLOCK=infinity\nExecStart=/opt/l20/venv/bin/ray start --head --block --node-ip-address=192.168.101.1\n',
        ),
      ),
    ).not.toContain('R35');
    expect(ids(lintOne('[Service]\nType=oneshot\nExecStart=/usr/local/sbin/l20-roce-qos\n'))).not.toContain('R35');
  });
  it('a GPU container without memlock fires; with it, silent', () => {
    expect(ids(lintOne(sh('docker run --gpus all --device /dev/infiniband vllm/vllm-openai')))).toContain('R35');
    expect(
      ids(lintOne(sh('docker run --gpus all --ulimit memlock=-1 --cap-add=IPC_LOCK vllm/vllm-openai'))),
    ).not.toContain('R35');
  });
});

describe('R40 removed vLLM flags', () => {
  it.each(['--engine-use-ray', '--worker-use-ray', '--ray-address auto', '--ray_address=auto'])(
    '%s fires (blocker)',
    (flag) => {
      expect(only(lintOne(`vllm serve m ${flag}\n`), 'R40')[0]?.severity).toBe('blocker');
    },
  );
  it('a Python keyword fires too', () =>
    expect(ids(lintOne('from vllm import LLM\nLLM(model="m", worker_use_ray=True)\n'))).toContain('R40'));
  it('current flags are silent', () =>
    expect(ids(lintOne('vllm serve m --distributed-executor-backend ray -tp 8\n'))).not.toContain('R40'));
});

describe('vLLM in a container', () => {
  it('docker run of the vllm image is a launch: its flags are checked', () => {
    const r = lintOne(
      'docker run --gpus all --ipc host -v /models:/models -p 8000:8000 vllm/vllm-openai:v0.11.0 --model deepseek-ai/deepseek-v3-8b --tensor-parallel-size 16\n',
    );
    expect(ids(r)).toEqual(expect.arrayContaining(['R41', 'R42', 'R46', 'R35']));
    expect(ids(lintOne('docker run --rm -it ubuntu:22.04 bash\n'))).toEqual([]);
  });
});

describe('R41 model exists', () => {
  it.each(['deepseek-ai/deepseek-v3-8b', 'deepseek-ai/DeepSeek-V3-7B', 'deepseek-ai/DeepSeek-R1-14b'])(
    '%s fires (blocker)',
    (m) => {
      expect(only(lintOne(`vllm serve ${m}\n`), 'R41')[0]?.severity).toBe('blocker');
    },
  );
  it.each([
    'deepseek-ai/DeepSeek-V3',
    'deepseek-ai/DeepSeek-R1-Distill-Qwen-7B',
    '/opt/l20/models/x',
    'someorg/unknown-model',
  ])('%s is silent', (m) => {
    expect(ids(lintOne(`vllm serve ${m}\n`))).not.toContain('R41');
  });
});

describe('R42 parallel layout', () => {
  const sev = (cmd: string): string | undefined => only(lintOne(`${cmd}\n`), 'R42')[0]?.severity;
  it('TP beyond a node is high', () => expect(sev('vllm serve someorg/model --tensor-parallel-size 16')).toBe('high'));
  it('a model that fits one GPU but is distributed is high', () =>
    expect(sev('vllm serve Qwen/Qwen2.5-7B-Instruct -tp 4')).toBe('high'));
  it('TP 8 on PCIe when TP 4 fits is medium', () =>
    expect(sev('vllm serve meta-llama/Llama-3.3-70B-Instruct -tp 8')).toBe('medium'));
  it('TP × PP × DP beyond 16 GPUs is a blocker', () =>
    expect(sev('vllm serve m -tp 2 --data-parallel-size 16')).toBe('blocker'));
  it('a two-node model without TP 8 × PP 2 is high', () =>
    expect(sev('vllm serve deepseek-ai/DeepSeek-V3 -tp 8')).toBe('high'));
  it.each([
    'vllm serve Qwen/Qwen2.5-7B-Instruct --data-parallel-size 16 --data-parallel-size-local 8',
    'vllm serve meta-llama/Llama-3.3-70B-Instruct -tp 4 --data-parallel-size 4',
    'vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --distributed-executor-backend ray',
  ])('%s is silent', (cmd) => expect(sev(cmd)).toBeUndefined());
});

describe('R43 memory fit', () => {
  it('DeepSeek-V3 FP8 on 16 L20s fills ~98 % (medium)', () => {
    const f = only(
      lintOne('vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --distributed-executor-backend ray\n'),
      'R43',
    )[0];
    expect(f?.severity).toBe('medium');
    expect(f?.evidence).toMatch(/≈ 638 GiB; budget 0\.9 × 46,068 MiB × 16 GPUs .* ≈ 648 GiB: weights fill 98 %/);
  });
  it('an 8B model on one GPU is silent', () =>
    expect(ids(lintOne('vllm serve meta-llama/Llama-3.1-8B-Instruct\n'))).not.toContain('R43'));
});

describe('R44 FP8 quantization', () => {
  it('on an FP8 checkpoint fires (medium)', () => {
    expect(
      only(lintOne('vllm serve deepseek-ai/DeepSeek-V3 -tp 8 -pp 2 --quantization fp8\n'), 'R44')[0]?.severity,
    ).toBe('medium');
    expect(ids(lintOne('vllm serve RedHatAI/Llama-3.1-8B-Instruct-FP8 --quantization fp8\n'))).toContain('R44');
  });
  it('on a BF16 checkpoint (L20 is CC 8.9) is silent', () =>
    expect(ids(lintOne('vllm serve Qwen/Qwen2.5-7B-Instruct --quantization fp8\n'))).not.toContain('R44'));
});

describe('R45 node IP', () => {
  it('ray start without --node-ip-address fires (high)', () =>
    expect(only(lintOne('ray start --head --port=6379\n'), 'R45')[0]?.severity).toBe('high'));
  it('vLLM on Ray without VLLM_HOST_IP fires; with it, silent', () => {
    expect(ids(lintOne('vllm serve m -tp 8 -pp 2 --distributed-executor-backend ray\n'))).toContain('R45');
    expect(
      ids(lintOne('VLLM_HOST_IP=192.168.101.1 vllm serve m -tp 8 -pp 2 --distributed-executor-backend ray\n')),
    ).not.toContain('R45');
  });
  it('--node-ip-address and DP vLLM are silent', () => {
    expect(ids(lintOne('ray start --head --node-ip-address=192.168.101.1\n'))).not.toContain('R45');
    expect(ids(lintOne('vllm serve m --data-parallel-size 16 --host 10.0.0.1 --api-key k\n'))).not.toContain('R45');
  });
});

describe('R46 exposed control planes', () => {
  it('dashboard on 0.0.0.0 fires; with token auth it does not', () => {
    expect(
      only(lintOne('ray start --head --node-ip-address=192.168.101.1 --dashboard-host=0.0.0.0\n'), 'R46')[0]?.severity,
    ).toBe('high');
    expect(
      ids(lintOne('RAY_AUTH_MODE=token ray start --head --node-ip-address=192.168.101.1 --dashboard-host=0.0.0.0\n')),
    ).not.toContain('R46');
  });
  it('vLLM on all interfaces without an API key fires (also with no --host)', () => {
    expect(ids(lintOne('vllm serve m --host 0.0.0.0\n'))).toContain('R46');
    expect(only(lintOne('vllm serve m\n'), 'R46')[0]?.evidence).toContain('no --host');
  });
  it('an API key, a service address or --headless is silent about an open API', () => {
    // With a key the API is not open; the key on the command line is the finding that remains (below).
    expect(only(lintOne('vllm serve m --host 0.0.0.0 --api-key k\n'), 'R46').map((f) => f.title)).toEqual([
      'vLLM API key on the command line, where every local user reads it',
    ]);
    expect(ids(lintOne('vllm serve m --headless --data-parallel-size 16\n'))).not.toContain('R46');
    expect(ids(lintOne('#!/bin/sh\nexport VLLM_API_KEY=k\nvllm serve m --host 0.0.0.0\n'))).not.toContain('R46');
  });
});

describe('R46 an API key on the command line', () => {
  it('a literal --api-key is high: in the file and in ps', () => {
    const f = only(
      lintOne('[Service]\nExecStart=/opt/l20/venv/bin/vllm serve /m --host 10.0.0.1 --api-key s3cr3tk3y\n'),
      'R46',
    );
    expect(f.map((x) => [x.severity, x.line])).toEqual([['high', 2]]);
    expect(f[0]?.evidence).toContain('every local user reads it with `ps` or /proc/<pid>/cmdline');
    expect(f[0]?.fix).toContain('`EnvironmentFile=/etc/l20/vllm.env`');
  });
  it('a reference is medium: systemd expands ${VAR} into the argv all the same', () => {
    const f = only(
      lintOne('[Service]\nExecStart=/opt/l20/venv/bin/vllm serve /m --host 10.0.0.1 --api-key ${L20_API_KEY}\n'),
      'R46',
    );
    expect(f.map((x) => x.severity)).toEqual(['medium']);
    expect(f[0]?.evidence).toContain("--api-key ${L20_API_KEY} is expanded into vLLM's command line");
  });
  it('the key from the environment (VLLM_API_KEY) is silent', () => {
    const unit =
      '[Service]\nEnvironmentFile=/etc/l20/vllm.env\nExecStart=/opt/l20/venv/bin/vllm serve /m --host 10.0.0.1\n';
    expect(ids(lintOne(unit))).not.toContain('R46');
  });
});

describe('R47 version pinning', () => {
  it.each(['pip install vllm', 'sudo pip3 install vllm==0.11.0', 'python3 -m pip install "ray[default]"'])(
    '%s fires (medium)',
    (cmd) => {
      expect(only(lintOne(sh(cmd)), 'R47')[0]?.severity).toBe('medium');
    },
  );
  it.each([
    sh('/opt/l20/venv/bin/pip install vllm==0.11.0 "ray[default]==2.52.0"'),
    sh('python3 -m venv .venv', '. .venv/bin/activate', 'pip install vllm==0.11.0'),
    sh('pip install transformers'),
  ])('%j is silent', (text) => expect(ids(lintOne(text))).not.toContain('R47'));
});

describe('R48 firewall', () => {
  it.each(['sudo ufw disable', 'ufw allow 4791/udp', 'iptables -F', 'systemctl disable --now firewalld'])(
    '%s fires (medium)',
    (cmd) => {
      expect(only(lintOne(sh(cmd)), 'R48')[0]?.severity).toBe('medium');
    },
  );
  it('prose advice to disable the firewall fires as `ufw disable`', () => {
    const f = only(
      lintOne(
        '# Setup\n\nFirst, disable the firewall on both nodes so that NCCL can connect.\n\nThen continue with the network.\n',
      ),
      'R48',
    )[0];
    expect(f?.line).toBe(3);
    expect(f?.evidence).toContain('implies `ufw disable`');
  });
  it('enabling it is silent', () =>
    expect(ids(lintOne(sh('sudo ufw allow in on ens1f0', 'sudo ufw --force enable')))).not.toContain('R48'));
});

describe('R49 monitoring', () => {
  it('iftop in a script or nload in prose fires (low)', () => {
    expect(only(lintOne(sh('iftop -i ens1f0')), 'R49')[0]?.severity).toBe('low');
    expect(
      ids(
        lintOne(
          '# Monitoring\n\nWatch the RoCE traffic with nload while the test runs, it is simple.\n\nMore text follows here.\n',
        ),
      ),
    ).toContain('R49');
  });
  it('ethtool counters are silent', () => expect(ids(lintOne(sh('ethtool -S ens1f0')))).not.toContain('R49'));
});

describe('R50 performance claims', () => {
  const claim =
    '# Results\n\nWith two nodes the cluster reaches 2,300 tokens/s, a big improvement over one node.\n\nThat is all there is to it.\n';
  it('a claim without a workload fires (medium)', () => {
    const f = only(lintOne(claim), 'R50')[0];
    expect(f).toMatchObject({ severity: 'medium', line: 3 });
    expect(f?.evidence).toContain('input and output lengths');
  });
  it('a claim stated with its workload is silent', () => {
    const full = `${claim}\nMeasured with \`vllm bench serve --model Qwen/Qwen2.5-7B-Instruct --random-input-len 512 --random-output-len 1024 --max-concurrency 64 --num-prompts 640\` against \`vllm serve Qwen/Qwen2.5-7B-Instruct --data-parallel-size 16\`.\n`;
    expect(ids(lintOne(full))).not.toContain('R50');
  });
});

describe('R35 ulimit in a start script', () => {
  it('a capped memlock before a job fires; unlimited does not', () => {
    expect(
      only(lintOne(sh('ulimit -l 65536', 'ray start --head --node-ip-address=192.168.101.1')), 'R35')[0]?.line,
    ).toBe(2);
    expect(ids(lintOne(sh('ulimit -l unlimited', 'ray start --head --node-ip-address=192.168.101.1')))).not.toContain(
      'R35',
    );
  });
});
