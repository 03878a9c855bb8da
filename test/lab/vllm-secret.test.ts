/**
 * No secret in argv, over real SSH on the lab: the unit l20-setup wrote before (`--api-key ${L20_API_KEY}`,
 * expanded by systemd into vLLM's command line) shows the key in /proc/<pid>/cmdline, which every local user
 * reads; applying the vllm stage renames the key to VLLM_API_KEY in the same 0600 file, keeps its value,
 * and restarts vLLM with the key in its environment only. The API still wants it: 401 without, 200 with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vllmStage } from '../../checks/vllm/index.js';
import { Engine, type StageOutcome } from '../../src/engine/runner.js';
import type { Host } from '../../src/transport/types.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { applier, find, runScript, type TextResult } from './helpers.js';

const UNIT = '/etc/systemd/system/l20-vllm.service';
const API = 'http://10.0.0.1:8000/v1/models';

const sh = (h: Host, script: string, sudo = false): Promise<TextResult> =>
  runScript(h, script, { sudo, timeoutMs: 60_000 });

/** Every process's argv as /proc shows it (NUL-separated words), one `pid: argv` line each, read as root. */
async function commandLines(h: Host): Promise<string[]> {
  const script =
    'for f in /proc/[0-9]*/cmdline; do p=${f#/proc/}; printf "%s: " "${p%/cmdline}"; ' +
    'tr "\\0" " " < "$f"; echo; done';
  const r = await sh(h, script, true);
  expect(r.code).toBe(0);
  return r.out.split('\n').filter((l) => l !== '');
}

/** The HTTP status of GET /v1/models, the header (when given) on curl's stdin so no argv carries it. */
async function status(h: Host, key?: string): Promise<string> {
  const argv = ['curl', '-sS', '-m', '5', '-o', '/dev/null', '-w', '%{http_code}', ...(key ? ['-H', '@-'] : []), API];
  return (await h.run({ argv }, key ? { stdin: `Authorization: Bearer ${key}\n` } : {})).stdout;
}

describe('the vLLM API key never reaches a command line', () => {
  let t: LabTarget;
  let engine: Engine;
  let key: string;
  let before: StageOutcome;
  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    engine = new Engine(t.hosts, { config: t.config });
    const n1 = t.hosts[0]!;
    key = (await sh(n1, 'sed -n "s/^VLLM_API_KEY=//p" /etc/l20/vllm.env', true)).out.trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    // What an older l20-setup deployed: the key under L20_API_KEY, passed as --api-key ${L20_API_KEY}.
    const unit = (await sh(n1, `cat ${UNIT}`)).out;
    expect(unit).toContain('--port 8000\n');
    const old = unit.replace('--port 8000\n', '--port 8000 --api-key ${L20_API_KEY}\n');
    expect(await n1.writeFileAtomic(UNIT, old, { mode: 0o644, sudo: true })).toMatchObject({ changed: true });
    const planted = await sh(
      n1,
      [
        'sed -i "s/^VLLM_API_KEY=/L20_API_KEY=/" /etc/l20/vllm.env',
        'systemctl daemon-reload',
        'systemctl restart l20-vllm.service',
      ].join('\n'),
      true,
    );
    expect(planted.code).toBe(0);
    before = await engine.runStage(vllmStage);
  }, 120_000);
  afterAll(() => t.close());

  it("the old unit: the key is in vLLM's /proc/<pid>/cmdline, and vllm.exposure fails with R46", async () => {
    const leaking = (await commandLines(t.hosts[0]!)).filter((l) => l.includes(key));
    expect(leaking.length).toBeGreaterThan(0);
    expect(leaking[0]).toMatch(new RegExp(`^\\d+: \\S*vllm serve .*--api-key ${key} $`));
    expect(find(before, 'vllm.exposure', 'l20-n1')).toMatchObject({
      status: 'fail',
      rule: 'R46',
      summary: expect.stringContaining("the API key is on vLLM's command line (--api-key)"),
    });
    expect(await status(t.hosts[0]!, key)).toBe('200');
  });

  it("after apply: the same key as VLLM_API_KEY in a 0600 file, in no process's argv; the API wants it", async () => {
    const o = await applier(engine).applyStage(vllmStage);
    const units = (o.steps ?? []).filter((s) => s.id === 'vllm.units' && s.status === 'applied');
    expect(units.map((s) => s.host)).toEqual(['l20-n1']);
    const oldLine = '--data-parallel-rpc-port 13345 --host 10.0.0.1 --port 8000 --api-key ${L20_API_KEY}\n';
    expect(units[0]!.diff).toContain(`-  --data-parallel-address 192.168.101.1 ${oldLine}`);
    const notPassing = o.results.filter((r) => r.status !== 'pass').map((r) => `${r.host}:${r.id} ${r.summary}`);
    expect(notPassing).toEqual([]);
    const n1 = t.hosts[0]!;
    const env = await sh(n1, 'stat -c "%a %U" /etc/l20/vllm.env; cut -d= -f1 /etc/l20/vllm.env', true);
    expect(env.out).toBe('600 root\nVLLM_API_KEY\n');
    expect((await sh(n1, 'sed -n "s/^VLLM_API_KEY=//p" /etc/l20/vllm.env', true)).out.trim()).toBe(key);
    expect((await sh(n1, `cat ${UNIT}`)).out).not.toContain('--api-key');
    for (const h of t.hosts) {
      const lines = await commandLines(h);
      expect(
        lines.some((l) => /vllm serve /.test(l)),
        `${h.name} runs vLLM`,
      ).toBe(true);
      expect(
        lines.filter((l) => l.includes(key)),
        h.name,
      ).toEqual([]);
    }
    expect(await status(n1)).toBe('401');
    expect(await status(n1, 'not-the-key')).toBe('401');
    expect(await status(n1, key)).toBe('200');
    // The checks' own scripts read the key from the file on the host: vllm.health saw the model list.
    expect(find(o, 'vllm.health', null)).toMatchObject({ status: 'pass' });
    expect(find(o, 'vllm.health', null)?.evidence).not.toContain(key);
  });
});
