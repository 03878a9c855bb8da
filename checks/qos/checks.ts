/** qos verdicts (docs/STAGES.md §3.5; R08 TC chain, R25 DCB targets, R26 PFC, R27 persistence, R28 DCBX). */
import type { CheckDef, HostCheckDef, HostFacts, PairCheckDef, StageContext, Verdict } from '../../src/engine/types.js';
import { lintText } from '../../src/lint/index.js';
import { cablingMap, PORT_NEEDS, type CablingMap } from '../common/fabric.js';
import { oneHostSkip } from '../common/pair.js';
import type { PortQosFacts, QosFacts, QosScript } from './facts.js';
import { QOS_SCRIPT_PATH, QOS_UNIT } from './probes.js';
import { pfcVector, qosScript, qosUnit } from './script.js';

const PERSIST = 'apply qos.persist (the l20-roce-qos script and unit on both hosts, node 2 first)';

const UNREAD = 'not read';
const vector = (pfc: readonly boolean[] | undefined): string => (pfc ? pfc.map((x) => (x ? 1 : 0)).join(',') : UNREAD);
const portLine = (p: PortQosFacts, dscp: number): string =>
  `${p.netdev}: trust ${p.trust ?? UNREAD}, pfc ${vector(p.pfc)}, dscp2prio[${dscp}] ${p.dscp2prio?.[dscp] ?? '-'}, dcbx ${p.dcbx ?? UNREAD}${p.errors.length ? ` (${p.errors.join('; ')})` : ''}`;

/** Every PF's status as read, the raw tool output after it. */
function evidence(f: QosFacts, ctx: StageContext): string {
  const lines = f.ports.map((p) => portLine(p, ctx.config.qos.dscp));
  const raw = f.ports.map((p) => `--- ${p.tool === 'mlnx_qos' ? `mlnx_qos -i ${p.netdev}` : p.netdev}\n${p.raw}`);
  return [`tool: ${f.tool ?? 'neither mlnx_qos nor dcb named'}`, ...lines, ...raw].join('\n');
}

/** The probes the per-PF verdicts rest on: which PFs exist, and their DCB state as root. */
const PF_NEEDS = [...PORT_NEEDS, 'qos'] as const;

/** No PF to judge: skip on a host without ConnectX ports, "cannot tell" where they exist but none was read. */
function noPorts(f: QosFacts, ctx: StageContext): Verdict | undefined {
  if (f.ports.length > 0) return undefined;
  if (f.fabric.ports.length === 0) {
    return {
      status: 'skip',
      summary: 'no ConnectX PF on this host: no DCB state to check (inventory.nics)',
      evidence: 'no netdev belongs to a ConnectX function',
    };
  }
  const why = f.problems.map((p) => p.evidence).join('\n');
  return {
    status: 'error',
    summary: `cannot tell: the DCB state of ${f.fabric.ports.map((p) => p.netdev).join(', ')} was not read`,
    evidence: why || evidence(f, ctx),
    fix: 'the probe runs mlnx_qos or dcb as root: check `sudo dcb pfc show dev <pf>` by hand',
  };
}

export const trustCheck: HostCheckDef<QosFacts> = {
  id: 'qos.trust',
  title: 'priority trust on every PF',
  scope: 'host',
  needs: PF_NEEDS,
  evaluate(f, _host, ctx) {
    const none = noPorts(f, ctx);
    if (none) return none;
    const want = ctx.config.qos.trust;
    const bad = f.ports.filter((p) => p.trust !== want);
    if (bad.length > 0) {
      return {
        status: 'fail',
        summary: `${bad.map((p) => `${p.netdev} ${p.trust ?? 'unreadable'}`).join(', ')}: trust must be ${want} (NCCL_IB_TC marks DSCP, so PCP trust leaves RoCE on priority 0)`,
        evidence: evidence(f, ctx),
        fix: PERSIST,
        rule: 'R08',
      };
    }
    return { status: 'pass', summary: `trust ${want} on ${f.ports.length} PFs`, evidence: evidence(f, ctx) };
  },
};

