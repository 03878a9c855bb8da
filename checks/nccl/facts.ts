/** What the nccl stage reads about one host. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import { collectFabric, type FabricFacts } from '../common/fabric.js';

export interface ConfFile {
  path: string;
  /** Octal mode (`644`), when stat answered. */
  mode?: string;
  text: string;
}

export interface NcclFacts {
  host: string;
  fabric: FabricFacts;
  /** `$NCCL_CONF_FILE` or `~/.nccl.conf` first, then `/etc/nccl.conf` (NCCL's order), those that exist. */
  confFiles: ConfFile[];
  /** `NAME=value` lines of the login environment (NCCL_*, GLOO_SOCKET_IFNAME). */
  envLines: string[];
  /** systemd units that mention NCCL_ variables. */
  units: ConfFile[];
  torch?: { source: string; version?: string; nccl?: string; error?: string };
  libnccl2?: string;
  /** torchrun executables found (the venv's first). */
  torchruns: string[];
  /** Pinned distributions in the cluster venv (`vllm`, `ray`, `torch` → version). */
  venvDists: Record<string, string>;
  /** The installed benchmark script, verbatim. */
  benchScript?: string;
  gdr: { openModule: boolean; peermem: boolean; kernel?: string };
  problems: Array<{ probe: string; evidence: string }>;
}

/** Splits `==> PATH [MODE] <==` … `<== end` blocks. */
export function blocks(text: string): Array<{ head: string; body: string }> {
  const out: Array<{ head: string; body: string }> = [];
  const re = /^==> (.+?) <==\n([\s\S]*?)\n<== end$/gm;
  for (const m of text.matchAll(re)) out.push({ head: m[1] ?? '', body: m[2] ?? '' });
  return out;
}

/** NCCL's `(2, 27, 3)` tuple (or a bare integer of old torch) → `2.27.3`. */
export function ncclVersionOf(printed: string): string | undefined {
  const t = /^\((\d+), (\d+), (\d+)\)$/.exec(printed.trim());
  if (t) return `${t[1]}.${t[2]}.${t[3]}`;
  const n = /^(\d)(\d{2})(\d{2})$/.exec(printed.trim());
  return n ? `${Number(n[1])}.${Number(n[2])}.${Number(n[3])}` : undefined;
}

function out(r: ProbeOutputs['results'][string] | undefined): string {
  return r?.stdout ?? '';
}

export function collectNccl(outputs: ProbeOutputs): NcclFacts {
  const { host, results } = outputs;
  const problems: NcclFacts['problems'] = [];
  for (const id of ['nccl-conf', 'nccl-env', 'nccl-units', 'nccl-version', 'nccl-tools', 'gdr']) {
    const r = results[id];
    if (r && r.exitCode !== 0)
      problems.push({
        probe: id,
        evidence: `${r.commandLine} → exit ${r.exitCode}\n${`${r.stdout}${r.stderr}`.trim()}`,
      });
  }
  const confFiles = blocks(out(results['nccl-conf'])).map((b) => {
    const [path, mode] = b.head.split(' ');
    return { path: path ?? '', ...(mode ? { mode } : {}), text: b.body };
  });
  const units = blocks(out(results['nccl-units'])).map((b) => ({ path: b.head, text: b.body }));
  const envLines = out(results['nccl-env'])
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => /^[A-Z_][A-Z0-9_]*=/.test(l));

  // torch: `== venv …` or `== python3`, then the version, the NCCL tuple (or a traceback).
  const v = out(results['nccl-version']);
  const sections = v.split(/^== /m).filter(Boolean);
  let torch: NcclFacts['torch'];
  let libnccl2: string | undefined;
  for (const s of sections) {
    const [head, ...body] = s.split('\n');
    const lines = body.map((l) => l.trim()).filter(Boolean);
    if (head === 'libnccl2') {
      if (lines[0]) libnccl2 = lines[0];
      continue;
    }
    const err = lines.find((l) => /Error:/.test(l));
    const nccl = lines.map(ncclVersionOf).find((x) => x !== undefined);
    const version = lines.find((l) => /^\d+\.\d+\.\d+/.test(l));
    torch = {
      source: head ?? '',
      ...(version ? { version } : {}),
      ...(nccl ? { nccl } : {}),
      ...(err ? { error: err } : {}),
    };
  }

  const t = out(results['nccl-tools']);
  const torchruns = [...t.matchAll(/^torchrun (\S+)$/gm)].map((m) => m[1] ?? '');
  const venvDists: Record<string, string> = {};
  for (const m of t.matchAll(/^dist ([A-Za-z0-9_.-]+)==(\S+)$/gm)) venvDists[(m[1] ?? '').toLowerCase()] = m[2] ?? '';
  const bench = blocks(t).find((b) => b.head === 'bench');

  const g = out(results.gdr);
  return {
    host,
    fabric: collectFabric(outputs),
    confFiles,
    envLines,
    units,
    ...(torch ? { torch } : {}),
    ...(libnccl2 ? { libnccl2 } : {}),
    torchruns,
    venvDists,
    ...(bench ? { benchScript: bench.body } : {}),
    gdr: {
      openModule: /^open-module$/m.test(g),
      peermem: /^peermem$/m.test(g),
      ...(/^kernel (\S+)$/m.exec(g)?.[1] ? { kernel: /^kernel (\S+)$/m.exec(g)![1] } : {}),
    },
    problems,
  };
}
