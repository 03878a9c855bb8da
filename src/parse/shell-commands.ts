/**
 * Shell scripts and command lines → simple commands with line numbers. Typed views of the commands the cfg
 * rules read (`mlnx_qos`, `ray start`, `vllm serve`, `pip install`, …) are in src/rules/cfg/commands.ts.
 *
 * Not a shell: a linear tokenizer (quotes, `\` continuations, comments, `$(…)`, redirections, here-docs)
 * and a flat structure pass. `for x in a b c; do … done` over a literal list (or a variable assigned a
 * literal earlier) is expanded once per value; other loops and `if`/`while` bodies are kept once. `sudo`,
 * `env`, `nohup`, `A=B` prefixes are peeled off; `sh -c '…'` is parsed recursively. Never throws.
 */
import { sanitize } from '../util/sanitize.js';

export interface Word {
  /** Quotes removed, literal variables expanded. */
  text: string;
  line: number;
  quoted: boolean;
}
export interface Assign {
  name: string;
  value: string;
  line: number;
  exported: boolean;
}
export interface ShellCommand {
  line: number;
  endLine: number;
  /** The command's source text, verbatim (continuations joined with a space). */
  text: string;
  /** Program and arguments: `sudo`, `env`, `A=B` prefixes removed. Empty for a pure assignment. */
  argv: Word[];
  /** Basename of argv[0] (`mlnx_qos`, `python3`); '' when argv is empty. */
  program: string;
  sudo: boolean;
  /** `A=B cmd` / `env A=B cmd` prefixes. */
  env: Assign[];
  /** `A=B` alone, `export A=B`, `declare -x A=B`. */
  assigns: Assign[];
  redirects: Array<{ op: string; target: string }>;
  heredoc?: { body: string; line: number };
  /** Set when expanded from a literal `for` loop. */
  loop?: { variable: string; value: string };
}

type Tok =
  | { t: 'w'; text: string; line: number; start: number; end: number; quoted: boolean; single: boolean }
  | { t: 'op'; op: string; line: number; start: number; end: number }
  | { t: 'doc'; body: string; line: number };

const OPS = ['&&', '||', ';;', '|&', ';', '|', '&', '(', ')'];
const REDIR = /^(?:\d*(?:>>|>&|<<<|<<-|<<|<&|>\||>|<)|&>>|&>)/;

