/**
 * The cfg rules (scope `cfg`, and the cfg part of multi-scope rules) in catalog order, and the runner that
 * applies them to one file of a lint run. Rules parts that need a host are not run here: `NOT_CHECKED`
 * names them per file kind so `lint` can say so.
 */
import type { Finding } from '../types.js';
import { sortFindings } from '../types.js';
import type { CfgContext, CfgFile, CfgRule, LintKind } from './context.js';
import { R45, R46, R47, R48, R49, R50 } from './exposure.js';
import { R01, R02 } from './nccl-algo.js';
import { R09, R12, R13, R14, R15 } from './nccl-env.js';
import { R03, R04, R05, R06, R10, R11 } from './nccl-vars.js';
import { R16, R17, R18, R19, R20, R21, R22 } from './netplan.js';
import { R25, R27 } from './qos.js';
import { R40, R41, R42, R43, R44 } from './serving.js';
import { R30, R31, R32, R33, R35 } from './stack.js';

export const CFG_RULES: readonly CfgRule[] = [
  R01,
  R02,
  R03,
  R04,
  R05,
  R06,
  R09,
  R10,
  R11,
  R12,
  R13,
  R14,
  R15,
  R16,
  R17,
  R18,
  R19,
  R20,
  R21,
  R22,
  R25,
  R27,
  R30,
  R31,
  R32,
  R33,
  R35,
  R40,
  R41,
  R42,
  R43,
  R44,
  R45,
  R46,
  R47,
  R48,
  R49,
  R50,
];

/** Every cfg finding for `file`, worst first. A rule that throws is skipped (lint must never crash). */
export function runCfgRules(file: CfgFile, ctx: CfgContext): Finding[] {
  const out: Finding[] = [];
  for (const rule of CFG_RULES) {
    try {
      out.push(...rule.check(file, ctx));
    } catch {
      /* a rule bug must not hide the other findings */
    }
  }
  return sortFindings(out);
}

/** Rule parts `lint` cannot check without a host, by file kind (human output only). */
export const NOT_CHECKED: Partial<Record<LintKind, string>> = {
  'nccl-conf': 'R05/R06/R07 names and GIDs, R08 TC→PFC chain, R12 parity, R14 live interfaces',
  env: 'R07 names, R12 parity',
  'netplan-yaml': 'R16 slave→BDF and mlx5_bond_N, R17 cabling, R23 stale devices, R24 MTU parity',
  'shell-script': 'R08 PFC on every host, R26 both ends, R27 read-back, R28 DCBX, R45 registered IPs, R47 parity',
  'command-line': 'R41 model on every node, R45 registered IPs, R47 parity',
  'python-launcher': 'R41 model on every node, R47 parity',
  'systemd-unit': 'R27 read-back, R35 live ulimit',
  markdown: 'host parts of every rule',
};
