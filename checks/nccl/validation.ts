/**
 * nccl.validation (docs/STAGES.md §3.9 nccl.validate): the stage's cluster run — the PyTorch all-reduce
 * benchmark under torchrun, intra-node on every host, then across all hosts at once (node 1's control
 * address is the rendezvous master), with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET for this run only —
 * and its verdict: the worse of the log verdict (the doctor's D rules over every rank's output, plus
 * the transport, device list, GDR and Init COMPLETE expectations) and the bandwidth verdict.
 */
import type { ClusterRunContext, PairCheckDef, StageContext } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { ncclLogFindings } from '../../src/doctor/kinds/gpu/nccl.js';
import { scanNcclLog } from '../../src/parse/nccl-log.js';
import { parseTorchAllreduce, peakBusbw, type TorchAllreduceFacts } from '../../src/parse/torch-allreduce.js';
import type { Finding } from '../../src/rules/types.js';
import { CLUSTER_VENV } from '../common/pins.js';
import { controlAddress } from '../common/design.js';
import { BENCH_PATH, BENCH_SCRIPT } from './bench-script.js';
import { effectiveSettings, resolveHca } from './conf.js';
import type { NcclFacts } from './facts.js';

export const MASTER_PORT = 29510;
export const GPUS_PER_NODE = 8;
/** docs/STAGES.md §3.9: no result within 10 min → fail. */
export const RUN_TIMEOUT_MS = 10 * 60_000;
/** Configurable defaults, to be calibrated on real hosts (GB/s). */
export const THRESHOLDS = {
  interPass: 4.5,
  interWarn: 2.0,
  intraPass: 8,
  intraWarn: 4,
  interMinBytes: 256 * 1024 ** 2,
  intraBytes: 1024 ** 3,
};
export const DEBUG_ENV = { NCCL_DEBUG: 'INFO', NCCL_DEBUG_SUBSYS: 'INIT,NET' } as const;

/**
 * Runs the benchmark on one host: args `nnodes node_rank master port`. The installed script is used
 * when present, else a copy in a temporary directory (hosts that still run the tutorial's own torch);
 * the venv's torchrun first, then a user-site one (`pip install` without a venv).
 */
export const BENCH_RUN_SCRIPT = `set -u
nnodes=$1; rank=$2; master=$3; port=$4
bench=${BENCH_PATH}
tmp=
if [ ! -f "$bench" ]; then
  tmp=/tmp/l20-nccl-bench.$$
  mkdir -p "$tmp"
  bench=$tmp/l20-allreduce-bench.py
  cat > "$bench" <<'L20_BENCH_EOF'
${BENCH_SCRIPT}L20_BENCH_EOF
fi
set -- --nnodes "$nnodes" --nproc-per-node ${GPUS_PER_NODE} --node-rank "$rank" --master-addr "$master" --master-port "$port" "$bench" --min-bytes 8 --max-bytes 1G --factor 2 --warmup 5 --iters 20
if [ -x ${CLUSTER_VENV}/bin/torchrun ]; then
  ${CLUSTER_VENV}/bin/torchrun "$@"
  rc=$?
elif [ -x "$HOME/.local/bin/torchrun" ]; then
  "$HOME/.local/bin/torchrun" "$@"
  rc=$?
else
  echo 'l20-setup: no torchrun on this host: apply nccl.bench-tools' >&2
  rc=127
fi
[ -n "$tmp" ] && rm -rf "$tmp"
exit $rc
`;

export interface HostRun {
  host: string;
  commandLine: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
}

export interface BenchRun {
  kind: 'intra' | 'inter';
  /** One per host (intra: each host alone). */
  hosts: HostRun[];
  /** The result table (node 1's output for the inter-node run). */
  table: Record<string, TorchAllreduceFacts>;
}

export interface NcclCluster {
  runs: BenchRun[];
  /** Why a run did not start. */
  skipped: string[];
}

