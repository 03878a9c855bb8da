/**
 * Python on the modelled servers: jammy's python3 and the cluster venv that the nccl stage builds
 * (`python3 -m venv /opt/l20/venv && /opt/l20/venv/bin/pip install vllm==<pin> "ray[default]==<pin>"`,
 * docs/STAGES.md §3.9) and the ray and vllm stages reuse. One module pins every version, so the venv
 * tools, the NCCL model (torch's bundled NCCL), Ray and vLLM print the same numbers.
 *
 * The venv path and the pins are the product's (checks/common/pins.ts): the lab models what the
 * product installs.
 *
 * A venv is files, as on the real host: `pyvenv.cfg`, `bin/` (interpreter and console scripts) and
 * one `<name>-<version>.dist-info/METADATA` per installed distribution in site-packages. The tools
 * read that state back from the file system (readVenv), so a venv written by a scenario (machine.files)
 * and one built by `python3 -m venv` + `pip install` behave the same.
 */
import { posix } from 'node:path';
import { PINS } from '../product-checks.js';

export const PYTHON_VERSION = '3.10.12';
/** `python3.10` directory names inside a venv. */
export const PYTHON_XY = '3.10';
export const SYSTEM_PYTHON = '/usr/bin/python3';
/** pip as jammy's python3.10-venv bundles it (ensurepip). */
export const VENV_PIP_VERSION = '22.0.2';

export interface Distribution {
  name: string;
  version: string;
  /** Wheel file name pip downloads (for its output). */
  wheel?: string;
  /** Download size as pip prints it (`438.2 MB`). */
  size?: string;
}

/**
 * What `pip install vllm==0.11.0 "ray[default]==2.49.2"` installs into a fresh venv: the large and
 * telling distributions, each with the version that resolution picks. A real install pulls ~150;
 * the rest do not change anything the lab models.
 */