export const dscp2prioCheck: HostCheckDef<QosFacts> = {
  id: 'qos.dscp2prio',
  title: 'RoCE DSCP maps to the PFC priority',
  scope: 'host',
  needs: PF_NEEDS,
  evaluate(f, _host, ctx) {
    const none = noPorts(f, ctx);
    if (none) return none;
    const { dscp, priority, trust } = ctx.config.qos;
    if (trust === 'pcp')
      return { status: 'skip', summary: 'PCP trust configured: the DSCP map is not used', evidence: evidence(f, ctx) };
    const bad = f.ports.filter((p) => p.dscp2prio?.[dscp] !== priority);
    if (bad.length > 0) {
      return {
        status: 'fail',
        summary: `${bad.map((p) => `${p.netdev} DSCP ${dscp} → ${p.dscp2prio?.[dscp] ?? (p.trust === 'dscp' ? 'no priority' : 'unused (trust pcp)')}`).join(', ')}; want priority ${priority}`,
        evidence: evidence(f, ctx),
        fix: PERSIST,
        rule: 'R08',
      };
    }
    return {
      status: 'pass',
      summary: `DSCP ${dscp} → priority ${priority} on ${f.ports.length} PFs`,
      evidence: evidence(f, ctx),
    };
  },
};

export const pfcCheck: HostCheckDef<QosFacts> = {
  id: 'qos.pfc',
  title: 'PFC on the RoCE priority only',
  scope: 'host',
  needs: PF_NEEDS,
  evaluate(f, _host, ctx) {
    const none = noPorts(f, ctx);
    if (none) return none;
    const prio = ctx.config.qos.priority;
    const ev = evidence(f, ctx);
    const unread = f.ports.filter((p) => !p.pfc);
    if (unread.length > 0)
      return {
        status: 'fail',
        summary: `PFC state unreadable on ${unread.map((p) => p.netdev).join(', ')}`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R26',
      };
    const off = f.ports.filter((p) => !p.pfc![prio]);
    if (off.length > 0)
      return {
        status: 'fail',
        summary: `PFC off on priority ${prio} on ${off.map((p) => p.netdev).join(', ')}: RoCE is lossy there`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R26',
      };
    const all = f.ports.filter((p) => p.pfc!.every(Boolean));
    if (all.length > 0)
      return {
        status: 'fail',
        summary: `PFC on all 8 priorities on ${all.map((p) => p.netdev).join(', ')}: TCP turns lossless (head-of-line blocking, pause storms)`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R26',
      };
    const extra = f.ports.filter((p) => p.pfc!.some((on, i) => on && i !== prio));
    if (extra.length > 0)
      return {
        status: 'warn',
        summary: `lossless priorities besides ${prio} on ${extra.map((p) => `${p.netdev} (${vector(p.pfc)})`).join(', ')}`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R26',
      };
    return { status: 'pass', summary: `PFC ${pfcVector(prio)} on ${f.ports.length} PFs`, evidence: ev, rule: 'R26' };
  },
};

export const dcbxCheck: HostCheckDef<QosFacts> = {
  id: 'qos.dcbx',
  title: 'the OS owns DCBX',
  scope: 'host',
  needs: [...PF_NEEDS, 'persistence'],
  evaluate(f, _host, ctx) {
    const none = noPorts(f, ctx);
    if (none) return none;
    const ev = `${evidence(f, ctx)}\n${f.persistence.raw}`;
    if (f.persistence.lldpadActive)
      return {
        status: 'fail',
        summary: 'lldpad is running: its DCBX negotiation can overwrite trust and PFC',
        evidence: ev,
        fix: 'sudo systemctl disable --now lldpad',
        rule: 'R28',
      };
    const fw = f.ports.filter((p) => p.dcbx !== 'os');
    if (fw.length > 0) {
      return {
        status: 'fail',
        summary: `${fw.map((p) => `${p.netdev} ${p.dcbx === 'firmware' ? 'firmware-controlled' : 'unreadable'}`).join(', ')}: the NIC's DCBX agent can overwrite the settings`,
        evidence: ev,
        rule: 'R28',
        fix: `${PERSIST}: setting DCB from the OS takes DCBX over (by hand: ${f.tool === 'mlnx_qos' ? 'mlnx_qos -i <pf> -d os' : 'dcb dcbx set dev <pf> host ieee'})`,
      };
    }
    return {
      status: 'pass',
      summary: `DCBX OS-controlled on ${f.ports.length} PFs, lldpad not running`,
      evidence: ev,
      rule: 'R28',
    };
  },
};

