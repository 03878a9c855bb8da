/**
 * Seeded hostile input for the inventory and the CLI (issue 7): a small PRNG, hostile atoms (shell
 * metacharacters, quotes, control characters, option look-alikes, Unicode look-alikes, 1 MB strings,
 * wrong JSON types), injection payloads that each try to create a canary file the caller names, and
 * fuzz cases — (seed index, field path, value) — that mutate one field of a valid two-host inventory,
 * add an unknown key at some level, or damage the whole file. Every case is a pure function of
 * (seed, index), so a failure reproduces from the two numbers in its message.
 *
 * The canary must be a path a shell could create unquoted: no whitespace or metacharacters, in a
 * directory that exists wherever the payloads might run (/tmp on this machine, the lab, an sshd host).
 */
import YAML from 'yaml';

/** mulberry32: 32-bit state, good enough spread for test data, and no dependency. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed);
  }

  float(): number {
    return this.next();
  }

  /** 0 … n-1 */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('pick from an empty list');
    return xs[this.int(xs.length)] as T;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** One case's generator: (seed, index) mixed so neighbouring indexes do not share a stream. */
export function caseRng(seed: number, index: number): Rng {
  return new Rng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
}

export type PathPart = string | number;
export type FieldPath = readonly PathPart[];

/** A field path as the project's error messages print it: `hosts[1].mgmtInterface`, `(top level)` for the root. */
export function pathText(path: FieldPath): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out === '' ? '(top level)' : out;
}

/** Every way we know to make a shell run `touch CANARY` (or create it by redirection) if a word is spliced unquoted. */
export function injectionPayloads(canary: string): string[] {
  return [
    `$(touch ${canary})`,
    `\`touch ${canary}\``,
    `;touch ${canary}`,
    `; touch ${canary} #`,
    `&& touch ${canary}`,
    `|| touch ${canary}`,
    `| touch ${canary}`,
    `& touch ${canary} &`,
    `\ntouch ${canary}\n`,
    `\rtouch ${canary}`,
    `>${canary}`,
    `>>${canary}`,
    `'; touch ${canary}; '`,
    `"; touch ${canary}; "`,
    `'$(touch ${canary})'`,
    `"$(touch ${canary})"`,
    `$(touch\${IFS}${canary})`,
    `\\$(touch ${canary})`,
    `'\\''; touch ${canary}; '\\''`,
    `\${IFS}touch\${IFS}${canary}`,
    `$'\\x3b'touch ${canary}`,
    `-oProxyCommand=touch ${canary}`,
    `--config=$(touch ${canary})`,
    `%0atouch ${canary}`,
    `\u0000; touch ${canary}`,
    `x\ntouch ${canary}`,
    `$(echo dG91Y2g= | base64 -d) ${canary}`,
    `{touch,${canary}}`,
    `<(touch ${canary})`,
  ];
}

export const SHELL_ATOMS: readonly string[] = [
  ';',
  '&&',
  '||',
  '|',
  '&',
  '`',
  '$',
  '$(',
  ')',
  '(',
  '${',
  '}',
  '{a,b}',
  '>',
  '<',
  '>>',
  '2>&1',
  '*',
  '?',
  '[a-z]',
  '~',
  '#',
  '!',
  '!!',
  '\\',
  "'",
  '"',
  "'\\''",
  ' ',
  '  ',
  '=',
  '%',
  '%s',
  '%n',
  '\\n',
  '$HOME',
  '$0',
  '${IFS}',
  '^',
];
export const CONTROL_ATOMS: readonly string[] = [
  '\n',
  '\r',
  '\r\n',
  '\t',
  '\u0000',
  '\u0007',
  '\u0008',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u009b',
];
export const ANSI_ATOMS: readonly string[] = [
  '\u001b[31m',
  '\u001b[2J',
  '\u001b]52;c;dG91Y2g=\u0007',
  '\u001b]0;title\u0007',
  '\u009b31m',
  '\u001bP+q\u001b\\',
];
export const OPTION_ATOMS: readonly string[] = [
  '-',
  '--',
  '-h',
  '--help',
  '-oProxyCommand=id',
  '--option=value',
  '-rf',
  '--version',
  '-i',
  '-S',
];
export const PATH_ATOMS: readonly string[] = [
  '../',
  '../../etc/passwd',
  '/',
  '//',
  './',
  '~',
  '~root/',
  '.',
  '..',
  '/dev/null',
  '/proc/self/environ',
];
/** Look-alikes and invisibles: fullwidth ";" and "$", Cyrillic "а"/"е", RTL override, ZWJ, ZWSP, combining acute, NBSP, BOM, LS/PS, an emoji (a surrogate pair). */
export const UNICODE_ATOMS: readonly string[] = [
  '\uFF1B',
  '\uFF04',
  '\uFF5C',
  '\u0430',
  '\u0435',
  '\u202E',
  '\u2066',
  '\u200D',
  '\u200B',
  '\u0301',
  '\u00A0',
  '\uFEFF',
  '\u2028',
  '\u2029',
  '\u2018',
  '\u201C',
  '\u2044',
  '\u2215',
  '\u{1F642}',
  '\u00E9',
  'e\u0301',
  '\u0131',
];
export const NUMERIC_STRINGS: readonly string[] = [
  '0',
  '1',
  '-1',
  '22',
  '65536',
  '1e3',
  '0x16',
  '1.5',
  'NaN',
  'Infinity',
  '9'.repeat(40),
  '007',
];

