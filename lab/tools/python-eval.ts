/**
 * `python -c CODE` for the one-liners the stages run (docs/STAGES.md §3.9–3.11): imports and prints of
 * versions and CUDA facts, e.g. `import torch; print(torch.cuda.nccl.version())`. A real interpreter
 * is out of reach, so CODE is read as a sequence of simple statements (`;` or newlines): `import a, b`,
 * `from a import b`, and `print(expr, …)` over a table of known expressions. Modules come from the
 * interpreter's site-packages (a venv's dist-info directories) or the standard library; a missing
 * one raises the real ModuleNotFoundError traceback. Anything else says it is not modelled.
 *
 * Other stages extend it: registerPythonExpression for a value (`ray.__version__` is built in), or
 * registerPythonSnippet to take over a whole -c script (a connection loop, `ray.nodes()`).
 */
import { PINS } from '../product-checks.js';
import { PYTHON_VERSION, normaliseName, type PythonEnv } from '../model/python.js';
import type { ToolEnv } from './types.js';
import { cudaRuntime } from './cuda-runtime.js';

export interface PythonContext extends ToolEnv {
  /** The interpreter and the distributions it can import. */
  py: PythonEnv;
}

export interface PythonResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

type ExprFn = (py: PythonContext) => string | { error: string };

const expressions = new Map<string, ExprFn>();
const snippets: Array<{
  name: string;
  match(code: string): boolean;
  run(code: string, py: PythonContext): Promise<PythonResult> | PythonResult;
}> = [];

/** `print(<expr>)` support for one more expression (its `repr`/`str` as print shows it). */
export function registerPythonExpression(expr: string, fn: ExprFn): void {
  expressions.set(expr.replace(/\s+/g, ''), fn);
}

/** A whole `-c` script another stage models (tried before the statement reader). */
export function registerPythonSnippet(s: {
  name: string;
  match(code: string): boolean;
  run(code: string, py: PythonContext): Promise<PythonResult> | PythonResult;
}): void {
  const at = snippets.findIndex((x) => x.name === s.name);
  if (at >= 0) snippets.splice(at, 1, s);
  else snippets.push(s);
}

/** Standard-library modules the one-liners use. */
const STDLIB = new Set([
  'sys',
  'os',
  'json',
  'socket',
  'time',
  'platform',
  're',
  'subprocess',
  'pathlib',
  'hashlib',
  'importlib',
  'shutil',
  'math',
]);

/** Top-level import name → distribution that provides it. */
const PROVIDES: Record<string, string> = {
  torch: 'torch',
  vllm: 'vllm',
  ray: 'ray',
  numpy: 'numpy',
  transformers: 'transformers',
  triton: 'triton',
  xformers: 'xformers',
  huggingface_hub: 'huggingface-hub',
  safetensors: 'safetensors',
  pip: 'pip',
  setuptools: 'setuptools',
};

function distVersion(py: PythonContext, dist: string): string | undefined {
  return py.py.dists.get(normaliseName(dist));
}

registerPythonExpression('torch.__version__', (py) => `${distVersion(py, 'torch') ?? PINS.torch}+${PINS.torchCuda}`);
registerPythonExpression('torch.version.cuda', () => '12.8');
registerPythonExpression('torch.cuda.nccl.version()', () => `(${PINS.nccl.split('.').join(', ')})`);
registerPythonExpression('torch.cuda.is_available()', (py) => (cudaRuntime(py.machine).ok ? 'True' : 'False'));
registerPythonExpression('torch.cuda.device_count()', (py) =>
  String(cudaRuntime(py.machine).ok ? py.machine.gpus.length : 0),
);
registerPythonExpression('vllm.__version__', (py) => distVersion(py, 'vllm') ?? PINS.vllm);
registerPythonExpression('ray.__version__', (py) => distVersion(py, 'ray') ?? PINS.ray);
registerPythonExpression('sys.version', () => `${PYTHON_VERSION} (main, Nov  6 2024, 20:22:13) [GCC 11.4.0]`);
registerPythonExpression('platform.python_version()', () => PYTHON_VERSION);
registerPythonExpression('sys.executable', (py) => py.py.interpreter);
registerPythonExpression('sys.prefix', (py) => py.py.prefix);

/** Splits on `;` and newlines outside brackets and quotes. */
function statements(code: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let cur = '';
  for (const ch of code) {
    if (quote) {
      cur += ch;
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    if (ch === ')' || ch === ']' || ch === '}') depth--;
    if (depth === 0 && (ch === ';' || ch === '\n')) {
      if (cur.trim()) out.push(cur.trim());
      cur = '';
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** Splits print's arguments on top-level commas. */
function printArgs(inner: string): string[] {
  return statements(inner.replace(/,/g, ';'));
}

function traceback(line: number, error: string): string {
  return `Traceback (most recent call last):\n  File "<string>", line ${line}, in <module>\n${error}\n`;
}

function moduleAvailable(py: PythonContext, module: string): boolean {
  const top = module.split('.')[0] ?? module;
  if (STDLIB.has(top)) return true;
  const dist = PROVIDES[top];
  return dist !== undefined && distVersion(py, dist) !== undefined;
}

/** Runs `python -c CODE` as far as the lab models Python. */
export async function runPythonCode(code: string, py: PythonContext): Promise<PythonResult> {
  const snippet = snippets.find((s) => s.match(code));
  if (snippet) return snippet.run(code, py);
  let stdout = '';
  for (const [i, st] of statements(code).entries()) {
    const line = i + 1;
    const imp = /^import\s+(.+)$/.exec(st) ?? /^from\s+([\w.]+)\s+import\s+.+$/.exec(st);
    if (imp?.[1]) {
      for (const mod of imp[1].split(',').map((s) =>
        s
          .trim()
          .split(/\s+as\s+/)[0]!
          .trim(),
      )) {
        if (!moduleAvailable(py, mod)) {
          return {
            stdout,
            stderr: traceback(line, `ModuleNotFoundError: No module named '${mod.split('.')[0]}'`),
            exitCode: 1,
          };
        }
      }
      continue;
    }
    const pr = /^print\((.*)\)$/s.exec(st);
    if (pr) {
      const values: string[] = [];
      for (const arg of printArgs(pr[1] ?? '')) {
        const lit = /^(['"])(.*)\1$/s.exec(arg);
        if (lit) {
          values.push(lit[2] ?? '');
          continue;
        }
        const fn = expressions.get(arg.replace(/\s+/g, ''));
        if (!fn)
          return {
            stdout,
            stderr: `l20-lab: python: the expression \`${arg}\` is not modelled by this version of the l20-setup lab\n`,
            exitCode: 1,
          };
        const top = arg.split('.')[0] ?? '';
        if (!STDLIB.has(top) && PROVIDES[top] && !imported(code, top)) {
          return { stdout, stderr: traceback(line, `NameError: name '${top}' is not defined`), exitCode: 1 };
        }
        const v = fn(py);
        if (typeof v !== 'string') return { stdout, stderr: traceback(line, v.error), exitCode: 1 };
        values.push(v);
      }
      stdout += `${values.join(' ')}\n`;
      continue;
    }
    return {
      stdout,
      stderr: `l20-lab: python: the statement \`${st}\` is not modelled by this version of the l20-setup lab\n`,
      exitCode: 1,
    };
  }
  return { stdout, stderr: '', exitCode: 0 };
}

function imported(code: string, top: string): boolean {
  return new RegExp(`(^|[;\\n])\\s*import\\s+([\\w.]+\\s*,\\s*)*${top}\\b`).test(code);
}
