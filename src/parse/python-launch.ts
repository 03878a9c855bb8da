/**
 * Python launchers that start vLLM in-process: `LLM(...)` / `vllm.LLM(...)` (and `EngineArgs(...)`,
 * `AsyncEngineArgs(...)`), read by tokenizing — never executing. Each call yields its model (first
 * positional argument or `model=`) and keyword arguments with their lines; literal values (strings,
 * numbers, True/False/None) are decoded, anything else keeps its source text. Also reported: `ray.init(...)`
 * and environment variables the script sets (`os.environ[...] = ...`, `setdefault`, dict entries such as
 * a Ray `runtime_env={"env_vars": {...}}`). Never throws; linear in the input.
 */

export type PyLiteral = string | number | boolean | null;

export interface PyValue {
  /** Source text of the expression, verbatim. */
  text: string;
  /** Decoded when the expression is a single literal. */
  literal?: PyLiteral;
  line: number;
}

export interface PyCall {
  /** `LLM`, `vllm.LLM`, `EngineArgs`, `ray.init`. */
  callee: string;
  line: number;
  endLine: number;
  /** Source text from the callee to the closing parenthesis. */
  text: string;
  positional: PyValue[];
  kwargs: Record<string, PyValue>;
  /** Line of each keyword. */
  kwLines: Record<string, number>;
}

export interface PyEnv {
  name: string;
  value: string;
  line: number;
  via: 'environ' | 'dict';
}

export interface PythonLaunchFacts {
  /** Imports or names vllm. */
  usesVllm: boolean;
  /** vLLM engine constructions. */
  calls: Array<PyCall & { model?: PyValue }>;
  rayInit?: PyCall;
  env: PyEnv[];
}

interface Tok {
  k: 'name' | 'num' | 'str' | 'op';
  text: string;
  value?: PyLiteral;
  line: number;
  start: number;
  end: number;
}

const OPS2 = ['**', '==', '!=', '<=', '>=', '->', ':=', '//', '<<', '>>'];

