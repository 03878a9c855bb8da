/**
 * The network stage's per-host verdicts (docs/STAGES.md §3.4): which design is live, whether a bond can
 * carry RDMA (R16), netplan hygiene through lint's own rules (R18–R22), stale bonds (R23), LACP
 * (design B) and the firewall (R48, R46).
 */
import type { CheckDef } from '../../src/engine/types.js';
import { PORT_NEEDS, RDMA_PORT_NEEDS } from '../common/fabric.js';
import { buildFile, contextOf } from '../../src/lint/build.js';
import { runCfgRules } from '../../src/rules/cfg/index.js';
import { SEVERITY_RANK, sortFindings, type Finding } from '../../src/rules/types.js';
import type { BondFact, NetworkFacts } from './facts.js';
import { fabricPorts, sshPort } from './facts.js';
import { FABRIC_FILE } from './probes.js';
import { admits } from './ufw-status.js';

export type LiveDesign = 'none' | 'A' | 'B' | 'tutorial' | 'other';

/** Bonds with at least one fabric port as a member. */
export function fabricBonds(f: NetworkFacts): BondFact[] {
  const ports = new Set(fabricPorts(f));
  return f.bonds.filter((b) => b.slaves.some((s) => ports.has(s.name)));
}

const cardOf = (f: NetworkFacts, port: string): string | undefined =>
  f.fabric.ports.find((p) => p.netdev === port)?.card;

/** A bond's mode as the driver reported it, or that it reported none. */
const modeText = (b: BondFact): string => b.mode ?? 'mode not reported';

/** Classifies the live configuration (docs/STAGES.md §2 "Choice"). */
export function classify(f: NetworkFacts): { design: LiveDesign; why: string } {
  const ports = f.fabric.ports.filter((p) => p.netdev !== f.fabric.mgmt.netdev);
  const bonds = fabricBonds(f);
  const addressed = ports.filter((p) => p.addresses.length > 0);
  if (bonds.length === 0 && addressed.length === 0)
    return { design: 'none', why: 'no fabric port has an IPv4 address and no bond uses them' };
  if (bonds.length === 1) {
    const b = bonds[0]!;
    const cards = new Set(b.slaves.map((s) => cardOf(f, s.name)));
    if (cards.size > 1 && b.addresses.length > 0) {
      return {
        design: 'tutorial',
        why: `${b.name} bonds ${b.slaves.map((s) => s.name).join(', ')} across ${cards.size} cards (${modeText(b)}) with ${b.addresses.join(', ')}`,
      };
    }
  }
  if (
    bonds.length === 2 &&
    bonds.every(
      (b) =>
        b.slaves.length === 2 && new Set(b.slaves.map((s) => cardOf(f, s.name))).size === 1 && b.addresses.length > 0,
    )
  ) {
    return {
      design: 'B',
      why: bonds
        .map((b) => `${b.name} = ${b.slaves.map((s) => s.name).join(' + ')} (${modeText(b)}) ${b.addresses.join(', ')}`)
        .join('; '),
    };
  }
  if (bonds.length === 0 && addressed.length === ports.length) {
    const subnets = addressed.map((p) => p.addresses.map((a) => a.replace(/\.\d+\/(\d+)$/, '.0/$1')));
    const flat = subnets.flat();
    if (subnets.every((s) => s.length === 1) && new Set(flat).size === flat.length) {
      return { design: 'A', why: addressed.map((p) => `${p.netdev} ${p.addresses.join(', ')}`).join('; ') };
    }
  }
  const parts = [
    ...bonds.map((b) => `bond ${b.name}: ${b.slaves.map((s) => s.name).join(', ')} ${b.addresses.join(', ')}`),
    ...ports.map((p) => `${p.netdev}: ${p.addresses.join(', ') || 'no IPv4'}${p.master ? ` (in ${p.master})` : ''}`),
  ];
  return { design: 'other', why: parts.join('; ') };
}

const MIGRATE_FIX =
  'apply network.write and network.apply: design A (one /24 per cable, MTU 9000) under an armed rollback; a bond is deleted and its file moved to the backup directory. To keep the live design instead set network.design in the inventory (tutorial: later stages run degraded, the findings stand).';

