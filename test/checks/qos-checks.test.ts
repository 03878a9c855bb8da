import { describe, expect, it } from 'vitest';
import * as c from '../../checks/qos/checks.js';
import { collectQos, parseDcbApp, parseDcbDcbx, parseDcbPfc, type QosFacts } from '../../checks/qos/facts.js';
import { qosStage } from '../../checks/qos/index.js';
import { QOS_SCRIPT_PATH, QOS_UNIT_PATH } from '../../checks/qos/probes.js';
import { qosScript, qosUnit } from '../../checks/qos/script.js';
import { cannotTellVerdict, unreadableNeeds } from '../../src/engine/probe-health.js';
import type { CheckResult, HostCheckDef, PairCheckDef, StepPlanContext } from '../../src/engine/types.js';
import { placeholderIn } from '../../src/engine/verdict-guard.js';
import type { RunResult } from '../../src/transport/types.js';
import { loadFixture } from '../parse/fixtures.js';
import { testContext } from '../helpers/stage-context.js';
import { PORTS, fabricResults, run } from './nic-stack-fabric.js';

const ctx = testContext();
const PFS = PORTS.map((p) => p.netdev);
const SAMPLE_PFC3 = 'corpus/mlnx_qos__dscp-default-map-pfc3-vendor-tsa.txt';

/** The probe's output with every PF printing a corpus mlnx_qos status (the sample's command line dropped). */
function mlnxQos(sample: string | ((netdev: string) => string)): string {
  const body = (n: string): string =>
    typeof sample === 'function'
      ? sample(n)
      : loadFixture(sample)
          .split('\n')
          .filter((l) => !/mlnx_qos -i/.test(l))
          .join('\n');
  return `### tool mlnx_qos\n${PFS.map((n) => `### mlnx_qos ${n}\n${body(n)}\n### exit ${n} 0\n`).join('')}`;
}

/** iproute2 dcb output for each PF (dcb_app.c / dcb_pfc.c / dcb_dcbx.c layout: every value followed by a space). */
function dcb(opts: { app?: string; pfc?: string; dcbx?: string } = {}): string {
  const app = opts.app ?? 'dscp-prio 26:3 \n';
  const pfc =
    opts.pfc ?? 'pfc-cap 8 macsec-bypass off delay 7 \nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off \n';
  const dcbx = opts.dcbx ?? 'host cee ieee \n';
  return `### tool dcb\n${PFS.map((n) => `### dcb-app ${n}\n${app}### exit ${n} 0\n### dcb-pfc ${n}\n${pfc}### dcb-dcbx ${n}\n${dcbx}`).join('')}`;
}

function persistence(
  over: { enabled?: string; show?: string; script?: string; unit?: string; lldpad?: string } = {},
): string {
  return [
    '### is-enabled',
    over.enabled ?? 'enabled',
    '### show',
    over.show ?? 'ActiveState=active\nSubState=exited\nResult=success',
    '### script',
    (over.script ?? qosScript(PFS, ctx.config.qos)).trimEnd(),
    '### unit',
    (over.unit ?? qosUnit(ctx.config.qos)).trimEnd(),
    '### lldpad',
    over.lldpad ?? 'inactive',
    '',
  ].join('\n');
}

function facts(over: Record<string, RunResult> = {}, host = 'l20-n1', n = 1): QosFacts {
  return collectQos({
    host,
    results: {
      ...fabricResults(n, { naming: 'udev' }),
      qos: run(dcb()),
      persistence: run(persistence()),
      scripts: run(`### file ${QOS_SCRIPT_PATH}\n${qosScript(PFS, ctx.config.qos)}`),
      'nccl-conf': run('', 1, 'cat: /etc/nccl.conf: No such file or directory\n'),
      ...over,
    },
  });
}

const host = (check: HostCheckDef<QosFacts>, f: QosFacts) => check.evaluate(f, f.host, ctx);
const pair = (check: PairCheckDef<QosFacts>, a: QosFacts, b: QosFacts) =>
  check.evaluate(
    [
      { host: a.host, facts: a },
      { host: b.host, facts: b },
    ],
    { ...ctx, cluster: undefined },
  );
const HOST_CHECKS = [c.trustCheck, c.dscp2prioCheck, c.pfcCheck, c.dcbxCheck, c.targetsCheck, c.persistenceCheck];

