/** What the qos stage reads about one host (docs/STAGES.md §3.5). */
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseMlnxQos } from '../../src/parse/mlnx-qos.js';
import { parseNcclConf } from '../../src/parse/nccl-conf.js';
import { collectFabric, type FabricFacts } from '../common/fabric.js';

/** One PF's DCB state as its tool printed it. */
export interface PortQosFacts {
  netdev: string;
  tool: 'mlnx_qos' | 'dcb';
  trust?: 'dscp' | 'pcp';
  /** PFC per priority 0–7. */
  pfc?: boolean[];
  /** DSCP → priority in effect (all 64 when known; with dcb, APP entries over the default DSCP >> 3). */
  dscp2prio?: Record<number, number>;
  dcbx?: 'os' | 'firmware';
  /** Lines the tool printed instead of a status (not supported, netlink errors). */
  errors: string[];
  /** The raw output, for evidence. */
  raw: string;
}

export interface QosPersistence {
  /** `systemctl is-enabled` answer: `enabled`, `disabled`, or undefined when the unit does not exist. */
  enabled?: string;
  activeState?: string;
  subState?: string;
  result?: string;
  /** Installed script / unit text (undefined when absent). */
  script?: string;
  unit?: string;
  lldpadActive: boolean;
  raw: string;
}

/** A file on the host that runs DCB commands, and what (if anything) runs it unattended. */
export interface QosScript {
  path: string;
  text: string;
  /** Octal mode as `stat -c %a` prints it. */
  mode?: string;
  /**
   * What runs it without an operator: the file itself when it lives where systemd, rc.local, ifupdown
   * or networkd-dispatcher execute files, else the units, rc.local, crontabs and hooks that name it.
   */
  runBy: string[];
}

/** Files executed unattended by where they are (a unit, rc.local, an if-up.d or networkd-dispatcher hook). */
export function autorunLocation(path: string): string | undefined {
  if (path === '/etc/rc.local') return 'rc-local.service at boot';
  if (/^\/etc\/systemd\/system\/[^/]+\.service$/.test(path)) return 'a systemd unit';
  if (path.startsWith('/etc/network/if-up.d/')) return 'ifupdown when an interface comes up';
  if (path.startsWith('/etc/networkd-dispatcher/')) return 'networkd-dispatcher on link state changes';
  return undefined;
}

/** `### file` sections with the `### mode` and `### runby` lines that follow each (QOS_SCRIPTS_SCRIPT). */
export function collectScripts(stdout: string): QosScript[] {
  const out: QosScript[] = [];
  for (const s of sections(stdout)) {
    const cur = out[out.length - 1];
    if (s.tag === 'file') {
      const where = autorunLocation(s.name);
      out.push({
        path: s.name,
        text: `${s.body.replace(/\n+$/, '')}\n`,
        runBy: where ? [`${s.name} itself (${where})`] : [],
      });
    } else if (s.tag === 'mode' && cur && /^\d+$/.test(s.name)) cur.mode = s.name;
    else if (s.tag === 'runby' && cur && s.name) cur.runBy.push(s.name);
  }
  return out;
}

export interface QosFacts {
  host: string;
  fabric: FabricFacts;
  tool?: 'mlnx_qos' | 'dcb';
  ports: PortQosFacts[];
  persistence: QosPersistence;
  /** Scripts on the host that run DCB commands. */
  scripts: QosScript[];
  /** NCCL_IB_TC from /etc/nccl.conf, when the file sets it. */
  ncclIbTc?: string;
  ncclConfEvidence: string;
  problems: Array<{ probe: string; evidence: string }>;
}

/** `### <tag> <name> [rest]` sections of a probe script's output. */
export function sections(text: string): Array<{ tag: string; name: string; body: string }> {
  const out: Array<{ tag: string; name: string; body: string }> = [];
  let cur: { tag: string; name: string; lines: string[] } | undefined;
  for (const line of text.split('\n')) {
    const m = /^### (\S+)(?: (.*))?$/.exec(line);
    if (m) {
      if (cur) out.push({ tag: cur.tag, name: cur.name, body: cur.lines.join('\n') });
      cur = { tag: m[1] as string, name: (m[2] ?? '').trim(), lines: [] };
    } else cur?.lines.push(line);
  }
  if (cur) out.push({ tag: cur.tag, name: cur.name, body: cur.lines.join('\n') });
  return out;
}

