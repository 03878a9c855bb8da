/** The config parsers: nccl.conf, netplan YAML, shell commands (+ typed views), Python launchers. */
import { describe, expect, it } from 'vitest';
import { parseNcclConf } from '../../src/parse/nccl-conf.js';
import { parseNetplanYaml } from '../../src/parse/netplan-yaml.js';
import { intArg, parsePythonLaunch } from '../../src/parse/python-launch.js';
import { parseShell } from '../../src/parse/shell-commands.js';
import {
  aptInstallOf,
  dcbOf,
  downloadsOf,
  mlnxQosOf,
  ofedInstallOf,
  perftestOf,
  pipInstallOf,
  rayStartOf,
  runfileOf,
  sourceOf,
  ufwOf,
  vllmLaunchOf,
} from '../../src/rules/cfg/commands.js';

describe('parseNcclConf', () => {
  it('keeps lines, both readings, problems and malformed lines', () => {
    const c = parseNcclConf(
      '# comment\nNCCL_IB_TC=106\nexport NCCL_X="1" # why\n  # indented\nNCCL_IB_TC=0\ngarbage\n\nNCCL_Y = 2\n',
    );
    expect(c.vars).toEqual({ NCCL_IB_TC: '106', NCCL_X: '1', NCCL_Y: '2' });
    expect(c.entries.map((e) => e.line)).toEqual([2, 3, 5, 8]);
    const x = c.entries[1];
    expect(x).toMatchObject({
      key: 'NCCL_X',
      value: '1',
      ncclKey: 'export NCCL_X',
      ncclValue: '"1" # why',
      exported: true,
      quoted: true,
      comment: 'why',
    });
    expect(x?.problems.length).toBe(3);
    expect(c.entries[0]?.problems).toEqual([]);
    expect(c.entries[3]?.problems[0]).toContain('spaces around the name');
    expect(c.malformed.map((m) => m.line)).toEqual([4, 6]);
  });
  it('offsets lines for a block and never throws', () => {
    expect(parseNcclConf('A=1', 10).entries[0]?.line).toBe(10);
    expect(() => parseNcclConf(undefined as unknown as string)).not.toThrow();
  });
});

describe('parseNetplanYaml', () => {
  it('reads devices with the line of each setting', () => {
    const n = parseNetplanYaml(
      'network:\n  version: 2\n  ethernets:\n    eno1:\n      addresses:\n        - 10.0.0.1/24\n        - 10.0.1.1/24: {lifetime: 0}\n      routes: [{to: default, via: 10.0.0.254}]\n  vlans:\n    v100: {id: 100, link: eno1}\n',
    );
    expect(n.version).toBe(2);
    expect(n.ethernets[0]).toMatchObject({
      name: 'eno1',
      addresses: ['10.0.0.1/24', '10.0.1.1/24'],
      defaultVia: '10.0.0.254',
      lines: { name: 4, addresses: 5, routes: 8 },
    });
    expect(n.vlans[0]).toMatchObject({ name: 'v100', id: 100, link: 'eno1' });
  });
  it('bonds: interfaces, mode and parameters (docs/DOCTOR.md facts)', () => {
    const n = parseNetplanYaml(
      'network:\n  bonds:\n    bond0:\n      interfaces: [a, b]\n      parameters:\n        mode: 802.3ad\n        mii-monitor-interval: 100\n',
    );
    expect(n.bonds[0]).toMatchObject({
      name: 'bond0',
      interfaces: ['a', 'b'],
      mode: '802.3ad',
      parameters: { mode: '802.3ad', 'mii-monitor-interval': 100 },
      lines: { 'param:mode': 6 },
    });
  });
  it('YAML errors are listed with lines; what parsed is kept', () => {
    const n = parseNetplanYaml('network:\n  ethernets:\n    a: {mtu: 9000}\n    b: [\n');
    expect(n.isNetplan).toBe(true);
    expect(n.errors.length).toBeGreaterThan(0);
    expect(parseNetplanYaml('{{{').errors.length).toBeGreaterThan(0);
    expect(parseNetplanYaml('just: text').isNetplan).toBe(false);
  });
});