export function hostileAtoms(canary: string): string[] {
  return [
    ...injectionPayloads(canary),
    ...SHELL_ATOMS,
    ...CONTROL_ATOMS,
    ...ANSI_ATOMS,
    ...OPTION_ATOMS,
    ...PATH_ATOMS,
    ...UNICODE_ATOMS,
    ...NUMERIC_STRINGS,
    '',
  ];
}

export interface FuzzOptions {
  /** The path every injection payload tries to create. */
  canary: string;
  /** Characters of a "very long" string (1 MiB unless a test asks for less). */
  bigChars?: number;
}

const ATOM_GROUPS = (canary: string): readonly (readonly string[])[] => [
  injectionPayloads(canary),
  injectionPayloads(canary),
  SHELL_ATOMS,
  CONTROL_ATOMS,
  ANSI_ATOMS,
  OPTION_ATOMS,
  PATH_ATOMS,
  UNICODE_ATOMS,
];

/** 1–3 hostile pieces, each from a random group. */
export function hostileString(rng: Rng, opts: FuzzOptions): string {
  const groups = ATOM_GROUPS(opts.canary);
  let s = '';
  for (let n = 1 + rng.int(3); n > 0; n--) s += rng.pick(rng.pick(groups));
  return s;
}

const LOOKALIKE: Readonly<Record<string, string>> = {
  a: '\u0430',
  e: '\u0435',
  o: '\u043E',
  '-': '\u2010',
  '.': '\u2024',
  '/': '\u2215',
  '1': '\u0661',
  i: '\u0456',
};

/** A valid value made invalid by one hostile edit: a suffix, a prefix, a look-alike letter, an option dash, a trailing newline. */
export function nearMiss(rng: Rng, opts: FuzzOptions, near: string): string {
  switch (rng.int(6)) {
    case 0:
      return near + hostileString(rng, opts);
    case 1:
      return hostileString(rng, opts) + near;
    case 2: {
      const at = [...near].findIndex((c) => c in LOOKALIKE);
      return at < 0 ? `${near}\u200D` : near.slice(0, at) + LOOKALIKE[near[at]!] + near.slice(at + 1);
    }
    case 3:
      return `${rng.pick(['-', '--', '-o'])}${near}`;
    case 4:
      return `${near}${rng.pick(['\n', '\r', '\t', ' ', '\u0000', '\u202E', '\u0301'])}`;
    default:
      return (
        near.slice(0, rng.int(near.length)) +
        rng.pick(injectionPayloads(opts.canary)) +
        near.slice(rng.int(near.length))
      );
  }
}

/** Characters a field may legitimately hold, so some random values pass and exercise the accepted path. */
const PLAIN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const PLAIN_EXTRA = '_.-/ ~+=@%:,';

export function plainish(rng: Rng, max = 20): string {
  let s = rng.pick([...PLAIN]);
  for (let n = rng.int(max); n > 0; n--) s += rng.chance(0.75) ? rng.pick([...PLAIN]) : rng.pick([...PLAIN_EXTRA]);
  return s;
}

/** A value of the wrong JSON type (or a number out of range where a string or number is expected). */
export function wrongType(rng: Rng, opts: FuzzOptions): unknown {
  return rng.pick<() => unknown>([
    () => rng.pick([0, -1, 1.5, 65536, 1e21, -0, 2 ** 53, 22, 8000]),
    () => rng.pick([true, false]),
    () => null,
    () => [],
    () => [hostileString(rng, opts)],
    () => ({}),
    () => ({ $: hostileString(rng, opts) }),
    () => ({ toString: `$(touch ${opts.canary})`, length: 3 }),
  ])();
}

