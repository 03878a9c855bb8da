/** nccl verdicts on configuration and versions (docs/STAGES.md §3.9; R01–R15, R47). The validation run is in validation.ts. */
import { controlSubnet } from '../common/design.js';
import type { CheckDef, HostCheckDef, PairCheckDef } from '../../src/engine/types.js';
import { buildFile, contextOf } from '../../src/lint/build.js';
import { runCfgRules } from '../../src/rules/cfg/index.js';
import type { Finding } from '../../src/rules/types.js';
import { CLUSTER_REQUIREMENTS, PINS } from '../common/pins.js';
import { BENCH_PATH, BENCH_SCRIPT } from './bench-script.js';
import {
  NCCL_CONF,
  GENERATED_MARK,
  confBody,
  desiredConf,
  effectiveSettings,
  inSubnet,
  resolveHca,
  resolveSocketIfname,
} from './conf.js';
import type { NcclFacts } from './facts.js';

const CONF_FIX = `apply nccl.conf: writes ${NCCL_CONF} (0644) from this host's \`rdma link show\` names for the configured design`;

/** The probes that re-discover this host's fabric ports, addresses and RDMA devices (checks/common/fabric.ts). */
const FABRIC_NEEDS = ['lspci-nics', 'ip-link', 'ip-addr', 'sysfs-net'] as const;

/** A pair check on one host has nothing to compare. */
function oneHost(all: ReadonlyArray<{ host: string }>, rule: string) {
  return {
    status: 'skip' as const,
    rule,
    summary: `one host (${all[0]?.host ?? 'none'}): nothing to compare`,
    evidence: `hosts: ${all.map((h) => h.host).join(', ') || 'none'}`,
  };
}

/** The cfg rules a conf-lint covers: the NCCL ones (R01–R15). */
const NCCL_RULES = /^R(0[1-9]|1[0-5])$/;

function lintSources(f: NcclFacts): Array<{ name: string; findings: Finding[] }> {
  const sources = [
    ...f.confFiles.map((c) => ({ name: c.path, text: c.text })),
    ...(f.envLines.length > 0 ? [{ name: 'environment (bash -lc printenv)', text: `${f.envLines.join('\n')}\n` }] : []),
    ...f.units.map((u) => ({ name: u.path, text: u.text })),
  ];
  const files = sources.map((s) => buildFile(s.name, s.text));
  const ctx = contextOf(files);
  // Version-dependent rules (R01 tokens, R05) use the NCCL this host really runs.
  if (f.torch?.nccl) ctx.versions.nccl = f.torch.nccl;
  return files.map((file) => ({
    name: file.name,
    findings: runCfgRules(file, ctx).filter((x) => NCCL_RULES.test(x.rule)),
  }));
}

function precedence(f: NcclFacts): string {
  const eff = [...effectiveSettings(f)].filter(([k]) => k.startsWith('NCCL_') || k === 'GLOO_SOCKET_IFNAME');
  if (eff.length === 0) return 'effective settings: none (NCCL defaults)';
  return `effective settings (environment > ${f.confFiles.map((c) => c.path).join(' > ') || 'no conf file'}):\n${eff.map(([k, v]) => `  ${k}=${v.value}  (${v.source})`).join('\n')}`;
}