describe('qos checks', () => {
  it('dcb parsers read iproute2 5.15 output', () => {
    expect(parseDcbApp('dscp-prio 26:3 \n')).toEqual([[26, 3]]);
    expect(parseDcbApp('')).toEqual([]);
    expect(
      parseDcbPfc('pfc-cap 8 macsec-bypass off delay 7 \nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off \n'),
    ).toEqual([false, false, false, true, false, false, false, false]);
    expect(parseDcbDcbx('host cee ieee \n')).toBe('os');
    expect(parseDcbDcbx('cee ieee \n')).toBe('firmware');
  });

  it('the inbox ready host (dcb, unit enabled, script current) passes every check; both ends equal pass the pair checks', () => {
    const a = facts();
    const b = facts({}, 'l20-n2', 2);
    expect(a.tool).toBe('dcb');
    expect(a.ports.map((p) => p.netdev)).toEqual(PFS);
    for (const check of HOST_CHECKS) expect(host(check, a), check.id).toMatchObject({ status: 'pass' });
    expect(pair(c.pairCheck, a, b)).toMatchObject({ status: 'pass', summary: expect.stringContaining('4 cables') });
    expect(pair(c.tcChainCheck, a, b)).toMatchObject({ status: 'pass', rule: 'R08' });
  });

  it('mlnx_qos (corpus sample: trust dscp, default map, PFC on 3, OS controlled) passes trust, dscp2prio, pfc and dcbx', () => {
    const f = facts({ qos: run(mlnxQos(SAMPLE_PFC3)) });
    expect(f.tool).toBe('mlnx_qos');
    expect(f.ports[0]).toMatchObject({ trust: 'dscp', dcbx: 'os' });
    for (const check of [c.trustCheck, c.dscp2prioCheck, c.pfcCheck, c.dcbxCheck])
      expect(host(check, f), check.id).toMatchObject({ status: 'pass' });
  });

  it('PCP trust (corpus sample) fails trust and the DSCP map; PFC on priority 5 only (CX7 sample) fails pfc (R26)', () => {
    const pcp = facts({ qos: run(mlnxQos('corpus/mlnx_qos__pcp-trust-pfc3-vendor-tsa.txt')) });
    expect(host(c.trustCheck, pcp)).toMatchObject({ status: 'fail', fix: expect.stringContaining('qos.persist') });
    expect(host(c.dscp2prioCheck, pcp).status).toBe('fail');
    const cx7 = facts({ qos: run(mlnxQos('corpus/mlnx_qos__cx7-dscp-pfc5-ets-strict-default-priority.txt')) });
    expect(host(c.pfcCheck, cx7)).toMatchObject({
      status: 'fail',
      rule: 'R26',
      summary: expect.stringContaining('priority 3'),
    });
    const all = facts({ qos: run(dcb({ pfc: 'prio-pfc 0:on 1:on 2:on 3:on 4:on 5:on 6:on 7:on \n' })) });
    expect(host(c.pfcCheck, all)).toMatchObject({
      status: 'fail',
      rule: 'R26',
      summary: expect.stringContaining('all 8'),
    });
    const extra = facts({ qos: run(dcb({ pfc: 'prio-pfc 0:off 1:off 2:off 3:on 4:on 5:off 6:off 7:off \n' })) });
    expect(host(c.pfcCheck, extra)).toMatchObject({ status: 'warn', rule: 'R26' });
  });

  it('dcbx (R28): firmware-controlled DCBX or a running lldpad fails', () => {
    expect(host(c.dcbxCheck, facts({ qos: run(dcb({ dcbx: 'cee ieee \n' })) }))).toMatchObject({
      status: 'fail',
      rule: 'R28',
    });
    expect(host(c.dcbxCheck, facts({ persistence: run(persistence({ lldpad: 'active' })) }))).toMatchObject({
      status: 'fail',
      rule: 'R28',
      fix: expect.stringContaining('lldpad'),
    });
  });

  it("targets (R25): the tutorial pfc.sh that nothing runs is a warning about the operator's file; the l20-roce-qos script passes", () => {
    const pfc = loadFixture('tutorial/pfc.sh');
    const ours = `### file ${QOS_SCRIPT_PATH}\n${qosScript(PFS, ctx.config.qos)}\n### mode 755\n### runby ${QOS_UNIT_PATH}\n`;
    const f = facts({ scripts: run(`### file /home/l20/pfc.sh\n${pfc}\n### mode 644\n${ours}`) });
    expect(f.scripts.map((s) => [s.path, s.mode, s.runBy])).toEqual([
      ['/home/l20/pfc.sh', '644', []],
      [QOS_SCRIPT_PATH, '755', [QOS_UNIT_PATH]],
    ]);
    const v = host(c.targetsCheck, f);
    expect(v).toMatchObject({
      status: 'warn',
      rule: 'R25',
      summary:
        "/home/l20/pfc.sh: the operator's script sets DCB on a bond or virtual device; nothing on the host runs it, so nothing is aborted — run by hand, /home/l20/pfc.sh applies its PF lines, then its bond lines fail and it exits 1",
      fix: expect.stringContaining('l20-setup does not edit operator scripts'),
    });
    expect(v.evidence).toContain("/home/l20/pfc.sh: the operator's file, left as found (l20-setup never edits it)");
    expect(v.evidence).toContain('/home/l20/pfc.sh (runs DCB commands; mode 644; nothing on the host runs it');
    expect(v.evidence).toContain('/home/l20/pfc.sh:7: sudo mlnx_qos -i bond0 --trust dscp → bond0 is a bond');
    expect(v.evidence).toContain(`${QOS_SCRIPT_PATH} (runs DCB commands; mode 755; run by ${QOS_UNIT_PATH})`);
    // With set -e, by hand it stops at the first bond line.
    const strict = host(
      c.targetsCheck,
      facts({ scripts: run(`### file /root/qos.sh\nset -euo pipefail\n${pfc}\n### mode 755\n`) }),
    );
    expect(strict).toMatchObject({
      status: 'warn',
      summary: expect.stringContaining('/root/qos.sh stops at its first bond line (set -e)'),
    });
    // No script with DCB commands: nothing to judge, so no pass on nothing.
    expect(host(c.targetsCheck, facts({ scripts: run('') }))).toMatchObject({
      status: 'skip',
      summary: 'no script on the host runs DCB commands: none can target a bond',
    });
  });

  it('targets (R25): a bond line in a script something runs unattended fails — named by cron, or a unit itself', () => {
    const pfc = loadFixture('tutorial/pfc.sh');
    const cron = host(
      c.targetsCheck,
      facts({ scripts: run(`### file /home/l20/pfc.sh\n${pfc}\n### mode 755\n### runby /etc/crontab\n`) }),
    );
    expect(cron).toMatchObject({
      status: 'fail',
      rule: 'R25',
      summary:
        '/home/l20/pfc.sh sets DCB on a bond or virtual device and runs unattended (/etc/crontab): the command exits 1 and aborts a set -e script',
    });
    const unit = '[Service]\nType=oneshot\nExecStart=/usr/bin/mlnx_qos -i bond0 --trust dscp\n';
    const v = host(
      c.targetsCheck,
      facts({ scripts: run(`### file /etc/systemd/system/bond-qos.service\n${unit}\n### mode 644\n`) }),
    );
    expect(v).toMatchObject({
      status: 'fail',
      rule: 'R25',
      summary: expect.stringContaining(
        'runs unattended (/etc/systemd/system/bond-qos.service itself (a systemd unit))',
      ),
    });
  });

  it('persistence (R27): no unit, a stale script, a disabled or failed unit each fail', () => {
    const none = facts({
      persistence: run(
        persistence({
          enabled: 'Failed to get unit file state for l20-roce-qos.service: No such file or directory',
          show: 'ActiveState=inactive\nSubState=dead\nResult=success',
          script: `cat: ${QOS_SCRIPT_PATH}: No such file or directory`,
          unit: `cat: ${QOS_UNIT_PATH}: No such file or directory`,
        }),
      ),
    });
    expect(host(c.persistenceCheck, none)).toMatchObject({
      status: 'fail',
      rule: 'R27',
      summary: expect.stringContaining('runtime'),
    });
    const stale = facts({ persistence: run(persistence({ script: qosScript(['ens1f0', 'ens1f1'], ctx.config.qos) })) });
    expect(host(c.persistenceCheck, stale)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('script'),
    });
    expect(
      host(c.persistenceCheck, facts({ persistence: run(persistence({ enabled: 'disabled' })) })).summary,
    ).toContain('disabled');
    expect(
      host(
        c.persistenceCheck,
        facts({ persistence: run(persistence({ show: 'ActiveState=failed\nSubState=failed\nResult=exit-code' })) }),
      ),
    ).toMatchObject({ status: 'fail', fix: expect.stringContaining('journalctl') });
  });

  it('pair (R26): node 2 with PFC off on every port fails, naming each cable; tc-chain fails there too (R08)', () => {
    const a = facts();
    const off = facts(
      { qos: run(dcb({ pfc: 'prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off \n' })) },
      'l20-n2',
      2,
    );
    const v = pair(c.pairCheck, a, off);
    expect(v).toMatchObject({ status: 'fail', rule: 'R26' });
    for (const p of PFS) expect(v.summary).toContain(`l20-n1:${p} ↔ l20-n2:${p}`);
    expect(pair(c.tcChainCheck, a, off)).toMatchObject({
      status: 'fail',
      rule: 'R08',
      summary: expect.stringContaining('l20-n2:ens1f0'),
    });
    expect(host(c.pfcCheck, off).status).toBe('fail');
  });

  it('tc-chain on the fresh lab\'s PCP trust (no DSCP map) says what it saw, never "?"', () => {
    const fresh = (h: string, n: number) =>
      facts({ qos: run(dcb({ app: '', pfc: 'prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off \n' })) }, h, n);
    const v = pair(c.tcChainCheck, fresh('l20-n1', 1), fresh('l20-n2', 2));
    expect(v).toMatchObject({ status: 'fail', rule: 'R08' });
    expect(v.evidence).toContain('l20-n1:ens1f0: trust pcp, dscp2prio[26] = not mapped, no priority to look up  ✗');
    expect(placeholderIn(v.evidence)).toBeUndefined();
  });

  it('DCB state not read on ports that exist is "cannot tell"; a host without ConnectX ports skips', () => {
    const unread = facts({ qos: run('### tool dcb\n', 0, 'bash: line 3: lspci: command not found\n') });
    for (const check of [c.trustCheck, c.dscp2prioCheck, c.pfcCheck, c.dcbxCheck]) {
      expect(host(check, unread)).toMatchObject({
        status: 'error',
        summary: expect.stringMatching(/^cannot tell: the DCB state of ens1f0, .* was not read$/),
      });
    }
    const problems = unreadableNeeds(qosStage.probes, c.trustCheck.needs, {
      qos: run('### tool dcb\n', 0, 'bash: line 3: lspci: command not found\n'),
    });
    expect(cannotTellVerdict(problems, 'l20-n1').summary).toBe(
      'cannot tell: lspci is not installed on l20-n1 (package pciutils)',
    );
    const portless = collectQos({
      host: 'l20-n1',
      results: { qos: run('### tool dcb\n'), persistence: run(persistence()) },
    });
    expect(host(c.pfcCheck, portless)).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('no ConnectX PF'),
    });
    expect(host(c.persistenceCheck, portless)).toMatchObject({ status: 'skip', rule: 'R27' });
  });

  it('tc-chain (R08): NCCL_IB_TC from /etc/nccl.conf is used; ECN bits 3 fail', () => {
    const conf = (tc: string) => ({ 'nccl-conf': run(`NCCL_IB_TC=${tc}\n`) });
    const ok = pair(c.tcChainCheck, facts(conf('106')), facts(conf('106'), 'l20-n2', 2));
    expect(ok.evidence).toContain('NCCL_IB_TC=106 (l20-n1:/etc/nccl.conf): DSCP = 106 >> 2 = 26, ECN = 106 & 3 = 2');
    expect(ok.status).toBe('pass');
    expect(pair(c.tcChainCheck, facts(conf('107')), facts(conf('107'), 'l20-n2', 2))).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('ECN'),
    });
    // TC 96 → DSCP 24 → priority 3 under the default map: still closes.
    expect(pair(c.tcChainCheck, facts(conf('96')), facts(conf('96'), 'l20-n2', 2)).status).toBe('pass');
  });

  it('qos.persist writes the script (0755) and unit (0644), restarts the unit, and skips a host whose only problem is lldpad', () => {
    const step = qosStage.steps![0]!;
    expect(step).toMatchObject({ danger: 'disruptive', order: 'reverse' });
    expect(step.guards).not.toContain('qos.pair');
    const f = facts({ persistence: run(persistence({ enabled: 'disabled' })) });
    const result = (id: string, status: CheckResult['status']): CheckResult => ({
      id,
      stage: 'qos',
      host: 'l20-n1',
      status,
      summary: '',
      evidence: '',
    });
    const plan = step.plan!({
      ...ctx,
      host: 'l20-n1',
      hostIndex: 0,
      facts: f,
      all: [],
      results: [result('qos.persistence', 'fail')],
    } as StepPlanContext<QosFacts>);
    expect(plan?.files).toEqual([
      { path: QOS_SCRIPT_PATH, content: qosScript(PFS, ctx.config.qos), mode: 0o755 },
      { path: QOS_UNIT_PATH, content: qosUnit(ctx.config.qos), mode: 0o644 },
    ]);
    expect(plan?.files?.[0]?.content).toContain('for i in ens1f0 ens1f1 ens2f0 ens2f1; do');
    expect(plan?.files?.[0]?.content).toContain(
      'dcb app replace dev "$i" dscp-prio 26:3; dcb pfc set dev "$i" prio-pfc all:off 3:on',
    );
    expect(plan?.files?.[0]?.content).toContain('mlnx_qos -i "$i" --trust dscp --pfc 0,0,0,1,0,0,0,0');
    expect(plan?.commands?.map((x) => ('argv' in x.command ? x.command.argv.join(' ') : ''))).toEqual([
      'systemctl daemon-reload',
      'systemctl enable l20-roce-qos.service',
      'systemctl restart l20-roce-qos.service',
    ]);
    const lldpad = facts({ persistence: run(persistence({ lldpad: 'active' })) });
    expect(
      step.plan!({
        ...ctx,
        host: 'l20-n1',
        hostIndex: 0,
        facts: lldpad,
        all: [],
        results: [result('qos.dcbx', 'fail')],
      } as StepPlanContext<QosFacts>),
    ).toBeNull();
  });
});
