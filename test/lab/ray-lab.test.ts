/**
 * The ray and vllm stages on the tutorial's state and on a layout that needs Ray, over real SSH:
 * the tutorial fails with the rules docs/STAGES.md names, applying the stages fixes what they own, a
 * TP × PP layout brings up Ray units (head first) that register their fabric addresses, and a
 * second apply changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rayStage } from '../../checks/ray/index.js';
import { vllmStage } from '../../checks/vllm/index.js';
import { clusterSchema } from '../../src/config/schema.js';
import { Engine } from '../../src/engine/runner.js';
import type { CheckResult, AnyStageDef } from '../../src/engine/types.js';
import { parseRayStart } from '../../src/parse/ray-start.js';
import { parseRayStatus } from '../../src/parse/ray-status.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier } from './helpers.js';

const show = (rs: readonly CheckResult[]): string[] =>
  rs.map((r) => `${r.host ?? 'pair'}:${r.id} ${r.status}${r.rule ? ` ${r.rule}` : ''} ${r.summary}`);
const get = (rs: readonly CheckResult[], id: string, host: string | null): CheckResult | undefined =>
  rs.find((r) => r.id === id && r.host === host);
const apply = (engine: Engine, stage: AnyStageDef) => applier(engine).applyStage(stage);

describe('the tutorial as written', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial' });
  });
  afterAll(() => t.close());

  it('fails ray.node-ips (R45), ray.exposure (R46), vllm.flags (R40) and vllm.model (R41)', async () => {
    const engine = new Engine(t.hosts, { config: t.config });
    const ray = (await engine.runStage(rayStage)).results;
    expect(get(ray, 'ray.node-ips', 'l20-n1')).toMatchObject({
      status: 'fail',
      rule: 'R45',
      summary: expect.stringContaining('10.0.0.1 (the management address'),
    });
    // The worker joined over the tutorial's bond and registered that address: outside design A's control subnet.
    expect(get(ray, 'ray.node-ips', 'l20-n2')).toMatchObject({
      status: 'fail',
      rule: 'R45',
      summary: 'registered outside 192.168.101.0/24: 192.168.100.2',
    });
    expect(get(ray, 'ray.exposure', 'l20-n1')).toMatchObject({ status: 'fail', rule: 'R46' });
    expect(get(ray, 'ray.exposure', 'l20-n1')?.evidence).toMatch(/LISTEN 0 \d+ 0\.0\.0\.0:8265 0\.0\.0\.0:\*/);
    const vllm = (await engine.runStage(vllmStage)).results;
    for (const h of ['l20-n1', 'l20-n2']) {
      expect(get(vllm, 'vllm.flags', h)).toMatchObject({
        status: 'fail',
        rule: 'R40',
        summary: expect.stringContaining('--engine-use-ray --ray-address auto'),
      });
      expect(get(vllm, 'vllm.layout', h)).toMatchObject({ status: 'fail', rule: 'R42' });
      expect(get(vllm, 'vllm.exposure', h)).toMatchObject({ status: 'fail', rule: 'R46' });
    }
    expect(get(vllm, 'vllm.model', null)).toMatchObject({ status: 'fail', rule: 'R41' });
    expect(get(vllm, 'vllm.model', null)?.evidence).toContain('deepseek-ai/deepseek-v3-8b does not exist');
    expect(get(vllm, 'vllm.versions', null)).toMatchObject({ status: 'fail', rule: 'R47' });
    expect(get(vllm, 'vllm.health', null)?.status).toBe('fail');
  });

  it("node 1 runs the hand-started head from the user's pip install: one raylet, the dashboard port open", async () => {
    const r = await t.hosts[0]!.run({
      script: 'ps -eo pid,args | grep -c "[r]aylet"; ss -ltnH | grep -c ":8265 "; ~/.local/bin/ray --version',
    });
    expect(r.stdout).toBe('1\n1\nray, version 2.49.2\n');
  });
});

describe("the tutorial's Ray and start script on an otherwise ready cluster", () => {
  let t: LabTarget;
  let engine: Engine;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'tutorial-serving' });
    engine = new Engine(t.hosts, { config: t.config });
  });
  afterAll(() => t.close());

  it('applying ray stops the unused Ray; applying vllm deploys the units; everything passes but a warning about start_vllm.sh; a second apply changes nothing', async () => {
    const before = await engine.runStage(rayStage);
    expect(show(before.results.filter((r) => r.status === 'fail'))).toEqual([
      "l20-n1:ray.node-ips fail R45 registered outside 192.168.101.0/24: 10.0.0.1 (the management address: no --node-ip-address, so Ray took the default route's)",
      'l20-n1:ray.exposure fail R46 the Ray dashboard / Jobs API listens on 0.0.0.0:8265 without token auth: anyone reaching it runs code (CVE-2023-48022)',
    ]);
    const ray = await apply(engine, rayStage);
    expect((ray.steps ?? []).filter((s) => s.status === 'applied').map((s) => [s.host, s.commands])).toEqual([
      ['l20-n1', ['sudo /opt/l20/venv/bin/ray stop --force']],
    ]);
    expect(ray.results.every((r) => r.status === 'skip')).toBe(true);
    const vllm = await apply(engine, vllmStage);
    // What stands is a warning about the operator's start_vllm.sh, which the unit replaced and l20-setup leaves as found.
    expect(
      vllm.results.filter((r) => r.status !== 'pass').map((r) => `${r.host}:${r.id} ${r.status} ${r.rule}`),
    ).toEqual(['l20-n1:vllm.flags warn R40', 'l20-n2:vllm.flags warn R40']);
    expect(get(vllm.results, 'vllm.flags', 'l20-n1')?.summary).toContain(
      '/home/l20/start_vllm.sh (the operator\'s, unused: l20-vllm.service serves) would exit with "error: unrecognized arguments: --engine-use-ray --ray-address auto"',
    );
    const units = (vllm.steps ?? []).filter((s) => s.id === 'vllm.units' && s.status === 'applied');
    // Node 2 first: its headless engines wait for node 1's handshake, which waits for them.
    expect(units.map((s) => s.host)).toEqual(['l20-n2', 'l20-n1']);
    expect(units[1]!.commands).toContain('sudo ufw allow in on eno1 to any port 8000 proto tcp');
    // The key comes from EnvironmentFile= as VLLM_API_KEY, never from the command line (ps shows it to every user).
    expect(units[1]!.diff).toContain('--data-parallel-rpc-port 13345 --host 10.0.0.1 --port 8000\n');
    expect(units[1]!.diff).not.toContain('--api-key');
    expect(units[1]!.diff + units[1]!.commands.join('\n')).not.toMatch(/(?:L20|VLLM)_API_KEY=[0-9a-f]/);
    for (const stage of [rayStage, vllmStage]) expect((await apply(engine, stage)).changed, stage.id).toBe(0);
    const env = await t.hosts[0]!.run({ script: 'stat -c "%a %U" /etc/l20/vllm.env' }, { sudo: true });
    expect(env.stdout).toBe('600 root\n');
  });
});

