import { describe, expect, it } from 'vitest';
import {
  exposureCheck,
  memlockCheck,
  nodeIpsCheck,
  statusCheck,
  unitsCheck,
  versionsCheck,
  type RayCluster,
} from '../../checks/ray/checks.js';
import { collectRay, parseRayProcs, type RayFacts } from '../../checks/ray/facts.js';
import { rayUnit } from '../../checks/ray/plan.js';
import type { CheckDef, HostCheckDef, PairCheckDef, StageContext, Verdict } from '../../src/engine/types.js';
import { parseRayStatus } from '../../src/parse/ray-status.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';
import { NO_VENV, corpus, modelsOut, run, shared, ss } from './serving-fixtures.js';
import { NO_SYSTEMD, notFoundText, unreadableVerdict } from '../helpers/needs.js';
import { rayStage } from '../../checks/ray/index.js';

const HOSTS = ['l20-n1', 'l20-n2'];
/** The default model: data parallelism, Ray unused. */
const dp = testContext();
/** A layout that needs Ray: TP 8 × PP 2 of Llama 3.1 8B (32 heads) by the operator's override. */
const tppp = testContext(HOSTS, { vllm: { model: 'meta-llama/Llama-3.1-8B-Instruct', layout: 'tp-pp' } });
const LLAMA = run(
  modelsOut([
    {
      path: '/opt/l20/models/Llama-3.1-8B-Instruct',
      total: 16060522496,
      config:
        '{"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "torch_dtype": "bfloat16"}',
    },
  ]),
);

const SITE = '/opt/l20/venv/lib/python3.10/site-packages/ray';
const RAYLET = (ip: string): string =>
  `   811 ${SITE}/core/src/ray/raylet/raylet --raylet_socket_name=/tmp/ray/session_x/sockets/raylet --node_ip_address=${ip} --node_manager_port=6380`;
const TUTORIAL_HEAD_PROCS = `   790 /home/l20/.local/lib/python3.10/site-packages/ray/core/src/ray/gcs/gcs_server --gcs_server_port=6379 --node-ip-address=10.0.0.1\n${RAYLET('10.0.0.1').replace(SITE, '/home/l20/.local/lib/python3.10/site-packages/ray')}\n   815 /usr/bin/python3 -u /home/l20/.local/lib/python3.10/site-packages/ray/dashboard/dashboard.py --host=0.0.0.0 --port=8265\n`;

function unitOut(i: number, c: StageContext, active = 'active', file = rayUnit(c.config, i, 'l20')): RunResult {
  return run(
    `### is-active\n${active}\n### show\nLoadState=loaded\nActiveState=${active}\nSubState=running\nNRestarts=0\n### file\n${file}`,
  );
}

function facts(i: number, c: StageContext, over: Record<string, RunResult> = {}): RayFacts {
  const ip = `192.168.101.${i + 1}`;
  return collectRay({
    host: HOSTS[i]!,
    results: {
      ...shared(i, {
        models: c === tppp ? LLAMA : shared(i).models!,
        listening: run(
          i === 0 ? ss(['0.0.0.0', 6379], ['127.0.0.1', 8265], ['0.0.0.0', 10001]) : ss(['0.0.0.0', 6380]),
        ),
      }),
      'ray-unit': unitOut(i, c),
      'node-ips': run(
        '["192.168.101.1", "192.168.101.2"]\n',
        0,
        '2025-01-06 09:10:00,000\tINFO worker.py:1630 -- Connecting to existing Ray cluster at address: 192.168.101.1:6379...\n',
      ),
      'ray-procs': run(`${RAYLET(ip)}\n`),
      memlock: run('pid 811\nMax locked memory         unlimited            unlimited            bytes     \n'),
      ...over,
    },
  });
}

const host = (check: CheckDef<RayFacts, RayCluster>, f: RayFacts, c: StageContext): Verdict =>
  (check as HostCheckDef<RayFacts>).evaluate(f, f.host, c);
const pair = (check: CheckDef<RayFacts, RayCluster>, fs: RayFacts[], c: StageContext, cluster?: RayCluster): Verdict =>
  (check as PairCheckDef<RayFacts, RayCluster>).evaluate(
    fs.map((f) => ({ host: f.host, facts: f })),
    { ...c, cluster },
  );

const NO_RAY = {
  'ray-unit': run('### is-active\ninactive\n### show\nLoadState=not-found\n### file\n'),
  'node-ips': run('', 1, 'ConnectionError: Could not find any running Ray instance.\n'),
  'ray-procs': run(''),
  memlock: run('no raylet\n'),
  listening: run(ss()),
};