describe('parseShell', () => {
  it('joins continuations, keeps each word line, peels sudo / env / nohup', () => {
    const [c] = parseShell(
      'NCCL_DEBUG=INFO sudo -E -u l20 env A=1 nohup python3 -m vllm.entrypoints.openai.api_server \\\n  --model m \\\n  -tp 2 >log 2>&1 &\n',
    );
    expect(c).toMatchObject({ line: 1, endLine: 3, program: 'python3', sudo: true });
    expect(c?.env.map((e) => e.name)).toEqual(['NCCL_DEBUG', 'A']);
    expect(c?.argv.map((w) => `${w.text}@${w.line}`)).toEqual([
      'python3@1',
      '-m@1',
      'vllm.entrypoints.openai.api_server@1',
      '--model@2',
      'm@2',
      '-tp@3',
      '2@3',
    ]);
    expect(c?.redirects).toEqual([
      { op: '>', target: 'log' },
      { op: '2>&', target: '1' },
    ]);
  });
  it('expands literal loops (also from a variable), nested; keeps other loops once', () => {
    const cmds = parseShell(
      'PFS="p0 p1"\nfor i in $PFS; do for j in a b; do echo $i$j; done; done\nwhile read x; do echo $x; done\n',
    );
    expect(cmds.filter((c) => c.program === 'echo').map((c) => c.argv[1]?.text)).toEqual([
      'p0a',
      'p0b',
      'p1a',
      'p1b',
      '${x}',
    ]);
    expect(cmds.find((c) => c.program === 'echo')?.loop).toEqual({ variable: 'i', value: 'p0' });
  });
  it('strips if/then/else keywords and comments, separates ; && || |', () => {
    const cmds = parseShell(
      'if command -v mlnx_qos; then mlnx_qos -i a; else dcb app show dev a; fi # tail\nx && y || z | w\n',
    );
    expect(cmds.map((c) => c.program)).toEqual(['command', 'mlnx_qos', 'dcb', 'x', 'y', 'z', 'w']);
  });
  it('assignments and exports', () => {
    const cmds = parseShell('A=1\nexport B=2 C\ndeclare -x D=4\n');
    expect(cmds.flatMap((c) => c.assigns.map((a) => `${a.name}=${a.value}:${a.exported}`))).toEqual([
      'A=1:false',
      'B=2:true',
      'D=4:true',
    ]);
  });
  it('here-docs are attached, not parsed as commands; sh -c is parsed', () => {
    const cmds = parseShell(
      "cat <<'EOF' | sudo tee /etc/nccl.conf\nNCCL_IB_TC=106\nufw disable\nEOF\nbash -lc 'ufw disable; echo ok'\n",
    );
    expect(cmds.map((c) => c.program)).toEqual(['cat', 'tee', 'bash', 'ufw', 'echo']);
    expect(cmds[1]?.heredoc).toEqual({ body: 'NCCL_IB_TC=106\nufw disable', line: 2 });
    expect(cmds[3]?.line).toBe(5);
  });
});