describe('a layout that needs Ray: TP 8 × PP 2 by override', () => {
  let t: LabTarget;
  let engine: Engine;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    const config = clusterSchema.parse({
      ...t.config,
      vllm: { ...t.config.vllm, model: 'meta-llama/Llama-3.1-8B-Instruct', layout: 'tp-pp' },
    });
    engine = new Engine(t.hosts, { config });
    // The gated Llama needs a Hub token for hf download (what `hf auth login` leaves).
    await t.hosts[0]!.run({
      script: 'mkdir -p ~/.cache/huggingface && echo hf_lab_token > ~/.cache/huggingface/token',
    });
  });
  afterAll(() => t.close());

  it('brings up the head, then the worker, on their control addresses; Ray sees 2 nodes and 16 GPUs', async () => {
    const o = await apply(engine, rayStage);
    expect((o.steps ?? []).map((s) => [s.host, s.status])).toEqual([
      ['l20-n1', 'applied'],
      ['l20-n2', 'applied'],
    ]);
    expect(show(o.results.filter((r) => r.status !== 'pass'))).toEqual([]);
    expect(get(o.results, 'ray.status', null)?.summary).toBe('2 nodes, 16 GPUs');
    const head = await t.hosts[0]!.run({ script: 'journalctl -u l20-ray.service -o cat --no-pager' }, { sudo: true });
    expect(parseRayStart(head.stdout)).toMatchObject({
      head: true,
      nodeIp: '192.168.101.1',
      started: true,
      address: '192.168.101.1:6379',
    });
    expect(head.stdout).toContain('  To monitor and debug Ray, view the dashboard at \n    127.0.0.1:8265\n');
    expect(head.stdout).toContain('Usage stats collection is disabled.');
    const worker = await t.hosts[1]!.run({ script: 'journalctl -u l20-ray.service -o cat --no-pager' }, { sudo: true });
    expect(parseRayStart(worker.stdout)).toMatchObject({ head: false, nodeIp: '192.168.101.2', started: true });
    const st = await t.hosts[1]!.run({ argv: ['/opt/l20/venv/bin/ray', 'status', '--address', '192.168.101.1:6379'] });
    expect(parseRayStatus(st.stdout)).toMatchObject({ nodesActive: 2, gpusTotal: 16, cpusTotal: 256, errors: [] });
  });

  it("serves the model over Ray from node 1 only and removes node 2's unit; a second apply changes nothing", async () => {
    const o = await apply(engine, vllmStage);
    expect(show(o.results.filter((r) => r.status !== 'pass' && r.status !== 'skip'))).toEqual([]);
    expect(get(o.results, 'vllm.units', 'l20-n2')).toMatchObject({ status: 'skip' });
    const n2 = (o.steps ?? []).find((s) => s.id === 'vllm.units' && s.host === 'l20-n2');
    expect(n2?.commands[0]).toBe(
      'sudo mv /etc/systemd/system/l20-vllm.service /var/lib/l20-setup/backup/' +
        engine.context.runId +
        '/etc/systemd/system/l20-vllm.service',
    );
    const st = await t.hosts[0]!.run({ argv: ['/opt/l20/venv/bin/ray', 'status'] });
    expect(st.stdout).toContain(' 16.0/16.0 GPU (16.0 used of 16.0 reserved in placement groups)');
    for (const stage of [rayStage, vllmStage]) expect((await apply(engine, stage)).changed, stage.id).toBe(0);
  });

  it('ray stop --force kills the worker node; its unit sees the raylet die and restarts on failure', async () => {
    const r = await t.hosts[1]!.run(
      { script: '/opt/l20/venv/bin/ray stop --force; systemctl is-active l20-ray.service || true' },
      { sudo: true },
    );
    expect(r.stdout).toMatch(/^Stopped all 3 Ray processes\.\n(activating|active)\n$/);
    const log = await t.hosts[1]!.run({ script: 'journalctl -u l20-ray.service -o cat --no-pager' }, { sudo: true });
    expect(log.stdout).toContain('Some Ray subprocesses exited unexpectedly:');
  });
});
