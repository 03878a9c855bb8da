/** Netplan rules R16–R22 (cfg parts). */
import type { NetplanDevice, NetplanFacts } from '../../parse/netplan-yaml.js';
import type { Finding } from '../types.js';
import { mlnxQosOf, rayStartOf, vllmLaunchOf } from './commands.js';
import { allCommands, allSettings, devicesOf, inSubnet, ipv4Net, lineText, mk, short } from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { designAYaml, ifnameSelects, lagProblems, pciFunction } from './design.js';

function* bondsOf(f: CfgFile): Generator<{ n: NetplanFacts; b: NetplanDevice }> {
  for (const n of f.netplans) for (const b of n.bonds) yield { n, b };
}

/** Why a bond carries RDMA / NCCL / Ray traffic (cross-file facts), or [] when nothing says so. */
function traffic(b: NetplanDevice, ctx: CfgContext): string[] {
  const out: string[] = [];
  for (const { file, s } of allSettings(ctx, 'NCCL_SOCKET_IFNAME'))
    if (ifnameSelects(s.value, b.name)) out.push(`NCCL: ${s.raw} (${short(file.name)}:${s.line})`);
  const ips: Array<{ ip: string; where: string }> = [];
  for (const { file, c } of allCommands(ctx)) {
    const r = rayStartOf(c);
    for (const fl of r ? [r.get('--address'), r.get('--node-ip-address')] : [])
      if (fl?.value)
        ips.push({
          ip: fl.value.split(':')[0] as string,
          where: `Ray: ${fl.name}=${fl.value} (${short(file.name)}:${fl.line})`,
        });
    const v = vllmLaunchOf(c)?.get('--data-parallel-address');
    if (v?.value)
      ips.push({ ip: v.value, where: `vLLM: --data-parallel-address ${v.value} (${short(file.name)}:${v.line})` });
  }
  for (const { file, s } of allSettings(ctx, 'VLLM_HOST_IP'))
    ips.push({ ip: s.value, where: `vLLM: ${s.raw} (${short(file.name)}:${s.line})` });
  for (const { ip, where } of ips)
    if (b.addresses.some((a) => inSubnet(ip, a))) out.push(`${where} is in ${b.addresses.join(', ')}`);
  const qosPorts = new Set(allCommands(ctx).flatMap(({ c }) => mlnxQosOf(c)?.iface?.value ?? []));
  const rdmaSlaves = b.interfaces.filter((s) => qosPorts.has(s));
  if (rdmaSlaves.length > 0) out.push(`slaves ${rdmaSlaves.join(', ')} are RoCE ports (DCB set on them)`);
  else if (b.interfaces.length > 0 && b.interfaces.every((s) => pciFunction(s)))
    out.push(`slaves are named as PCI functions of multi-port NICs (RDMA ports, statically)`);
  return out;
}

export const R16: CfgRule = {
  id: 'R16',
  title: 'RDMA over a Linux bond that is not a RoCE LAG',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    for (const { b } of bondsOf(f)) {
      const problems = lagProblems(b);
      if (problems.length === 0) continue;
      const why = traffic(b, ctx);
      if (why.length === 0) continue;
      const line = b.lines.interfaces ?? b.lines.name;
      out.push(
        mk(
          this,
          'blocker',
          f,
          line,
          `${line ? lineText(f, line) : b.name} → ${b.name}: ${problems.join('; ')}: no RoCE LAG forms, the bond's GIDs land on every slave's RDMA port while each QP leaves through its own port, and a QP paired with another NIC on the peer hits an HCA that does not own it (errors, hangs). Carries: ${why.join('; ')}. Slave→BDF and mlx5_bond_N: not checked (needs host); cabling is checked live (R17)`,
          `Design A: remove ${b.name} and give each port its own /24 — ${designAYaml(ctx)} — then \`sudo ip link delete dev ${b.name}\` from the console (netplan apply never deletes it, R23); or design B: one 802.3ad bond per NIC with exactly its two PFs, NCCL_IB_HCA==mlx5_bond_0:1,mlx5_bond_1:1 and NCCL_IB_QPS_PER_CONNECTION=2 (R06).`,
        ),
      );
    }
    return out;
  },
};

export const R17: CfgRule = {
  id: 'R17',
  title: 'Two RDMA ports of one host share a subnet',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const n of f.netplans) {
      const seen = new Map<string, NetplanDevice>();
      const slaves = new Set(n.bonds.flatMap((b) => b.interfaces));
      for (const d of devicesOf(n)) {
        if (slaves.has(d.name) || d.gateway4 || d.defaultVia) continue;
        for (const a of d.addresses) {
          const net = ipv4Net(a);
          if (!net || net.len === 32) continue;
          const key = `${net.net}/${net.len}`;
          const other = seen.get(key);
          if (other && other.name !== d.name) {
            const line = d.lines.addresses ?? d.lines.name;
            out.push(
              mk(
                this,
                'high',
                f,
                line,
                `${line ? lineText(f, line) : a} → ${d.name} (${a}) and ${other.name} (${other.addresses.join(', ')}) share one subnet: replies leave through either port (ARP flux; NVIDIA/nccl#1269, #1348)`,
                'One /24 per back-to-back cable: 192.168.101.0/24 … 192.168.104.0/24, host i = .i (design A).',
              ),
            );
          } else seen.set(key, d);
        }
      }
    }
    return out;
  },
};