/**
 * R25 is a blocker because a DCB command on a bond exits 1 and aborts the `set -e` script around it —
 * which matters for a script something runs (a unit, rc.local, cron, an interface hook). A script that
 * nothing on the host runs (the tutorial's ~/pfc.sh, typed once by the operator) aborts nothing: it
 * stands as a warning, so the operator learns it is wrong without the run being held up by a file
 * l20-setup never edits; the PFs' live state is what qos.trust/qos.pfc judge.
 */
export const targetsCheck: HostCheckDef<QosFacts> = {
  id: 'qos.targets',
  title: 'DCB commands target physical ports only',
  scope: 'host',
  needs: ['scripts'],
  evaluate(f) {
    if (f.scripts.length === 0) {
      return {
        status: 'skip',
        summary: 'no script on the host runs DCB commands: none can target a bond',
        evidence:
          'scanned /usr/local/{sbin,bin}, /etc/rc.local, /etc/systemd/system/*.service, if-up.d, networkd-dispatcher, /root/*.sh, /home/*/*.sh',
        rule: 'R25',
      };
    }
    const flagged = f.scripts
      .map((s) => ({ s, findings: lintText(s.text, s.path).findings.filter((x) => x.rule === 'R25') }))
      .filter((x) => x.findings.length > 0);
    const about = (s: QosScript): string => {
      const runner =
        s.runBy.length > 0
          ? `run by ${s.runBy.join(', ')}`
          : 'nothing on the host runs it (no unit, rc.local, crontab, if-up.d or networkd-dispatcher hook names it)';
      return `${s.path} (runs DCB commands; mode ${s.mode ?? 'not read'}; ${runner})`;
    };
    const evidence = [
      ...f.scripts.map(about),
      ...flagged.flatMap(({ s, findings }) =>
        findings.map((x) => `${s.path}${x.line !== undefined ? `:${x.line}` : ''}: ${x.evidence}`),
      ),
    ].join('\n');
    if (flagged.length === 0)
      return {
        status: 'pass',
        summary: `${f.scripts.length} script${f.scripts.length === 1 ? '' : 's'} with DCB commands, all on physical ports`,
        evidence,
        rule: 'R25',
      };
    const fix = `${flagged[0]!.findings[0]!.fix} (l20-setup does not edit operator scripts; ${QOS_SCRIPT_PATH} sets the PFs)`;
    const running = flagged.filter((x) => x.s.runBy.length > 0);
    if (running.length > 0) {
      const paths = running.map((x) => x.s.path);
      return {
        status: 'fail',
        summary: `${paths.join(', ')} set${paths.length === 1 ? 's' : ''} DCB on a bond or virtual device and ${paths.length === 1 ? 'runs' : 'run'} unattended (${running.flatMap((x) => x.s.runBy).join(', ')}): the command exits 1 and aborts a set -e script`,
        evidence,
        fix,
        rule: 'R25',
      };
    }
    const paths = flagged.map((x) => x.s.path);
    const byHand = flagged.map(({ s }) =>
      /^\s*set\s+-[a-zA-Z]*e/m.test(s.text)
        ? `${s.path} stops at its first bond line (set -e)`
        : `${s.path} applies its PF lines, then its bond lines fail and it exits 1`,
    );
    return {
      status: 'warn',
      summary: `${paths.join(', ')}: the operator's script${paths.length === 1 ? '' : 's'} set${paths.length === 1 ? 's' : ''} DCB on a bond or virtual device; nothing on the host runs ${paths.length === 1 ? 'it' : 'them'}, so nothing is aborted — run by hand, ${byHand.join('; ')}`,
      evidence: `${paths.join(', ')}: the operator's file${paths.length === 1 ? '' : 's'}, left as found (l20-setup never edits it); a warning, not a blocker, because nothing runs it unattended\n${evidence}`,
      fix,
      rule: 'R25',
    };
  },
};