/** `dscp-prio 26:3 ` (dcb -N app show): the APP table's DSCP entries. */
export function parseDcbApp(text: string): Array<[number, number]> | undefined {
  const line = text.split('\n').find((l) => /^\s*dscp-prio\b/.test(l));
  if (!line) return /^\s*$/.test(text) ? [] : undefined;
  const out: Array<[number, number]> = [];
  for (const m of line.matchAll(/(\d+):(\d)\b/g)) out.push([Number(m[1]), Number(m[2])]);
  return out;
}

/** `prio-pfc 0:off 1:off 2:off 3:on …` (dcb pfc show). */
export function parseDcbPfc(text: string): boolean[] | undefined {
  const line = text.split('\n').find((l) => /^\s*prio-pfc\b/.test(l));
  if (!line) return undefined;
  const v = Array.from({ length: 8 }, () => false);
  let seen = 0;
  for (const m of line.matchAll(/([0-7]):(on|off)\b/g)) {
    v[Number(m[1])] = m[2] === 'on';
    seen++;
  }
  return seen === 8 ? v : undefined;
}

/** `host cee ieee ` (dcb dcbx show): HOST set means the OS owns DCBX. */
export function parseDcbDcbx(text: string): 'os' | 'firmware' | undefined {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => /^(host|lld-managed|cee|ieee|static)\b/.test(l));
  if (!line) return undefined;
  return /\bhost\b/.test(line) ? 'os' : 'firmware';
}

const ERROR_LINE = /not supported|Operation not|No such device|Netlink error|Traceback|Error|command not found/i;

function portFromMlnx(netdev: string, body: string): PortQosFacts {
  const q = parseMlnxQos(body);
  const dscp2prio: Record<number, number> = {};
  for (const [k, v] of Object.entries(q.dscp2prio ?? {})) dscp2prio[Number(k)] = v;
  const errors = [
    ...(q.errors ?? []),
    ...body.split('\n').filter((l) => /Netlink error|TypeError|command not found/.test(l)),
  ];
  return {
    netdev,
    tool: 'mlnx_qos',
    errors: [...new Set(errors)],
    raw: body.trimEnd(),
    ...(q.trust ? { trust: q.trust } : {}),
    ...(q.pfc ? { pfc: q.pfc.map((x) => x === 1) } : {}),
    ...(q.trust === 'dscp' && Object.keys(dscp2prio).length > 0 ? { dscp2prio } : {}),
    ...(q.dcbx ? { dcbx: q.dcbx } : {}),
  };
}

function portFromDcb(netdev: string, app: string, pfcText: string, dcbx: string): PortQosFacts {
  const entries = parseDcbApp(app);
  const pfc = parseDcbPfc(pfcText);
  const owner = parseDcbDcbx(dcbx);
  const errors = [app, pfcText, dcbx]
    .join('\n')
    .split('\n')
    .filter((l) => ERROR_LINE.test(l));
  // Inbox mlx5: any DSCP APP entry means DSCP trust; DSCPs without an entry keep the default DSCP >> 3.
  let dscp2prio: Record<number, number> | undefined;
  if (entries && entries.length > 0) {
    dscp2prio = {};
    for (let d = 0; d < 64; d++) dscp2prio[d] = d >> 3;
    for (const [d, p] of entries) dscp2prio[d] = p;
  }
  return {
    netdev,
    tool: 'dcb',
    errors,
    raw: [
      `$ dcb -N app show dev ${netdev} dscp-prio`,
      app.trimEnd(),
      `$ dcb pfc show dev ${netdev}`,
      pfcText.trimEnd(),
      `$ dcb dcbx show dev ${netdev}`,
      dcbx.trimEnd(),
    ].join('\n'),
    ...(entries !== undefined && errors.length === 0
      ? { trust: entries.length > 0 ? ('dscp' as const) : ('pcp' as const) }
      : {}),
    ...(pfc ? { pfc } : {}),
    ...(dscp2prio ? { dscp2prio } : {}),
    ...(owner ? { dcbx: owner } : {}),
  };
}

