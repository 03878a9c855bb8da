import { describe, expect, it } from 'vitest';
import { exposureCheck, flagsCheck, layoutCheck, redact, unitsCheck } from '../../checks/vllm/checks.js';
import { collectVllm, type VllmFacts } from '../../checks/vllm/facts.js';
import { benchCheck, healthCheck, modelCheck, versionsCheck, type VllmCluster } from '../../checks/vllm/pair-checks.js';
import type { CheckDef, CheckResult, HostCheckDef, PairCheckDef, Verdict } from '../../src/engine/types.js';
import { vllmStage } from '../../checks/vllm/index.js';
import { parseVllmBench } from '../../src/parse/vllm-bench.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';
import { unitStateWord } from '../../checks/vllm/shared-facts.js';
import {
  HELP,
  TUTORIAL_START_VLLM,
  corpus,
  journal,
  modelsOut,
  plannedUnit,
  run,
  shared,
  ss,
  NO_VENV,
} from './serving-fixtures.js';

const ctx = testContext();
const HOSTS = ['l20-n1', 'l20-n2'];

function unitOut(i: number, active = 'active', file = plannedUnit(ctx.config, i), restarts = 0): RunResult {
  return run(
    `### is-active\n${active}\n### show\nLoadState=loaded\nActiveState=${active}\nSubState=running\nNRestarts=${restarts}\n### file\n${file}`,
  );
}

function facts(i: number, over: Record<string, RunResult> = {}): VllmFacts {
  return collectVllm({
    host: HOSTS[i]!,
    results: {
      ...shared(i, i === 0 ? { listening: run(ss(['10.0.0.1', 8000], ['192.168.101.1', 13345])) } : {}),
      unit: unitOut(i),
      journal: run(i === 0 ? journal(0, 8, true) : journal(8, 8, false)),
      'env-file': run('mode 600 root\nkey set\n'),
      launchers: run(''),
      help: run(HELP),
      ...over,
    },
  });
}

const host = (check: CheckDef<VllmFacts, VllmCluster>, f: VllmFacts, c = ctx): Verdict =>
  (check as HostCheckDef<VllmFacts>).evaluate(f, f.host, c);
const pair = (check: CheckDef<VllmFacts, VllmCluster>, fs: VllmFacts[], cluster?: VllmCluster, c = ctx): Verdict =>
  (check as PairCheckDef<VllmFacts, VllmCluster>).evaluate(
    fs.map((f) => ({ host: f.host, facts: f })),
    { ...c, cluster },
  );