function tokenize(src: string, firstLine: number): Tok[] {
  const toks: Tok[] = [];
  let line = firstLine;
  let i = 0;
  let cur: { text: string; line: number; start: number; quoted: boolean; single: boolean } | null = null;
  const pending: Array<{ delim: string; strip: boolean }> = [];
  let wantDelim: { strip: boolean } | null = null;
  const flush = (end: number): void => {
    if (!cur) return;
    const w = { t: 'w' as const, ...cur, end };
    if (wantDelim) {
      pending.push({ delim: w.text, strip: wantDelim.strip });
      wantDelim = null;
    } else toks.push(w);
    cur = null;
  };
  const word = (): NonNullable<typeof cur> => (cur ??= { text: '', line, start: i, quoted: false, single: false });
  while (i < src.length) {
    const c = src[i] as string;
    if (c === '\\' && src[i + 1] === '\n') {
      i += 2;
      line++;
      continue;
    }
    if (c === ' ' || c === '\t') {
      flush(i);
      i++;
      continue;
    }
    if (c === '\n') {
      flush(i);
      toks.push({ t: 'op', op: '\n', line, start: i, end: i + 1 });
      i++;
      line++;
      for (const p of pending.splice(0)) {
        const bodyLine = line;
        const body: string[] = [];
        while (i < src.length) {
          let e = src.indexOf('\n', i);
          if (e < 0) e = src.length;
          const l = src.slice(i, e);
          i = e + 1;
          line++;
          if ((p.strip ? l.replace(/^\t+/, '') : l) === p.delim) break;
          body.push(l);
        }
        toks.push({ t: 'doc', body: body.join('\n'), line: bodyLine });
      }
      continue;
    }
    if (c === '#' && !cur) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const redir = REDIR.exec(src.slice(i, i + 4));
    if (redir) {
      let fd = '';
      const open = cur as { text: string; quoted: boolean } | null; // assigned in closures: TS narrows it to null
      if (open && /^\d+$/.test(open.text) && !open.quoted) {
        fd = open.text;
        cur = null;
      } else flush(i);
      const op = fd + redir[0];
      toks.push({ t: 'op', op, line, start: i, end: i + redir[0].length });
      i += redir[0].length;
      if ((op.endsWith('<<') && !op.endsWith('<<<')) || op.endsWith('<<-')) wantDelim = { strip: op.endsWith('-') };
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (op) {
      flush(i);
      toks.push({ t: 'op', op, line, start: i, end: i + op.length });
      i += op.length;
      continue;
    }
    const w = word();
    if (c === "'" || (c === '$' && src[i + 1] === "'")) {
      const s = c === '$' ? i + 2 : i + 1;
      let e = src.indexOf("'", s);
      if (e < 0) e = src.length;
      const body = src.slice(s, e);
      w.text += body;
      w.quoted = w.single = true;
      line += body.split('\n').length - 1;
      i = e + 1;
    } else if (c === '"') {
      w.quoted = true;
      i++;
      while (i < src.length && src[i] !== '"') {
        const d = src[i] as string;
        if (d === '\\' && i + 1 < src.length) {
          const n = src[i + 1] as string;
          if (n === '\n') line++;
          else w.text += '"\\$`'.includes(n) ? n : d + n;
          i += 2;
          continue;
        }
        if (d === '\n') line++;
        w.text += d;
        i++;
      }
      i++;
    } else if (c === '$' && (src[i + 1] === '(' || src[i + 1] === '{')) {
      const open = src[i + 1] as string;
      const close = open === '(' ? ')' : '}';
      let depth = 0;
      const s = i;
      for (i++; i < src.length; i++) {
        const d = src[i];
        if (d === open) depth++;
        else if (d === close && --depth === 0) break;
        else if (d === '\n') line++;
      }
      i++;
      w.text += src.slice(s, i);
    } else if (c === '`') {
      let e = src.indexOf('`', i + 1);
      if (e < 0) e = src.length;
      w.text += src.slice(i, e + 1);
      i = e + 1;
    } else if (c === '\\') {
      w.text += src[i + 1] ?? '';
      i += 2;
    } else {
      w.text += c;
      i++;
    }
  }
  flush(i);
  return toks;
}

interface Simple {
  words: Array<Extract<Tok, { t: 'w' }>>;
  redirects: Array<{ op: string; target: string }>;
  heredoc?: { body: string; line: number };
  start: number;
  end: number;
  endLine: number;
}

function simples(toks: Tok[]): Simple[] {
  const out: Simple[] = [];
  let cur: Simple | null = null;
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k] as Tok;
    if (t.t === 'doc') {
      const last = cur ?? out[out.length - 1];
      if (last) last.heredoc = { body: t.body, line: t.line };
      continue;
    }
    if (t.t === 'op' && /[<>]/.test(t.op)) {
      const target = toks[k + 1];
      cur ??= { words: [], redirects: [], start: t.start, end: t.end, endLine: t.line };
      if (target && target.t === 'w') {
        cur.redirects.push({ op: t.op, target: target.text });
        cur.end = target.end;
        k++;
      } else cur.redirects.push({ op: t.op, target: '' });
      continue;
    }
    if (t.t === 'op') {
      if (cur) out.push(cur);
      cur = null;
      continue;
    }
    cur ??= { words: [], redirects: [], start: t.start, end: t.end, endLine: t.line };
    cur.words.push(t);
    cur.end = t.end;
    cur.endLine = t.line;
  }
  if (cur) out.push(cur);
  return out;
}