function text(r: RunResult | undefined): string {
  return r ? `${r.stdout}${r.stderr}` : '';
}

export function collectQos(outputs: ProbeOutputs): QosFacts {
  const { host, results } = outputs;
  const fabric = collectFabric(outputs);
  const problems: QosFacts['problems'] = [];

  const q = results.qos;
  if (!q || q.exitCode !== 0)
    problems.push({
      probe: 'qos',
      evidence: q ? `${q.commandLine} → exit ${q.exitCode}\n${text(q).trim()}` : 'not run',
    });
  const secs = sections(q?.stdout ?? '');
  const toolLine = secs.find((s) => s.tag === 'tool')?.name;
  const tool = toolLine === 'mlnx_qos' || toolLine === 'dcb' ? toolLine : undefined;
  const names = [...new Set(secs.filter((s) => ['mlnx_qos', 'dcb-app'].includes(s.tag)).map((s) => s.name))];
  const body = (tag: string, name: string): string => secs.find((s) => s.tag === tag && s.name === name)?.body ?? '';
  const ports = names.map((n) =>
    tool === 'mlnx_qos'
      ? portFromMlnx(n, body('mlnx_qos', n))
      : portFromDcb(n, body('dcb-app', n), body('dcb-pfc', n), body('dcb-dcbx', n)),
  );

  const p = results.persistence;
  const ps = sections(p?.stdout ?? '');
  const part = (tag: string): string => ps.find((s) => s.tag === tag)?.body ?? '';
  const show: Record<string, string> = {};
  for (const line of part('show').split('\n')) {
    const m = /^(\w+)=(.*)$/.exec(line.trim());
    if (m) show[m[1] as string] = m[2] as string;
  }
  const enabledText = part('is-enabled').trim();
  const fileText = (tag: string): string | undefined => {
    const t = part(tag);
    return /^cat: .*No such file or directory\s*$/.test(t.trim()) || t.trim() === ''
      ? undefined
      : `${t.replace(/\n+$/, '')}\n`;
  };
  const persistence: QosPersistence = {
    ...(/^(enabled|disabled|static|masked|linked|indirect|generated|enabled-runtime)$/.test(enabledText)
      ? { enabled: enabledText }
      : {}),
    ...(show.ActiveState ? { activeState: show.ActiveState } : {}),
    ...(show.SubState ? { subState: show.SubState } : {}),
    ...(show.Result ? { result: show.Result } : {}),
    ...(fileText('script') !== undefined ? { script: fileText('script') as string } : {}),
    ...(fileText('unit') !== undefined ? { unit: fileText('unit') as string } : {}),
    lldpadActive: part('lldpad').trim() === 'active',
    raw: [
      `systemctl is-enabled → ${enabledText || '(nothing)'}`,
      `systemctl show → ${part('show').trim().split('\n').join(' ')}`,
      `lldpad: ${part('lldpad').trim() || '(no answer)'}`,
    ].join('\n'),
  };

  const scripts = collectScripts(results.scripts?.stdout ?? '');

  const nc = results['nccl-conf'];
  const conf = nc?.exitCode === 0 ? parseNcclConf(nc.stdout) : undefined;
  const tc = conf?.vars.NCCL_IB_TC;

  return {
    host,
    fabric,
    ports,
    persistence,
    scripts,
    problems,
    ...(tool ? { tool } : {}),
    ...(tc !== undefined ? { ncclIbTc: tc } : {}),
    ncclConfEvidence: nc
      ? nc.exitCode === 0
        ? `/etc/nccl.conf: ${tc !== undefined ? `NCCL_IB_TC=${tc}` : 'NCCL_IB_TC not set'}`
        : '/etc/nccl.conf: not present'
      : 'not run',
  };
}
