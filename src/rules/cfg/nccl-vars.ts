/** R03 removed variables, R04 GDR/P2P levels, R05 GID index, R06 NCCL_IB_HCA, R10 defaults, R11 debug. */
import type { Finding } from '../types.js';
import { cmpVersion, mk, settingsOf } from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { designOf } from './design.js';
import { NCCL_DEFAULTS, NCCL_GID_AUTO_SINCE, NCCL_LEVELS, NCCL_REMOVED } from './data.js';
import { ncclVersion } from './nccl-algo.js';

export const R03: CfgRule = {
  id: 'R03',
  title: 'Removed or renamed NCCL variable: silently ignored',
  check(f: CfgFile): Finding[] {
    return f.settings
      .filter((s) => NCCL_REMOVED[s.key])
      .map((s) => {
        const r = NCCL_REMOVED[s.key] as { removedIn: string; replacement?: string };
        return mk(
          this,
          'high',
          f,
          s.line,
          `${s.raw} → ${s.key} was ${r.replacement ? `renamed ${r.replacement}` : 'removed'} in NCCL ${r.removedIn}; NCCL never warns about unknown variables, so the line does nothing`,
          r.replacement
            ? `Replace with \`${r.replacement}=${s.value}\` only if a measured gain needs it (see R04), else delete \`${s.raw}\`.`
            : `Delete \`${s.raw}\`${s.key === 'NCCL_IB_CUDA_SUPPORT' ? ' (GPUDirect RDMA is used automatically when available; see R34)' : ''}.`,
        );
      });
  },
};

/** `5` → SYS, `PHB` → PHB; undefined when not a level. */
function level(value: string): { name: string; legacy: boolean } | undefined {
  const v = value.trim().toUpperCase();
  if (/^\d+$/.test(v)) return { name: NCCL_LEVELS[Math.min(Number(v), 4)] as string, legacy: true };
  return ['LOC', 'NVL', 'PIX', 'PXB', 'PHB', 'SYS', 'C2C'].includes(v) ? { name: v, legacy: false } : undefined;
}

export const R04: CfgRule = {
  id: 'R04',
  title: 'GDR / P2P level forced wider than PXB (or as a legacy integer)',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const key of ['NCCL_NET_GDR_LEVEL', 'NCCL_P2P_LEVEL']) {
      for (const s of settingsOf(f, key)) {
        const l = level(s.value);
        if (!l) continue;
        const wide = l.name === 'PHB' || l.name === 'SYS';
        if (!l.legacy && !wide) continue;
        const what = key === 'NCCL_NET_GDR_LEVEL' ? 'GPUDirect RDMA' : 'GPU peer-to-peer';
        const arith = l.legacy
          ? `${s.value.trim()} is a legacy integer (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS; above 4 is SYS) → ${l.name}`
          : `${l.name}`;
        out.push(
          mk(
            this,
            'high',
            f,
            s.line,
            `${s.raw} → ${arith}${wide ? `: ${what} is forced across ${l.name === 'SYS' ? 'the CPU interconnect (SMP/UPI)' : 'the host bridge'}, often slower than staging through host memory` : ''}. GPU↔NIC distances: not checked (needs host: nvidia-smi topo -m)`,
            `Delete \`${s.raw}\` (default PXB). Widen it only with a measured nccl-tests gain, and then as a string (\`${key}=PHB\`).`,
          ),
        );
      }
    }
    return out;
  },
};

export const R05: CfgRule = {
  id: 'R05',
  title: 'NCCL_IB_GID_INDEX is pinned',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const v = ncclVersion(ctx);
    if (cmpVersion(v.version, NCCL_GID_AUTO_SINCE) < 0) return [];
    return settingsOf(f, 'NCCL_IB_GID_INDEX')
      .filter((s) => s.value.trim() !== '-1')
      .map((s) =>
        mk(
          this,
          'high',
          f,
          s.line,
          `${s.raw} → ${v.note}; from ${NCCL_GID_AUTO_SINCE} the default -1 picks a RoCE v2 GID of NCCL_IB_ADDR_FAMILY (AF_INET) and the index "should not be set" (NCCL troubleshooting). Index ${s.value.trim()} is v2/IPv4 only with exactly one link-local IPv6 and one IPv4 address; bonds, VLANs and extra addresses shift it (then "ibv_modify_qp failed with 22 Invalid argument" or completion error 12). Per-host GID types: not checked (needs host)`,
          `Delete \`${s.raw}\`; if a subnet must be pinned, use \`NCCL_IB_ADDR_RANGE=<fabric cidr>\`.`,
        ),
      );
  },
};

