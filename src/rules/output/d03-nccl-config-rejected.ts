/**
 * D03 NCCL rejected its configuration — blocker (docs/RULES.md §3). Read by nccl-log and vllm-log.
 * `Unrecognized element token "<t>" when parsing "<s>"`, `Unrecognized prefix token`,
 * `All entries except the first must have a prefix`, `No algorithm/protocol available for function …`
 * (older `Error : no algorithm/protocol available`), `invalid usage (run with NCCL_DEBUG=WARN for details)`.
 */
import type { LogHit } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d03NcclConfigRejected(hits: readonly LogHit[], algoEnv: readonly LogHit[] = []): Finding | undefined {
  const first = hits[0];
  if (!first) return undefined;
  const lines = hits.slice(0, 4).map((h) => `line ${h.line}: ${h.text}`);
  const env = algoEnv.slice(0, 2).map((h) => `line ${h.line}: ${h.text}`);
  const token = /Unrecognized (?:element|prefix) token "([^"]*)"/i.exec(hits.map((h) => h.text).join('\n'));
  const varName = /NCCL_(ALGO|PROTO) set/.exec(env.join('\n'))?.[0]?.replace(' set', '');
  const which = varName ?? 'NCCL_ALGO / NCCL_PROTO';
  return {
    rule: 'D03',
    severity: 'blocker',
    title: 'NCCL rejected its configuration',
    evidence: [...lines, ...env].join('\n'),
    fix:
      `Delete ${which}${token ? ` (the token "${token[1]}" is not valid for this NCCL)` : ''} from the environment and from /etc/nccl.conf on every host, ` +
      'then run `l20-setup lint /etc/nccl.conf` (R01, R02: since 2.24 a bad token or forced CollNet fails every communicator init). ' +
      'Other causes: forced CollNet without SHARP; two ranks on one GPU.',
    line: first.line,
  };
}