function hostRun(host: string, r: RunResult): HostRun {
  return {
    host,
    commandLine: r.commandLine,
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    output: `${r.stdout}${r.stderr ? `\n${r.stderr}` : ''}`,
  };
}

async function benchOn(ctx: ClusterRunContext<NcclFacts>, host: string, args: string[]): Promise<HostRun> {
  const r = await ctx.run(
    host,
    'nccl-validate',
    { script: BENCH_RUN_SCRIPT, args },
    { env: DEBUG_ENV, timeoutMs: RUN_TIMEOUT_MS },
  );
  return hostRun(host, r);
}

/** Where a host keeps its validation logs (the bundle collects them; support asks for them). */
export const NCCL_LOG_DIR = '/var/lib/l20-setup/nccl';

/**
 * Keeps a run's NCCL_DEBUG=INFO output on its host, written atomically (tmp + rename, 0600, root),
 * named by run id and kind. Best effort: a host that cannot store it still has its verdict.
 */
async function keepLog(ctx: ClusterRunContext<NcclFacts>, run: HostRun, kind: BenchRun['kind']): Promise<void> {
  const path = `${NCCL_LOG_DIR}/${ctx.runId.replace(/[^0-9A-Za-z]/g, '')}-${kind}.log`;
  const store = 'umask 077; mkdir -p "${1%/*}" && cat > "$1.tmp" && chmod 600 "$1.tmp" && mv -f "$1.tmp" "$1"';
  const header = `# ${run.commandLine}\n# exit ${run.exitCode ?? 'none'}${run.timedOut ? ' (timed out)' : ''}, ${run.durationMs} ms, NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET\n`;
  await ctx
    .run(
      run.host,
      'nccl-keep-log',
      { argv: ['sh', '-c', store, 'sh', path] },
      { sudo: true, stdin: header + run.output, timeoutMs: 30_000 },
    )
    .catch(() => undefined);
}

/** The cluster run: intra-node on every host (in parallel), then one job across all hosts. */
export async function validateRun(ctx: ClusterRunContext<NcclFacts>): Promise<NcclCluster> {
  const skipped: string[] = [];
  const runs: BenchRun[] = [];
  const noTool = ctx.facts.filter((f) => f.facts.torchruns.length === 0);
  if (noTool.length > 0) {
    skipped.push(`no torchrun on ${noTool.map((f) => f.host).join(', ')}: apply nccl.bench-tools`);
    return { runs, skipped };
  }
  const intra = await Promise.all(ctx.hosts.map((h) => benchOn(ctx, h, ['1', '0', '127.0.0.1', String(MASTER_PORT)])));
  runs.push({
    kind: 'intra',
    hosts: intra,
    table: Object.fromEntries(intra.map((h) => [h.host, parseTorchAllreduce(h.output)])),
  });
  await Promise.all(intra.map((r) => keepLog(ctx, r, 'intra')));
  if (ctx.hosts.length < 2 || ctx.signal.aborted) return { runs, skipped };
  const master = controlAddress(ctx.config.network.design, 0);
  const head = ctx.facts[0]!.facts;
  if (!head.fabric.netdevs.some((d) => d.adminUp && d.addresses.some((a) => a.startsWith(`${master}/`)))) {
    skipped.push(
      `${ctx.hosts[0]} has no UP interface with the control address ${master} (design ${ctx.config.network.design}): the inter-node run needs the network stage`,
    );
    return { runs, skipped };
  }
  const n = String(ctx.hosts.length);
  const inter = await Promise.all(
    ctx.hosts.map((h, i) => benchOn(ctx, h, [n, String(i), master, String(MASTER_PORT)])),
  );
  runs.push({ kind: 'inter', hosts: inter, table: { [ctx.hosts[0]!]: parseTorchAllreduce(inter[0]!.output) } });
  await Promise.all(inter.map((r) => keepLog(ctx, r, 'inter')));
  return { runs, skipped };
}