export const designCheck: CheckDef<NetworkFacts> = {
  id: 'network.design',
  title: 'live network design',
  scope: 'host',
  needs: [...PORT_NEEDS, 'ip-addr', 'ip-bond'],
  evaluate(f, host, ctx) {
    const live = classify(f);
    const chosen = ctx.config.network.design;
    const evidence = `live: ${live.design} — ${live.why}\nchosen (network.design): ${chosen}`;
    if (fabricPorts(f).length === 0) {
      return {
        status: 'fail',
        summary: `no ConnectX fabric port on ${host}: no design can be configured`,
        evidence: `${evidence}\nno netdev belongs to a ConnectX function`,
        fix: 'see inventory.nics and inventory.netdevs',
      };
    }
    if (live.design === chosen) return { status: 'pass', summary: `design ${chosen} is live`, evidence };
    if (live.design === 'none')
      return {
        status: 'fail',
        summary: `no fabric configuration yet; design ${chosen} proposed`,
        evidence,
        fix: 'apply network.write and network.apply',
      };
    return {
      status: 'fail',
      summary: `live design is ${live.design}, chosen ${chosen}`,
      evidence,
      fix: MIGRATE_FIX,
      ...(live.design === 'tutorial' ? { rule: 'R16' } : {}),
    };
  },
};

const LAG_MODES = new Set(['active-backup', 'balance-xor', '802.3ad']);

/** docs/STAGES.md §2's reasons why the tutorial's bond degrades RDMA. */
const TUTORIAL_REASONS = [
  '1. No RoCE LAG: one forms only when both ports of one dual-port card are the only slaves; four slaves on two cards keep four RDMA devices — no striping, no failover for RDMA.',
  "2. GID spill: the bond's GIDs land on all four slave RDMA ports (balance-xor has no active slave); a QP paired with a peer HCA on another cable (NCCL_CROSS_NIC default) reaches an HCA that does not own it: retry-exceeded errors or hangs.",
  '3. No "100GbE": one TCP flow hashes onto one 25G slave; RDMA ignores the bond\'s hashing.',
  '4. DCB cannot be set on a bond: `mlnx_qos -i bond0 …` exits 1 (R25).',
  '5. lacp-rate is silently dropped outside 802.3ad (R18); `netplan try` refuses the file (R22); `netplan apply` never deletes the bond later (R23).',
];

export const bondLagCheck: CheckDef<NetworkFacts> = {
  id: 'network.bond-lag',
  title: 'bonds carrying RDMA are RoCE LAGs',
  scope: 'host',
  needs: [...RDMA_PORT_NEEDS, 'ip-bond', 'bonding'],
  evaluate(f) {
    const bonds = fabricBonds(f);
    if (bonds.length === 0)
      return {
        status: 'skip',
        summary: 'no bond uses fabric ports',
        evidence: `bonds: ${f.bonds.map((b) => b.name).join(', ') || 'none'}`,
      };
    const bad: string[] = [];
    const lines: string[] = [];
    for (const b of bonds) {
      const cards = new Set(b.slaves.map((s) => s.card));
      const lag = f.fabric.rdma.find((r) => r.netdev === b.name && /^mlx5_bond_\d+$/.test(r.device));
      lines.push(`${b.name}: mode ${b.mode ?? 'not reported'}, ${b.addresses.join(', ') || 'no IPv4'}`);
      for (const s of b.slaves) {
        lines.push(`  ${s.name} → ${s.bdf ? `${s.bdf} (card ${s.card})` : 'not a PCI function'}`);
      }
      const rd = f.fabric.rdma.filter((r) => r.netdev === b.name || b.slaves.some((s) => s.name === r.netdev));
      lines.push(
        `  rdma link: ${rd.map((r) => `${r.device}/${r.port} ${r.state} netdev ${r.netdev}`).join('; ') || 'none'}`,
      );
      const problems: string[] = [];
      if (b.slaves.length !== 2)
        problems.push(`${b.slaves.length} slaves (a LAG needs exactly the two PFs of one card)`);
      else if (cards.size !== 1) problems.push('slaves on different cards');
      if (!LAG_MODES.has(b.mode ?? ''))
        problems.push(`mode ${b.mode ?? 'not reported'} (a LAG needs active-backup, balance-xor or 802.3ad)`);
      if (!lag) problems.push('no mlx5_bond_N device in `rdma link show`');
      if (problems.length > 0) bad.push(`${b.name}: ${problems.join('; ')}`);
    }
    const evidence = lines.join('\n');
    if (bad.length === 0)
      return {
        status: 'pass',
        summary: `${bonds.map((b) => b.name).join(', ')}: RoCE LAG formed`,
        evidence,
        rule: 'R16',
      };
    const crossCard = bonds.some((b) => new Set(b.slaves.map((s) => s.card)).size > 1);
    return {
      status: 'fail',
      rule: 'R16',
      summary: `no RoCE LAG: ${bad.join(' | ')}`,
      evidence: `${evidence}${crossCard ? `\n\n${TUTORIAL_REASONS.join('\n')}` : ''}`,
      fix: 'migrate to design A (network.write + network.apply), or design B: one 802.3ad bond per card with exactly its two PFs',
    };
  },
};