describe('ray checks', () => {
  it('skip every check when the layout is data parallel and no Ray runs, saying why', () => {
    for (const check of [unitsCheck, nodeIpsCheck, exposureCheck, memlockCheck]) {
      const v = host(check, facts(0, dp, NO_RAY), dp);
      expect(v.status, check.id).toBe('skip');
      expect(v.summary).toContain('Ray unused: the layout is DP 16');
    }
    expect(pair(versionsCheck, [facts(0, dp, NO_RAY), facts(1, dp, NO_RAY)], dp).status).toBe('skip');
    expect(pair(statusCheck, [facts(0, dp, NO_RAY), facts(1, dp, NO_RAY)], dp, { skipped: 'Ray unused' }).status).toBe(
      'skip',
    );
  });

  it('a layout that needs Ray: systemctl or pgrep unreadable is "cannot tell", naming the tool; no "?"', () => {
    const booted = '### is-active\n### show\n### file\n' + rayUnit(tppp.config, 0, 'l20');
    const noSystemd = host(unitsCheck, facts(0, tppp, { 'ray-unit': run(booted, 1, NO_SYSTEMD) }), tppp);
    expect(noSystemd).toMatchObject({
      status: 'error',
      summary: 'cannot tell: l20-n1 runs no systemd unit manager (systemctl cannot reach it)',
    });
    const noPgrep = host(memlockCheck, facts(0, tppp, { memlock: run('no raylet\n', 0, notFoundText('pgrep')) }), tppp);
    expect(noPgrep).toMatchObject({
      status: 'error',
      summary: 'cannot tell: pgrep is not installed on l20-n1 (package procps)',
    });
    const noSystemctl = run('### is-active\n### show\n### file\n', 0, notFoundText('systemctl'));
    const missing = host(unitsCheck, facts(0, tppp, { 'ray-unit': noSystemctl }), tppp);
    expect(missing).toMatchObject({ status: 'fail', summary: 'l20-ray.service is not installed' });
    expect(missing.evidence).toContain('unknown (systemctl is not installed)');
    expect(missing.evidence).not.toMatch(/\?/);
  });

  it('without ps no raylet shows: node-ips and exposure say "cannot tell", naming procps', () => {
    for (const id of ['ray.node-ips', 'ray.exposure']) {
      expect(unreadableVerdict(rayStage, id, { 'ray-procs': run('', 0, notFoundText('ps')) })?.summary, id).toBe(
        'cannot tell: ps is not installed on l20-n1 (package procps)',
      );
    }
  });

  it('exposure names an unread Ray version and an unreadable ss, never "Ray ?"', () => {
    const f = facts(0, dp, {
      ...NO_RAY,
      versions: run(NO_VENV),
      'ray-procs': run(TUTORIAL_HEAD_PROCS),
      listening: run(ss(['0.0.0.0', 8265])),
    });
    const v = host(exposureCheck, f, dp);
    expect(v.status).toBe('fail');
    expect(v.evidence).toContain('Ray version not read (no /opt/l20/venv/bin/ray)');
    const netlink = run('', 1, 'Cannot open netlink socket: Permission denied\n');
    const noSs = host(exposureCheck, facts(0, dp, { ...NO_RAY, listening: netlink }), dp);
    expect(noSs).toMatchObject({ status: 'error', summary: expect.stringMatching(/^cannot tell: ss/) });
    for (const check of [exposureCheck, memlockCheck]) {
      expect(host(check, facts(0, dp, NO_RAY), dp).evidence, check.id).not.toBe('');
    }
  });

  it('still judges a hand-started Ray under DP: the management address (R45) and the open dashboard (R46)', () => {
    const f = facts(0, dp, {
      ...NO_RAY,
      'ray-procs': run(TUTORIAL_HEAD_PROCS),
      listening: run(ss(['0.0.0.0', 6379], ['0.0.0.0', 8265])),
    });
    const ips = host(nodeIpsCheck, f, dp);
    expect(ips).toMatchObject({ status: 'fail', rule: 'R45' });
    expect(ips.summary).toBe(
      "registered outside 192.168.101.0/24: 10.0.0.1 (the management address: no --node-ip-address, so Ray took the default route's)",
    );
    expect(ips.fix).toContain('hand-started Ray is stopped');
    const exp = host(exposureCheck, f, dp);
    expect(exp).toMatchObject({ status: 'fail', rule: 'R46' });
    expect(exp.summary).toContain('0.0.0.0:8265');
    expect(host(unitsCheck, f, dp).status).toBe('skip');
    expect(host(unitsCheck, facts(0, dp), dp)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('installed but Ray unused'),
    });
  });

  it('pass with the planned units for a TP × PP layout', () => {
    for (const i of [0, 1]) {
      for (const check of [unitsCheck, nodeIpsCheck, exposureCheck, memlockCheck]) {
        const v = host(check, facts(i, tppp), tppp);
        expect(v.status, `${HOSTS[i]} ${check.id}: ${v.summary}`).toBe('pass');
      }
    }
    expect(pair(versionsCheck, [facts(0, tppp), facts(1, tppp)], tppp)).toMatchObject({ status: 'pass', rule: 'R47' });
  });

  it('the units pin the control address, ports, dashboard, memlock; the worker waits for the head', () => {
    const head = rayUnit(tppp.config, 0, 'l20');
    for (const s of [
      '--head --block --node-ip-address=192.168.101.1 --port=6379',
      '--dashboard-host=127.0.0.1 --dashboard-port=8265',
      '--ray-client-server-port=10001',
      '--node-manager-port=6380',
      '--object-manager-port=6381',
      '--min-worker-port=10002',
      '--max-worker-port=19999',
      '--dashboard-agent-listen-port=52365',
      '--metrics-export-port=8080',
      'LimitMEMLOCK=infinity',
      'LimitNOFILE=65536',
      'Environment=RAY_USAGE_STATS_ENABLED=0',
      'ExecStop=/opt/l20/venv/bin/ray stop',
      'Restart=on-failure',
      'After=network-online.target l20-roce-qos.service',
      'WantedBy=multi-user.target',
      'User=l20',
    ]) {
      expect(head.replace(/ \\\n\s+/g, ' ')).toContain(s);
    }
    const worker = rayUnit(tppp.config, 1, 'l20');
    expect(worker.replace(/ \\\n\s+/g, ' ')).toContain(
      'ray start --block --address=192.168.101.1:6379 --node-ip-address=192.168.101.2',
    );
    expect(worker).toContain(
      `ExecStartPre=/bin/sh -c "until /opt/l20/venv/bin/python -c 'import socket; socket.create_connection((\\"192.168.101.1\\", 6379), 2)'; do sleep 2; done"`,
    );
    expect(worker).not.toContain('nccl.conf\n');
  });

  it('fail each way a TP × PP cluster goes wrong', () => {
    expect(host(unitsCheck, facts(0, tppp, { 'ray-unit': unitOut(0, tppp, 'failed') }), tppp)).toMatchObject({
      status: 'fail',
      summary: 'l20-ray.service is failed',
    });
    expect(
      host(
        unitsCheck,
        facts(0, tppp, {
          'ray-unit': unitOut(0, tppp, 'active', rayUnit(tppp.config, 0, 'l20').replace('127.0.0.1', '0.0.0.0')),
        }),
        tppp,
      ),
    ).toMatchObject({ status: 'fail', fix: 'apply ray.units' });
    const mgmt = host(nodeIpsCheck, facts(1, tppp, { 'node-ips': run('["192.168.101.1", "10.0.0.2"]\n') }), tppp);
    expect(mgmt).toMatchObject({
      status: 'fail',
      rule: 'R45',
      summary:
        "registered outside 192.168.101.0/24: 10.0.0.2 (the management address: no --node-ip-address, so Ray took the default route's)",
    });
    expect(host(nodeIpsCheck, facts(0, tppp, NO_RAY), tppp)).toMatchObject({
      status: 'fail',
      rule: 'R45',
      summary: 'no Ray node registered here',
    });
    expect(
      host(
        memlockCheck,
        facts(0, tppp, {
          memlock: run('pid 811\nMax locked memory         8388608              8388608              bytes     \n'),
        }),
        tppp,
      ),
    ).toMatchObject({ status: 'fail', rule: 'R35', summary: expect.stringContaining('8388608 bytes') });
    expect(pair(versionsCheck, [facts(0, tppp), facts(1, tppp, { versions: run(NO_VENV) })], tppp)).toMatchObject({
      status: 'fail',
      rule: 'R47',
    });
  });

  it('ray.status reads `ray status` as the corpus prints it: 2 nodes and 16 GPUs pass, fewer fail', () => {
    const text = corpus('ray-status__2node-16gpu-usage-format-verl-docs.txt');
    const ok = pair(statusCheck, [facts(0, tppp), facts(1, tppp)], tppp, {
      status: { facts: parseRayStatus(text), evidence: text },
    });
    expect(ok).toMatchObject({ status: 'pass', summary: '2 nodes, 16 GPUs' });
    const one = text.replace(/^ 1 node_1eb4.*\n/m, '').replace(/^ 0\.0\/16\.0 GPU$/m, ' 0.0/8.0 GPU');
    expect(
      pair(statusCheck, [facts(0, tppp), facts(1, tppp)], tppp, {
        status: { facts: parseRayStatus(one), evidence: one },
      }),
    ).toMatchObject({ status: 'fail', summary: 'Ray sees 1/2 nodes and 8/16 GPUs' });
  });

  it('reads Ray processes from ps whichever installation started them', () => {
    const p = parseRayProcs(TUTORIAL_HEAD_PROCS);
    expect(p.map((x) => [x.kind, x.nodeIp])).toEqual([
      ['gcs_server', '10.0.0.1'],
      ['raylet', '10.0.0.1'],
      ['dashboard', undefined],
    ]);
  });
});