function decodeString(body: string): string {
  return body.replace(/\\(["'\\nt])/g, (_m, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

function tokenize(src: string, firstLine: number): Tok[] {
  const out: Tok[] = [];
  let line = firstLine;
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r' || c === '\\') {
      i++;
      continue;
    }
    if (c === '#') {
      const e = src.indexOf('\n', i);
      i = e < 0 ? src.length : e;
      continue;
    }
    const sm = /^([rRbBfFuU]{0,2})('''|"""|'|")/.exec(src.slice(i, i + 5));
    if (sm) {
      const q = sm[2] as string;
      const s = i + sm[0].length;
      let e = s;
      while (e < src.length) {
        if (src[e] === '\\') e += 2;
        else if (src.startsWith(q, e)) break;
        else if (q.length === 1 && src[e] === '\n') break;
        else e++;
      }
      const body = src.slice(s, Math.min(e, src.length));
      const end = Math.min(e + q.length, src.length);
      out.push({
        k: 'str',
        text: src.slice(i, end),
        value: /[rR]/.test(sm[1] as string) ? body : decodeString(body),
        line,
        start: i,
        end,
      });
      line += body.split('\n').length - 1;
      i = end;
      continue;
    }
    const nm = /^(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(src.slice(i, i + 64));
    if (nm) {
      out.push({
        k: 'num',
        text: nm[0],
        value: Number(nm[0].replace(/_/g, '')),
        line,
        start: i,
        end: i + nm[0].length,
      });
      i += nm[0].length;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let e = i + 1;
      while (e < src.length && /\w/.test(src[e] as string)) e++;
      const text = src.slice(i, e);
      const value = text === 'True' ? true : text === 'False' ? false : text === 'None' ? null : undefined;
      out.push(
        value === undefined
          ? { k: 'name', text, line, start: i, end: e }
          : { k: 'name', text, value, line, start: i, end: e },
      );
      i = e;
      continue;
    }
    if ('()[]{},:=.*+-/%<>!@~^&|;'.includes(c)) {
      const op = OPS2.find((o) => src.startsWith(o, i)) ?? c;
      out.push({ k: 'op', text: op, line, start: i, end: i + op.length });
      i += op.length;
      continue;
    }
    i++; // anything else (non-ASCII prose, `$`, `?`): not Python we read
  }
  return out;
}

const OPEN: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** Index of the token closing the bracket at `k`, or the last token. */
function closing(toks: Tok[], k: number): number {
  const stack: string[] = [];
  for (let j = k; j < toks.length; j++) {
    const t = toks[j] as Tok;
    if (t.k !== 'op') continue;
    const close = OPEN[t.text];
    if (close) stack.push(close);
    else if (t.text === stack[stack.length - 1]) {
      stack.pop();
      if (stack.length === 0) return j;
    }
  }
  return toks.length - 1;
}

function valueOf(src: string, toks: Tok[]): PyValue | undefined {
  const first = toks[0];
  const last = toks[toks.length - 1];
  if (!first || !last) return undefined;
  const v: PyValue = { text: src.slice(first.start, last.end), line: first.line };
  if (toks.length === 1 && first.value !== undefined) v.literal = first.value;
  else if (toks.length === 2 && first.text === '-' && last.k === 'num') v.literal = -(last.value as number);
  return v;
}

function callAt(src: string, toks: Tok[], nameStart: number, open: number): PyCall {
  const close = closing(toks, open);
  const call: PyCall = {
    callee: toks
      .slice(nameStart, open)
      .map((t) => t.text)
      .join(''),
    line: (toks[nameStart] as Tok).line,
    endLine: (toks[close] as Tok).line,
    text: src.slice((toks[nameStart] as Tok).start, (toks[close] as Tok).end),
    positional: [],
    kwargs: {},
    kwLines: {},
  };
  let depth = 0;
  let arg: Tok[] = [];
  const push = (): void => {
    const a0 = arg[0];
    if (a0 && a0.k === 'name' && arg[1]?.text === '=') {
      const v = valueOf(src, arg.slice(2));
      if (v) call.kwargs[a0.text] = v;
      call.kwLines[a0.text] = a0.line;
    } else if (a0 && !(a0.text === '*' || a0.text === '**')) {
      const v = valueOf(src, arg);
      if (v) call.positional.push(v);
    }
    arg = [];
  };
  for (let j = open + 1; j < close; j++) {
    const t = toks[j] as Tok;
    if (t.k === 'op' && OPEN[t.text]) depth++;
    else if (t.k === 'op' && [')', ']', '}'].includes(t.text)) depth--;
    if (depth === 0 && t.text === ',' && t.k === 'op') push();
    else arg.push(t);
  }
  push();
  return call;
}

const ENGINE = new Set(['LLM', 'EngineArgs', 'AsyncEngineArgs', 'AsyncLLMEngine', 'LLMEngine']);

/**
 * Reads a Python launcher. `firstLine` offsets line numbers; `assumeVllm` accepts a bare `LLM(` without a
 * vllm import (text excerpted from prose). Never throws.
 */
export function parsePythonLaunch(text: string, firstLine = 1, assumeVllm = false): PythonLaunchFacts {
  const facts: PythonLaunchFacts = { usesVllm: false, calls: [], env: [] };
  if (typeof text !== 'string') return facts;
  try {
    const toks = tokenize(text, firstLine);
    facts.usesVllm =
      assumeVllm ||
      toks.some(
        (t, j) =>
          t.k === 'name' && t.text === 'vllm' && (toks[j - 1]?.text === 'import' || toks[j - 1]?.text === 'from'),
      );
    for (let j = 0; j < toks.length; j++) {
      const t = toks[j] as Tok;
      if (t.k !== 'name' || toks[j + 1]?.text !== '(') continue;
      const dotted = toks[j - 1]?.text === '.' && toks[j - 2]?.k === 'name';
      const start = dotted ? j - 2 : j;
      if (ENGINE.has(t.text) && (facts.usesVllm || (dotted && toks[j - 2]?.text === 'vllm'))) {
        const call = callAt(text, toks, start, j + 1);
        const model = call.kwargs.model ?? call.positional[0];
        facts.calls.push(model ? { ...call, model } : call);
      } else if (t.text === 'init' && dotted && toks[j - 2]?.text === 'ray')
        facts.rayInit = callAt(text, toks, start, j + 1);
      else if (
        (t.text === 'setdefault' || t.text === 'putenv') &&
        toks[j + 2]?.k === 'str' &&
        toks[j + 3]?.text === ','
      ) {
        const v = toks[j + 4];
        if (v)
          facts.env.push({
            name: String(toks[j + 2]?.value),
            value: String(v.value ?? v.text),
            line: t.line,
            via: 'environ',
          });
      }
    }
    for (let j = 0; j + 3 < toks.length; j++) {
      const t = toks[j] as Tok;
      // os.environ["NCCL_X"] = "1"
      if (
        t.text === 'environ' &&
        toks[j + 1]?.text === '[' &&
        toks[j + 2]?.k === 'str' &&
        toks[j + 3]?.text === ']' &&
        toks[j + 4]?.text === '='
      ) {
        const v = toks[j + 5];
        if (v)
          facts.env.push({
            name: String(toks[j + 2]?.value),
            value: String(v.value ?? v.text),
            line: t.line,
            via: 'environ',
          });
      }
      // {"NCCL_DEBUG": "INFO"} — env-like keys in any dict literal (runtime_env env_vars, os.environ.update)
      if (
        t.k === 'str' &&
        /^[A-Z][A-Z0-9_]*$/.test(String(t.value)) &&
        toks[j + 1]?.text === ':' &&
        ['{', ','].includes(toks[j - 1]?.text ?? '')
      ) {
        const v = toks[j + 2];
        if (v && v.k !== 'op')
          facts.env.push({ name: String(t.value), value: String(v.value ?? v.text), line: t.line, via: 'dict' });
      }
    }
  } catch {
    /* partial facts */
  }
  return facts;
}

/** An integer keyword argument (`tensor_parallel_size=16`), when literal. */
export function intArg(call: PyCall, name: string): number | undefined {
  const v = call.kwargs[name]?.literal;
  return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
}
