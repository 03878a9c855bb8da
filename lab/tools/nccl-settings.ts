/**
 * How an NCCL 2.27 process reads its settings (the NCCL model of nccl.ts uses them): the environment,
 * then `$NCCL_CONF_FILE` or `~/.nccl.conf`, then `/etc/nccl.conf`, each applied with setenv(…, 0);
 * NCCL_ALGO / NCCL_PROTO through NCCL's list grammar (graph/tuning.cc parseList, 2.24+); and the
 * interface lists of NCCL_SOCKET_IFNAME / NCCL_IB_HCA (`^` excludes, `=` exact, else prefixes).
 */

/** NCCL's setEnvFile: KEY=VALUE lines, `#` in column 0 skipped, value verbatim. */
export function parseNcclConfFile(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const raw of text.split('\n')) {
    if (raw.startsWith('#')) continue;
    const eq = raw.indexOf('=');
    if (eq < 0) continue;
    out.push([raw.slice(0, eq), raw.slice(eq + 1)]);
  }
  return out;
}

export interface NcclSettings {
  /** Every NCCL-relevant variable after the conf files were applied. */
  env: Record<string, string>;
  /** Where each NCCL_* value came from: `environment` or the conf file's path. */
  source: Record<string, string>;
}

/**
 * The environment a rank sees after NCCL's initEnv: `files` maps path → content for the files that
 * exist (`$NCCL_CONF_FILE` or `$HOME/.nccl.conf`, and `/etc/nccl.conf`).
 */
export function ncclSettings(
  processEnv: Readonly<Record<string, string>>,
  files: ReadonlyMap<string, string>,
): NcclSettings {
  const env: Record<string, string> = { ...processEnv };
  const source: Record<string, string> = {};
  for (const k of Object.keys(env)) if (k.startsWith('NCCL_')) source[k] = 'environment';
  const first = processEnv.NCCL_CONF_FILE ?? `${processEnv.HOME ?? ''}/.nccl.conf`;
  for (const path of [first, '/etc/nccl.conf']) {
    const text = files.get(path);
    if (text === undefined) continue;
    for (const [k, v] of parseNcclConfFile(text)) {
      if (k in env) continue;
      env[k] = v;
      source[k] = path;
    }
  }
  return { env, source };
}

/** The conf files a process of this environment reads, in NCCL's order. */
export function ncclConfPaths(processEnv: Readonly<Record<string, string>>): string[] {
  return [processEnv.NCCL_CONF_FILE ?? `${processEnv.HOME ?? ''}/.nccl.conf`, '/etc/nccl.conf'];
}

const ALGOS = ['tree', 'ring', 'collnetdirect', 'collnetchain', 'nvls', 'nvlstree', 'pat'];
const PROTOS = ['ll', 'll128', 'simple'];
const FUNCS = ['broadcast', 'reduce', 'allgather', 'reducescatter', 'allreduce'];

/** NCCL's parseList (graph/tuning.cc): the WARN it would print, or undefined when the value parses. */
export function parseAlgoList(str: string, proto: boolean): string | undefined {
  const elems = proto ? PROTOS : ALGOS;
  for (const full of str.split(';').filter((t) => t !== '')) {
    const colon = full.indexOf(':');
    const prefix = colon >= 0 ? full.slice(0, colon) : undefined;
    let list = colon >= 0 ? full.slice(colon + 1) : full;
    if (list.startsWith('^')) list = list.slice(1);
    if (prefix !== undefined && !FUNCS.includes(prefix.toLowerCase()))
      return `Unrecognized prefix token "${prefix}" when parsing "${str}"`;
    for (const e of list.split(',').filter((t) => t !== '')) {
      if (!elems.includes(e.toLowerCase())) return `Unrecognized element token "${e}" when parsing "${str}"`;
    }
  }
  return undefined;
}

/** An interface list as NCCL matches it (NCCL_SOCKET_IFNAME, NCCL_IB_HCA): `^` excludes, `=` exact, else prefixes. */
export interface IfList {
  exclude: boolean;
  exact: boolean;
  items: Array<{ name: string; port?: number }>;
}

export function parseIfList(value: string): IfList {
  let v = value;
  const exclude = v.startsWith('^');
  if (exclude) v = v.slice(1);
  const exact = v.startsWith('=');
  if (exact) v = v.slice(1);
  const items = v
    .split(',')
    .filter((t) => t !== '')
    .map((t) => {
      const [name, port] = t.split(':');
      return { name: name ?? '', ...(port !== undefined && port !== '' ? { port: Number(port) } : {}) };
    });
  return { exclude, exact, items };
}

export function matchIfList(list: IfList, name: string, port?: number): boolean {
  const hit = list.items.some(
    (i) =>
      (list.exact ? name === i.name : name.startsWith(i.name)) &&
      (i.port === undefined || port === undefined || i.port === port),
  );
  return list.exclude ? !hit : hit;
}