const ASSIGN = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', '!', '{', '}', 'time', 'do', 'esac', 'in']);
const LITERAL = /^[^$`*?[\]{}]*$/;
const WRAPPERS: Record<string, RegExp> = {
  // option words that take the next word as their argument
  sudo: /^-[ugCDhprtUT]$/,
  env: /^-[uCS]$/,
  nice: /^-n$/,
  ionice: /^-[cnpP]$/,
  timeout: /^-[sk]$/,
  taskset: /^$/,
  numactl: /^-[NmCpPiw]$/,
  stdbuf: /^-[ioe]$/,
  nohup: /^$/,
  exec: /^-a$/,
  command: /^$/,
  xargs: /^-[IdLnPs]$/,
};

/** `$x` → `${x}`, so that expanding an inner loop variable cannot merge into an outer reference (`$i$j`). */
function canon(text: string): string {
  return text.includes('$') ? text.replace(/\$([A-Za-z_]\w*)/g, '${$1}') : text;
}

function subst(text: string, vars: Map<string, string>): string {
  if (!text.includes('$')) return text;
  return text.replace(/\$\{([A-Za-z_]\w*)\}/g, (m, a: string) => vars.get(a) ?? m);
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function finish(
  s: Simple,
  words: Word[],
  src: string,
  vars: Map<string, string>,
  depth: number,
  out: ShellCommand[],
  loop?: ShellCommand['loop'],
): void {
  const env: Assign[] = [];
  const assigns: Assign[] = [];
  let sudo = false;
  let w = words.map((x) => ({ ...x }));
  for (let guard = 0; guard < 20 && w.length > 0; guard++) {
    const head = w[0] as Word;
    const m = ASSIGN.exec(head.text);
    if (m && !head.text.startsWith('=')) {
      env.push({ name: m[1] as string, value: m[2] as string, line: head.line, exported: false });
      w = w.slice(1);
      continue;
    }
    const name = basename(head.text);
    const argRe = WRAPPERS[name];
    if (!argRe || (name === 'command' && w[1]?.text === '-v')) break;
    if (name === 'sudo') sudo = true;
    w = w.slice(1);
    while (w.length > 0 && (w[0] as Word).text.startsWith('-') && (w[0] as Word).text !== '-') {
      const o = (w[0] as Word).text;
      w = w.slice(o === '--' ? 1 : argRe.test(o) ? 2 : 1);
      if (o === '--') break;
    }
    if ((name === 'timeout' || name === 'taskset' || name === 'nice') && /^[\d.,-]+[smhd]?$/.test(w[0]?.text ?? 'x'))
      w = w.slice(1);
  }
  const program = w.length > 0 ? basename((w[0] as Word).text) : '';
  if (w.length === 0) {
    assigns.push(...env.splice(0));
    for (const a of assigns) if (LITERAL.test(a.value)) vars.set(a.name, a.value);
  } else if (['export', 'declare', 'typeset', 'readonly', 'local'].includes(program)) {
    const exported = program === 'export' || w.some((x) => /^-\w*x/.test(x.text));
    for (const x of w.slice(1)) {
      const m = ASSIGN.exec(x.text);
      if (m) {
        assigns.push({ name: m[1] as string, value: m[2] as string, line: x.line, exported });
        if (LITERAL.test(m[2] as string)) vars.set(m[1] as string, m[2] as string);
      }
    }
  }
  const text = src
    .slice(s.start, s.end)
    .replace(/\\\n[ \t]*/g, ' ')
    .trim();
  const line = words[0]?.line ?? s.endLine;
  const cmd: ShellCommand = {
    line,
    endLine: Math.max(line, s.endLine),
    text,
    argv: w,
    program,
    sudo,
    env,
    assigns,
    redirects: s.redirects,
  };
  if (s.heredoc) cmd.heredoc = s.heredoc;
  if (loop) cmd.loop = loop;
  out.push(cmd);
  // `sh -c '…'`, `bash -lc "…"`: the script is commands too (same line).
  if (depth < 3 && /^(?:ba|da|z|k)?sh$/.test(program)) {
    const ci = w.findIndex((x, k) => k > 0 && /^-\w*c$/.test(x.text));
    const script = ci > 0 ? w[ci + 1] : undefined;
    if (script)
      for (const inner of parseWith(script.text, script.line, vars, depth + 1))
        out.push({ ...inner, line: script.line, endLine: script.line, sudo: inner.sudo || sudo });
  }
}

interface Frame {
  variable?: string;
  values: string[] | null;
  body: Array<{ s: Simple; words: Word[] }>;
}

function parseWith(src: string, firstLine: number, vars: Map<string, string>, depth: number): ShellCommand[] {
  const out: ShellCommand[] = [];
  const stack: Frame[] = [];
  const emit = (s: Simple, words: Word[]): void => {
    const top = stack[stack.length - 1];
    if (top) top.body.push({ s, words });
    else finish(s, words, src, vars, depth, out);
  };
  const close = (): void => {
    const f = stack.pop();
    if (!f) return;
    const runs: Array<string | undefined> = f.values && f.variable ? f.values : [undefined];
    for (const v of runs) {
      for (const b of f.body) {
        const words =
          v === undefined || !f.variable
            ? b.words
            : b.words.map((x) => ({ ...x, text: subst(x.text, new Map([[f.variable as string, v]])) }));
        const parent = stack[stack.length - 1];
        if (parent) parent.body.push({ s: b.s, words });
        else {
          const tmp: ShellCommand[] = [];
          finish(
            b.s,
            words,
            src,
            vars,
            depth,
            tmp,
            v !== undefined && f.variable ? { variable: f.variable, value: v } : undefined,
          );
          out.push(...tmp);
        }
      }
    }
  };
  for (const s of simples(tokenize(src, firstLine))) {
    let w: Word[] = s.words.map((x) => ({
      text: x.single ? x.text : subst(canon(x.text), vars),
      line: x.line,
      quoted: x.quoted,
    }));
    for (let guard = 0; guard < 10 && w.length > 0; guard++) {
      const k = (w[0] as Word).text;
      if (k === 'for' && !(w[0] as Word).quoted) {
        const variable = w[1]?.text;
        const vals =
          w[2]?.text === 'in'
            ? w.slice(3).flatMap((x) => (x.quoted ? [x.text] : x.text.split(/\s+/).filter(Boolean)))
            : null;
        const literal = vals !== null && vals.every((v) => LITERAL.test(v));
        stack.push({
          ...(variable && /^[A-Za-z_]\w*$/.test(variable) ? { variable } : {}),
          values: literal ? vals : null,
          body: [],
        });
        w = [];
      } else if ((k === 'while' || k === 'until' || k === 'select') && !(w[0] as Word).quoted) {
        stack.push({ values: null, body: [] });
        w = w.slice(1);
      } else if (k === 'done' && !(w[0] as Word).quoted) {
        close();
        w = w.slice(1);
      } else if (k === 'case' && !(w[0] as Word).quoted) w = [];
      else if (KEYWORDS.has(k) && !(w[0] as Word).quoted) w = w.slice(1);
      else if (/^[^\s=]+\)$/.test(k) || /^[\w.-]+\(\)$/.test(k) || w[1]?.text === '()')
        w = w.slice(k.endsWith('()') ? 1 : w[1]?.text === '()' ? 2 : 1);
      else break;
    }
    if (w.length > 0) emit(s, w);
  }
  while (stack.length > 0) close();
  return out;
}

/** Splits a script or command line into simple commands. `firstLine` offsets line numbers. Never throws. */
export function parseShell(text: string, firstLine = 1): ShellCommand[] {
  if (typeof text !== 'string') return [];
  try {
    return parseWith(sanitize(text.replace(/\r\n/g, '\n')), firstLine, new Map(), 0);
  } catch {
    return [];
  }
}
