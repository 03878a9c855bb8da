/**
 * Typed views of the shell commands the cfg rules read, over `parseShell`'s simple commands: `mlnx_qos`,
 * `dcb`, `ray start`, `vllm serve` / `python -m vllm.entrypoints…api_server`, perftest (`ib_write_bw`…),
 * `apt install`, `pip install`, `wget`/`curl`, `mlnxofedinstall`, `*.run` installers, `ufw`, `source`.
 */
import type { ShellCommand, Word } from '../../parse/shell-commands.js';

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

export interface Flag {
  /** As written, `=value` removed (`--tensor-parallel-size`, `-i`). */
  name: string;
  value?: string;
  line: number;
}

/** `--x=v`, `--x v`, `-x v`; a following word starting with `-` (and not a number) is not a value. */
export function parseFlags(
  args: readonly Word[],
  booleans: ReadonlySet<string> = new Set(),
): { flags: Flag[]; positional: Word[] } {
  const flags: Flag[] = [];
  const positional: Word[] = [];
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as Word;
    if (!a.text.startsWith('-') || a.text === '-' || /^-\d/.test(a.text)) {
      positional.push(a);
      continue;
    }
    const eq = a.text.indexOf('=');
    if (a.text.startsWith('--') && eq > 0) {
      flags.push({ name: a.text.slice(0, eq), value: a.text.slice(eq + 1), line: a.line });
      continue;
    }
    const next = args[k + 1];
    if (next && !booleans.has(a.text) && (!next.text.startsWith('-') || /^-\d/.test(next.text))) {
      flags.push({ name: a.text, value: next.text, line: a.line });
      k++;
    } else flags.push({ name: a.text, line: a.line });
  }
  return { flags, positional };
}

const sub = (c: ShellCommand, k: number): string => c.argv[k]?.text ?? '';

export interface MlnxQos {
  iface?: Flag;
  trust?: Flag;
  pfc?: Flag & { vector?: number[] };
  dcbx?: Flag;
}
export function mlnxQosOf(c: ShellCommand): MlnxQos | undefined {
  if (c.program !== 'mlnx_qos') return undefined;
  const { flags } = parseFlags(c.argv.slice(1));
  const f = (...names: string[]): Flag | undefined => flags.find((x) => names.includes(x.name));
  const out: MlnxQos = {};
  const iface = f('-i', '--interface');
  if (iface) out.iface = iface;
  const trust = f('--trust');
  if (trust) out.trust = trust;
  const dcbx = f('-d', '--dcbx');
  if (dcbx) out.dcbx = dcbx;
  const pfc = f('--pfc', '-f');
  if (pfc) {
    const v = (pfc.value ?? '').split(',').map((x) => Number(x.trim()));
    out.pfc = v.length === 8 && v.every((x) => x === 0 || x === 1) ? { ...pfc, vector: v } : pfc;
  }
  return out;
}

/** `dcb [-N] app|pfc|ets|… set|replace|add|del|flush|show dev <if> …` */
export function dcbOf(c: ShellCommand): { object: string; action: string; dev?: Word } | undefined {
  if (c.program !== 'dcb') return undefined;
  const args = c.argv.slice(1).filter((w) => !w.text.startsWith('-'));
  const d = args.findIndex((w) => w.text === 'dev');
  const dev = d >= 0 ? args[d + 1] : undefined;
  return { object: args[0]?.text ?? '', action: args[1]?.text ?? '', ...(dev ? { dev } : {}) };
}

export function rayStartOf(
  c: ShellCommand,
): { flags: Flag[]; get(name: string): Flag | undefined; head: boolean } | undefined {
  if (c.program !== 'ray' || sub(c, 1) !== 'start') return undefined;
  const { flags } = parseFlags(
    c.argv.slice(2),
    new Set(['--head', '--block', '--disable-usage-stats', '--include-dashboard']),
  );
  const get = (name: string): Flag | undefined => flags.find((x) => x.name.replace(/_/g, '-') === name);
  return { flags, get, head: !!get('--head') };
}

const VLLM_ALIASES: Record<string, string> = {
  '-tp': '--tensor-parallel-size',
  '-pp': '--pipeline-parallel-size',
  '-dp': '--data-parallel-size',
  '-dpl': '--data-parallel-size-local',
  '-dpa': '--data-parallel-address',
  '-dpr': '--data-parallel-start-rank',
  '-q': '--quantization',
};
const VLLM_BOOLEANS = new Set(
  [
    'headless',
    'engine-use-ray',
    'worker-use-ray',
    'trust-remote-code',
    'enforce-eager',
    'disable-log-requests',
    'disable-log-stats',
    'enable-prefix-caching',
    'enable-chunked-prefill',
    'enable-expert-parallel',
    'disable-custom-all-reduce',
    'enable-auto-tool-choice',
  ].map((x) => `--${x}`),
);

const DOCKER_BOOLEANS =
  /^(?:--rm|-d|--detach|-i|-t|-it|-ti|--interactive|--tty|--privileged|--init|-P|--publish-all|--read-only)$/;

/** Index of the image in `docker run [options] image [args]`, or -1. */
function dockerImage(argv: readonly Word[]): number {
  for (let k = 2; k < argv.length; k++) {
    const t = (argv[k] as Word).text;
    if (!t.startsWith('-')) return k;
    if (!t.includes('=') && !DOCKER_BOOLEANS.test(t)) k++;
  }
  return -1;
}