export const CLUSTER_DISTRIBUTIONS: readonly Distribution[] = [
  { name: 'vllm', version: PINS.vllm, wheel: 'vllm-0.11.0-cp38-abi3-manylinux1_x86_64.whl', size: '438.2 MB' },
  { name: 'ray', version: PINS.ray, wheel: 'ray-2.49.2-cp310-cp310-manylinux2014_x86_64.whl', size: '70.1 MB' },
  { name: 'torch', version: PINS.torch, wheel: 'torch-2.8.0-cp310-cp310-manylinux_2_28_x86_64.whl', size: '887.9 MB' },
  {
    name: 'torchvision',
    version: '0.23.0',
    wheel: 'torchvision-0.23.0-cp310-cp310-manylinux_2_28_x86_64.whl',
    size: '8.6 MB',
  },
  {
    name: 'torchaudio',
    version: '2.8.0',
    wheel: 'torchaudio-2.8.0-cp310-cp310-manylinux_2_28_x86_64.whl',
    size: '4.0 MB',
  },
  {
    name: 'xformers',
    version: '0.0.32.post1',
    wheel: 'xformers-0.0.32.post1-cp39-abi3-manylinux_2_28_x86_64.whl',
    size: '117.2 MB',
  },
  {
    name: 'triton',
    version: '3.4.0',
    wheel: 'triton-3.4.0-cp310-cp310-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl',
    size: '155.4 MB',
  },
  {
    name: 'nvidia-nccl-cu12',
    version: PINS.nccl,
    wheel: 'nvidia_nccl_cu12-2.27.3-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl',
    size: '322.4 MB',
  },
  {
    name: 'nvidia-cublas-cu12',
    version: '12.8.4.1',
    wheel: 'nvidia_cublas_cu12-12.8.4.1-py3-none-manylinux_2_27_x86_64.whl',
    size: '594.3 MB',
  },
  {
    name: 'nvidia-cudnn-cu12',
    version: '9.10.2.21',
    wheel: 'nvidia_cudnn_cu12-9.10.2.21-py3-none-manylinux_2_27_x86_64.whl',
    size: '706.8 MB',
  },
  {
    name: 'nvidia-cuda-runtime-cu12',
    version: '12.8.90',
    wheel: 'nvidia_cuda_runtime_cu12-12.8.90-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl',
    size: '954 kB',
  },
  {
    name: 'nvidia-cuda-nvrtc-cu12',
    version: '12.8.93',
    wheel: 'nvidia_cuda_nvrtc_cu12-12.8.93-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl',
    size: '88.0 MB',
  },
  {
    name: 'nvidia-nvshmem-cu12',
    version: '3.3.20',
    wheel: 'nvidia_nvshmem_cu12-3.3.20-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl',
    size: '124.7 MB',
  },
  {
    name: 'flashinfer-python',
    version: '0.3.1.post1',
    wheel: 'flashinfer_python-0.3.1.post1-py3-none-any.whl',
    size: '6.2 MB',
  },
  { name: 'transformers', version: '4.57.0', wheel: 'transformers-4.57.0-py3-none-any.whl', size: '12.0 MB' },
  {
    name: 'tokenizers',
    version: '0.22.1',
    wheel: 'tokenizers-0.22.1-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '3.3 MB',
  },
  { name: 'huggingface-hub', version: '0.35.3', wheel: 'huggingface_hub-0.35.3-py3-none-any.whl', size: '564 kB' },
  {
    name: 'safetensors',
    version: '0.6.2',
    wheel: 'safetensors-0.6.2-cp38-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '485 kB',
  },
  {
    name: 'xgrammar',
    version: '0.1.25',
    wheel: 'xgrammar-0.1.25-cp310-cp310-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl',
    size: '8.7 MB',
  },
  {
    name: 'compressed-tensors',
    version: '0.11.0',
    wheel: 'compressed_tensors-0.11.0-py3-none-any.whl',
    size: '179 kB',
  },
  {
    name: 'numpy',
    version: '2.2.6',
    wheel: 'numpy-2.2.6-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '16.8 MB',
  },
  { name: 'fastapi', version: '0.118.0', wheel: 'fastapi-0.118.0-py3-none-any.whl', size: '97 kB' },
  { name: 'uvicorn', version: '0.37.0', wheel: 'uvicorn-0.37.0-py3-none-any.whl', size: '67 kB' },
  { name: 'pydantic', version: '2.11.10', wheel: 'pydantic-2.11.10-py3-none-any.whl', size: '444 kB' },
  { name: 'openai', version: '2.1.0', wheel: 'openai-2.1.0-py3-none-any.whl', size: '964 kB' },
  {
    name: 'aiohttp',
    version: '3.12.15',
    wheel: 'aiohttp-3.12.15-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '1.6 MB',
  },
  {
    name: 'grpcio',
    version: '1.75.1',
    wheel: 'grpcio-1.75.1-cp310-cp310-manylinux2014_x86_64.manylinux_2_17_x86_64.whl',
    size: '6.4 MB',
  },
  { name: 'prometheus-client', version: '0.23.1', wheel: 'prometheus_client-0.23.1-py3-none-any.whl', size: '61 kB' },
  {
    name: 'msgspec',
    version: '0.19.0',
    wheel: 'msgspec-0.19.0-cp310-cp310-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '211 kB',
  },
  {
    name: 'pyzmq',
    version: '27.1.0',
    wheel: 'pyzmq-27.1.0-cp310-cp310-manylinux_2_26_x86_64.manylinux_2_28_x86_64.whl',
    size: '854 kB',
  },
  {
    name: 'psutil',
    version: '7.1.0',
    wheel:
      'psutil-7.1.0-cp36-abi3-manylinux_2_12_x86_64.manylinux2010_x86_64.manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    size: '291 kB',
  },
  { name: 'requests', version: '2.32.5', wheel: 'requests-2.32.5-py3-none-any.whl', size: '64 kB' },
  {
    name: 'sentencepiece',
    version: '0.2.1',
    wheel: 'sentencepiece-0.2.1-cp310-cp310-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl',
    size: '1.4 MB',
  },
  { name: 'protobuf', version: '6.32.1', wheel: 'protobuf-6.32.1-cp39-abi3-manylinux2014_x86_64.whl', size: '322 kB' },
];

const TORCH_DEPS = [
  'torch',
  'triton',
  'nvidia-nccl-cu12',
  'nvidia-cublas-cu12',
  'nvidia-cudnn-cu12',
  'nvidia-cuda-runtime-cu12',
  'nvidia-cuda-nvrtc-cu12',
  'nvidia-nvshmem-cu12',
];
const RAY_DEPS = [
  'ray',
  'grpcio',
  'protobuf',
  'requests',
  'aiohttp',
  'prometheus-client',
  'pydantic',
  'psutil',
  'numpy',
];

/** The distributions installing `name` brings in (itself first), from CLUSTER_DISTRIBUTIONS. */
export function dependencyClosure(name: string): Distribution[] {
  const n = normaliseName(name);
  const names =
    n === 'vllm' ? CLUSTER_DISTRIBUTIONS.map((d) => d.name) : n === 'torch' ? TORCH_DEPS : n === 'ray' ? RAY_DEPS : [n];
  return names
    .map((x) => CLUSTER_DISTRIBUTIONS.find((d) => d.name === x))
    .filter((d): d is Distribution => d !== undefined);
}

