/**
 * Every systemd unit and shell script the product generates, through the real tools: units through
 * `systemd-analyze verify`, scripts through `bash -n` (`sh -n` for `#!/bin/sh`) and `shellcheck -S error`.
 * Nothing is re-rendered here: the units and scripts are what the stages wrote and sent to lab hosts over
 * real SSH while applying every stage (a recording transport keeps them), on the scenarios and settings that
 * change them — fresh (designs A and B), the tutorial's migration, ACS on, a TP × PP layout over Ray, PCP
 * trust — plus every probe of every stage and every bundle command, read from their definitions, so a new
 * probe, step or unit is covered without touching this file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DISCOVER_SCRIPT, hostCommands, portCommands } from '../../src/bundle/commands.js';
import { clusterSchema, type ClusterConfig } from '../../src/config/schema.js';
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { StepDef, StepPlanContext, AnyStageDef } from '../../src/engine/types.js';
import { STAGES } from '../../checks/stages.js';
import { SUDO_WRAPPER_SCRIPT } from '../../src/transport/quote.js';
import { labTarget } from '../helpers/lab-target.js';
import { newRecording, RecordingHost, type Recording } from '../helpers/recording-host.js';
import {
  checkScript,
  requireTool,
  scriptsInCommand,
  shellOfFile,
  systemdVerify,
  unitShellScripts,
  type Script,
} from '../helpers/shell-oracle.js';

interface Case {
  name: string;
  scenario: string;
  config?: (c: ClusterConfig) => unknown;
  /** Run on node 1 before the apply, as the login user. */
  prepare?: string;
}

const CASES: Case[] = [
  { name: 'fresh, design A', scenario: 'fresh' },
  { name: 'fresh, design B', scenario: 'fresh', config: (c) => ({ ...c, network: { design: 'B', mtu: 9000 } }) },
  { name: 'tutorial → design A', scenario: 'tutorial' },
  { name: 'ACS on', scenario: 'acs-enabled' },
  {
    name: 'TP 8 × PP 2 over Ray',
    scenario: 'ready',
    config: (c) => ({ ...c, vllm: { ...c.vllm, model: 'meta-llama/Llama-3.1-8B-Instruct', layout: 'tp-pp' } }),
    // The gated Llama needs a Hub token for hf download (what `hf auth login` leaves).
    prepare: 'mkdir -p ~/.cache/huggingface && echo hf_lab_token > ~/.cache/huggingface/token',
  },
  { name: 'PCP trust', scenario: 'ready', config: (c) => ({ ...c, qos: { ...c.qos, trust: 'pcp' } }) },
];

const UNIT_PATH = /^\/etc\/systemd\/system\/[^/]+\.(?:service|timer|socket|target|path|mount)$/;
const isUnit = (path: string): boolean => UNIT_PATH.test(path);
const COMPLAINT_MISSING_EXEC = /^[^:]+: Command (\/\S+) is not executable: No such file or directory$/;

const work = mkdtempSync(join(tmpdir(), 'l20-units-oracle-'));
const scripts = new Map<string, Script>();
const units = new Set<string>();
const unitPaths = new Set<string>();
const problems: string[] = [];

function addScript(s: Script): void {
  const key = `${s.shell}\0${s.text}`;
  if (!scripts.has(key)) scripts.set(key, s);
}

/** The recorded commands' and files' scripts, and every unit's shell Exec lines. */
function collectScripts(rec: Recording, where: string): void {
  for (const c of rec.commands) for (const s of scriptsInCommand(c.command, `${where} ${c.host}: sent`)) addScript(s);
  for (const f of rec.files) {
    const shell = shellOfFile(f.content);
    if (shell) addScript({ text: f.content, shell, origin: `${where} ${f.host}:${f.path}` });
    if (isUnit(f.path)) {
      const found = unitShellScripts(f.content, `${where} ${f.host}:${f.path}`);
      found.scripts.forEach(addScript);
      problems.push(...found.problems);
    }
  }
}

/**
 * The stages as the engine sees them, each step's plan() kept as it returns: a plan's rollback commands run
 * only when a step fails, so the apply alone would not send them.
 */