/** lint's netplan rules on the live files: one implementation per rule id. */
export function netplanFindings(f: NetworkFacts): Finding[] {
  const files = f.netplanFiles.map((x) => buildFile(x.path, x.text, x.mode));
  const ctx = contextOf(files);
  const wanted = new Set(['R18', 'R19', 'R20', 'R21', 'R22']);
  // l20-setup applies its own file under an armed rollback, never with netplan try: R22 is about other files.
  return sortFindings(
    files.flatMap((file) =>
      runCfgRules(file, ctx).filter((x) => wanted.has(x.rule) && !(x.rule === 'R22' && file.name === FABRIC_FILE)),
    ),
  );
}

export const netplanLintCheck: CheckDef<NetworkFacts> = {
  id: 'network.netplan-lint',
  title: 'netplan files: mode 600, no gateway4, bond parameters',
  scope: 'host',
  needs: ['netplan-files'],
  evaluate(f) {
    if (f.netplanFiles.length === 0 && f.problems.some((p) => p.probe === 'netplan-files')) {
      const p = f.problems.find((x) => x.probe === 'netplan-files')!;
      return {
        status: 'error',
        summary: 'cannot tell: could not read /etc/netplan',
        evidence: p.evidence,
        fix: 'sudo must work without a password (os.sudo)',
      };
    }
    if (f.netplanFiles.length === 0) {
      return {
        status: 'skip',
        summary: 'no /etc/netplan/*.yaml: nothing to lint',
        evidence: 'ls /etc/netplan/*.yaml (as root): no file',
      };
    }
    const findings = netplanFindings(f);
    const listing = f.netplanFiles.map((x) => `${(x.mode & 0o7777).toString(8).padStart(4, '0')} ${x.path}`).join('\n');
    if (findings.length === 0)
      return { status: 'pass', summary: `${f.netplanFiles.length} netplan file(s) clean`, evidence: listing };
    const worst = findings[0]!;
    const status = SEVERITY_RANK[worst.severity] >= SEVERITY_RANK.high ? 'fail' : 'warn';
    const gatewayOnly = findings.every((x) => x.rule === 'R21' && /gateway/.test(x.evidence));
    return {
      status,
      rule: worst.rule,
      summary: findings
        .map((x) => `${x.rule} ${x.title}`)
        .filter((v, i, a) => a.indexOf(v) === i)
        .join('; '),
      // lint's evidence mostly starts with the file's line; the source (`path:line`) says where.
      evidence: `${listing}\n${findings.map((x) => `${x.rule} (${x.severity}) ${x.source && !x.evidence.startsWith(x.source.split(':')[0] as string) ? `${x.source} ` : ''}${x.evidence}`).join('\n')}`,
      fix: gatewayOnly
        ? 'apply network.mgmt-routes (gateway4 → a default route, under an armed rollback)'
        : findings.map((x) => `${x.rule}: ${x.fix}`).join('\n'),
    };
  },
};

export const staleDevicesCheck: CheckDef<NetworkFacts> = {
  id: 'network.stale-devices',
  title: 'no bond that no file defines',
  scope: 'host',
  needs: ['ip-bond', 'bonding'],
  evaluate(f) {
    const stale = f.bonds.filter((b) => !b.described);
    const evidence =
      f.bonds
        .map(
          (b) =>
            `${b.name}: ${b.described ? 'defined in netplan' : 'NOT in any netplan file'}; slaves ${b.slaves.map((s) => s.name).join(', ') || 'none'}; ${b.addresses.join(', ') || 'no IPv4'}`,
        )
        .join('\n') || 'ip -d link show type bond: no bonds';
    if (f.bonds.length === 0) return { status: 'skip', summary: 'no bonds: none can be stale', evidence };
    if (!f.merged.ok) {
      return {
        status: 'error',
        summary: `cannot tell: \`netplan get\` failed, so which bond a file defines is unknown`,
        evidence: `${evidence}\n${f.merged.error ?? ''}`.trim(),
        fix: 'check `sudo netplan get` on the host (package netplan.io)',
      };
    }
    if (stale.length === 0) return { status: 'pass', summary: 'every bond is defined by a netplan file', evidence };
    return {
      status: 'fail',
      rule: 'R23',
      summary: `${stale.map((b) => b.name).join(', ')} exist(s) but no netplan file defines them: they keep their slaves, addresses and GIDs`,
      evidence,
      fix: `network.apply deletes it (\`sudo ip link delete dev ${stale[0]!.name}\`) under its armed rollback; by hand: that command from the console, or reboot`,
    };
  },
};