/** A very long string (default 1 MiB) made of a hostile pattern: reported, never copied whole or run. */
export function bigString(rng: Rng, opts: FuzzOptions, near: string): string {
  const unit = rng.pick([near, `${near};touch ${opts.canary};`, 'a', '\u0430', `$(touch ${opts.canary})`]);
  return unit.repeat(Math.ceil((opts.bigChars ?? 1 << 20) / Math.max(1, unit.length)));
}

/** A hostile value for a field whose valid form looks like `near`. */
export function hostileValue(rng: Rng, opts: FuzzOptions, near: string): unknown {
  const r = rng.float();
  if (r < 0.3) return nearMiss(rng, opts, near);
  if (r < 0.62) return hostileString(rng, opts);
  if (r < 0.74) return plainish(rng);
  if (r < 0.86) return wrongType(rng, opts);
  if (r < 0.93) return rng.pick(['', ' ', ...NUMERIC_STRINGS]);
  if (r < 0.95) return bigString(rng, opts, near);
  return rng.chance(0.5) ? undefined : null;
}

const FINGERPRINT = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';

/** A valid two-host inventory with every optional field set (a fresh copy each call). */
export function baseInventory(): Record<string, unknown> {
  const host = (i: number) => ({
    name: `l20-n${i + 1}`,
    address: `10.0.0.${i + 1}`,
    port: 22,
    user: 'ubuntu',
    role: i === 0 ? 'head' : 'worker',
    auth: { method: 'identityFile', path: `~/.ssh/id_ed25519` },
    mgmtInterface: 'eno1',
    fabricPorts: ['ens1f0np0', 'ens1f1np1', 'ens2f0np0', 'ens2f1np1'],
    knownHostsFile: '/home/ops/.ssh/known_hosts_l20',
    hostKeyFingerprint: FINGERPRINT,
  });
  return {
    version: 1,
    hosts: [host(0), host(1)],
    network: { design: 'A', mtu: 9000 },
    qos: { priority: 3, dscp: 26, trust: 'dscp' },
    nccl: { gidIndex: 'auto', crossNic: 0, debug: 'WARN' },
    ray: { port: 6379, dashboardPort: 8265 },
    vllm: { model: 'Qwen/Qwen2.5-7B-Instruct', port: 8000, layout: 'auto' },
  };
}

/** Fields that reach a command line or a connection, per host, with a valid value to make near-misses of. */
const HOST_FIELDS: ReadonlyArray<readonly [FieldPath, string]> = [
  [['name'], 'l20-n1'],
  [['address'], '10.0.0.1'],
  [['user'], 'ubuntu'],
  [['port'], '22'],
  [['mgmtInterface'], 'eno1'],
  [['fabricPorts', 0], 'ens1f0np0'],
  [['fabricPorts', 1], 'ens1f1np1'],
  [['fabricPorts', 2], 'ens2f0np0'],
  [['fabricPorts', 3], 'ens2f1np1'],
  [['fabricPorts'], 'ens1f0np0'],
  [['knownHostsFile'], '/home/ops/.ssh/known_hosts_l20'],
  [['auth', 'path'], '~/.ssh/id_ed25519'],
  [['auth', 'method'], 'identityFile'],
  [['auth'], 'agent'],
  [['hostKeyFingerprint'], FINGERPRINT],
  [['role'], 'worker'],
];
const CLUSTER_FIELDS: ReadonlyArray<readonly [FieldPath, string]> = [
  [['vllm', 'model'], 'Qwen/Qwen2.5-7B-Instruct'],
  [['vllm', 'model'], 'meta-llama/Llama-3.1-8B-Instruct'],
  [['vllm', 'port'], '8000'],
  [['vllm', 'layout'], 'auto'],
  [['network', 'mtu'], '9000'],
  [['network', 'design'], 'A'],
  [['qos', 'priority'], '3'],
  [['qos', 'dscp'], '26'],
  [['qos', 'trust'], 'dscp'],
  [['nccl', 'gidIndex'], 'auto'],
  [['nccl', 'crossNic'], '0'],
  [['nccl', 'debug'], 'WARN'],
  [['ray', 'port'], '6379'],
  [['version'], '1'],
  [['hosts'], 'l20-n1'],
  [['network'], 'A'],
  [['vllm'], 'auto'],
];

/** Every field target: host fields on both hosts (weighted as the brief asks), then the cluster-level ones. */
export const FIELD_TARGETS: ReadonlyArray<{ path: FieldPath; near: string }> = [
  ...[0, 1].flatMap((i) => HOST_FIELDS.map(([p, near]) => ({ path: ['hosts', i, ...p], near }))),
  ...CLUSTER_FIELDS.map(([path, near]) => ({ path, near })),
];

