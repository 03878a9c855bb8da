/** R09 NCCL_IB_SL, R12 nccl.conf syntax, R13 sourced/exported NCCL variables, R14 socket interface, R15 cross-NIC. */
import { strictLine } from '../../parse/nccl-conf.js';
import type { Finding, Severity } from '../types.js';
import { sourceOf } from './commands.js';
import {
  allDevices,
  allSettings,
  cmdText,
  commandsOf,
  mgmtDevices,
  mk,
  ROCE_PRIO,
  settingsOf,
  short,
  worst,
} from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { designOf, ifnameSelects } from './design.js';
import { launchesOf } from './launch.js';
import { qosState } from './qos.js';

export const R09: CfgRule = {
  id: 'R09',
  title: 'NCCL_IB_SL does not match the PFC priority under PCP trust',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const q = qosState(ctx);
    if (q.trust !== 'pcp') return []; // under DSCP trust the SL is inert
    const prio = q.prios[0] ?? ROCE_PRIO;
    return settingsOf(f, 'NCCL_IB_SL')
      .filter((s) => /^\d+$/.test(s.value.trim()) && (Number(s.value) & 7) !== prio)
      .map((s) =>
        mk(
          this,
          'low',
          f,
          s.line,
          `${s.raw} → trust pcp (supplied QoS commands): priority = SL & 7 = ${Number(s.value) & 7}, but PFC is on priority ${prio}`,
          `\`NCCL_IB_SL=${prio}\`, or move to DSCP trust (\`mlnx_qos -i <pf> --trust dscp\`, R08).`,
        ),
      );
  },
};

export const R12: CfgRule = {
  id: 'R12',
  title: 'nccl.conf line NCCL reads differently than intended',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const s of f.settings) {
      const e = s.entry;
      if (s.origin !== 'conf' || !e || e.problems.length === 0) continue;
      if (f.kind === 'env' && !e.key.startsWith('NCCL_')) continue;
      out.push(
        mk(
          this,
          'medium',
          f,
          s.line,
          `${e.raw} → ${e.problems.join('; ')}`,
          `Write it as \`${strictLine(e)}\` (NAME=value, \`#\` only in column 0, no export, no quotes); identical files on every host.`,
        ),
      );
    }
    if (f.kind === 'nccl-conf')
      for (const m of f.confMalformed)
        out.push(
          mk(
            this,
            'medium',
            f,
            m.line,
            `${m.raw.trim()} → ${m.reason}`,
            `Delete the line, or make it a comment with \`#\` in column 0.`,
          ),
        );
    return out;
  },
};

const KV_FILE = /(?:^|\/)(?:\.?nccl\.conf|[^/]*\.env|environment|[^/]*\.conf)$/;

export const R13: CfgRule = {
  id: 'R13',
  title: 'NCCL settings sourced or exported instead of read from /etc/nccl.conf',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    const cmds = commandsOf(f);
    const setA = (line: number): boolean =>
      cmds.some(
        (c) => c.program === 'set' && c.line <= line && c.argv.some((w) => w.text === '-a' || w.text === 'allexport'),
      );
    const kvNames = new Set(
      ctx.files.filter((x) => x.kind === 'nccl-conf' || x.kind === 'env').map((x) => short(x.name)),
    );
    for (const c of cmds) {
      const file = sourceOf(c);
      if (!file || setA(c.line)) continue;
      if (!KV_FILE.test(file.text) && !kvNames.has(short(file.text))) continue;
      out.push(
        mk(
          this,
          'high',
          f,
          c.line,
          `${cmdText(f, c)} → ${file.text} holds KEY=VALUE lines without \`export\`: sourcing sets shell variables only, nothing reaches the process it starts (NCCL reads /etc/nccl.conf itself)`,
          `Delete \`${cmdText(f, c)}\`; keep node-specific values in each host's /etc/nccl.conf, with names identical across hosts (R07).`,
        ),
      );
    }
    const ray = launchesOf(f).filter((l) => l.usesRay);
    if (ray.length > 0) {
      const exported = f.settings.filter(
        (s) =>
          s.key.startsWith('NCCL_') &&
          (s.origin === 'export' ||
            s.origin === 'python' ||
            s.origin === 'unit' ||
            (s.origin === 'assign' && setA(s.line))),
      );
      for (const s of exported) {
        out.push(
          mk(
            this,
            'high',
            f,
            s.line,
            `${s.raw} → exported where vLLM starts with Ray (line ${ray[0]?.line}): vLLM copies every NCCL_* (and VLLM_*, UCX_*, HF_*) variable to all Ray workers, so this host's value overrides the other node's configuration`,
            `Drop \`${s.raw}\`; put the value in each host's /etc/nccl.conf.`,
          ),
        );
      }
    }
    return out;
  },
};

