/**
 * jammy's `python3` and the cluster venv (docs/STAGES.md §3.9 nccl.bench-tools, reused by ray and vllm):
 * `python3 -m venv DIR` (needs python3-venv: without it, the real ensurepip refusal and a venv
 * without pip), the venv interpreter (`DIR/bin/python -c …`, `-m pip`), and pip (`install`, `list`,
 * `freeze`, `show`, `--version`) resolving against an offline index of the pinned versions
 * (model/python.ts). `pip install` streams pip 22.0.2's output over ≈ 90 s of modelled time
 * (docs/STAGES.md §4.5: wheels ≈ 90 s) and writes dist-info directories and console scripts, which is
 * all the other tools read back.
 *
 * Formats: pip 22.0.2 and CPython 3.10 messages as they print them (derived from their sources);
 * no real capture is in the corpus.
 */
import { posix } from 'node:path';
import type { ExecResult, IFileSystem } from 'just-bash';
import { isInstalled } from '../model/packages.js';
import {
  CLUSTER_DISTRIBUTIONS,
  INTERPRETER_MARK,
  PYTHON_VERSION,
  PYTHON_XY,
  SYSTEM_PYTHON,
  VENV_BASE_DISTRIBUTIONS,
  VENV_PIP_VERSION,
  activateScript,
  dependencyClosure,
  distDirName,
  distributionFiles,
  entryModule,
  normaliseName,
  pythonEnvOf,
  pyvenvCfg,
  shebangInterpreter,
  sitePackages,
  type Distribution,
  type PythonEnv,
} from '../model/python.js';
import { registerProgram, type ProgramInvocation } from '../shell/programs.js';
import { toolIo } from '../system/live.js';
import { runPythonCode, type PythonContext } from './python-eval.js';
import type { Tool, ToolEnv } from './types.js';

const out = (stdout: string, exitCode = 0, stderr = ''): ExecResult => ({ stdout, stderr, exitCode });

const PY_USAGE = `usage: python3 [option] ... [-c cmd | -m mod | file | -] [arg] ...\nTry \`python -h' for more information.\n`;

function errnoOf(e: unknown): string {
  const code = (e as { code?: string }).code;
  return code === 'EACCES' || code === 'EPERM' ? '[Errno 13] Permission denied' : `[Errno 5] ${(e as Error).message}`;
}

async function writeFile(fs: IFileSystem, path: string, content: string, mode: number): Promise<void> {
  await fs.mkdir(posix.dirname(path), { recursive: true });
  await fs.writeFile(path, content);
  await fs.chmod(path, mode);
}

/** `python3 -m venv DIR`: the directory layout, then ensurepip (only with python3-venv installed). */
async function makeVenv(dir: string, env: ToolEnv): Promise<ExecResult> {
  const fs = env.ctx.fs;
  const abs = fs.resolvePath(env.ctx.cwd, dir);
  try {
    await writeFile(fs, posix.join(abs, 'pyvenv.cfg'), pyvenvCfg(), 0o644);
    await fs.mkdir(posix.join(abs, 'include'), { recursive: true });
    await fs.mkdir(sitePackages(abs), { recursive: true });
    const bin = posix.join(abs, 'bin');
    for (const [name, target] of [
      ['python3', SYSTEM_PYTHON],
      ['python', 'python3'],
      [`python${PYTHON_XY}`, 'python3'],
    ] as const) {
      const p = posix.join(bin, name);
      if (!(await fs.exists(p))) await fs.symlink(target, p);
    }
  } catch (e) {
    return out('', 1, `Error: ${errnoOf(e)}: '${abs}'\n`);
  }
  const hasEnsurepip =
    isInstalled(env.machine.packages, 'python3-venv') || isInstalled(env.machine.packages, `python${PYTHON_XY}-venv`);
  if (!hasEnsurepip) {
    return out(
      'The virtual environment was not created successfully because ensurepip is not\navailable.  On Debian/Ubuntu systems, you need to install the python3-venv\npackage using the following command.\n\n' +
        `    apt install python${PYTHON_XY}-venv\n\nYou may need to use sudo with that command.  After installing the python3-venv\npackage, recreate your virtual environment.\n\n` +
        `Failing command: ['${abs}/bin/python3', '-Im', 'ensurepip', '--upgrade', '--default-pip']\n`,
      1,
    );
  }
  try {
    await writeFile(fs, posix.join(abs, 'bin', 'activate'), activateScript(abs), 0o644);
    const bin = posix.join(abs, 'bin');
    await installDists(
      fs,
      { installSite: sitePackages(abs), scriptDir: bin, interpreter: posix.join(bin, 'python3') },
      VENV_BASE_DISTRIBUTIONS,
    );
  } catch (e) {
    return out('', 1, `Error: ${errnoOf(e)}: '${abs}'\n`);
  }
  return out('');
}