/** Where an unknown key can go: every object level of the inventory. */
export const EXTRA_KEY_PARENTS: readonly FieldPath[] = [
  [],
  ['hosts', 0],
  ['hosts', 1],
  ['hosts', 0, 'auth'],
  ['hosts', 1, 'auth'],
  ['network'],
  ['qos'],
  ['nccl'],
  ['ray'],
  ['vllm'],
];

export function setAt(root: Record<string, unknown>, path: FieldPath, value: unknown): void {
  let o = root as Record<PropertyKey, unknown>;
  for (const p of path.slice(0, -1)) o = o[p] as Record<PropertyKey, unknown>;
  const last = path[path.length - 1]!;
  // defineProperty: a key named "__proto__" becomes an own key, as JSON.parse makes it.
  if (value === undefined && !Array.isArray(o)) delete o[last];
  else Object.defineProperty(o, last, { value, enumerable: true, writable: true, configurable: true });
}

/** A value for a failure message: JSON, non-ASCII \u-escaped (look-alikes and invisibles show), long strings cut. */
export function show(v: unknown): string {
  const cut = typeof v === 'string' && v.length > 80;
  let s: string;
  try {
    s = JSON.stringify(cut ? v.slice(0, 60) : v) ?? String(v);
  } catch {
    s = Array.isArray(v) ? 'an array' : typeof v;
  }
  s = s.replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return cut ? `${s}… (${(v as string).length} chars)` : s;
}

export interface FuzzCase {
  seed: number;
  index: number;
  /** field: one field set to `value`; extra-key: unknown key `path`'s last part added; file: the whole file damaged. */
  kind: 'field' | 'extra-key' | 'file';
  path: FieldPath;
  value: unknown;
  /** The object the file holds (undefined when the file is not an object we built). */
  input: unknown;
  /** The file's content, and the extension it is written with (the loader picks JSON or YAML by both). */
  text: string;
  ext: 'json' | 'yaml';
  /** Short description for failure messages. */
  label: string;
}

function encode(rng: Rng, input: unknown): { text: string; ext: 'json' | 'yaml' } {
  // Mostly JSON; one case in ten as YAML, the loader's other format (its own quoting of the hostile strings).
  return rng.chance(0.1) ? { text: YAML.stringify(input), ext: 'yaml' } : { text: JSON.stringify(input), ext: 'json' };
}