function planRecorded(where: string): ReadonlyArray<AnyStageDef> {
  return STAGES.map((stage) => ({
    ...stage,
    steps: stage.steps?.map((step: StepDef<unknown>) => {
      const plan = step.plan;
      if (!plan) return step;
      return {
        ...step,
        plan(ctx: StepPlanContext<unknown>) {
          const p = plan(ctx);
          const origin = `${where} ${ctx.host}: ${step.id}`;
          for (const c of [...(p?.commands ?? []), ...(p?.rollback ?? [])]) {
            scriptsInCommand(c.command, origin).forEach(addScript);
          }
          return p;
        },
      };
    }),
  }));
}

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the real tools accept every unit and script the product generates', () => {
  it('the oracles are installed and catch what they should', () => {
    for (const tool of ['bash', 'sh', 'shellcheck', 'systemd-analyze'] as const) requireTool(tool);
    expect(checkScript({ text: 'if true; then echo x\n', shell: 'bash', origin: 'unclosed if' }).join('\n')).toMatch(
      /bash -n: .*unexpected end of file[\s\S]*SC1046/,
    );
    expect(checkScript({ text: 'a=(1 2)\n', shell: 'sh', origin: 'array' }).join('\n')).toMatch(
      /sh -n: .*"\(" unexpected/,
    );
    const bad = join(work, 'bad.service');
    writeFileSync(bad, '[Unit]\nDescription=x\n[Service]\nExecStar=/bin/true\n');
    expect(systemdVerify([bad]).lines.join('\n')).toContain("Unknown key 'ExecStar' in section [Service]");
    const unit = '[Service]\nExecStartPre=/bin/sh -c "echo $HOME; echo $$USER \\"%%\\""\n';
    expect(unitShellScripts(unit, 'u')).toEqual({
      scripts: [{ text: 'echo $HOME; echo $USER "%"', shell: 'sh', origin: 'u:2 ExecStartPre' }],
      problems: [expect.stringContaining("u:2 ExecStartPre: a single $ in a shell script is systemd's own expansion")],
    });
    // Read from the definitions first, so these keep their names when an apply sends the same text.
    for (const stage of STAGES) {
      for (const p of stage.probes) scriptsInCommand(p.command, `probe ${stage.id}/${p.id}`).forEach(addScript);
    }
    addScript({ text: DISCOVER_SCRIPT, shell: 'bash', origin: 'bundle discover' });
    addScript({ text: SUDO_WRAPPER_SCRIPT, shell: 'bash', origin: 'transport: the sudo wrapper' });
    for (const b of [...hostCommands(), ...portCommands('ens1f0np0', true), ...portCommands('ens1f0np0', false)]) {
      scriptsInCommand(b.command, `bundle ${b.file}`).forEach(addScript);
    }
  });

  CASES.forEach((c, caseIndex) => {
    it(`${c.name}: every unit the apply wrote passes systemd-analyze verify`, async () => {
      const t = await labTarget({ scenario: c.scenario });
      try {
        const config = c.config ? clusterSchema.parse(c.config(t.config)) : t.config;
        if (c.prepare) expect((await t.hosts[0]!.run({ script: c.prepare })).exitCode).toBe(0);
        const rec = newRecording();
        const hosts = t.hosts.map((h) => new RecordingHost(h, rec));
        const engine = new Engine(hosts, { config });
        const executor = new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true });
        // Each stage on its own: a stage that stops short still shows what its steps generated.
        for (const stage of planRecorded(c.name)) await executor.applyStage(stage);
        collectScripts(rec, c.name);
        for (const host of t.hosts) {
          // The latest content of each unit this host was given, in one directory so units can name each other.
          const latest = new Map<string, string>();
          for (const f of rec.files) if (f.host === host.name && isUnit(f.path)) latest.set(f.path, f.content);
          if (latest.size === 0) continue;
          const dir = join(work, String(caseIndex), host.name);
          mkdirSync(dir, { recursive: true });
          const files = [...latest].map(([path, content]) => {
            units.add(`${path}\0${content}`);
            unitPaths.add(path);
            writeFileSync(join(dir, basename(path)), content);
            return join(dir, basename(path));
          });
          const verdict = systemdVerify(files);
          for (const line of verdict.lines) {
            // Binaries the stages install (the venv's vllm and ray) are not on this machine: the complaint is
            // excused only when the host the unit was written to has the file, executable.
            const missing = COMPLAINT_MISSING_EXEC.exec(line);
            const there = missing && (await host.run({ argv: ['test', '-x', missing[1]!] })).exitCode === 0;
            if (!there) problems.push(`${c.name} ${host.name}: systemd-analyze verify: ${line}`);
          }
          if (verdict.code !== 0 && verdict.lines.length === 0) {
            problems.push(`${c.name} ${host.name}: verify exited ${verdict.code}`);
          }
        }
      } finally {
        await t.close();
      }
    }, 300_000);
  });

  it('every script sent or installed passes bash -n / sh -n and shellcheck -S error', () => {
    for (const s of scripts.values()) problems.push(...checkScript(s));
    console.log(`units oracle: ${units.size} units verified, ${scripts.size} scripts checked`);
    // What the cases must have produced, so an apply that silently did nothing cannot pass.
    for (const path of ['l20-roce-qos.service', 'l20-vllm.service', 'l20-ray.service', 'l20-acs-off.service']) {
      expect(unitPaths, path).toContain(`/etc/systemd/system/${path}`);
    }
    expect(scripts.size).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  }, 300_000);
});