describe('typed command views', () => {
  const one = (s: string) => parseShell(s)[0] as NonNullable<ReturnType<typeof parseShell>[0]>;
  it('mlnx_qos and dcb', () => {
    expect(mlnxQosOf(one('mlnx_qos -i ens1f0 --trust=dscp --pfc 0,0,0,1,0,0,0,0'))).toMatchObject({
      iface: { value: 'ens1f0' },
      trust: { value: 'dscp' },
      pfc: { vector: [0, 0, 0, 1, 0, 0, 0, 0] },
    });
    expect(dcbOf(one('dcb pfc set dev ens1f0 prio-pfc all:off 3:on'))).toMatchObject({
      object: 'pfc',
      action: 'set',
      dev: { text: 'ens1f0' },
    });
  });
  it('ray start', () => {
    const r = rayStartOf(one('ray start --head --port 6379 --node_ip_address=10.0.0.1 --block'));
    expect(r?.head).toBe(true);
    expect(r?.get('--port')?.value).toBe('6379');
    expect(r?.get('--node-ip-address')?.value).toBe('10.0.0.1');
  });
  it('vllm serve and the api_server module', () => {
    const s = vllmLaunchOf(
      one('vllm serve /models/x --tensor_parallel_size=2 -pp 2 --headless --data-parallel-size 4'),
    );
    expect(s?.model).toEqual({ value: '/models/x', line: 1 });
    expect([
      s?.get('--tensor-parallel-size')?.value,
      s?.get('--pipeline-parallel-size')?.value,
      s?.get('--headless')?.value,
    ]).toEqual(['2', '2', undefined]);
    expect(vllmLaunchOf(one('python -m vllm.entrypoints.api_server --model m'))?.model?.value).toBe('m');
    expect(vllmLaunchOf(one('python train.py --model m'))).toBeUndefined();
  });
  it('installers and downloads', () => {
    expect(aptInstallOf(one('apt-get install -y --no-install-recommends a b'))?.map((w) => w.text)).toEqual(['a', 'b']);
    expect(
      pipInstallOf(one('python3 -m pip install -U vllm==0.11.0 "ray[default]"'))?.packages.map((w) => w.text),
    ).toEqual(['vllm==0.11.0', 'ray[default]']);
    expect(pipInstallOf(one('uv pip install vllm'))?.interpreter).toBe('uv');
    expect(downloadsOf(one('wget -q https://x/y.tgz -O y.tgz')).map((w) => w.text)).toEqual(['https://x/y.tgz']);
    expect(ofedInstallOf(one('sudo ./mlnxofedinstall --with-nvmf --force'))?.map((f) => f.name)).toEqual([
      '--with-nvmf',
      '--force',
    ]);
    expect(runfileOf(one('sudo sh cuda_12.3.2_545.23.08_linux.run --silent --toolkit'))?.file.text).toBe(
      'cuda_12.3.2_545.23.08_linux.run',
    );
    expect(runfileOf(one('./NVIDIA-Linux-x86_64-580.95.05.run -s'))?.args.map((w) => w.text)).toEqual(['-s']);
  });
  it('ufw, source, perftest', () => {
    expect(ufwOf(one('sudo ufw allow 4791/udp'))).toEqual(['allow', '4791/udp']);
    expect(sourceOf(one('. /etc/nccl.conf'))?.text).toBe('/etc/nccl.conf');
    expect(
      perftestOf(one('ib_write_bw -d mlx5_0 -x 3 --tclass=106 -F --report_gbits 192.168.101.2'))?.map(
        (f) => `${f.name}=${f.value ?? ''}`,
      ),
    ).toEqual(['-d=mlx5_0', '-x=3', '--tclass=106', '-F=', '--report_gbits=']);
  });
});

describe('parsePythonLaunch', () => {
  it('reads LLM(...) kwargs, literals and lines without executing', () => {
    const p = parsePythonLaunch(
      'import os\nfrom vllm import LLM  # LLM(model="comment")\ns = "LLM(model=\'str\')"\nllm = LLM(\n    "org/model",\n    tensor_parallel_size=2,\n    pipeline_parallel_size=int(os.environ["PP"]),\n    gpu_memory_utilization=.85,\n    enforce_eager=True,\n)\n',
    );
    expect(p.usesVllm).toBe(true);
    expect(p.calls).toHaveLength(1);
    const c = p.calls[0];
    expect(c?.model).toMatchObject({ literal: 'org/model', line: 5 });
    expect(c?.kwargs.tensor_parallel_size?.literal).toBe(2);
    expect(c?.kwargs.pipeline_parallel_size).toMatchObject({ text: 'int(os.environ["PP"])', line: 7 });
    expect(c?.kwargs.gpu_memory_utilization?.literal).toBe(0.85);
    expect(c?.kwargs.enforce_eager?.literal).toBe(true);
    expect(c && intArg(c, 'tensor_parallel_size')).toBe(2);
  });
  it('vllm.LLM, environment writes and ray.init', () => {
    const p = parsePythonLaunch(
      'import vllm, os, ray\nos.environ["NCCL_DEBUG"] = "INFO"\nos.environ.setdefault("VLLM_HOST_IP", "10.0.0.1")\nray.init(address="auto", runtime_env={"env_vars": {"NCCL_IB_HCA": "mlx5_0"}})\nm = vllm.LLM(model="x")\n',
    );
    expect(p.calls.map((c) => c.callee)).toEqual(['vllm.LLM']);
    expect(p.env.map((e) => `${e.name}=${e.value}@${e.line}`)).toEqual([
      'VLLM_HOST_IP=10.0.0.1@3',
      'NCCL_DEBUG=INFO@2',
      'NCCL_IB_HCA=mlx5_0@4',
    ]);
    expect(p.rayInit?.kwargs.address?.literal).toBe('auto');
  });
  it('an LLM without vllm imported is not vLLM', () =>
    expect(parsePythonLaunch('from mylib import LLM\nLLM(model="x")\n').calls).toEqual([]));
});