export const lacpCheck: CheckDef<NetworkFacts> = {
  id: 'network.lacp',
  title: 'LACP aggregation up (design B)',
  scope: 'host',
  needs: [...PORT_NEEDS, 'ip-bond', 'bonding'],
  evaluate(f, _h, ctx) {
    const lacp = fabricBonds(f).filter((b) => b.mode === '802.3ad');
    if (ctx.config.network.design !== 'B' && lacp.length === 0)
      return {
        status: 'skip',
        summary: 'no 802.3ad bond (design B only)',
        evidence: `design ${ctx.config.network.design}`,
      };
    if (lacp.length === 0) {
      return {
        status: 'fail',
        summary: 'design B but no 802.3ad bond is live',
        evidence: f.bonds.map((b) => `${b.name}: ${modeText(b)}`).join('\n') || 'no bonds',
        fix: 'apply network.write and network.apply',
      };
    }
    const problems: string[] = [];
    const lines: string[] = [];
    for (const b of lacp) {
      const p = b.proc;
      const unread = 'not in /proc/net/bonding';
      lines.push(
        `${b.name}: ${p?.modeText ?? modeText(b)}; aggregator ${p?.activeAggregator?.id ?? (p?.noActiveAggregator ? 'none' : unread)}; partner ${p?.activeAggregator?.partnerMac ?? unread}`,
      );
      for (const s of p?.slaves ?? [])
        lines.push(`  ${s.name}: MII ${s.mii ?? unread}, Aggregator ID ${s.aggregatorId ?? 'N/A'}`);
      if (!p) {
        problems.push(`${b.name}: /proc/net/bonding/${b.name} unreadable`);
        continue;
      }
      if (p.noActiveAggregator) problems.push(`${b.name} has no active aggregator`);
      if (p.slaves.some((s) => s.mii !== 'up')) problems.push(`${b.name}: a slave is down`);
      if (new Set(p.slaves.map((s) => s.aggregatorId)).size > 1)
        problems.push(`${b.name}: slaves in different aggregators`);
      if (!p.activeAggregator?.partnerMac || p.activeAggregator.partnerMac === '00:00:00:00:00:00')
        problems.push(`${b.name}: no LACP partner (peer not in 802.3ad?)`);
    }
    if (problems.length === 0)
      return {
        status: 'pass',
        summary: `${lacp.map((b) => b.name).join(', ')}: one aggregator, both slaves up, partner seen`,
        evidence: lines.join('\n'),
      };
    return {
      status: 'fail',
      summary: problems.join('; '),
      evidence: lines.join('\n'),
      fix: 'identical 802.3ad bonds on both ends (network.write on every host), cables as design B needs them',
      rule: 'R16',
    };
  },
};

/** The interfaces fabric traffic arrives on: the ports, or the bonds over them. */
export function fabricL3Names(f: NetworkFacts): string[] {
  const names = f.fabric.ports.filter((p) => p.netdev !== f.fabric.mgmt.netdev).map((p) => p.master ?? p.netdev);
  return [...new Set(names)];
}

export const firewallCheck: CheckDef<NetworkFacts> = {
  id: 'network.firewall',
  title: 'firewall on, fabric and SSH admitted',
  scope: 'host',
  needs: ['ufw', ...PORT_NEEDS, 'route-default'],
  evaluate(f) {
    const u = f.ufw;
    const mgmt = f.fabric.mgmt.netdev;
    const port = sshPort(f);
    if (!u.available) {
      return {
        status: 'error',
        rule: 'R48',
        summary: 'cannot tell: `ufw status verbose` did not answer',
        evidence: u.evidence,
        fix: 'run `sudo ufw status verbose` on the host by hand',
      };
    }
    if (!u.active) {
      return {
        status: 'warn',
        rule: 'R48',
        summary: 'firewall inactive: Ray dashboard/Jobs API and vLLM are reachable from every network (R46)',
        evidence: u.evidence,
        fix: 'apply network.firewall: ALLOW IN on each fabric interface and the SSH port on management, then `ufw enable`, under an armed rollback (hardware RoCE bypasses netfilter; UDP 4791 rules are inert)',
      };
    }
    const missing: string[] = [];
    if (!mgmt || !admits(u, mgmt, port)) missing.push(`${port}/tcp on ${mgmt ?? 'the management interface'}`);
    for (const n of fabricL3Names(f)) if (!admits(u, n)) missing.push(`in on ${n}`);
    if (missing.length === 0) {
      return {
        status: 'pass',
        rule: 'R48',
        summary: `ufw active; ${fabricL3Names(f).length ? `fabric (${fabricL3Names(f).join(', ')})` : 'no fabric interface'} and SSH on ${mgmt} admitted`,
        evidence: u.evidence,
      };
    }
    return {
      status: 'fail',
      rule: 'R48',
      summary: `ufw active but missing ALLOW IN: ${missing.join(', ')}`,
      evidence: u.evidence,
      fix: 'apply network.firewall (adds the missing rules)',
    };
  },
};

export const networkHostChecks: readonly CheckDef<NetworkFacts>[] = [
  designCheck,
  bondLagCheck,
  netplanLintCheck,
  staleDevicesCheck,
  lacpCheck,
  firewallCheck,
];