/** The PF netdevs the script covers (PCI order): every ConnectX PF, bond slaves included. */
export const pfNetdevs = (f: QosFacts): string[] => f.fabric.ports.map((p) => p.netdev);

export const persistenceCheck: HostCheckDef<QosFacts> = {
  id: 'qos.persistence',
  title: 'QoS re-applied at boot and driver reload',
  scope: 'host',
  needs: [...PORT_NEEDS, 'persistence'],
  evaluate(f, _host, ctx) {
    const p = f.persistence;
    if (f.fabric.ports.length === 0) {
      return {
        status: 'skip',
        summary: 'no ConnectX PF on this host: no QoS to persist (inventory.nics)',
        evidence: 'no netdev belongs to a ConnectX function',
        rule: 'R27',
      };
    }
    const wantScript = qosScript(pfNetdevs(f), ctx.config.qos);
    const wantUnit = qosUnit(ctx.config.qos);
    const ev = `${p.raw}\n${QOS_SCRIPT_PATH}: ${p.script === undefined ? 'absent' : p.script === wantScript ? 'current' : 'differs from the plan'}\n/etc/systemd/system/${QOS_UNIT}: ${p.unit === undefined ? 'absent' : p.unit === wantUnit ? 'current' : 'differs from the plan'}`;
    if (p.script === undefined || p.unit === undefined || p.enabled === undefined) {
      return {
        status: 'fail',
        summary: `no ${QOS_UNIT}: trust and PFC are runtime driver state, lost at the next reboot or driver reload`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R27',
      };
    }
    if (p.script !== wantScript || p.unit !== wantUnit) {
      return {
        status: 'fail',
        summary: `the installed QoS ${p.script !== wantScript ? 'script' : 'unit'} is not the current plan (ports or settings changed)`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R27',
      };
    }
    if (p.enabled !== 'enabled')
      return {
        status: 'fail',
        summary: `${QOS_UNIT} is ${p.enabled}: it will not run at boot`,
        evidence: ev,
        fix: PERSIST,
        rule: 'R27',
      };
    if (p.activeState !== 'active' || (p.result !== undefined && p.result !== 'success')) {
      return {
        status: 'fail',
        summary: `${QOS_UNIT} is ${p.activeState ?? 'in no reported state'} (result ${p.result ?? 'not reported'}): its last run failed`,
        evidence: ev,
        fix: `read \`journalctl -u ${QOS_UNIT}\`, then ${PERSIST}`,
        rule: 'R27',
      };
    }
    return { status: 'pass', summary: `${QOS_UNIT} enabled and active, script current`, evidence: ev, rule: 'R27' };
  },
};

/** NCCL_IB_TC in force: /etc/nccl.conf's when set, else the plan's DSCP << 2 | ECT(0). */
export function trafficClass(
  all: ReadonlyArray<HostFacts<QosFacts>>,
  ctx: StageContext,
): { tc: number; source: string } | { error: string } {
  const set = all.map((a) => ({ host: a.host, tc: a.facts.ncclIbTc })).filter((x) => x.tc !== undefined);
  if (set.length === 0)
    return {
      tc: (ctx.config.qos.dscp << 2) | 2,
      source: `planned NCCL_IB_TC (DSCP ${ctx.config.qos.dscp} << 2 | ECT(0))`,
    };
  const first = set[0]!;
  if (!/^\d+$/.test(first.tc!)) return { error: `${first.host}: NCCL_IB_TC=${first.tc} is not a number` };
  return { tc: Number(first.tc), source: `NCCL_IB_TC=${first.tc} (${first.host}:/etc/nccl.conf)` };
}

