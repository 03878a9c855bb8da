/** vllm verdicts on one host (docs/STAGES.md §3.11; R40–R44, R46). Pair checks and the cluster run are in pair-checks.ts. */
import { cannotTellVerdict } from '../../src/engine/probe-health.js';
import type { CheckDef, StageContext, Verdict } from '../../src/engine/types.js';
import { lintText } from '../../src/lint/index.js';
import { VLLM_REMOVED_FLAGS } from '../../src/rules/cfg/data.js';
import { parseVllmLog } from '../../src/parse/vllm-log.js';
import { describeLayout, type Layout } from './advisor.js';
import { deployedFrom, type Deployed, type VllmFacts } from './facts.js';
import { OLD_API_KEY_VAR, VENV_BIN, VLLM_ENV_FILE, VLLM_UNIT } from './probes.js';
import { unitStateLine, unitStateWord } from './shared-facts.js';
import { decideLayout, serveArgs, vllmUnit } from './plan.js';

const WILDCARD = /^(?:0\.0\.0\.0|::|\*)$/;

/** API keys never reach evidence, whatever a log or a unit may carry. */
export function redact(text: string): string {
  return text
    .replace(/(--api-key[= ])(?!\$\{)\S+/g, '$1<redacted>')
    .replace(/((?:L20|VLLM|OPENAI)_API_KEY=|'api_key': \[?')(?!\$)[^\s',\]]+/g, '$1<redacted>')
    .replace(/(Authorization: Bearer )(?!\$)\S+/gi, '$1<redacted>');
}

export function hostIndex(ctx: StageContext, host: string): number {
  return Math.max(0, ctx.hosts.indexOf(host));
}

/** The argv this host should run, or null (none in TP × PP on node ≥ 2), or a reason it cannot be planned. */
export function plannedArgv(
  f: VllmFacts,
  host: string,
  ctx: StageContext,
): { argv: string[] | null; layout: Layout; lines: string[] } | { problem: string; lines: string[] } {
  const d = decideLayout(ctx.config, f, ctx.hosts.length);
  if (!d.layout) return { problem: d.problem ?? 'no layout', lines: d.lines };
  const i = hostIndex(ctx, host);
  if (i === 0 && !f.mgmtAddress)
    return { problem: `${host}: the management address is unknown (SSH_CONNECTION empty)`, lines: d.lines };
  return { argv: serveArgs(ctx.config, i, d.layout, f.mgmtAddress ?? ''), layout: d.layout, lines: d.lines };
}

function lintOf(d: Deployed, rules: readonly string[]): { rule: string; text: string }[] {
  return lintText(d.text, d.source)
    .findings.filter((x) => rules.includes(x.rule))
    .map((x) => ({ rule: x.rule, text: `${x.rule}: ${x.evidence}` }));
}

/**
 * Operator launch scripts (~/start_vllm.sh) that l20-vllm.service has replaced, with the flags of theirs
 * the installed vLLM rejects. They are the operator's files: l20-setup never edits them, and nothing on
 * the host runs them once the unit serves, so what is wrong with them is a warning, not a blocker.
 */
function supersededLaunchers(f: VllmFacts): Array<{ source: string; bad: string[]; values: Map<string, string> }> {
  if (f.deployed?.source !== VLLM_UNIT) return [];
  const known = f.helpFlags ? new Set(f.helpFlags) : undefined;
  return f.launchers
    .map((l) => deployedFrom(l.path, l.text))
    .filter((d): d is Deployed => d?.launch.cli !== undefined)
    .map((d) => ({
      source: d.source,
      values: d.flags,
      bad: [...d.flags.keys()].filter((x) => VLLM_REMOVED_FLAGS[x] || (known && !known.has(x))),
    }))
    .filter((x) => x.bad.length > 0);
}

export const flagsCheck: CheckDef<VllmFacts> = {
  id: 'vllm.flags',
  title: 'every flag exists in the installed vLLM',
  scope: 'host',
  needs: ['help', 'launchers'],
  evaluate(f, host, ctx) {
    const verdict = unitFlags(f, host, ctx);
    const stale = verdict.status === 'pass' ? supersededLaunchers(f) : [];
    if (stale.length === 0) return verdict;
    const word = (x: string, v: Map<string, string>): string => (v.get(x) ? `${x} ${v.get(x)}` : x);
    const lines = stale.map(
      (x) =>
        `${x.source}: the operator's file, left as found (l20-setup never edits it); ${VLLM_UNIT} serves instead and nothing on the host runs it; it passes ${x.bad.map((b) => `${b}${VLLM_REMOVED_FLAGS[b] ? ` (${VLLM_REMOVED_FLAGS[b]!.why})` : ''}`).join(', ')}`,
    );
    return {
      status: 'warn',
      rule: 'R40',
      summary: `${stale.map((x) => x.source).join(', ')} (the operator's, unused: ${VLLM_UNIT} serves) would exit with "error: unrecognized arguments: ${stale[0]!.bad.map((b) => word(b, stale[0]!.values)).join(' ')}"; the unit's flags pass (${verdict.summary})`,
      evidence: `${lines.join('\n')}\n${verdict.evidence}`,
      fix: [
        ...new Set(
          stale
            .flatMap((x) => x.bad)
            .filter((b) => VLLM_REMOVED_FLAGS[b])
            .map((b) => VLLM_REMOVED_FLAGS[b]!.fix),
        ),
      ]
        .concat(`or delete ${stale.map((x) => x.source).join(', ')}: ${VLLM_UNIT} is how this host serves`)
        .join('; '),
    };
  },
};

/** The flags of what this host runs or will run: the unit (or the plan), else the operator's launcher it would replace. */
function unitFlags(f: VllmFacts, host: string, ctx: StageContext): Verdict {
  const plan = plannedArgv(f, host, ctx);
  const planned = 'argv' in plan && plan.argv ? plan.argv.filter((w) => w.startsWith('-')) : [];
  const deployed = f.deployed ? [...f.deployed.flags.keys()] : [];
  const all = [...new Set([...planned, ...deployed])];
  const removed = deployed.filter((x) => VLLM_REMOVED_FLAGS[x]);
  const version = f.versions.vllmCli ?? f.versions.vllm;
  const evidence = [
    f.helpEvidence,
    `planned: ${planned.join(' ') || '(none)'}`,
    f.deployed ? `deployed (${f.deployed.source}): ${deployed.join(' ') || '(none)'}` : 'deployed: nothing',
  ].join('\n');
  const fixFor = (bad: string[]): string => {
    const known = bad.filter((x) => VLLM_REMOVED_FLAGS[x]).map((x) => VLLM_REMOVED_FLAGS[x]!.fix);
    const src =
      f.deployed && f.deployed.source !== 'l20-vllm.service'
        ? `; ${f.deployed.source} is not used once the unit runs`
        : '';
    return [...known, `apply vllm.units: the unit carries only flags of the installed vLLM${src}`].join('; ');
  };
  if (!f.helpFlags) {
    if (removed.length > 0) {
      return {
        status: 'fail',
        rule: 'R40',
        summary: `${f.deployed!.source} passes ${removed.join(', ')}: vLLM exits with "error: unrecognized arguments: ${removed.map((x) => (f.deployed!.flags.get(x) ? `${x} ${f.deployed!.flags.get(x)}` : x)).join(' ')}"`,
        evidence,
        fix: fixFor(removed),
      };
    }
    const absent = /No such file or directory|command not found/.test(f.helpEvidence);
    return {
      status: 'fail',
      rule: 'R40',
      evidence,
      fix: 'apply nccl.bench-tools (the cluster venv /opt/l20/venv with the pinned vLLM)',
      summary: absent
        ? `vLLM is not installed: ${VENV_BIN}/vllm does not exist`
        : "cannot list the installed vLLM's flags: `vllm serve --help=all` failed",
    };
  }
  if (all.length === 0)
    return {
      status: 'skip',
      rule: 'R40',
      summary: 'no vLLM command on this host to check',
      evidence,
    };
  const known = new Set(f.helpFlags);
  const unknown = all.filter((x) => !known.has(x));
  if (unknown.length > 0) {
    const where = unknown.map(
      (x) =>
        `${x} (${deployed.includes(x) ? f.deployed!.source : 'planned'}${VLLM_REMOVED_FLAGS[x] ? `: ${VLLM_REMOVED_FLAGS[x]!.why}` : ''})`,
    );
    return {
      status: 'fail',
      rule: 'R40',
      summary: `not in \`vllm serve --help=all\` of ${vllmName(version)}: ${where.join(', ')}`,
      evidence,
      fix: fixFor(unknown),
    };
  }
  return {
    status: 'pass',
    rule: 'R40',
    summary: `all ${all.length} flags are options of ${vllmName(version)}`,
    evidence,
  };
}

/** `vLLM 0.11.0`, or what is known when neither `vllm --version` nor the import printed one. */
function vllmName(version: string | undefined): string {
  return version ? `vLLM ${version}` : 'the installed vLLM (version not printed)';
}

function sameLayout(a: Layout, d: Deployed): boolean {
  const l = d.launch;
  const local = Number(d.flags.get('--data-parallel-size-local') ?? l.dp);
  if (a.backend === 'ray') return l.tp === a.tp && l.pp === a.pp;
  return l.tp === a.tp && l.pp === a.pp && l.dp === a.dp && local === a.dpLocal;
}

export const layoutCheck: CheckDef<VllmFacts> = {
  id: 'vllm.layout',
  title: "parallel layout = the advisor's (or a recorded override)",
  scope: 'host',
  needs: ['models', 'launchers'],
  evaluate(f, host, ctx) {
    const d = decideLayout(ctx.config, f, ctx.hosts.length);
    const arithmetic = d.lines.join('\n');
    if (!d.layout) {
      const rule = d.advice && !d.advice.ok ? d.advice.rule : undefined;
      return {
        status: 'fail',
        ...(rule ? { rule } : {}),
        summary: d.problem ?? 'no layout',
        evidence: arithmetic || d.problem || '',
        fix:
          rule === 'R43'
            ? `serve a smaller or quantized model (inventory vllm.model): ${ctx.config.vllm.model} cannot be served here`
            : rule === 'R44'
              ? 'drop --quantization fp8: the checkpoint is quantized already'
              : "apply vllm.model-sync so the model's config.json can be read",
      };
    }
    const want = describeLayout(d.layout);
    const dep = f.deployed;
    const i = hostIndex(ctx, host);
    const expect = serveArgs(ctx.config, i, d.layout, f.mgmtAddress ?? '');
    const head = d.override
      ? `override recorded (inventory vllm.layout = ${d.override}); advisor: ${d.advice?.ok ? describeLayout(d.advice.layout) : 'refuse'}`
      : `advice: ${want}`;
    const evidence = `${arithmetic}\n${head}\ndeployed: ${dep ? `${dep.source}: TP ${dep.launch.tp} × PP ${dep.launch.pp} × DP ${dep.launch.dp}` : 'nothing'}`;
    if (expect === null) {
      if (dep?.source === 'l20-vllm.service')
        return {
          status: 'fail',
          rule: 'R42',
          summary: `${host} should run no vLLM in ${want}: its GPUs join through Ray`,
          evidence,
          fix: 'apply vllm.units (removes l20-vllm.service here)',
        };
      return { status: 'pass', rule: 'R42', summary: `${want}: ${host} lends its GPUs through Ray`, evidence };
    }
    if (!dep) return { status: 'fail', summary: `vLLM is not deployed; ${head}`, evidence, fix: 'apply vllm.units' };
    if (dep.source !== 'l20-vllm.service') {
      const lint = lintOf(dep, ['R42', 'R43', 'R44']);
      const rule = lint[0]?.rule ?? 'R42';
      return {
        status: 'fail',
        rule,
        summary: `${dep.source} runs TP ${dep.launch.tp} × PP ${dep.launch.pp}; ${head}`,
        evidence: `${evidence}\n${lint.map((x) => x.text).join('\n')}`,
        fix: `apply vllm.units (${want} as a unit); ${dep.source} is then unused`,
      };
    }
    if (!sameLayout(d.layout, dep)) {
      return {
        status: 'fail',
        rule: 'R42',
        summary: `deployed TP ${dep.launch.tp} × PP ${dep.launch.pp} × DP ${dep.launch.dp} ≠ ${want}`,
        evidence,
        fix: 'apply vllm.units',
      };
    }
    const q = dep.launch.quantization?.value;
    if (q === 'fp8' && d.advice?.ok === false && d.advice.rule === 'R44')
      return { status: 'fail', rule: 'R44', summary: d.advice.reason, evidence, fix: 'drop --quantization fp8' };
    return {
      status: 'pass',
      rule: 'R42',
      summary: `${want}${d.override ? ' (operator override)' : ' as advised'}`,
      evidence,
    };
  },
};

export const exposureCheck: CheckDef<VllmFacts> = {
  id: 'vllm.exposure',
  title: 'API on the service address with an API key',
  scope: 'host',
  needs: ['listening', 'env-file', 'launchers'],
  evaluate(f, host, ctx) {
    const port = ctx.config.vllm.port;
    const socks = (f.listening ?? []).filter((s) => s.port === port);
    const wide = socks.filter((s) => WILDCARD.test(s.address));
    const dep = f.deployed;
    const lines = [
      `ss -ltnH, port ${port}: ${socks.map((s) => s.line.trim().replace(/\s+/g, ' ')).join(' | ') || 'nothing listens'}`,
      f.envFile.evidence,
    ];
    if (dep)
      lines.push(
        `${dep.source}: --host ${dep.flags.get('--host') ?? '(unset: all interfaces)'}, --api-key ${dep.flags.has('--api-key') ? 'set' : 'absent'}${dep.headless ? ', --headless (no API)' : ''}`,
      );
    const evidence = lines.join('\n');
    const fix =
      `apply vllm.units: --host <management address> --port ${port}, the key as VLLM_API_KEY in ` +
      `${VLLM_ENV_FILE} (0600) loaded by EnvironmentFile= (never --api-key, which ps shows every user), ` +
      `and ufw admits port ${port} on the management interface only`;
    if (wide.length > 0)
      return {
        status: 'fail',
        rule: 'R46',
        summary: `the API port ${port} listens on ${wide.map((s) => s.address).join(', ')}: every network the host is on reaches it`,
        evidence,
        fix,
      };
    if (!f.listening)
      return {
        status: 'error',
        rule: 'R46',
        summary: 'cannot tell: ss could not list the listening sockets',
        evidence: `${evidence}\n${f.listeningEvidence}`,
        fix: 'check `ss -ltnH` on the host (iproute2)',
      };
    // Nothing deployed and nothing listening: no API to judge (vllm.units reports the missing deployment).
    if (!dep && socks.length === 0)
      return {
        status: 'skip',
        rule: 'R46',
        summary: `vLLM is not deployed: nothing serves on port ${port}`,
        evidence,
      };
    if (!dep)
      return {
        status: 'pass',
        rule: 'R46',
        summary: `port ${port} is held by ${socks.map((s) => s.address).join(', ')}, not a wildcard; no vLLM deployed`,
        evidence,
      };
    if (dep.source !== 'l20-vllm.service') {
      const lint = lintOf(dep, ['R46']);
      if (lint.length > 0) {
        const summary = dep.flags.has('--api-key')
          ? `${dep.source} passes the API key as --api-key: every local user reads it in ps`
          : `${dep.source} binds the API to ${dep.flags.get('--host') ?? 'all interfaces'} without an API key`;
        const found = lint.map((x) => x.text).join('\n');
        return { status: 'fail', rule: 'R46', summary, evidence: `${evidence}\n${found}`, fix };
      }
      return {
        status: 'pass',
        rule: 'R46',
        summary: `${dep.source} binds ${dep.flags.get('--host')} with an API key`,
        evidence,
      };
    }
    if (dep.headless || dep.launch.cli === undefined)
      return { status: 'pass', rule: 'R46', summary: 'headless engines: no API on this host', evidence };
    const h = dep.flags.get('--host');
    if (!h || WILDCARD.test(h))
      return { status: 'fail', rule: 'R46', summary: `the API binds ${h ?? 'all interfaces'}`, evidence, fix };
    if (h !== f.mgmtAddress) {
      return {
        status: 'fail',
        rule: 'R46',
        summary: `the API binds ${h}, not the management address ${f.mgmtAddress ?? '(unknown: SSH_CONNECTION empty)'}`,
        evidence,
        fix,
      };
    }
    if (dep.flags.has('--api-key')) {
      const summary =
        "the API key is on vLLM's command line (--api-key): every local user reads it in ps " +
        'and /proc/<pid>/cmdline';
      return { status: 'fail', rule: 'R46', summary, evidence, fix };
    }
    if (!f.envFile.key) {
      const summary = f.envFile.oldKey
        ? `the API runs without an API key: ${VLLM_ENV_FILE} holds it as ${OLD_API_KEY_VAR}, which vLLM does not read`
        : 'the API runs without an API key';
      return { status: 'fail', rule: 'R46', summary, evidence, fix };
    }
    if (f.envFile.mode !== '600')
      return {
        status: 'fail',
        rule: 'R46',
        summary: `/etc/l20/vllm.env is mode ${f.envFile.mode}: the API key is readable by other users`,
        evidence,
        fix: 'sudo chmod 600 /etc/l20/vllm.env (or apply vllm.units)',
      };
    return { status: 'pass', rule: 'R46', summary: `API on ${h}:${port} with an API key (${host})`, evidence };
  },
};

/** Engines that reported a KV cache (one per data-parallel rank), by the rank in their process tag. */
export function loadedEngines(journal: string): Set<string> {
  const out = new Set<string>();
  for (const line of journal.split('\n')) {
    if (!line.includes('GPU KV cache size:')) continue;
    const tag = /\(EngineCore(?:_DP)?_?(\d+)? pid=/.exec(line);
    out.add(tag?.[1] ?? '0');
  }
  return out;
}

/** The journal since the unit last started (`Started …` marks each start). */
function lastRun(journal: string): string {
  const lines = journal.split('\n');
  let from = 0;
  lines.forEach((l, i) => {
    if (/^Started .*l20-setup\)?\.?$|^Started vLLM/.test(l)) from = i;
  });
  return lines.slice(from).join('\n');
}

export const unitsCheck: CheckDef<VllmFacts> = {
  id: 'vllm.units',
  title: 'l20-vllm.service active, every rank loaded',
  scope: 'host',
  needs: ['models'],
  evaluate(f, host, ctx) {
    const plan = plannedArgv(f, host, ctx);
    const state = unitStateLine(VLLM_UNIT, f.unit);
    if ('problem' in plan)
      return {
        status: 'fail',
        summary: `no plan: ${plan.problem}`,
        evidence: state,
        fix: 'apply vllm.model-sync, then vllm.units',
      };
    if (plan.argv === null) {
      if (f.unit.file)
        return {
          status: 'fail',
          summary: `${host} should run no vLLM (${describeLayout(plan.layout)})`,
          evidence: state,
          fix: 'apply vllm.units',
        };
      return {
        status: 'skip',
        summary: `${describeLayout(plan.layout)}: ${host} runs no vLLM (its GPUs join through Ray)`,
        evidence: state,
      };
    }
    if (!f.unit.file)
      return { status: 'fail', summary: 'l20-vllm.service is not installed', evidence: state, fix: 'apply vllm.units' };
    const want = vllmUnit(ctx.config, hostIndex(ctx, host), plan.layout, plan.argv, f.user ?? 'root');
    if (f.unit.file !== want)
      return {
        status: 'fail',
        summary: 'l20-vllm.service differs from the plan (model, layout, addresses or limits changed)',
        evidence: `${state}\n--- installed\n${f.unit.file}--- planned\n${want}`,
        fix: 'apply vllm.units',
      };
    // The file is read with cat; whether it runs, only systemctl can say.
    if (f.unit.unreadable.length > 0) return cannotTellVerdict(f.unit.unreadable, host);
    const run = lastRun(f.journal);
    const log = parseVllmLog(run);
    const tail = redact(
      run
        .split('\n')
        .filter((l) => l.trim())
        .slice(-12)
        .join('\n'),
    );
    if (f.unit.active !== 'active') {
      return {
        status: 'fail',
        summary: `l20-vllm.service is ${unitStateWord(f.unit)}${log.errors[0] ? `: ${log.errors[0]}` : ''}`,
        evidence: `${state}\n${f.journalEvidence}\n${tail || '(no journal lines)'}`,
        fix: 'read `journalctl -u l20-vllm.service`; apply vllm.units after fixing the cause',
      };
    }
    // An active unit whose journal could not be read would look like one still starting.
    if (f.journalUnreadable.length > 0) return cannotTellVerdict(f.journalUnreadable, host);
    const engines = loadedEngines(run);
    const expected = plan.layout.backend === 'ray' ? 1 : plan.layout.dpLocal;
    const head = !plan.argv.includes('--headless');
    const started = /Application startup complete\./.test(run);
    const socket = /Using network Socket|NET\/Socket/.test(run);
    const evidence = `${state}\n${f.journalEvidence}: ${engines.size}/${expected} engine(s) reported "GPU KV cache size:"${head ? `, "Application startup complete." ${started ? 'seen' : 'not yet'}` : ''}\n${tail}`;
    if (socket)
      return {
        status: 'fail',
        summary: 'NCCL fell back to sockets (NET/Socket): multi-node traffic is not on RoCE',
        evidence,
        fix: 'see the nccl stage (nccl.hca-resolve, nccl.validation)',
      };
    if (engines.size < expected || (head && !started))
      return {
        status: 'fail',
        summary: `starting: ${engines.size}/${expected} engines loaded${head && !started ? ', API not up yet' : ''}`,
        evidence,
        fix: 'wait for the start-up (≈ 2 min for an 8B model), then re-check; apply vllm.units waits for it',
      };
    if ((f.unit.nRestarts ?? 0) > 0)
      return {
        status: 'warn',
        summary: `active, but restarted ${f.unit.nRestarts} time(s)`,
        evidence,
        fix: 'read `journalctl -u l20-vllm.service` for the earlier failures',
      };
    return {
      status: 'pass',
      summary: `active: ${expected} engine(s) loaded (${describeLayout(plan.layout)})${head ? ', API up' : ', headless'}`,
      evidence,
    };
  },
};

export const vllmHostChecks = [flagsCheck, layoutCheck, exposureCheck, unitsCheck] as const;