export const confLint: HostCheckDef<NcclFacts> = {
  id: 'nccl.conf-lint',
  title: 'NCCL settings lint (R01–R15)',
  scope: 'host',
  needs: ['nccl-conf', 'nccl-env', 'nccl-units'],
  evaluate(f) {
    const per = lintSources(f);
    const all = per.flatMap((p) => p.findings.map((x) => ({ ...x, source: p.name })));
    const evidence = [
      ...all.map(
        (x) =>
          `${x.source}${x.line ? `:${x.line}` : ''} ${x.rule} ${x.severity}: ${x.evidence.replace(/\s*\n\s*/g, ' ')}`,
      ),
      precedence(f),
    ].join('\n');
    if (all.length === 0) {
      const what = [
        ...f.confFiles.map((c) => c.path),
        ...(f.envLines.length ? ['environment'] : []),
        ...f.units.map((u) => u.path),
      ];
      if (what.length === 0)
        return {
          status: 'skip',
          summary: 'no nccl.conf, NCCL_* environment or unit setting: nothing to lint',
          evidence,
        };
      return { status: 'pass', summary: `no finding in ${what.join(', ')}`, evidence };
    }
    const worst = all[0]!;
    const failing = all.filter((x) => x.severity === 'blocker' || x.severity === 'high');
    const status = failing.length > 0 ? 'fail' : 'warn';
    const rules = [...new Set(all.map((x) => x.rule))].join(', ');
    return {
      status,
      rule: worst.rule,
      summary: `${all.length} finding${all.length === 1 ? '' : 's'} (${rules}): ${worst.title}`,
      evidence,
      fix: `${CONF_FIX}; it replaces the file (the previous version is kept in the run's backup). ${[...new Set(all.map((x) => x.fix))].slice(0, 3).join(' ')}`,
    };
  },
};

export const hcaResolve: HostCheckDef<NcclFacts> = {
  id: 'nccl.hca-resolve',
  title: 'NCCL_IB_HCA resolves on this host (R06, R07)',
  scope: 'host',
  needs: ['rdma-link', ...FABRIC_NEEDS, 'nccl-conf', 'nccl-env', 'nccl-units'],
  evaluate(f, _host, ctx) {
    const devices = f.fabric.rdma.map((r) => r.device);
    const listing =
      f.fabric.rdma.map((r) => `${r.device}/${r.port} ${r.state} ${r.netdev ?? ''}`.trim()).join('\n') ||
      '(rdma link show: no RDMA device)';
    const eff = effectiveSettings(f).get('NCCL_IB_HCA');
    const want = desiredConf(ctx.config, f.fabric, ctx.runId);
    const rails = typeof want === 'string' ? devices.length : want.expectedRails;
    if (devices.length === 0) {
      return {
        status: 'fail',
        rule: 'R06',
        summary: 'no RDMA device on this host (rdma link show lists none): NCCL would fall back to TCP sockets',
        evidence: `NCCL_IB_HCA: ${eff?.value ? `${eff.value} (${eff.source})` : 'unset'}\nrdma link show:\n${listing}`,
        fix: 'see inventory.rdma and the nic-stack stage (mlx5_ib, rdma-core)',
      };
    }
    if (!eff || eff.value === '') {
      return {
        status: 'fail',
        rule: 'R06',
        summary: 'NCCL_IB_HCA is not set: NCCL would take every RDMA device, whatever the design',
        evidence: `NCCL_IB_HCA: unset\nrdma link show:\n${listing}`,
        fix: CONF_FIX,
      };
    }
    const res = resolveHca(eff.value, devices);
    const tokens = res.tokens
      .map((t) => `${t.text} → ${t.matches.length ? t.matches.join(' ') : 'nothing'}`)
      .join('\n');
    const evidence = `NCCL_IB_HCA=${eff.value} (${eff.source})\n${tokens}\nrdma link show:\n${listing}`;
    const dead = res.tokens.filter((t) => t.matches.length === 0);
    if (res.devices.length === 0) {
      return {
        status: 'fail',
        rule: dead.length > 0 ? 'R07' : 'R06',
        summary: `NCCL_IB_HCA=${eff.value} matches no RDMA device: NCCL prints "NET/IB : No device found." and falls back to TCP sockets`,
        evidence,
        fix: CONF_FIX,
      };
    }
    if (dead.length > 0 || res.devices.length < rails) {
      return {
        status: 'warn',
        rule: 'R06',
        summary: `NCCL_IB_HCA selects ${res.devices.length} of ${rails} rails (${res.devices.join(', ')})${dead.length ? `; ${dead.map((t) => t.text).join(', ')} match nothing` : ''}`,
        evidence,
        fix: CONF_FIX,
      };
    }
    return { status: 'pass', rule: 'R06', summary: `NCCL_IB_HCA selects ${res.devices.join(', ')}`, evidence };
  },
};