export const R06: CfgRule = {
  id: 'R06',
  title: 'NCCL_IB_HCA names a port that does not exist',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    for (const s of settingsOf(f, 'NCCL_IB_HCA')) {
      let v = s.value.trim();
      const exclude = v.startsWith('^');
      if (exclude) v = v.slice(1);
      if (v.startsWith('=')) v = v.slice(1);
      const tokens = v
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const bad: string[] = [];
      const devices = new Set<string>();
      for (const t of tokens) {
        const [hca, port] = t.split(':');
        if (!hca || (port !== undefined && !/^\d+$/.test(port))) bad.push(`${t} (not <hca>[:<port>])`);
        else if (/^mlx5_/.test(hca) && port !== undefined && port !== '1')
          bad.push(
            `${t} (port ${port}: ${hca} has phys_port_cnt 1 — every ConnectX-4+ port, mlx5_bond_N included, is its own device with port 1)`,
          );
        else devices.add(hca);
      }
      if (bad.length === 0 || exclude) continue;
      const design = designOf(ctx);
      const fix =
        design.kind === 'B'
          ? '`NCCL_IB_HCA==mlx5_bond_0:1,mlx5_bond_1:1` plus `NCCL_IB_QPS_PER_CONNECTION=2` (one QP uses one LAG port; NVIDIA/nccl#1015)'
          : '`NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1` (one device per 25GbE port), generated per host from `rdma link show`';
      out.push(
        mk(
          this,
          'high',
          f,
          s.line,
          `${s.raw} → ${bad.join('; ')}. Valid tokens select ${devices.size} device${devices.size === 1 ? '' : 's'} (${[...devices].join(', ') || 'none'}) of the 4 cluster ports. Names against \`rdma link show\`: not checked (needs host; names absent there make it a blocker, R07)`,
          `${fix}, or unset it.`,
        ),
      );
    }
    return out;
  },
};

export const R10: CfgRule = {
  id: 'R10',
  title: 'NCCL default restated',
  check(f: CfgFile): Finding[] {
    return f.settings
      .filter((s) => NCCL_DEFAULTS[s.key] !== undefined && s.value.trim() === NCCL_DEFAULTS[s.key])
      .map((s) =>
        mk(
          this,
          'low',
          f,
          s.line,
          `${s.raw} → ${s.value.trim()} is the default: it only pins today's behaviour across NCCL upgrades`,
          `Delete \`${s.raw}\`.`,
        ),
      );
  },
};

const NOISY_SUBSYS = ['COLL', 'CALL', 'ALL'];

export const R11: CfgRule = {
  id: 'R11',
  title: 'NCCL debug output enabled in system configuration',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const s of f.settings) {
      // a one-off command line with NCCL_DEBUG=INFO is the recommended bring-up, not configuration
      if (s.origin === 'env-prefix' && f.kind === 'command-line') continue;
      let why: string | undefined;
      if (s.key === 'NCCL_DEBUG' && /^(?:INFO|TRACE)$/i.test(s.value.trim()))
        why = `${s.value.trim().toUpperCase()} logs every init, connection and ${s.value.trim().toUpperCase() === 'TRACE' ? 'call' : 'topology decision'} for every NCCL user`;
      if (s.key === 'NCCL_DEBUG_SUBSYS' && !s.value.trim().startsWith('^')) {
        const hit = s.value
          .split(',')
          .map((x) => x.trim().toUpperCase())
          .filter((x) => NOISY_SUBSYS.includes(x));
        if (hit.length > 0)
          why = `${hit.join(', ')} ${hit.includes('COLL') ? 'logs every collective (tensor parallelism runs 2 all-reduces per layer per step)' : 'logs every call'}`;
      }
      if (!why) continue;
      const where =
        {
          conf: 'nccl.conf',
          unit: 'a unit',
          python: 'the launcher (reaches every Ray worker)',
          prose: 'the published configuration',
        }[s.origin as string] ?? 'a start script';
      out.push(
        mk(
          this,
          'high',
          f,
          s.line,
          `${s.raw} → ${why}; set in ${where}. NCCL docs: debug output "should not be used in production nor retained in scripts"`,
          `Delete \`${s.raw}\`; for bring-up pass \`NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET\` on the command line of one run.`,
        ),
      );
    }
    return out;
  },
};