type Status = 'pass' | 'warn' | 'fail';
const RANK: Record<Status, number> = { pass: 0, warn: 1, fail: 2 };

interface Part {
  status: Status;
  line: string;
  rule?: string;
}

/** The log verdict of one run: D rules over every host's output, then the expectations of a good run. */
function logVerdict(run: BenchRun, all: ReadonlyArray<{ host: string; facts: NcclFacts }>): Part[] {
  const parts: Part[] = [];
  for (const h of run.hosts) {
    const findings: Finding[] = ncclLogFindings(h.output);
    for (const f of findings) {
      if (f.severity === 'info') continue;
      const status: Status = f.severity === 'medium' || f.severity === 'low' ? 'warn' : 'fail';
      parts.push({ status, rule: f.rule, line: `${run.kind} ${h.host}: ${f.rule} ${f.title}\n${f.evidence}` });
    }
    if (h.timedOut)
      parts.push({ status: 'fail', line: `${run.kind} ${h.host}: no result within ${RUN_TIMEOUT_MS / 60_000} min` });
    else if (h.exitCode !== 0) {
      // torch's own error (DistBackendError …, ChildFailedError) follows the NCCL lines.
      const lines = h.output.split('\n').filter((l) => l.trim());
      const torchError = lines
        .filter((l) => /DistBackendError|Error: |^\[rank\d+\]: (?:nccl\w+|Last error|\S.*\bNCCL\b)/.test(l))
        .slice(0, 4);
      const tail = torchError.length > 0 ? torchError : lines.slice(-6);
      parts.push({ status: 'fail', line: `${run.kind} ${h.host}: torchrun exited ${h.exitCode}\n${tail.join('\n')}` });
      continue;
    }
    const scan = scanNcclLog(h.output);
    const facts = all.find((x) => x.host === h.host)?.facts;
    if ((scan.facts.initComplete ?? 0) < GPUS_PER_NODE) {
      parts.push({
        status: 'fail',
        line: `${run.kind} ${h.host}: Init COMPLETE on ${scan.facts.initComplete ?? 0} of ${GPUS_PER_NODE} ranks`,
      });
    }
    if (run.kind !== 'inter' || !facts) continue;
    if (scan.facts.network !== 'IB') {
      parts.push({
        status: 'fail',
        rule: 'D01',
        line: `${h.host}: Using network ${scan.facts.network ?? '(no "Using network" line)'} (want IB)`,
      });
    }
    const hca = effectiveSettings(facts).get('NCCL_IB_HCA');
    const active = facts.fabric.rdma.filter((r) => r.state === 'ACTIVE').map((r) => r.device);
    const configured = hca ? resolveHca(hca.value, active).devices : active;
    const used = scan.facts.hcas.map((x) => x.replace(/:\d+\/.*$/, ''));
    if (used.join(',') !== configured.join(',')) {
      parts.push({
        status: 'warn',
        line: `${h.host}: NET/IB uses ${used.join(' ') || 'nothing'}, configured ${configured.join(' ') || 'nothing'}`,
      });
    }
    const netChannels = scan.facts.channels['NET/IB'] ?? 0;
    if (netChannels === 0) parts.push({ status: 'fail', line: `${h.host}: no channel via NET/IB` });
    const expectGdr = facts.gdr.peermem || (facts.gdr.openModule && kernelAtLeast(facts.gdr.kernel, 5, 12));
    if (expectGdr && scan.facts.gdrdmaChannels === 0 && netChannels > 0) {
      parts.push({
        status: 'warn',
        rule: 'D02',
        line: `${h.host}: GPUDirect RDMA expected (${facts.gdr.peermem ? 'nvidia-peermem' : 'DMA-BUF'}) but no channel via NET/IB/<n>/GDRDMA`,
      });
    }
  }
  return parts;
}