export const R14: CfgRule = {
  id: 'R14',
  title: 'NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME selects the wrong interface',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    const devs = allDevices(ctx);
    const mgmt = mgmtDevices(ctx);
    const design = designOf(ctx);
    const control = design.control ?? '<cable-1 netdev>';
    for (const key of ['NCCL_SOCKET_IFNAME', 'GLOO_SOCKET_IFNAME']) {
      for (const s of settingsOf(f, key)) {
        const v = s.value.trim();
        const why: Array<[Severity, string]> = [];
        if (key === 'GLOO_SOCKET_IFNAME' && v.startsWith('='))
          why.push(['high', `Gloo has no \`=\` syntax: it looks for an interface literally named "${v}"`]);
        else if (!v.startsWith('^') && devs.length > 0) {
          const value = key === 'GLOO_SOCKET_IFNAME' ? `=${v}` : v;
          const hits = devs.filter(({ d }) => ifnameSelects(value, d.name));
          if (hits.length === 0)
            why.push([
              'high',
              `no interface in the supplied netplan matches (${devs.map(({ d }) => d.name).join(', ')})${design.kind === 'A' ? '; design A has no bond' : ''}: NCCL bootstrap finds no socket interface`,
            ]);
          else if (hits.every(({ d }) => mgmt.has(d.name)) && design.kind !== 'none')
            why.push([
              'medium',
              `${hits.map(({ d }) => d.name).join(', ')} is the management (default-route) interface while a cluster network exists`,
            ]);
          else {
            const h = hits[0];
            if (h)
              why.push([
                'info',
                `selects ${hits.map(({ d }) => d.name).join(', ')} (${short(h.file.name)}:${h.d.lines.name})`,
              ]);
          }
        }
        if (key === 'NCCL_SOCKET_IFNAME' && !v.startsWith('=') && !v.startsWith('^'))
          why.push([
            'low',
            `no leading \`=\`: the value is a prefix, so \`${v.split(',')[0]}\` also matches \`${v.split(',')[0]}.100\`, \`${v.split(',')[0]}1\`…`,
          ]);
        const problems = why.filter(([sev]) => sev !== 'info');
        if (problems.length === 0) continue;
        const fixIf = design.kind === 'B' || design.kind === 'tutorial' ? (design.control ?? 'bond0') : control;
        out.push(
          mk(
            this,
            worst(problems.map(([sev]) => sev)),
            f,
            s.line,
            `${s.raw} → ${why.map(([, w]) => w).join('; ')}. Live UP/IPv4 check: not checked (needs host)`,
            `\`NCCL_SOCKET_IFNAME==${fixIf}\` and \`GLOO_SOCKET_IFNAME=${fixIf}\` (Gloo takes the plain name).`,
          ),
        );
      }
    }
    return out;
  },
};

export const R15: CfgRule = {
  id: 'R15',
  title: 'NCCL_CROSS_NIC allows rails that no cable joins (design A)',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    if (designOf(ctx).kind !== 'A') return [];
    const set = settingsOf(f, 'NCCL_CROSS_NIC');
    const bad = set.filter((s) => s.value.trim() !== '0');
    const out: Finding[] = bad.map((s) =>
      mk(
        this,
        'low',
        f,
        s.line,
        `${s.raw} → design A (one subnet per cable): NIC i may be paired with NIC j ≠ i on the peer, and no L2 path joins them ("ibv_modify_qp … 110 Connection timed out")`,
        '`NCCL_CROSS_NIC=0`, with same-named ports cabled together (R17 map).',
      ),
    );
    // unset: report once, on the first nccl.conf of the run, at its NCCL_IB_HCA line when present
    const firstConf = ctx.files.find((x) => x.kind === 'nccl-conf');
    if (set.length === 0 && firstConf === f && allSettings(ctx, 'NCCL_CROSS_NIC').length === 0) {
      const hca = settingsOf(f, 'NCCL_IB_HCA')[0];
      out.push(
        mk(
          this,
          'low',
          f,
          hca?.line,
          `${hca ? `${hca.raw} → ` : ''}NCCL_CROSS_NIC unset (default 2) under design A: NCCL may pair NIC i with NIC j ≠ i on the peer, and no cable joins them`,
          'Add `NCCL_CROSS_NIC=0`.',
        ),
      );
    }
    return out;
  },
};