/** What `python3 -m venv` leaves (ensurepip's pip and setuptools). */
export const VENV_BASE_DISTRIBUTIONS: readonly Distribution[] = [
  { name: 'pip', version: VENV_PIP_VERSION },
  { name: 'setuptools', version: '59.6.0' },
];

/** Console scripts a distribution installs: script name → `module:function` (its entry point). */
export const CONSOLE_SCRIPTS: Readonly<Record<string, Record<string, string>>> = {
  pip: {
    pip: 'pip._internal.cli.main:main',
    pip3: 'pip._internal.cli.main:main',
    [`pip${PYTHON_XY}`]: 'pip._internal.cli.main:main',
  },
  torch: { torchrun: 'torch.distributed.run:main', torchfrtrace: 'tools.flight_recorder.fr_trace:main' },
  ray: { ray: 'ray.scripts.scripts:main', serve: 'ray.serve.scripts:cli' },
  vllm: { vllm: 'vllm.entrypoints.cli.main:main' },
  'huggingface-hub': {
    hf: 'huggingface_hub.cli.hf:main',
    'huggingface-cli': 'huggingface_hub.commands.huggingface_cli:main',
  },
};

/** Distribution name as pip normalises it in dist-info directory names (`nvidia_nccl_cu12`). */
export function distDirName(d: { name: string; version: string }): string {
  return `${d.name.replace(/-/g, '_')}-${d.version}.dist-info`;
}

export function sitePackages(venv: string): string {
  return posix.join(venv, 'lib', `python${PYTHON_XY}`, 'site-packages');
}

/** pip's console-script file: what `pip install` writes to `bin/<name>`. */
export function consoleScript(interpreter: string, entry: string): string {
  const [module, fn] = entry.split(':') as [string, string];
  return [
    `#!${interpreter}`,
    '# -*- coding: utf-8 -*-',
    'import re',
    'import sys',
    `from ${module} import ${fn}`,
    "if __name__ == '__main__':",
    "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])",
    `    sys.exit(${fn}())`,
    '',
  ].join('\n');
}

/** The entry module a console script imports (`torch.distributed.run`), or undefined. */
export function entryModule(content: string): string | undefined {
  if (!content.startsWith('#!')) return undefined;
  return /^from ([\w.]+) import \w+$/m.exec(content)?.[1];
}

/** Marks a venv interpreter file (the lab writes copies, not symlinks, when a scenario seeds a venv). */
export const INTERPRETER_MARK = '# l20-lab: CPython interpreter';

export function interpreterFile(): string {
  return `${INTERPRETER_MARK} ${PYTHON_VERSION} (stands for the ELF binary /usr/bin/python${PYTHON_XY})\n`;
}

export function pyvenvCfg(): string {
  return `home = /usr/bin\ninclude-system-site-packages = false\nversion = ${PYTHON_VERSION}\n`;
}

export function metadata(d: Distribution): string {
  return `Metadata-Version: 2.1\nName: ${d.name}\nVersion: ${d.version}\n`;
}

export interface VenvFile {
  content: string;
  mode: number;
}

/** The files pip leaves for `dists` in `site` with console scripts in `scriptDir` (shebang `interpreter`). */
export function distributionFiles(
  site: string,
  scriptDir: string,
  interpreter: string,
  dists: readonly Distribution[],
): Map<string, VenvFile> {
  const files = new Map<string, VenvFile>();
  for (const d of dists) {
    files.set(posix.join(site, distDirName(d), 'METADATA'), { content: metadata(d), mode: 0o644 });
    for (const [script, entry] of Object.entries(CONSOLE_SCRIPTS[d.name] ?? {})) {
      files.set(posix.join(scriptDir, script), { content: consoleScript(interpreter, entry), mode: 0o755 });
    }
  }
  return files;
}

/**
 * Every file of a venv at `venv` with `dists` installed, as `python3 -m venv` and pip write them
 * (interpreters as marked copies). Used by scenarios; the live tools write the same paths.
 */
export function venvFiles(venv: string, dists: readonly Distribution[]): Map<string, VenvFile> {
  const files = new Map<string, VenvFile>();
  files.set(posix.join(venv, 'pyvenv.cfg'), { content: pyvenvCfg(), mode: 0o644 });
  for (const exe of ['python', 'python3', `python${PYTHON_XY}`])
    files.set(posix.join(venv, 'bin', exe), { content: interpreterFile(), mode: 0o755 });
  files.set(posix.join(venv, 'bin', 'activate'), { content: activateScript(venv), mode: 0o644 });
  const bin = posix.join(venv, 'bin');
  for (const [p, f] of distributionFiles(sitePackages(venv), bin, posix.join(bin, 'python3'), [
    ...VENV_BASE_DISTRIBUTIONS,
    ...dists,
  ]))
    files.set(p, f);
  return files;
}