function kernelAtLeast(release: string | undefined, major: number, minor: number): boolean {
  const [a, b] = (release ?? '').split(/[.-]/).map(Number);
  return (a ?? 0) > major || ((a ?? 0) === major && (b ?? 0) >= minor);
}

function latencyLine(t: TorchAllreduceFacts): string {
  const small = t.rows.filter((r) => r.bytes <= 1024 ** 2);
  if (small.length === 0) return '';
  const at = (b: number) => small.find((r) => r.bytes >= b);
  const pick = [at(8), at(1024), at(65536), at(1024 ** 2)].filter((r, i, a) => r && a.indexOf(r) === i);
  return `latency: ${pick.map((r) => `${r!.bytes} B ${r!.timeUs.toFixed(1)} us`).join(', ')}`;
}

/** The bandwidth verdict of one run (inter: ≥ 256 MiB; intra: at 1 GiB). */
function bandwidthVerdict(run: BenchRun): Part[] {
  const parts: Part[] = [];
  for (const [host, t] of Object.entries(run.table)) {
    if (run.hosts.find((h) => h.host === host)?.exitCode !== 0) continue;
    const inter = run.kind === 'inter';
    const row = inter ? peakBusbw(t, THRESHOLDS.interMinBytes) : peakBusbw(t, THRESHOLDS.intraBytes);
    if (!row) {
      parts.push({ status: 'fail', line: `${run.kind} ${host}: no result row at ${inter ? '≥ 256 MiB' : '1 GiB'}` });
      continue;
    }
    const [pass, warn] = inter
      ? [THRESHOLDS.interPass, THRESHOLDS.interWarn]
      : [THRESHOLDS.intraPass, THRESHOLDS.intraWarn];
    const status: Status = row.busbwGBps >= pass ? 'pass' : row.busbwGBps >= warn ? 'warn' : 'fail';
    const ceiling = inter ? ' (NIC ceiling ≈ 11.6 GB/s per node)' : '';
    parts.push({
      status,
      ...(status !== 'pass' ? { rule: 'D20' } : {}),
      line: `${run.kind} ${host}: busbw ${row.busbwGBps.toFixed(2)} GB/s at ${row.bytes} B${ceiling}; pass ≥ ${pass}, warn ≥ ${warn}\n${latencyLine(t)}`,
    });
  }
  return parts;
}