function fileDamage(rng: Rng, opts: FuzzOptions): { text: string; ext: 'json' | 'yaml'; label: string } {
  const good = JSON.stringify(baseInventory(), null, 2);
  const ext = rng.chance(0.5) ? ('json' as const) : ('yaml' as const);
  const depth = rng.pick([64, 1_000, 20_000, 200_000]);
  const damages: Array<() => { text: string; label: string }> = [
    () => ({ text: good.slice(0, rng.int(good.length)), label: 'truncated JSON' }),
    () => ({ text: hostileString(rng, opts), label: 'not JSON' }),
    () => ({ text: `${good}\n${rng.pick(injectionPayloads(opts.canary))}`, label: 'trailing payload' }),
    () => ({ text: `{"hosts":${'['.repeat(depth)}${']'.repeat(depth)}}`, label: `arrays nested ${depth} deep` }),
    () => ({
      text: `${good.slice(0, -1)},"x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
      label: `objects nested ${depth} deep`,
    }),
    () => ({
      text: good.replace(
        '"fabricPorts": [',
        `"fabricPorts": [${Array.from({ length: 50_000 }, () => JSON.stringify(rng.pick(injectionPayloads(opts.canary)))).join(',')},`,
      ),
      label: '50,000 fabric ports',
    }),
    () => ({ text: `\uFEFF${good}`, label: 'byte order mark' }),
    () => ({
      text: good.replace(
        '"version": 1,',
        `"version": 1, "vllm": ${JSON.stringify({ model: hostileString(rng, opts) })},`,
      ),
      label: 'duplicate key',
    }),
    () => ({
      text: rng.pick(['', ' ', '\n', 'null', '[]', '42', '"hosts"', 'true', '---', '~']),
      label: 'empty or scalar',
    }),
    () => ({
      text: `a: &a ["${opts.canary}"]\n${Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`).join('\n')}\nhosts: *m\n`,
      label: 'YAML alias bomb',
    }),
    () => ({
      text: `hosts:\n  - name: !!js/function "function(){require('child_process').execSync('touch ${opts.canary}')}"\n    address: 10.0.0.1\n    role: head\n`,
      label: 'YAML code tag',
    }),
    () => ({
      text: `hosts:\n  - name: n1\n    address: 10.0.0.1\n    role: head\n    mgmtInterface: ${rng.pick(injectionPayloads(opts.canary)).replace(/\n/g, ' ')}\n`,
      label: 'YAML plain scalar payload',
    }),
    () => ({
      text: Array.from({ length: 64 + rng.int(512) }, () => String.fromCharCode(rng.int(0x10000))).join(''),
      label: 'random UTF-16 (lone surrogates and all)',
    }),
  ];
  const d = rng.pick(damages)();
  return { ...d, ext };
}

/** Case `index` of run `seed`: 85 % one field, 10 % an unknown key, 5 % the whole file. */
export function fuzzCase(seed: number, index: number, opts: FuzzOptions): FuzzCase {
  const rng = caseRng(seed, index);
  const r = rng.float();
  if (r < 0.05) {
    const d = fileDamage(rng, opts);
    return {
      seed,
      index,
      kind: 'file',
      path: [],
      value: d.label,
      input: undefined,
      text: d.text,
      ext: d.ext,
      label: `#${index} file: ${d.label}`,
    };
  }
  const input = baseInventory();
  if (r < 0.15) {
    const parent = rng.pick(EXTRA_KEY_PARENTS);
    const key = rng.chance(0.7)
      ? hostileString(rng, opts)
      : rng.pick(['__proto__', 'constructor', 'prototype', 'pasword', 'Name', 'fabricports', '', ' name', 'name ']);
    const value = rng.chance(0.5) ? hostileString(rng, opts) : wrongType(rng, opts);
    setAt(input, [...parent, key], value);
    return {
      seed,
      index,
      kind: 'extra-key',
      path: [...parent, key],
      value,
      input,
      ...encode(rng, input),
      label: `#${index} extra key ${show(key)} in ${pathText(parent)}`,
    };
  }
  const target = rng.pick(FIELD_TARGETS);
  // Now and then the second host repeats the first one's name: names must be unique.
  const value =
    target.path.join('.') === 'hosts.1.name' && rng.chance(0.05) ? 'l20-n1' : hostileValue(rng, opts, target.near);
  setAt(input, target.path, value);
  return {
    seed,
    index,
    kind: 'field',
    path: target.path,
    value,
    input,
    ...encode(rng, input),
    label: `#${index} ${pathText(target.path)} = ${show(value)}`,
  };
}

export function* fuzzCases(seed: number, count: number, opts: FuzzOptions): Generator<FuzzCase> {
  for (let i = 0; i < count; i++) yield fuzzCase(seed, i, opts);
}

/** Every string leaf of a (parsed) inventory: what can reach a command line, a file path or a connection. */
export function stringLeaves(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringLeaves(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stringLeaves(x, out);
  return out;
}

/** Whether a shell treats any character of `s` specially (or it is empty, or starts like an option). */
export function shellSpecial(s: string): boolean {
  return s === '' || /[^A-Za-z0-9_@%+=:,./-]/.test(s) || s.startsWith('-');
}

/** Words in batches of at most `maxBytes` of UTF-8 each (a word longer than that gets a batch of its own). */
export function batches(words: readonly string[], maxBytes: number): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let size = 0;
  for (const w of words) {
    const n = Buffer.byteLength(w) + 3;
    if (cur.length > 0 && size + n > maxBytes) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(w);
    size += n;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Whether `printf '%s\0' WORDS…` printed exactly the words: undefined when byte-identical, else
 * which word first came back different (and as what), to name in a failure.
 */
export function echoMismatch(words: readonly string[], out: Buffer): string | undefined {
  const want = Buffer.concat(words.map((w) => Buffer.concat([Buffer.from(w), Buffer.of(0)])));
  if (want.equals(out)) return undefined;
  const got = out.toString('utf8').split('\0');
  const i = words.findIndex((w, k) => Buffer.from(w).toString('utf8') !== got[k]);
  const show = (s: string | undefined) =>
    s === undefined ? 'nothing' : JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
  return `word ${i} of ${words.length}: sent ${show(words[i])}, got ${show(got[i])} (${out.length} bytes back, ${want.length} expected)`;
}

/** A hostile command-line value (argv strings only): near-misses of `near`, hostile strings, numbers as text, empty. */
export function hostileArg(rng: Rng, opts: FuzzOptions, near: string): string {
  const r = rng.float();
  if (r < 0.35) return nearMiss(rng, opts, near);
  if (r < 0.75) return hostileString(rng, opts);
  if (r < 0.9) return rng.pick(['', ' ', ...NUMERIC_STRINGS]);
  if (r < 0.97) return plainish(rng);
  return bigString(rng, { ...opts, bigChars: 1 << 16 }, near);
}
