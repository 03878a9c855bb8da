/**
 * `nvidia-smi topo -p2p r` (also `w`, `n`, `a`): a matrix of P2P read capability between GPUs.
 * As driver 580 prints it (captured on an H200, 580.159.04): a header ` \t<ESC>[4mGPU0\tGPU1\t…\t<ESC>[0m`,
 * rows ` GPU0\tX\tOK\t…\t`, then `Legend:` with `OK = Status Ok`, `CNS = Chipset not supported`,
 * `GNS = GPU not supported`, `TNS = Topology not supported`, `NS = Not supported`, `U = Unknown`.
 * No parser in src/parse reads it; rows are split on whitespace after escapes are removed.
 */
import { cleanLines } from '../../src/parse/common.js';

export interface P2pMatrix {
  gpus: string[];
  /** status[a][b] for a ≠ b: `OK`, `CNS`, `GNS`, `TNS`, `NS`, `U`. */
  status: Record<string, Record<string, string>>;
  error?: string;
}

const CODE = /^(?:X|OK|CNS|GNS|TNS|NS|U)$/;

export function parseP2p(text: string): P2pMatrix {
  const lines = cleanLines(text, { commands: ['nvidia-smi'] });
  let gpus: string[] | undefined;
  const status: Record<string, Record<string, string>> = {};
  for (const line of lines) {
    const t = line.trim();
    if (t === 'Legend:') break;
    const tokens = t.split(/\s+/).filter(Boolean);
    if (!gpus) {
      if (tokens.length > 0 && tokens.every((x) => /^GPU\d+$/.test(x))) gpus = tokens;
      continue;
    }
    const row = tokens[0];
    if (!row || !gpus.includes(row)) continue;
    const cells: Record<string, string> = {};
    gpus.forEach((g, i) => {
      const c = tokens[i + 1];
      if (c !== undefined && CODE.test(c) && g !== row) cells[g] = c;
    });
    status[row] = cells;
  }
  if (!gpus) {
    const err = lines.map((l) => l.trim()).find((l) => l !== '');
    return { gpus: [], status: {}, error: err ?? 'empty output' };
  }
  return { gpus, status };
}