export const tcChainCheck: PairCheckDef<QosFacts> = {
  id: 'qos.tc-chain',
  title: 'NCCL_IB_TC → DSCP → priority → PFC on every PF',
  scope: 'pair',
  needs: PF_NEEDS,
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    if (ctx.config.qos.trust === 'pcp') {
      return {
        status: 'skip',
        summary: 'PCP trust: the priority comes from the VLAN PCP (NCCL_IB_SL), not the traffic class',
        evidence: 'qos.trust: pcp (cluster settings)',
      };
    }
    const portless = all.filter((a) => a.facts.fabric.ports.length === 0);
    if (portless.length > 0) {
      return {
        status: 'skip',
        summary: `no ConnectX PF on ${portless.map((a) => a.host).join(', ')}: no chain to follow (inventory.nics)`,
        evidence: portless.map((a) => `${a.host}: no netdev belongs to a ConnectX function`).join('\n'),
      };
    }
    const t = trafficClass(all, ctx);
    if ('error' in t)
      return {
        status: 'fail',
        summary: t.error,
        evidence: all.map((a) => a.facts.ncclConfEvidence).join('\n'),
        rule: 'R08',
        fix: 'set NCCL_IB_TC=106 (nccl stage)',
      };
    const dscp = t.tc >> 2;
    const ecn = t.tc & 3;
    const lines = [`${t.source}: DSCP = ${t.tc} >> 2 = ${dscp}, ECN = ${t.tc} & 3 = ${ecn}`];
    const broken: string[] = [];
    if (ecn === 3) broken.push(`ECN bits 3 (CE) in NCCL_IB_TC ${t.tc}`);
    for (const a of all) {
      for (const p of a.facts.ports) {
        const prio = p.dscp2prio?.[dscp];
        const ok = p.trust === 'dscp' && prio !== undefined && p.pfc?.[prio] === true;
        const pfcOn = p.pfc && prio !== undefined ? (p.pfc[prio] ? 'on' : 'off') : UNREAD;
        const pfc = prio === undefined ? 'no priority to look up' : `PFC on ${prio}: ${pfcOn}`;
        const mapped = `dscp2prio[${dscp}] = ${prio ?? 'not mapped'}`;
        lines.push(`${a.host}:${p.netdev}: trust ${p.trust ?? UNREAD}, ${mapped}, ${pfc}${ok ? '' : '  ✗'}`);
        if (!ok) broken.push(`${a.host}:${p.netdev}`);
      }
      if (a.facts.ports.length === 0) broken.push(`${a.host}: no PF's DCB state read`);
    }
    if (broken.length > 0)
      return {
        status: 'fail',
        summary: `the chain breaks at ${broken.join(', ')}: RoCE traffic there is not lossless`,
        evidence: lines.join('\n'),
        rule: 'R08',
        fix: `${PERSIST}; NCCL_IB_TC=${(ctx.config.qos.dscp << 2) | 2} (nccl stage); perftest needs --tclass=${(ctx.config.qos.dscp << 2) | 2}`,
      };
    return {
      status: 'pass',
      summary: `TC ${t.tc} → DSCP ${dscp} → priority ${all[0]!.facts.ports[0]!.dscp2prio![dscp]}, PFC on, on every PF of ${all.length} hosts`,
      evidence: lines.join('\n'),
      rule: 'R08',
    };
  },
};

/**
 * Both ends of every cable; without a cabling map (LLDP and neighbours not seen yet), ports are
 * paired by PCI position, which is the straight cabling the lab and most racks use.
 */