/** Writes dist-info metadata and console scripts (what pip leaves behind); replaces other versions' dist-info. */
async function installDists(
  fs: IFileSystem,
  target: Pick<PythonEnv, 'installSite' | 'scriptDir' | 'interpreter'>,
  dists: readonly Distribution[],
): Promise<void> {
  const site = target.installSite;
  const existing = await fs.readdir(site).catch(() => [] as string[]);
  for (const d of dists) {
    for (const e of existing) {
      if (
        e.endsWith('.dist-info') &&
        e !== distDirName(d) &&
        normaliseName(e.replace(/-[^-]+\.dist-info$/, '')) === normaliseName(d.name)
      ) {
        await fs.rm(posix.join(site, e), { recursive: true, force: true });
      }
    }
  }
  for (const [path, f] of distributionFiles(site, target.scriptDir, target.interpreter, dists))
    await writeFile(fs, path, f.content, f.mode);
}

/** Interpreter: `-V`, `-c CODE`, `-m venv DIR`, `-m pip …`. */
async function runInterpreter(args: string[], env: ToolEnv, py: PythonEnv): Promise<ExecResult> {
  const interpreter = py.interpreter;
  const a = args[0];
  if (a === undefined) return out('', 1, 'l20-lab: an interactive Python interpreter is not modelled; use -c\n');
  if (a === '-V' || a === '--version') return out(`Python ${PYTHON_VERSION}\n`);
  if (a === '-c') {
    const code = args[1];
    if (code === undefined) return out('', 2, `Argument expected for the -c option\n${PY_USAGE}`);
    const ctx: PythonContext = { ...env, py };
    return runPythonCode(code, ctx);
  }
  if (a === '-m') {
    const mod = args[1];
    if (mod === 'venv') {
      const dir = args
        .slice(2)
        .filter((x) => !x.startsWith('-'))
        .pop();
      if (!dir)
        return out(
          '',
          2,
          'usage: venv [-h] [--system-site-packages] [--symlinks | --copies] [--clear] [--upgrade] [--without-pip] [--prompt PROMPT] [--upgrade-deps] ENV_DIR [ENV_DIR ...]\nvenv: error: the following arguments are required: ENV_DIR\n',
        );
      return makeVenv(dir, env);
    }
    if (mod === 'pip') {
      if (!py.dists.has('pip')) return out('', 1, `${interpreter}: No module named pip\n`);
      return runPip(args.slice(2), env, py);
    }
    return out('', 1, `${interpreter}: No module named ${mod ?? ''}\n`);
  }
  if (a.startsWith('-')) return out('', 2, `Unknown option: ${a}\n${PY_USAGE}`);
  return out(
    '',
    2,
    `${interpreter}: can't open file '${env.ctx.fs.resolvePath(env.ctx.cwd, a)}': [Errno 2] No such file or directory\n`,
  );
}

export const python3: Tool = {
  name: 'python3',
  path: SYSTEM_PYTHON,
  packages: ['python3'],
  run: async (args, env) =>
    runInterpreter(args, env, await pythonEnvOf(env.ctx.fs, SYSTEM_PYTHON, home(env), env.root)),
};

// ---------------------------------------------------------------- pip

interface Requirement {
  text: string;
  name: string;
  extras: string;
  op?: string;
  version?: string;
}

function parseRequirement(text: string): Requirement | undefined {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(?:(==|>=|<=|~=|!=|>|<)\s*([A-Za-z0-9.+*]+))?$/.exec(
    text.trim(),
  );
  if (!m?.[1]) return undefined;
  return { text, name: m[1], extras: m[2] ?? '', ...(m[3] ? { op: m[3], version: m[4] } : {}) };
}

