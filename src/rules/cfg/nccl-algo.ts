/** R01 (NCCL_ALGO / NCCL_PROTO grammar) and R02 (CollNet without SHARP). */
import type { Finding } from '../types.js';
import { cmpVersion, mk, settingsOf } from './context.js';
import type { CfgContext, CfgFile, CfgRule, Setting } from './context.js';
import { CURRENT_NCCL, NCCL_ALGOS, NCCL_FUNCS, NCCL_PROTOS, NCCL_STRICT_PARSE_SINCE } from './data.js';

/** The NCCL version the files pin, or the current release (flagged as assumed). */
export function ncclVersion(ctx: CfgContext): { version: string; assumed: boolean; note: string } {
  if (ctx.versions.nccl)
    return { version: ctx.versions.nccl, assumed: false, note: `NCCL ${ctx.versions.nccl} (pinned in the files)` };
  return {
    version: CURRENT_NCCL,
    assumed: true,
    note: `NCCL version unknown: assuming the current release (${CURRENT_NCCL})`,
  };
}

function supported(spec: { since?: string; until?: string } | undefined, version: string): boolean {
  if (!spec) return false;
  if (spec.since && cmpVersion(version, spec.since) < 0) return false;
  if (spec.until && cmpVersion(version, spec.until) > 0) return false;
  return true;
}

/** NCCL's parse of an ALGO/PROTO value: the messages NCCL prints, in order. */
export function grammarErrors(
  value: string,
  table: Record<string, { since?: string; until?: string }>,
  version: string,
): Array<{ token: string; message: string }> {
  const out: Array<{ token: string; message: string }> = [];
  const entries = value.split(';');
  entries.forEach((entry, i) => {
    if (entry.trim() === '' && entries.length > 1) return;
    let list = entry;
    const colon = entry.indexOf(':');
    if (colon >= 0) {
      const func = entry.slice(0, colon).trim();
      list = entry.slice(colon + 1);
      if (!NCCL_FUNCS.includes(func.toLowerCase()))
        out.push({ token: func, message: `Unrecognized prefix token "${func}" when parsing "${value}"` });
    } else if (i > 0)
      out.push({ token: entry.trim(), message: `All entries except the first must have a prefix: "${value}"` });
    const body = list.trim().replace(/^\^/, '');
    for (const raw of body.split(',')) {
      const tok = raw.trim();
      if (tok === '') continue;
      if (!supported(table[tok.toLowerCase()], version))
        out.push({ token: tok, message: `Unrecognized element token "${tok}" when parsing "${list.trim()}"` });
    }
  });
  return out;
}

export const R01: CfgRule = {
  id: 'R01',
  title: 'NCCL_ALGO / NCCL_PROTO does not parse: every communicator init fails',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const v = ncclVersion(ctx);
    if (cmpVersion(v.version, NCCL_STRICT_PARSE_SINCE) < 0) return [];
    const out: Finding[] = [];
    for (const [key, table] of [
      ['NCCL_ALGO', NCCL_ALGOS],
      ['NCCL_PROTO', NCCL_PROTOS],
    ] as const) {
      for (const s of settingsOf(f, key)) {
        const errs = grammarErrors(s.value, table, v.version);
        if (errs.length === 0) continue;
        const valid = Object.keys(table).filter((t) => supported(table[t], v.version));
        out.push(
          mk(
            this,
            'blocker',
            f,
            s.line,
            `${s.raw} → NCCL prints: ${errs.map((e) => e.message).join('; ')} and returns ncclInvalidUsage (${v.note}; since ${NCCL_STRICT_PARSE_SINCE} a bad token fails init instead of being ignored)${s.origin === 'conf' ? '; in /etc/nccl.conf it breaks every NCCL job on the host' : ''}. Valid ${key === 'NCCL_ALGO' ? 'algorithms' : 'protocols'}: ${valid.join(', ')}`,
            `Delete the line \`${s.raw}\` (NCCL picks algorithms itself; NVIDIA/nccl#1219).${key === 'NCCL_ALGO' && /coll/i.test(s.value) ? ' See R02: CollNet cannot run on back-to-back RoCE anyway.' : ''}`,
          ),
        );
      }
    }
    return out;
  },
};

function isCollnet(tok: string): boolean {
  return ['collnetdirect', 'collnetchain', 'collnet'].includes(tok.toLowerCase().replace(/_/g, ''));
}

export const R02: CfgRule = {
  id: 'R02',
  title: 'CollNet forced without SHARP: no algorithm is left for AllReduce',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    const hits: Setting[] = [];
    for (const s of settingsOf(f, 'NCCL_ALGO')) {
      const entries = s.value.split(';').map((e) => (e.includes(':') ? e.slice(e.indexOf(':') + 1) : e).trim());
      if (entries.some((e) => !e.startsWith('^') && e.split(',').some((t) => isCollnet(t.trim())))) hits.push(s);
    }
    for (const s of settingsOf(f, 'NCCL_COLLNET_ENABLE')) if (s.value.trim() === '1') hits.push(s);
    for (const s of hits) {
      out.push(
        mk(
          this,
          'high',
          f,
          s.line,
          `${s.raw} → CollNet needs SHARP: an InfiniBand link layer and a loaded collnet plugin; back-to-back RoCE (ConnectX-4 Lx, no switch) has neither. Since NCCL 2.24 there is no fallback to ring: "No algorithm/protocol available for function AllReduce with datatype … NCCL_ALGO was set to ${s.value}" (older: "Error : no algorithm/protocol available"; NVIDIA/nccl#653)${s.key === 'NCCL_ALGO' && /_/.test(s.value) ? '. The token also fails to parse (R01)' : ''}`,
          `Delete \`${s.raw}\`${s.key === 'NCCL_ALGO' ? ' (and any NCCL_COLLNET_ENABLE)' : ''}; ring and tree are chosen automatically.`,
        ),
      );
    }
    return out;
  },
};