describe('vllm host checks', () => {
  it('the deployed DP 16 units pass every host check on both nodes', () => {
    for (const i of [0, 1]) {
      const f = facts(i);
      for (const check of [flagsCheck, layoutCheck, exposureCheck, unitsCheck]) {
        const v = host(check, f);
        expect(v.status, `${HOSTS[i]} ${check.id}: ${v.summary}\n${v.evidence}`).toBe('pass');
      }
    }
    expect(host(layoutCheck, facts(0)).evidence).toContain('1. W 14.19 GiB ≤ 0.75 U 30.37 GiB');
  });

  it("vllm.flags (R40): the tutorial script's removed flags, with or without a venv to ask", () => {
    const launcher = run(`### launcher /home/l20/start_vllm.sh\n${TUTORIAL_START_VLLM}`);
    const noVenv = host(
      flagsCheck,
      facts(0, {
        unit: run('### is-active\ninactive\n### show\nLoadState=not-found\n### file\n'),
        launchers: launcher,
        help: run('', 127, 'bash: /opt/l20/venv/bin/vllm: No such file or directory\n'),
      }),
    );
    expect(noVenv).toMatchObject({ status: 'fail', rule: 'R40' });
    expect(noVenv.summary).toContain('error: unrecognized arguments: --engine-use-ray --ray-address auto');
    const withHelp = host(flagsCheck, facts(0, { unit: run('### is-active\ninactive\n'), launchers: launcher }));
    expect(withHelp).toMatchObject({ status: 'fail', rule: 'R40' });
    expect(withHelp.summary).toMatch(
      /--engine-use-ray \(\/home\/l20\/start_vllm\.sh: removed in vllm-project\/vllm#8126\)/,
    );
    expect(withHelp.fix).toContain('apply vllm.units');
    // A vLLM too old for the planned data-parallel flags.
    const old = host(
      flagsCheck,
      facts(0, { help: run(HELP.replace(/ {2}--data-parallel-address[^\n]*\n[^\n]*\n/, '')) }),
    );
    expect(old).toMatchObject({ status: 'fail', rule: 'R40' });
    expect(old.summary).toContain('--data-parallel-address (l20-vllm.service)');
  });

  it("vllm.flags (R40): once the unit serves, the operator's start_vllm.sh is a warning about that file, and vllm.units leaves it alone", () => {
    const f = facts(0, { launchers: run(`### launcher /home/l20/start_vllm.sh\n${TUTORIAL_START_VLLM}`) });
    const v = host(flagsCheck, f);
    expect(v).toMatchObject({
      status: 'warn',
      rule: 'R40',
      summary:
        '/home/l20/start_vllm.sh (the operator\'s, unused: l20-vllm.service serves) would exit with "error: unrecognized arguments: --engine-use-ray --ray-address auto"; the unit\'s flags pass (all 7 flags are options of vLLM 0.11.0)',
      fix: expect.stringContaining('or delete /home/l20/start_vllm.sh: l20-vllm.service is how this host serves'),
    });
    expect(v.evidence).toContain(
      "/home/l20/start_vllm.sh: the operator's file, left as found (l20-setup never edits it); l20-vllm.service serves instead and nothing on the host runs it; it passes --engine-use-ray (removed in vllm-project/vllm#8126), --ray-address (never existed",
    );
    // The warning alone gives the unit step nothing to do; a failing unit check still does.
    const units = vllmStage.steps!.find((s) => s.id === 'vllm.units')!;
    const planCtx = (results: CheckResult[]) => ({
      ...ctx,
      host: 'l20-n1',
      hostIndex: 0,
      facts: f,
      all: [{ host: 'l20-n1', facts: f }],
      results,
    });
    const flags = { id: 'vllm.flags', host: 'l20-n1', ...v } as CheckResult;
    expect(units.plan!(planCtx([flags]))).toBeNull();
    const down = { id: 'vllm.units', host: 'l20-n1', status: 'fail', summary: 'inactive', evidence: '' } as CheckResult;
    expect(units.plan!(planCtx([flags, down]))?.summary).toContain('serve Qwen/Qwen2.5-7B-Instruct');
  });

  it("vllm.layout (R42/R43): the tutorial's TP 16, a unit that differs from the advice, a model that cannot fit", () => {
    const tut = host(
      layoutCheck,
      facts(0, {
        unit: run('### is-active\ninactive\n'),
        launchers: run(`### launcher /home/l20/start_vllm.sh\n${TUTORIAL_START_VLLM}`),
      }),
    );
    expect(tut).toMatchObject({ status: 'fail', rule: 'R42' });
    expect(tut.evidence).toContain('TP 16 > G = 8');
    const tp2 = plannedUnit(ctx.config, 0).replace(
      '--data-parallel-size 16 --data-parallel-size-local 8',
      '--tensor-parallel-size 2 --data-parallel-size 8 --data-parallel-size-local 4',
    );
    expect(host(layoutCheck, facts(0, { unit: unitOut(0, 'active', tp2) }))).toMatchObject({
      status: 'fail',
      rule: 'R42',
      summary: expect.stringContaining('≠ DP 16'),
    });
    const big = testContext(HOSTS, { vllm: { model: 'deepseek-ai/DeepSeek-V3' } });
    const v = host(layoutCheck, facts(0, { models: run('') }), big);
    expect(v).toMatchObject({ status: 'fail', rule: 'R43' });
    expect(v.evidence).toContain('4. refuse');
    const unknown = host(
      layoutCheck,
      facts(0, { models: run('') }),
      testContext(HOSTS, { vllm: { model: 'someone/unknown-13b' } }),
    );
    expect(unknown).toMatchObject({ status: 'fail', fix: expect.stringContaining('vllm.model-sync') });
    // An override is recorded, but TP 8 must divide Qwen's 28 heads.
    const over = host(layoutCheck, facts(0), testContext(HOSTS, { vllm: { layout: 'tp-pp' } }));
    expect(over.status).toBe('fail');
    expect(over.summary).toContain('28 attention heads');
  });

  it('vllm.exposure (R46): wildcard listeners, a unit on 0.0.0.0, a readable key file, the tutorial script', () => {
    expect(host(exposureCheck, facts(0, { listening: run(ss(['0.0.0.0', 8000])) }))).toMatchObject({
      status: 'fail',
      rule: 'R46',
      summary: expect.stringContaining('listens on 0.0.0.0'),
    });
    const open = plannedUnit(ctx.config, 0).replace('--host 10.0.0.1', '--host 0.0.0.0');
    expect(host(exposureCheck, facts(0, { unit: unitOut(0, 'active', open), listening: run(ss()) }))).toMatchObject({
      status: 'fail',
      rule: 'R46',
    });
    expect(host(exposureCheck, facts(0, { 'env-file': run('mode 644 root\nkey set\n') }))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('mode 644'),
    });
    expect(host(exposureCheck, facts(0, { 'env-file': run('absent\n') }))).toMatchObject({
      status: 'fail',
      summary: 'the API runs without an API key',
    });
    const tut = host(
      exposureCheck,
      facts(0, {
        unit: run(''),
        listening: run(ss()),
        launchers: run(`### launcher /home/l20/start_vllm.sh\n${TUTORIAL_START_VLLM}`),
      }),
    );
    expect(tut).toMatchObject({ status: 'fail', rule: 'R46' });
    expect(host(exposureCheck, facts(1))).toMatchObject({
      status: 'pass',
      summary: 'headless engines: no API on this host',
    });
  });

  it('vllm.exposure (R46): a key on the command line, or under the old name vLLM does not read, fails', () => {
    const planned = plannedUnit(ctx.config, 0);
    expect(planned).not.toContain('--api-key');
    expect(planned).toContain('EnvironmentFile=/etc/l20/vllm.env\n');
    // The unit l20-setup wrote before: systemd expands the reference into vLLM's argv.
    const old = planned.replace('--port 8000', '--port 8000 --api-key ${L20_API_KEY}');
    const oldFacts = facts(0, {
      unit: unitOut(0, 'active', old),
      'env-file': run('mode 600 root\nkey under the old name\n'),
    });
    expect(host(exposureCheck, oldFacts)).toMatchObject({
      status: 'fail',
      rule: 'R46',
      summary: expect.stringContaining("the API key is on vLLM's command line (--api-key)"),
    });
    const renamedNot = host(exposureCheck, facts(0, { 'env-file': run('mode 600 root\nkey under the old name\n') }));
    expect(renamedNot).toMatchObject({
      status: 'fail',
      summary: 'the API runs without an API key: /etc/l20/vllm.env holds it as L20_API_KEY, which vLLM does not read',
    });
    expect(renamedNot.evidence).toContain('the key is under the old name L20_API_KEY (value not shown)');
    expect(host(exposureCheck, facts(0)).evidence).toContain(
      '/etc/l20/vllm.env: mode 600, owner root, VLLM_API_KEY set (value not shown)',
    );
  });

  it("vllm.units: not installed, stale, failed with the log's error, still starting, restarted", () => {
    expect(
      host(unitsCheck, facts(0, { unit: run('### is-active\ninactive\n### show\nLoadState=not-found\n') })),
    ).toMatchObject({ status: 'fail', summary: 'l20-vllm.service is not installed' });
    const stale = host(
      unitsCheck,
      facts(0, { unit: unitOut(0, 'active', plannedUnit(ctx.config, 0).replace('LimitMEMLOCK=infinity\n', '')) }),
    );
    expect(stale).toMatchObject({ status: 'fail', fix: 'apply vllm.units' });
    const failed = host(
      unitsCheck,
      facts(0, {
        unit: unitOut(0, 'failed'),
        journal: run(corpus('vllm-error__ray-multinode-nccl-unhandled-system-error-init_device.txt')),
      }),
    );
    expect(failed.status).toBe('fail');
    expect(failed.summary).toMatch(/^l20-vllm.service is failed: .*NCCL/);
    // The real single-engine TP 2 start-up log: one engine where the plan has eight.
    const starting = host(
      unitsCheck,
      facts(0, { journal: run(corpus('vllm-serve__1node-tp2-mp-backend-qwen7b-a100-80gb.log.txt')) }),
    );
    expect(starting).toMatchObject({ status: 'fail', summary: 'starting: 1/8 engines loaded' });
    expect(host(unitsCheck, facts(0, { unit: unitOut(0, 'active', plannedUnit(ctx.config, 0), 2) }))).toMatchObject({
      status: 'warn',
      summary: 'active, but restarted 2 time(s)',
    });
    expect(
      host(unitsCheck, facts(0, { journal: run(`${journal(0, 8, true)}NCCL INFO Using network Socket\n`) })),
    ).toMatchObject({ status: 'fail', summary: expect.stringContaining('NET/Socket') });
  });

  it('a unit systemctl cannot read is "cannot tell" once it is installed; not installed stays the finding', () => {
    const booted = "System has not been booted with systemd as init system (PID 1). Can't operate.\n";
    const unitFile = plannedUnit(ctx.config, 0);
    const withFile = facts(0, { unit: run(`### is-active\n### show\n### file\n${unitFile}`, 1, booted) });
    expect(host(unitsCheck, withFile)).toMatchObject({
      status: 'error',
      summary: 'cannot tell: l20-n1 runs no systemd unit manager (systemctl cannot reach it)',
    });
    const noFile = facts(0, { unit: run('### is-active\n### show\n### file\n', 1, booted) });
    const v = host(unitsCheck, noFile);
    expect(v).toMatchObject({ status: 'fail', summary: 'l20-vllm.service is not installed' });
    expect(v.evidence).toBe(
      'systemctl is-active l20-vllm.service → unknown (no systemd unit manager) ' +
        '(LoadState not shown, NRestarts not shown); /etc/systemd/system/l20-vllm.service: absent',
    );
    // An active unit whose journal sudo would not read is not "still starting".
    const noSudo = facts(0, { journal: run('', 1, 'sudo: a password is required\n') });
    expect(host(unitsCheck, noSudo)).toMatchObject({
      status: 'error',
      summary: expect.stringContaining('sudo refused'),
    });
  });

  it('nothing deployed skips exposure; ss unreadable is "cannot tell"; no venv: vLLM not installed', () => {
    const bare = {
      unit: run('### is-active\ninactive\n### show\nLoadState=not-found\n### file\n'),
      listening: run(ss()),
      help: run('', 127, 'bash: line 1: /opt/l20/venv/bin/vllm: No such file or directory\n'),
    };
    expect(host(exposureCheck, facts(0, bare))).toMatchObject({
      status: 'skip',
      summary: 'vLLM is not deployed: nothing serves on port 8000',
    });
    expect(
      host(
        exposureCheck,
        facts(0, {
          ...bare,
          listening: run('', 1, 'Cannot open netlink socket: Permission denied\n'),
        }),
      ),
    ).toMatchObject({ status: 'error', summary: expect.stringMatching(/^cannot tell: ss/) });
    expect(host(flagsCheck, facts(0, bare))).toMatchObject({
      status: 'fail',
      summary: 'vLLM is not installed: /opt/l20/venv/bin/vllm does not exist',
    });
  });

  it('never lets an API key into evidence', () => {
    expect(redact('vllm serve m --api-key 5d536731d861751075f9aa1e4b290c3f --port 8000')).toBe(
      'vllm serve m --api-key <redacted> --port 8000',
    );
    expect(redact('--api-key ${L20_API_KEY}')).toBe('--api-key ${L20_API_KEY}');
    expect(redact("L20_API_KEY=abc123 'api_key': ['k1']")).toBe("L20_API_KEY=<redacted> 'api_key': ['<redacted>']");
    expect(redact('VLLM_API_KEY=abc123 OPENAI_API_KEY=def456')).toBe(
      'VLLM_API_KEY=<redacted> OPENAI_API_KEY=<redacted>',
    );
    expect(redact('OPENAI_API_KEY=$key vllm bench serve')).toBe('OPENAI_API_KEY=$key vllm bench serve');
  });
});