export const socketIfname: HostCheckDef<NcclFacts> = {
  id: 'nccl.socket-ifname',
  title: 'NCCL_SOCKET_IFNAME selects the control network (R14)',
  scope: 'host',
  needs: [...FABRIC_NEEDS, 'nccl-conf', 'nccl-env', 'nccl-units'],
  evaluate(f, _host, ctx) {
    const subnet = controlSubnet(ctx.config.network.design);
    const eff = effectiveSettings(f).get('NCCL_SOCKET_IFNAME');
    const sel = resolveSocketIfname(eff?.value, f.fabric);
    const first = sel[0];
    const evidence = `NCCL_SOCKET_IFNAME=${eff ? `${eff.value} (${eff.source})` : 'unset (NCCL default: the first interface but lo and docker*)'}\nselected: ${sel.map((s) => `${s.name} ${s.addresses.join(' ')}`).join('; ') || 'none'}\ncontrol subnet (design ${ctx.config.network.design}): ${subnet}`;
    if (!first) {
      const who = eff?.value
        ? `NCCL_SOCKET_IFNAME=${eff.value} selects`
        : "NCCL's default choice (NCCL_SOCKET_IFNAME unset) finds";
      return {
        status: 'fail',
        rule: 'R14',
        summary: `${who} no UP interface with an IPv4 address: NCCL bootstrap fails ("no socket interface found")`,
        evidence,
        fix: CONF_FIX,
      };
    }
    if (!first.addresses.some((a) => inSubnet(a, subnet))) {
      const mgmt = first.name === f.fabric.mgmt.netdev;
      return {
        status: 'warn',
        rule: 'R14',
        summary: `NCCL bootstrap would use ${first.name} (${first.addresses.join(' ')})${mgmt ? ', the management interface,' : ''} not the control subnet ${subnet}`,
        evidence,
        fix: CONF_FIX,
      };
    }
    if (eff && !eff.value.startsWith('=')) {
      return {
        status: 'warn',
        rule: 'R14',
        summary: `NCCL_SOCKET_IFNAME=${eff.value} is a prefix: it also matches ${eff.value}.<vlan> and similar names`,
        evidence,
        fix: CONF_FIX,
      };
    }
    return {
      status: 'pass',
      rule: 'R14',
      summary: `bootstrap on ${first.name} ${first.addresses.find((a) => inSubnet(a, subnet))}`,
      evidence,
    };
  },
};