export function activateScript(venv: string): string {
  return [
    '# This file must be used with "source bin/activate" *from bash*',
    '# you cannot run it directly',
    `VIRTUAL_ENV="${venv}"`,
    'export VIRTUAL_ENV',
    '_OLD_VIRTUAL_PATH="$PATH"',
    'PATH="$VIRTUAL_ENV/bin:$PATH"',
    'export PATH',
    '',
  ].join('\n');
}

/** The Python environment an interpreter or console script runs in, as read back from the file system. */
export interface PythonEnv {
  /** The interpreter (`/opt/l20/venv/bin/python3`, `/usr/bin/python3`). */
  interpreter: string;
  /** `sys.prefix`: the venv directory, or `/usr`. */
  prefix: string;
  /** The venv directory, for a venv. */
  venv?: string;
  /** site-packages directories searched, first wins. */
  sites: string[];
  /** Installed distributions by normalised (lower-case, `-`) name → version. */
  dists: Map<string, string>;
  /** Where pip installs: the venv's site-packages, or the user site (`pip install` without root). */
  installSite: string;
  /** Where console scripts go. */
  scriptDir: string;
}

export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/[_.]+/g, '-');
}

/** The minimal file-system surface readPythonEnv needs (just-bash's IFileSystem fits). */
export interface ReadFs {
  readFile(path: string): Promise<string>;
  readdir(path: string): Promise<string[]>;
  exists(path: string): Promise<boolean>;
}

export function userSite(home: string): string {
  return posix.join(home, '.local', 'lib', `python${PYTHON_XY}`, 'site-packages');
}

async function readDists(fs: ReadFs, sites: readonly string[]): Promise<Map<string, string>> {
  const dists = new Map<string, string>();
  for (const site of sites) {
    let entries: string[];
    try {
      entries = await fs.readdir(site);
    } catch {
      entries = [];
    }
    for (const e of entries) {
      const m = /^(.+)-([^-]+)\.dist-info$/.exec(e);
      if (m?.[1] && m[2] && !dists.has(normaliseName(m[1]))) dists.set(normaliseName(m[1]), m[2]);
    }
  }
  return dists;
}

/** The venv at `dir` (undefined without pyvenv.cfg). */
export async function readVenv(fs: ReadFs, dir: string): Promise<PythonEnv | undefined> {
  if (!(await fs.exists(posix.join(dir, 'pyvenv.cfg')))) return undefined;
  const sites = [sitePackages(dir)];
  return {
    interpreter: posix.join(dir, 'bin', 'python3'),
    prefix: dir,
    venv: dir,
    sites,
    dists: await readDists(fs, sites),
    installSite: sites[0]!,
    scriptDir: posix.join(dir, 'bin'),
  };
}

/** jammy's python3 for a user: the user site first (what `pip install --user` and a non-root pip write), then the system's. */
export async function readSystemPython(fs: ReadFs, home: string, root: boolean): Promise<PythonEnv> {
  const sites = [userSite(home), `/usr/local/lib/python${PYTHON_XY}/dist-packages`, '/usr/lib/python3/dist-packages'];
  return {
    interpreter: SYSTEM_PYTHON,
    prefix: '/usr',
    sites,
    dists: await readDists(fs, sites),
    installSite: root ? sites[1]! : sites[0]!,
    scriptDir: root ? '/usr/local/bin' : posix.join(home, '.local', 'bin'),
  };
}

/** The environment of an interpreter path: its venv (pyvenv.cfg one level above bin/), else the system python. */
export async function pythonEnvOf(fs: ReadFs, interpreter: string, home: string, root: boolean): Promise<PythonEnv> {
  return (await readVenv(fs, venvOf(interpreter))) ?? readSystemPython(fs, home, root);
}

/** The interpreter a console script names in its `#!` line. */
export function shebangInterpreter(content: string): string | undefined {
  return /^#!(\S+)/.exec(content)?.[1];
}

/** `/opt/l20/venv/bin/python3` → `/opt/l20/venv` (the interpreter's venv: pyvenv.cfg one level up). */
export function venvOf(binPath: string): string {
  return posix.dirname(posix.dirname(binPath));
}