function param(f: CfgFile, b: NetplanDevice, key: string): { value: string; line?: number; text: string } | undefined {
  const v = b.parameters[key];
  if (v === undefined) return undefined;
  const line = b.lines[`param:${key}`];
  return { value: String(v), ...(line ? { line } : {}), text: line ? lineText(f, line) : `${key}: ${v}` };
}

export const R18: CfgRule = {
  id: 'R18',
  title: '`lacp-rate` without `mode: 802.3ad` is dropped',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const { b } of bondsOf(f)) {
      const p = param(f, b, 'lacp-rate');
      const mode = String(b.mode ?? 'balance-rr');
      if (!p || mode === '802.3ad' || mode === '4') continue;
      out.push(
        mk(
          this,
          'medium',
          f,
          p.line,
          `${p.text} → ${b.name} runs mode ${mode}: networkd applies lacp-rate only in 802.3ad, so netplan drops it silently and the kernel would reject it (live: no "LACP rate:" in /proc/net/bonding/${b.name})`,
          `Remove \`lacp-rate: ${p.value}\`, or use \`mode: 802.3ad\` on both ends.`,
        ),
      );
    }
    return out;
  },
};

export const R19: CfgRule = {
  id: 'R19',
  title: '`transmit-hash-policy` has no effect in this bond mode',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const { b } of bondsOf(f)) {
      const p = param(f, b, 'transmit-hash-policy');
      const mode = String(b.mode ?? 'balance-rr');
      if (!p || ['balance-xor', '802.3ad', 'balance-tlb', '2', '4', '5'].includes(mode)) continue;
      out.push(
        mk(
          this,
          'low',
          f,
          p.line,
          `${p.text} → ${b.name} runs mode ${mode}, which ignores the hash policy; no policy spreads one flow or QP anyway`,
          `Remove \`transmit-hash-policy: ${p.value}\`.`,
        ),
      );
    }
    return out;
  },
};

function miiMs(v: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s)?$/.exec(v.trim());
  if (!m) return undefined;
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

export const R20: CfgRule = {
  id: 'R20',
  title: 'Bond without link monitoring',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const { b } of bondsOf(f)) {
      if (b.parameters['arp-interval'] !== undefined || b.parameters['arp-ip-targets'] !== undefined) continue;
      const p = param(f, b, 'mii-monitor-interval');
      const ms = p ? miiMs(p.value) : undefined;
      if (p && ms !== 0) continue;
      const line = p?.line ?? b.lines.parameters ?? b.lines.name;
      out.push(
        mk(
          this,
          'low',
          f,
          line,
          `${line ? lineText(f, line) : b.name} → ${b.name}: ${p ? 'mii-monitor-interval 0' : 'no mii-monitor-interval'} and no ARP monitoring, so a slave's link loss goes unseen`,
          `Add \`mii-monitor-interval: 100\` under ${b.name}'s parameters (a bare number is milliseconds, netplan ≥ 0.100).`,
        ),
      );
    }
    return out;
  },
};

export const R21: CfgRule = {
  id: 'R21',
  title: 'Netplan hygiene',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const n of f.netplans) {
      for (const e of n.errors)
        out.push(
          mk(
            this,
            'high',
            f,
            e.line,
            `${lineText(f, e.line)} → YAML error: ${e.message}; \`netplan generate\` rejects the whole file`,
            'Fix the YAML (spaces, not tabs; closed brackets), then run `sudo netplan generate` before applying.',
            'Netplan YAML does not parse',
          ),
        );
      for (const d of devicesOf(n)) {
        for (const k of ['gateway4', 'gateway6'] as const) {
          const gw = d[k];
          if (gw === undefined) continue;
          const line = d.lines[k];
          out.push(
            mk(
              this,
              'low',
              f,
              line,
              `${line ? lineText(f, line) : `${k}: ${gw}`} → ${k} is deprecated (netplan warns at every generate)`,
              `Replace with \`routes: [{to: default, via: ${gw}}]\` under ${d.name}.`,
            ),
          );
        }
      }
    }
    if (f.kind === 'netplan-yaml' && f.mode !== undefined && (f.mode & 0o077) !== 0) {
      const m = (f.mode & 0o777).toString(8).padStart(4, '0');
      out.push(
        mk(
          this,
          'low',
          f,
          undefined,
          `${f.name}: mode ${m} → netplan warns "Permissions for ${f.name} are too open" (the file may hold secrets)`,
          `\`sudo chmod 600 /etc/netplan/${short(f.name)}\``,
        ),
      );
    }
    return out;
  },
};

export const R22: CfgRule = {
  id: 'R22',
  title: '`netplan try` cannot roll back bond/bridge parameters',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const n of f.netplans) {
      for (const d of [...n.bonds, ...n.bridges]) {
        const line = d.lines.parameters;
        if (line === undefined) continue;
        out.push(
          mk(
            this,
            'high',
            f,
            line,
            `${lineText(f, line)} (${d.name}) → \`netplan try\` prints "${d.name}: reverting custom parameters for bridges and bonds is not supported", applies nothing, and offers no rollback; over SSH a bad file then cuts the session`,
            `Apply from the console/BMC, or back up and arm a rollback first: \`sudo cp -a /etc/netplan /root/netplan.bak && sudo systemd-run --unit=netplan-rollback --on-active=300 /bin/sh -c 'cp /root/netplan.bak/*.yaml /etc/netplan/ && netplan apply'\`, then \`sudo netplan generate && sudo netplan apply\`; cancel the timer (\`sudo systemctl stop netplan-rollback.timer\`) once management and cluster paths are verified. (Design A has no bond: \`netplan try --timeout 120\` works.)`,
          ),
        );
      }
    }
    return out;
  },
};