export const confNames: HostCheckDef<NcclFacts> = {
  id: 'nccl.conf-names',
  title: 'generated nccl.conf matches the live names',
  scope: 'host',
  needs: ['nccl-conf', 'rdma-link', ...FABRIC_NEEDS],
  evaluate(f, _host, ctx) {
    const file = f.confFiles.find((c) => c.path === NCCL_CONF);
    if (f.fabric.ports.length === 0) {
      return {
        status: 'fail',
        summary: `cannot generate ${NCCL_CONF}: no ConnectX port on ${f.host} to name`,
        evidence: 'no netdev belongs to a ConnectX function (lspci -d 15b3:)',
        fix: 'see inventory.nics and inventory.netdevs',
      };
    }
    const want = desiredConf(ctx.config, f.fabric, ctx.runId);
    if (typeof want === 'string')
      return {
        status: 'fail',
        summary: `cannot generate ${NCCL_CONF}: ${want}`,
        evidence: want,
        fix: 'complete the earlier stages (network, nic-stack), then apply nccl.conf',
      };
    const wantText = `want (design ${ctx.config.network.design}):\n${want.body}`;
    if (!file) return { status: 'fail', summary: `${NCCL_CONF} is missing`, evidence: wantText, fix: CONF_FIX };
    if (!file.text.startsWith(GENERATED_MARK)) {
      return {
        status: 'fail',
        summary: `${NCCL_CONF} was not generated by l20-setup`,
        evidence: `${NCCL_CONF}:\n${file.text}\n${wantText}`,
        fix: CONF_FIX,
      };
    }
    if (confBody(file.text) !== want.body) {
      return {
        status: 'fail',
        rule: 'R07',
        summary: `${NCCL_CONF} no longer matches this host's names (stack change, bonding or reboot)`,
        evidence: `${NCCL_CONF}:\n${confBody(file.text)}\n${wantText}`,
        fix: CONF_FIX,
      };
    }
    if (file.mode && file.mode !== '644') {
      return {
        status: 'warn',
        summary: `${NCCL_CONF} has mode ${file.mode}, not 0644 (every NCCL user must read it)`,
        evidence: `stat -c %a ${NCCL_CONF} → ${file.mode}`,
        fix: CONF_FIX,
      };
    }
    return {
      status: 'pass',
      summary: `${NCCL_CONF} names ${want.devices.join(', ')} on ${want.socketIfname}`,
      evidence: confBody(file.text),
    };
  },
};

export const benchTools: HostCheckDef<NcclFacts> = {
  id: 'nccl.bench-tools',
  title: 'validation tools installed (venv, torchrun, benchmark)',
  scope: 'host',
  needs: ['nccl-tools'],
  evaluate(f) {
    const evidence = [
      `torchrun: ${f.torchruns.join(', ') || 'none'}`,
      `venv: ${
        Object.entries(f.venvDists)
          .map(([k, v]) => `${k}==${v}`)
          .join(' ') || 'none'
      }`,
      `${BENCH_PATH}: ${f.benchScript === undefined ? 'missing' : f.benchScript === BENCH_SCRIPT ? 'current' : 'differs from this version of l20-setup'}`,
    ].join('\n');
    const pinned = f.venvDists.vllm === PINS.vllm && f.venvDists.ray === PINS.ray;
    if (pinned && f.benchScript === BENCH_SCRIPT && f.torchruns.some((t) => t.startsWith('/opt/l20/venv/'))) {
      const torch = f.venvDists.torch ? `torch ${f.venvDists.torch}` : 'no torch in pip freeze';
      return {
        status: 'pass',
        summary: `venv with vllm ${PINS.vllm}, ray ${PINS.ray}, ${torch}; benchmark in place`,
        evidence,
      };
    }
    return {
      status: 'fail',
      summary: !pinned
        ? 'the cluster venv with the pinned vLLM/Ray is missing'
        : 'the benchmark script is missing or stale',
      evidence,
      fix: `apply nccl.bench-tools: python3 -m venv /opt/l20/venv && /opt/l20/venv/bin/pip install ${CLUSTER_REQUIREMENTS.join(' ')}, and ${BENCH_PATH}`,
    };
  },
};

/** Lines of two conf files with device and interface names masked: equal ⇒ they differ only in names. */
function maskNames(text: string): string {
  return confBody(text)
    .split('\n')
    .map((l) => l.replace(/^(NCCL_IB_HCA=|NCCL_SOCKET_IFNAME=)=?.*$/, '$1<names>'))
    .join('\n');
}