describe('vllm pair checks', () => {
  const both = (over0: Record<string, RunResult> = {}, over1: Record<string, RunResult> = {}): VllmFacts[] => [
    facts(0, over0),
    facts(1, over1),
  ];

  it('vllm.versions (R47): equal pins pass; no venv and a differing torch fail', () => {
    expect(pair(versionsCheck, both())).toMatchObject({ status: 'pass', rule: 'R47' });
    const none = pair(versionsCheck, both({ versions: run(NO_VENV) }, { versions: run(NO_VENV) }));
    expect(none).toMatchObject({ status: 'fail', rule: 'R47', fix: expect.stringContaining('nccl.bench-tools') });
    expect(none.evidence).toContain('No such file or directory');
    const differ = pair(
      versionsCheck,
      both(
        {},
        {
          versions: run(
            '### python\nPython 3.10.12\n### ray\nray, version 2.49.2\n### vllm-torch\n0.11.0 2.8.1+cu128\n### vllm\n0.11.0\n### nccl\n(2, 27, 3)\n',
          ),
        },
      ),
    );
    expect(differ).toMatchObject({ status: 'fail', summary: 'versions differ: torch' });
  });

  it("version and model parity on one host: nothing to compare; the model's presence still counts", () => {
    expect(pair(versionsCheck, [facts(0)])).toMatchObject({
      status: 'skip',
      summary: 'one host (l20-n1): nothing to compare',
    });
    const one = testContext(['l20-n1']);
    expect(pair(modelCheck, [facts(0)], undefined, one)).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('one host: no copy to compare'),
    });
  });

  it('vllm.model (R41): present and identical; missing; differing copies; a start script serving a model that does not exist', () => {
    expect(pair(modelCheck, both())).toMatchObject({ status: 'pass', rule: 'R41' });
    expect(pair(modelCheck, both({}, { models: run('') }))).toMatchObject({
      status: 'fail',
      rule: 'R41',
      summary: expect.stringContaining('not at /opt/l20/models/Qwen2.5-7B-Instruct on l20-n2'),
    });
    const partial = pair(
      modelCheck,
      both({}, { models: run(modelsOut([{ path: '/opt/l20/models/Qwen2.5-7B-Instruct', du: 7615633689 }])) }),
    );
    expect(partial).toMatchObject({ status: 'fail', summary: expect.stringContaining('differ (size)') });
    const tut = pair(
      modelCheck,
      both({ unit: run(''), launchers: run(`### launcher /home/l20/start_vllm.sh\n${TUTORIAL_START_VLLM}`) }),
    );
    expect(tut).toMatchObject({ status: 'fail', rule: 'R41' });
    expect(tut.evidence).toContain('deepseek-ai/deepseek-v3-8b does not exist');
  });

  it('vllm.health: 200 and the served name; otherwise why', () => {
    const ok: VllmCluster = {
      apiHost: 'l20-n1',
      apiIp: '10.0.0.1',
      health: { code: 200, models: ['Qwen2.5-7B-Instruct'], evidence: 'curl …' },
    };
    expect(pair(healthCheck, both(), ok).status).toBe('pass');
    expect(pair(healthCheck, both(), { ...ok, health: { code: 200, models: ['other'], evidence: '' } })).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('does not list Qwen2.5-7B-Instruct'),
    });
    expect(pair(healthCheck, both(), { skipped: 'l20-vllm.service is inactive on l20-n1' })).toMatchObject({
      status: 'fail',
      summary: 'no API to ask: l20-vllm.service is inactive on l20-n1',
    });
    // The cluster run names the unit's state in words: an empty is-active is never spliced in.
    expect(unitStateWord({ active: '', unreadable: [] } as never)).toBe('not installed');
    expect(unitStateWord({ file: 'x', unreadable: [] })).toBe('in no state systemctl printed');
  });

  it("vllm.bench reports the whole workload beside the tutorial's claim; short runs fail", () => {
    const fixture = parseVllmBench(corpus('benchmark_serving__vllm-0.10-qwen7b-2node-a100-40gb.txt'));
    const short = pair(benchCheck, both(), {
      health: { code: 200, models: [], evidence: '' },
      layout: 'DP16',
      bench: { facts: fixture, exitCode: 0, evidence: '' },
    });
    expect(short).toMatchObject({ status: 'fail', summary: '630 of 640 requests failed' });
    const full = { ...fixture, successful: 640, failed: 0, outputTokThroughput: 3100.5 };
    const v = pair(benchCheck, both(), {
      health: { code: 200, models: [], evidence: '' },
      layout: 'DP16',
      bench: { facts: full, exitCode: 0, evidence: 'block', previousOutputTokS: 3000 },
    });
    expect(v.status).toBe('pass');
    for (const s of [
      'model Qwen/Qwen2.5-7B-Instruct',
      'layout DP 16',
      '512 input / 1024 output tokens, max concurrency 64, 640 prompts',
      'TTFT mean 2,111.51 / median 2,244.91 / P99 3,346.14 ms',
      'TPOT mean 43.77',
      'ITL mean 43.77',
      'l20-n2: vLLM 0.11.0, torch 2.8.0+cu128, NCCL 2.27.3, driver 580.126.09',
      '+3.4 %',
      '1,200 → 2,300 tok/s',
    ]) {
      expect(v.evidence).toContain(s);
    }
    expect(pair(benchCheck, both(), { skipped: 'no API' }).status).toBe('skip');
    const bare = pair(benchCheck, both(), {
      health: { code: 200, models: [], evidence: '' },
      layout: 'DP16',
      bench: { facts: { failed: 0 } as never, exitCode: 1, evidence: 'x' },
    });
    expect(bare).toMatchObject({ status: 'fail', summary: 'vllm bench serve printed no result (exit 1)' });
    expect(bare.evidence).not.toMatch(/(^|[\s(:=,/])\?($|[\s),.;:/])/m);
  });
});