export const validationCheck: PairCheckDef<NcclFacts, NcclCluster> = {
  id: 'nccl.validation',
  title: 'all-reduce across the cluster (log and bandwidth)',
  scope: 'pair',
  // The control address (the rendezvous) is found through the host's netdevs and addresses.
  needs: ['nccl-tools', 'lspci-nics', 'ip-link', 'ip-addr', 'sysfs-net'],
  evaluate(all, ctx: StageContext & { cluster: NcclCluster | undefined }) {
    const c = ctx.cluster;
    if (!c) return { status: 'fail', summary: 'the validation run did not happen', evidence: 'no cluster run result' };
    const commands = c.runs.flatMap((r) =>
      r.hosts.map(
        (h) =>
          `${r.kind} ${h.host}: ${h.commandLine.split('\n')[0]} → exit ${h.exitCode}${h.timedOut ? ' (timed out)' : ''}, ${(h.durationMs / 1000).toFixed(1)} s`,
      ),
    );
    if (c.runs.length === 0) {
      return {
        status: 'fail',
        summary: c.skipped.join('; ') || 'nothing ran',
        evidence: c.skipped.join('\n'),
        fix: 'apply nccl.bench-tools',
      };
    }
    // What the runs showed comes first: a run that did not start is the lesser news.
    const parts = [
      ...c.runs.flatMap((r) => [...logVerdict(r, all), ...bandwidthVerdict(r)]),
      ...c.skipped.map((s): Part => ({ status: 'fail', line: s })),
    ];
    const worst = parts.reduce<Status>((w, p) => (RANK[p.status] > RANK[w] ? p.status : w), 'pass');
    // The cause leads, not its echo on the other host (D17/D07: a peer went away).
    const worstParts = parts.filter((p) => p.status === worst && worst !== 'pass');
    const lead = [...worstParts].sort((a, b) => causeRank(a.rule) - causeRank(b.rule))[0] ?? parts.find((p) => p.rule);
    const inter = c.runs.find((r) => r.kind === 'inter');
    const interRow = inter
      ? Object.values(inter.table)
          .map((t) => peakBusbw(t, THRESHOLDS.interMinBytes))
          .find(Boolean)
      : undefined;
    const intraRows = c.runs
      .filter((r) => r.kind === 'intra')
      .flatMap((r) =>
        Object.entries(r.table).map(([h, t]) => ({
          h,
          gbps: peakBusbw(t, THRESHOLDS.intraBytes)?.busbwGBps,
        })),
      );
    // A host without a 1 GiB row says so, rather than a `?` among the figures.
    const figure = (x: { h: string; gbps?: number | undefined }, unit: string): string =>
      x.gbps !== undefined ? `${x.h} ${x.gbps.toFixed(2)}${unit}` : `${x.h} no 1 GiB result`;
    const intra =
      intraRows.length === 0
        ? 'not run'
        : intraRows.every((x) => x.gbps !== undefined)
          ? `${intraRows.map((x) => figure(x, '')).join(', ')} GB/s`
          : intraRows.map((x) => figure(x, ' GB/s')).join(', ');
    const interText = interRow ? `inter-node busbw ${interRow.busbwGBps.toFixed(2)} GB/s` : 'no inter-node result';
    const bw = `${interText}; intra-node ${intra}`;
    const evidence = [...commands, ...parts.map((p) => `[${p.status}] ${p.line}`)].join('\n');
    if (worst === 'pass') return { status: 'pass', summary: bw, evidence };
    return {
      status: worst,
      ...(lead?.rule ? { rule: lead.rule } : {}),
      summary: `${lead?.line.split('\n')[0] ?? 'validation failed'}; ${bw}`,
      evidence,
      fix: validationFix(lead),
    };
  },
};

/** Root causes before their consequences; unknown rules and rule-less parts keep their order. */
const CAUSE_ORDER = ['D03', 'D05', 'D04', 'D06', 'D01', 'D02', 'D20'];

function causeRank(rule: string | undefined): number {
  const i = rule ? CAUSE_ORDER.indexOf(rule) : -1;
  return i >= 0 ? i : CAUSE_ORDER.length;
}

function validationFix(p: Part | undefined): string {
  switch (p?.rule) {
    case 'D03':
      return 'delete NCCL_ALGO/NCCL_PROTO: apply nccl.conf (rewrites /etc/nccl.conf without them), then re-run the validation (R01, R02)';
    case 'D05':
      return 'unset NCCL_IB_GID_INDEX (apply nccl.conf) and compare the GID tables on both hosts (rdma-link.gids, R05); check the cabling map (R17)';
    case 'D04':
      return 'a queue pair failed on the wire: check MTU parity (network.mtu, R24), the GID index (R05) and the cabling (R17) for the rail named in the evidence';
    case 'D01':
      return 'NCCL fell back to TCP: make NCCL_IB_HCA name the live RDMA devices (apply nccl.conf, R06/R07)';
    case 'D06':
      return 'NCCL_SOCKET_IFNAME must select the control interface (apply nccl.conf, R14)';
    case 'D02':
      return 'GPUDirect RDMA is off: see gpudirect.path (R34); host staging costs ≈ 10 % at 25GbE';
    case 'D20':
      return 'bandwidth below the threshold: check rdma-link.bw per cable, PFC on both ends (qos.pair, R26) and ACS (gpudirect.acs, R36)';
    default:
      return "read the evidence: the run's failing lines are quoted per host; fix the earlier stage they point to and re-run";
  }
}