function cableEnds(all: ReadonlyArray<HostFacts<QosFacts>>): {
  pairs: Array<[string, string, string, string]>;
  note: string;
} {
  const map: CablingMap = cablingMap(all.map((a) => ({ host: a.host, facts: a.facts.fabric })));
  if (map.cables.length > 0) {
    return {
      pairs: map.cables.map((c) => [c.ends[0].host, c.ends[0].netdev, c.ends[1].host, c.ends[1].netdev]),
      note: `${map.cables.length} cables from the cabling map`,
    };
  }
  const pairs: Array<[string, string, string, string]> = [];
  for (let h = 0; h + 1 < all.length; h += 2) {
    const a = all[h]!;
    const b = all[h + 1]!;
    a.facts.fabric.ports.forEach((p, i) => {
      const q = b.facts.fabric.ports[i];
      if (q) pairs.push([a.host, p.netdev, b.host, q.netdev]);
    });
  }
  return { pairs, note: 'cabling not mapped yet: ports compared by PCI position' };
}

export const pairCheck: PairCheckDef<QosFacts> = {
  id: 'qos.pair',
  title: 'same trust, PFC and DSCP map at both ends of every cable',
  scope: 'pair',
  needs: PF_NEEDS,
  evaluate(all, ctx) {
    const single = oneHostSkip(ctx.hosts);
    if (single) return single;
    const dscp = ctx.config.qos.dscp;
    const { pairs, note } = cableEnds(all);
    const find = (h: string, n: string): PortQosFacts | undefined =>
      all.find((a) => a.host === h)?.facts.ports.find((p) => p.netdev === n);
    const lines = [note];
    const pfcDiff: string[] = [];
    const otherDiff: string[] = [];
    for (const [h1, n1, h2, n2] of pairs) {
      const a = find(h1, n1);
      const b = find(h2, n2);
      const side = (p: PortQosFacts | undefined): string =>
        p
          ? `trust ${p.trust ?? UNREAD} pfc ${vector(p.pfc)} dscp2prio[${dscp}] ${p.dscp2prio?.[dscp] ?? '-'}`
          : 'not read';
      lines.push(`${h1}:${n1} ${side(a)}  |  ${h2}:${n2} ${side(b)}`);
      const cable = `${h1}:${n1} ↔ ${h2}:${n2}`;
      if (!a || !b) otherDiff.push(`${cable} (one end not read)`);
      else if (vector(a.pfc) !== vector(b.pfc)) pfcDiff.push(`${cable} (PFC ${vector(a.pfc)} vs ${vector(b.pfc)})`);
      else if (a.trust !== b.trust || a.dscp2prio?.[dscp] !== b.dscp2prio?.[dscp])
        otherDiff.push(`${cable} (trust/DSCP map differ)`);
    }
    if (pairs.length === 0)
      return { status: 'skip', summary: 'no cable between two hosts to compare', evidence: lines.join('\n') };
    if (pfcDiff.length > 0) {
      return {
        status: 'fail',
        summary: `PFC differs across ${pfcDiff.join(', ')}: the lossless end's pauses are ignored and frames drop under load`,
        evidence: lines.join('\n'),
        rule: 'R26',
        fix: `${PERSIST} on the host whose PFC is off`,
      };
    }
    if (otherDiff.length > 0)
      return {
        status: 'fail',
        summary: `ends differ: ${otherDiff.join(', ')}`,
        evidence: lines.join('\n'),
        rule: 'R08',
        fix: PERSIST,
      };
    return {
      status: 'pass',
      summary: `${pairs.length} cables: both ends equal`,
      evidence: lines.join('\n'),
      rule: 'R26',
    };
  },
};

export const qosChecks: readonly CheckDef<QosFacts>[] = [
  trustCheck,
  dscp2prioCheck,
  pfcCheck,
  dcbxCheck,
  targetsCheck,
  persistenceCheck,
  tcChainCheck,
  pairCheck,
];