export const confParity: PairCheckDef<NcclFacts> = {
  id: 'nccl.conf-parity',
  title: 'nccl.conf equal on every host (R12, R07)',
  scope: 'pair',
  needs: ['nccl-conf'],
  evaluate(all) {
    if (all.length < 2) return oneHost(all, 'R12');
    const ref = all[0]!;
    const text = (h: (typeof all)[number]) => h.facts.confFiles.find((c) => c.path === NCCL_CONF)?.text;
    const evidence = all
      .map((h) => `${h.host}: ${NCCL_CONF}\n${text(h) === undefined ? '(missing)' : confBody(text(h)!)}`)
      .join('\n');
    const missing = all.filter((h) => text(h) === undefined);
    if (missing.length === all.length)
      return { status: 'fail', rule: 'R12', summary: `no host has ${NCCL_CONF}`, evidence, fix: CONF_FIX };
    if (missing.length > 0)
      return {
        status: 'fail',
        rule: 'R12',
        summary: `${NCCL_CONF} missing on ${missing.map((h) => h.host).join(', ')}`,
        evidence,
        fix: CONF_FIX,
      };
    const differ = all.filter((h) => confBody(text(h)!) !== confBody(text(ref)!));
    if (differ.length === 0)
      return { status: 'pass', rule: 'R12', summary: `${NCCL_CONF} identical on ${all.length} hosts`, evidence };
    const namesOnly = differ.every((h) => maskNames(text(h)!) === maskNames(text(ref)!));
    if (namesOnly) {
      return {
        status: 'warn',
        rule: 'R07',
        summary: `device or interface names differ on ${differ.map((h) => h.host).join(', ')}: keep them in each host's ${NCCL_CONF}, never in exported NCCL_* variables (vLLM copies those to every Ray worker)`,
        evidence,
        fix: 'use one NIC stack on all hosts so names agree (R07); the files stay per host',
      };
    }
    return {
      status: 'warn',
      rule: 'R12',
      summary: `${NCCL_CONF} differs on ${differ.map((h) => h.host).join(', ')} beyond names`,
      evidence,
      fix: CONF_FIX,
    };
  },
};

export const versionParity: PairCheckDef<NcclFacts> = {
  id: 'nccl.version',
  title: 'one NCCL version on every host (R47)',
  scope: 'pair',
  needs: ['nccl-version'],
  evaluate(all) {
    // One host has no peer to differ from, but its NCCL is still found or not: that is worth saying either way.
    const v = (h: (typeof all)[number]) => h.facts.torch?.nccl;
    const torchLine = (t: NonNullable<NcclFacts['torch']>, nccl: string | undefined): string =>
      `${t.source}: ${t.version ? `torch ${t.version}` : 'torch not importable'}, ` +
      `NCCL ${nccl ?? t.error ?? 'not printed'}`;
    const evidence = all
      .map(
        (h) =>
          `${h.host}: ${h.facts.torch ? torchLine(h.facts.torch, v(h)) : 'no torch'}` +
          `${h.facts.libnccl2 ? `; libnccl2 ${h.facts.libnccl2}` : ''}`,
      )
      .join('\n');
    const unknown = all.filter((h) => !v(h));
    if (unknown.length > 0) {
      return {
        status: 'fail',
        rule: 'R47',
        summary: `no NCCL found through torch on ${unknown.map((h) => h.host).join(', ')}`,
        evidence,
        fix: `apply nccl.bench-tools (the cluster venv: torch ${PINS.torch} with NCCL ${PINS.nccl})`,
      };
    }
    const versions = [...new Set(all.map(v))];
    if (versions.length > 1)
      return {
        status: 'warn',
        rule: 'R47',
        summary: `NCCL versions differ: ${versions.join(' vs ')}`,
        evidence,
        fix: 'install the same pinned venv on every host (apply nccl.bench-tools)',
      };
    const where = all.length === 1 ? `the one host (${all[0]!.host}): nothing to compare` : `${all.length} hosts`;
    return { status: 'pass', rule: 'R47', summary: `NCCL ${versions[0]} on ${where}`, evidence };
  },
};

export const configChecks: readonly CheckDef<NcclFacts, unknown>[] = [
  confLint,
  hcaResolve,
  socketIfname,
  confNames,
  benchTools,
  confParity,
  versionParity,
];