export interface VllmLaunch {
  via: 'serve' | 'api_server';
  model?: { value: string; line: number };
  /** Names normalised: `_` → `-`, short aliases expanded (`-tp` → `--tensor-parallel-size`). */
  flags: Flag[];
  get(name: string): Flag | undefined;
}
export function vllmLaunchOf(c: ShellCommand): VllmLaunch | undefined {
  let args: Word[];
  let via: VllmLaunch['via'];
  if (c.program === 'vllm' && sub(c, 1) === 'serve') {
    args = c.argv.slice(2);
    via = 'serve';
  } else if (/^python[\d.]*$/.test(c.program)) {
    const m = c.argv.findIndex((w) => w.text === '-m');
    const mod = c.argv[m + 1]?.text ?? '';
    if (m < 0 || !/^vllm\.entrypoints\.(?:openai\.)?api_server$/.test(mod)) return undefined;
    args = c.argv.slice(m + 2);
    via = 'api_server';
  } else if ((c.program === 'docker' || c.program === 'podman') && sub(c, 1) === 'run') {
    // the vllm/vllm-openai image runs `vllm serve` with the arguments after the image
    const image = dockerImage(c.argv);
    if (image < 0 || !/vllm/i.test(c.argv[image]?.text ?? '')) return undefined;
    args = c.argv.slice(image + 1);
    via = 'serve';
    if (args[0]?.text === 'vllm' && args[1]?.text === 'serve') args = args.slice(2);
  } else return undefined;
  const norm = args.map((w) => {
    if (!w.text.startsWith('-')) return w;
    const [n, ...v] = w.text.split('=');
    const name = VLLM_ALIASES[n as string] ?? (n as string).replace(/_/g, '-');
    return { ...w, text: v.length > 0 ? `${name}=${v.join('=')}` : name };
  });
  const { flags, positional } = parseFlags(norm, VLLM_BOOLEANS);
  const get = (name: string): Flag | undefined => flags.find((x) => x.name === name);
  const out: VllmLaunch = { via, flags, get };
  const mf = get('--model');
  const model =
    via === 'serve' && positional[0]
      ? { value: positional[0].text, line: positional[0].line }
      : mf?.value
        ? { value: mf.value, line: mf.line }
        : undefined;
  if (model) out.model = model;
  return out;
}

/** `apt|apt-get|aptitude install …` → the package words. */
export function aptInstallOf(c: ShellCommand): Word[] | undefined {
  if (!['apt', 'apt-get', 'aptitude'].includes(c.program) || sub(c, 1) !== 'install') return undefined;
  return c.argv.slice(2).filter((w) => !w.text.startsWith('-'));
}

/** `pip install …`, `python -m pip install …`, `uv pip install …` → interpreter and requirement words. */
export function pipInstallOf(c: ShellCommand): { interpreter: string; packages: Word[]; flags: Flag[] } | undefined {
  let k: number;
  if (/^pip[\d.]*$/.test(c.program)) k = 1;
  else if (/^python[\d.]*$/.test(c.program) && sub(c, 1) === '-m' && /^pip[\d.]*$/.test(sub(c, 2))) k = 3;
  else if (c.program === 'uv' && sub(c, 1) === 'pip') k = 2;
  else return undefined;
  if (sub(c, k) !== 'install') return undefined;
  const { flags, positional } = parseFlags(
    c.argv.slice(k + 1),
    new Set([
      '-U',
      '--upgrade',
      '--user',
      '--system',
      '--pre',
      '--no-deps',
      '-q',
      '--quiet',
      '-v',
      '--break-system-packages',
      '--no-cache-dir',
      '--force-reinstall',
    ]),
  );
  return { interpreter: c.argv[0]?.text ?? '', packages: positional, flags };
}

/** URLs fetched by `wget` / `curl`. */
export function downloadsOf(c: ShellCommand): Word[] {
  if (c.program !== 'wget' && c.program !== 'curl') return [];
  return c.argv.slice(1).filter((w) => /^(?:https?|ftp):\/\//.test(w.text));
}

export function ofedInstallOf(c: ShellCommand): Flag[] | undefined {
  if (c.program !== 'mlnxofedinstall' && !(/^(?:ba)?sh$/.test(c.program) && basename(sub(c, 1)) === 'mlnxofedinstall'))
    return undefined;
  const from = c.program === 'mlnxofedinstall' ? 1 : 2;
  return parseFlags(c.argv.slice(from), new Set(c.argv.slice(from).map((w) => w.text))).flags;
}

/** `./x.run …`, `sh x.run …`, `bash x.run …` → the runfile and its arguments. */
export function runfileOf(c: ShellCommand): { file: Word; args: Word[] } | undefined {
  const k = c.program.endsWith('.run') ? 0 : /^(?:ba)?sh$/.test(c.program) && sub(c, 1).endsWith('.run') ? 1 : -1;
  const file = c.argv[k];
  return k >= 0 && file ? { file, args: c.argv.slice(k + 1) } : undefined;
}

/** `source f` / `. f` → the file. */
export function sourceOf(c: ShellCommand): Word | undefined {
  return c.program === 'source' || c.program === '.' ? c.argv[1] : undefined;
}

/** perftest (`ib_write_bw`, `ib_read_lat`, …) flags. */
export function perftestOf(c: ShellCommand): Flag[] | undefined {
  if (!/^ib_(?:write|read|send|atomic)_(?:bw|lat)$/.test(c.program)) return undefined;
  return parseFlags(c.argv.slice(1), new Set(['-F', '--report_gbits', '-a', '-b', '-R', '--run_infinitely'])).flags;
}

/** `ufw …` → its arguments (`['disable']`, `['allow', '4791/udp']`). */
export function ufwOf(c: ShellCommand): string[] | undefined {
  return c.program === 'ufw' ? c.argv.slice(1).map((w) => w.text) : undefined;
}