function cmpVersion(a: string, b: string): number {
  const pa = a.split('.').map((x) => parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++)
    if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

function satisfies(version: string, r: Requirement): boolean {
  if (!r.op || !r.version) return true;
  const c = cmpVersion(version, r.version);
  switch (r.op) {
    case '==':
      return r.version.endsWith('*') ? version.startsWith(r.version.slice(0, -1)) : c === 0;
    case '>=':
      return c >= 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '<':
      return c < 0;
    case '!=':
      return c !== 0;
    default:
      return c >= 0;
  }
}

/** The offline index: one version per distribution (the pins). */
function indexed(name: string): Distribution | undefined {
  const n = normaliseName(name);
  return [...CLUSTER_DISTRIBUTIONS, ...VENV_BASE_DISTRIBUTIONS].find((d) => normaliseName(d.name) === n);
}

function pipUsage(): string {
  return '\nUsage:   \n  pip <command> [options]\n\nno such option: see pip --help\n';
}

/** Modelled seconds pip spends downloading a wheel of this printed size (≈ 80 MB/s, 0.3 s minimum). */
function downloadMs(size: string | undefined): number {
  const m = /^([\d.]+)\s*(kB|MB|GB)$/.exec(size ?? '');
  if (!m) return 300;
  const mb = Number(m[1]) * (m[2] === 'GB' ? 1024 : m[2] === 'kB' ? 1 / 1024 : 1);
  return Math.max(300, (mb / 80) * 1000);
}

async function pipInstall(args: string[], env: ToolEnv, venv: PythonEnv): Promise<ExecResult> {
  const io = toolIo(env.ctx, env.machine.clock);
  let quiet = false;
  const reqs: Requirement[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-q' || a === '--quiet') quiet = true;
    else if (
      a === '-U' ||
      a === '--upgrade' ||
      a === '--no-cache-dir' ||
      a === '--no-input' ||
      a === '--disable-pip-version-check'
    )
      continue;
    else if (a === '-i' || a === '--index-url' || a === '--extra-index-url') i++;
    else if (a.startsWith('--index-url=') || a.startsWith('--extra-index-url=')) continue;
    else if (a.startsWith('-')) return out('', 2, `${pipUsage()}no such option: ${a}\n`);
    else {
      const r = parseRequirement(a);
      if (!r) return out('', 1, `ERROR: Invalid requirement: '${a}'\n`);
      reqs.push(r);
    }
  }
  if (reqs.length === 0)
    return out('', 1, 'ERROR: You must give at least one requirement to install (see "pip help install")\n');
  const say = async (line: string): Promise<void> => {
    if (!quiet) await io.out(`${line}\n`);
  };
  const download = async (d: Distribution): Promise<boolean> => {
    await say(`  Downloading ${d.wheel ?? `${d.name}-${d.version}-py3-none-any.whl`} (${d.size ?? '120 kB'})`);
    if (!(await io.sleep(downloadMs(d.size)))) return false;
    await say(`     ${'━'.repeat(40)} ${(d.size ?? '120 kB').replace(/^([\d.]+)/, '$1/$1')} 85.3 MB/s eta 0:00:00`);
    return true;
  };
  // Resolve as pip does: each requirement as given, then the dependencies it brings, each downloaded once.
  const wanted = new Map<string, Distribution>();
  const fetched = new Set<string>();
  for (const r of reqs) {
    const d = indexed(r.name);
    const have = venv.dists.get(normaliseName(r.name));
    if (have && satisfies(have, r) && d && have === d.version) {
      await say(`Requirement already satisfied: ${r.text} in ${venv.installSite} (${have})`);
      continue;
    }
    await say(`Collecting ${r.text}`);
    await io.sleep(400);
    if (!d || !satisfies(d.version, r)) {
      await io.err(
        `ERROR: Could not find a version that satisfies the requirement ${r.text} (from versions: ${d ? d.version : 'none'})\nERROR: No matching distribution found for ${r.text}\n`,
      );
      return io.result(1);
    }
    if (!(await download(d))) return io.result(130);
    fetched.add(d.name);
    for (const dep of dependencyClosure(d.name))
      if (venv.dists.get(normaliseName(dep.name)) !== dep.version) wanted.set(dep.name, dep);
  }
  if (wanted.size === 0) return io.result(0);
  for (const d of wanted.values()) {
    if (fetched.has(d.name)) continue;
    await say(`Collecting ${d.name}==${d.version}`);
    if (!(await download(d))) return io.result(130);
  }
  const order = [...wanted.values()].reverse();
  await say(`Installing collected packages: ${order.map((d) => d.name).join(', ')}`);
  // Unpacking torch and the CUDA libraries dominates: ≈ 40 s for the full set.
  if (!(await io.sleep(Math.min(40_000, 1500 * order.length)))) return io.result(130);
  try {
    await installDists(env.ctx.fs, venv, order);
  } catch (e) {
    await io.err(
      `ERROR: Could not install packages due to an OSError: ${errnoOf(e)}: '${posix.join(venv.installSite, distDirName(order[0]!))}'\nConsider using the \`--user\` option or check the permissions.\n\n`,
    );
    return io.result(1);
  }
  const installed = [...wanted.values()].map((d) => `${d.name}-${d.version}`).sort((x, y) => x.localeCompare(y));
  await say(`Successfully installed ${installed.join(' ')}`);
  return io.result(0);
}

async function runPip(args: string[], env: ToolEnv, venv: PythonEnv): Promise<ExecResult> {
  const cmd = args[0];
  if (cmd === undefined || cmd === '-h' || cmd === '--help') {
    return out(
      '\nUsage:   \n  pip <command> [options]\n\nCommands:\n  install                     Install packages.\n  list                        List installed packages.\n  show                        Show information about installed packages.\n  freeze                      Output installed packages in requirements format.\n',
    );
  }
  if (cmd === '-V' || cmd === '--version')
    return out(
      `pip ${venv.dists.get('pip') ?? VENV_PIP_VERSION} from ${venv.sites.find((s) => s.includes('site-packages') || s.includes('dist-packages'))}/pip (python ${PYTHON_XY})\n`,
    );
  const sorted = [...venv.dists].sort(([a], [b]) => a.localeCompare(b));
  if (cmd === 'install') return pipInstall(args.slice(1), env, venv);
  if (cmd === 'freeze')
    return out(
      sorted
        .filter(([n]) => n !== 'pip' && n !== 'setuptools')
        .map(([n, v]) => `${n}==${v}\n`)
        .join(''),
    );
  if (cmd === 'list') {
    const w = Math.max(7, ...sorted.map(([n]) => n.length));
    const vw = Math.max(7, ...sorted.map(([, v]) => v.length));
    return out(
      [
        `${'Package'.padEnd(w)} ${'Version'.padEnd(vw)}`.trimEnd(),
        `${'-'.repeat(w)} ${'-'.repeat(vw)}`,
        ...sorted.map(([n, v]) => `${n.padEnd(w)} ${v}`),
      ].join('\n') + '\n',
    );
  }
  if (cmd === 'show') {
    const found = args.slice(1).map((n) => [n, venv.dists.get(normaliseName(n))] as const);
    const missing = found.filter(([, v]) => v === undefined);
    const shown = found
      .filter(([, v]) => v !== undefined)
      .map(([n, v]) => `Name: ${indexed(n)?.name ?? n}\nVersion: ${v}\nLocation: ${venv.installSite}\n`);
    return out(
      shown.join('---\n'),
      missing.length > 0 ? 1 : 0,
      missing.map(([n]) => `WARNING: Package(s) not found: ${n}\n`).join(''),
    );
  }
  return out('', 1, `ERROR: unknown command "${cmd}"\n`);
}

// ---------------------------------------------------------------- programs

const home = (env: ToolEnv): string => env.ctx.env.get('HOME') ?? env.machine.user.home;

const isInterpreterContent = (content: string): boolean =>
  content.includes(INTERPRETER_MARK) || content.includes('# Built-in command: python3');

/** The environment a console script runs in: the interpreter of its `#!` line. */
export async function scriptEnv(inv: ProgramInvocation): Promise<PythonEnv> {
  return pythonEnvOf(inv.ctx.fs, shebangInterpreter(inv.content) ?? SYSTEM_PYTHON, home(inv), inv.root);
}

registerProgram({
  name: 'python',
  basenames: ['python', 'python3', `python${PYTHON_XY}`],
  accepts: (_path, content) => isInterpreterContent(content),
  run: async (inv) =>
    runInterpreter(inv.args, inv, {
      ...(await pythonEnvOf(inv.ctx.fs, inv.path, home(inv), inv.root)),
      interpreter: inv.path,
    }),
});

registerProgram({
  name: 'pip',
  basenames: ['pip', 'pip3', `pip${PYTHON_XY}`],
  accepts: (_path, content) => entryModule(content) === 'pip._internal.cli.main',
  run: async (inv) => runPip(inv.args, inv, await scriptEnv(inv)),
});
