/**
 * NCCL 2.27's log lines for one host of a job (the model's decisions are in nccl.ts). Wording and
 * order follow the 2.27.5 and 2.29.3 RoCE logs of the corpus (fixtures/corpus/nccl-debug__2node-roce-
 * nccl-2.27.5-ofi-plugin-fallback-to-ib.txt, nccl-debug__2node-roce-8x-mlx5-nccl-2.29.3-gdrdma-sglang.txt):
 * `Bootstrap: Using` without a space (2.27+), `ncclCommInitRankConfig … Init START/COMPLETE` (torch's
 * entry point) without 2.29's `[Rank N]` prefix, `Init timings`, channels `via NET/IB/<n>[/GDRDMA]`.
 * Failures follow NCCL's source: parseList's `Unrecognized element token`, ibvwrap's `Call to
 * ibv_modify_qp failed with <errno> <text>, on dev …`, net_ib's completion WARN in its 2.2x form, the
 * `file.cc:LINE -> N` return-code trail, and a blank line before every WARN as NCCL prints it.
 *
 * Only lines NCCL_DEBUG / NCCL_DEBUG_SUBSYS let through are produced (the validation runs with
 * NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET).
 */
import type { Rng } from '../util/prng.js';
import { NCCL_BUILD, NCCL_RESULT, gpuNet, type HostPlan, type JobFailure, type JobOutcome } from './nccl.js';

/** A rank's identity in log prefixes. */
export interface RankIds {
  rank: number;
  localRank: number;
  pid: number;
  /** Proxy service and progress threads (connection setup and completion errors print there). */
  proxyTid: number;
  progressTid: number;
  comm: string;
}

export interface HostLogInput {
  outcome: JobOutcome;
  nodeRank: number;
  localRanks: number;
  ranks: RankIds[];
  commId: string;
  rng: Rng;
}

/** The log of one host split where the job's phases happen (the driver streams them with time between). */
export interface HostLog {
  init: string[];
  connect: string[];
  /** Lines of a failure on this host (or its consequence, a peer's failure), in place of what follows. */
  failure: string[];
  complete: string[];
  destroy: string[];
}

const SUBSYS_OF: Record<string, string[]> = {
  INIT: ['INIT'],
  NET: ['NET'],
  ENV: ['ENV'],
  INITNET: ['INIT', 'NET'],
  ALL: [],
};

function busId(pci: string | undefined): string {
  return pci ? parseInt(pci.replace(/[:.]/g, ''), 16).toString(16) : '0';
}

export class HostLogger {
  readonly lines: HostLog = { init: [], connect: [], failure: [], complete: [], destroy: [] };
  private readonly plan: HostPlan;

  constructor(private readonly input: HostLogInput) {
    this.plan = input.outcome.plans[input.nodeRank]!;
  }

  private enabled(subsys: string): boolean {
    const p = this.plan;
    if (p.debug !== 'INFO' && p.debug !== 'TRACE') return false;
    if (p.subsys.has('ALL')) return true;
    const want = SUBSYS_OF[subsys] ?? [subsys];
    return want.length === 0 || want.some((s) => p.subsys.has(s));
  }

  private prefix(r: RankIds, tid = r.pid): string {
    return `${this.plan.host}:${r.pid}:${tid} [${r.localRank}]`;
  }

  info(into: string[], r: RankIds, subsys: string, msg: string, tid?: number): void {
    if (this.enabled(subsys)) into.push(`${this.prefix(r, tid)} NCCL INFO ${msg}`);
  }

  warn(into: string[], r: RankIds, where: string, msg: string, tid?: number): void {
    const d = this.plan.debug;
    if (d === 'NONE' || d === 'VERSION') return;
    into.push('', `${this.prefix(r, tid)} ${where} NCCL WARN ${msg}`);
  }

  /** One line per rank, ranks interleaved as concurrent processes print them. */
  private each(into: string[], subsys: string, msg: (r: RankIds) => string | undefined): void {
    for (const r of this.input.ranks) {
      const m = msg(r);
      if (m !== undefined) this.info(into, r, subsys, m);
    }
  }

  render(): HostLog {
    const { outcome: o, ranks } = this.input;
    const p = this.plan;
    const world = o.plans.length * this.input.localRanks;
    const nNodes = o.plans.length;
    const sock = p.socket;
    const L = this.lines;
    if (!p.cuda.ok) return L;
    this.each(L.init, 'INIT', () => `cudaDriverVersion ${p.cuda.cudaDriverVersion}`);
    if (!sock) {
      for (const r of ranks) this.warn(L.failure, r, 'bootstrap.cc:94', 'Bootstrap : no socket interface found');
      for (const r of ranks)
        this.trail(L.failure, r, NCCL_RESULT.internalError, ['bootstrap.cc:113', 'init.cc:1818', 'init.cc:2040']);
      return L;
    }
    this.each(L.init, 'INIT', () => `Bootstrap: Using ${sock.name}:${sock.address}<0>`);
    this.each(L.init, 'INIT', () => `NCCL version ${NCCL_BUILD}`);
    this.each(L.init, 'INITNET', () => 'NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.');
    if (!p.ibDisabled) {
      if (p.hca !== undefined) this.each(L.init, 'INIT', () => `NCCL_IB_HCA set to ${p.hca}`);
      if (p.devices.length > 0) {
        const list = p.devices.map((d) => `[${d.index}]${d.rdma.name}:${d.rdma.port}/RoCE`).join(' ');
        this.each(L.init, 'INITNET', () => `NET/IB : Using ${list} [RO]; OOB ${sock.name}:${sock.address}<0>`);
        this.each(L.init, 'INIT', () => 'Initialized NET plugin IB');
      } else {
        this.each(L.init, 'INITNET', () => 'NET/IB : No device found.');
        this.each(L.init, 'INITNET', () => `NET/IB : Using [RO]; OOB ${sock.name}:${sock.address}<0>`);
        this.each(L.init, 'INIT', () => 'Failed to initialize NET plugin IB');
      }
    }
    const net = p.devices.length > 0 ? 'IB' : 'Socket';
    if (net === 'Socket') {
      this.each(L.init, 'INITNET', () => `NET/Socket : Using [0]${sock.name}:${sock.address}<0>`);
      this.each(L.init, 'INIT', () => 'Initialized NET plugin Socket');
    }
    this.each(L.init, 'INIT', () => `Assigned NET plugin ${net} to comm`);
    this.each(L.init, 'INIT', () => `Using network ${net}`);
    if (p.gdr === 'dmabuf') this.each(L.init, 'INIT', (r) => `DMA-BUF is available on GPU device ${r.localRank}`);
    const gpu = (r: RankIds) => p.machine.gpus[r.localRank];
    this.each(
      L.init,
      'INIT',
      (r) =>
        `ncclCommInitRankConfig comm 0x${r.comm} rank ${r.rank} nranks ${world} cudaDev ${r.localRank} nvmlDev ${r.localRank} busId ${busId(gpu(r)?.pci)} commId 0x${this.input.commId} - Init START`,
    );
    this.each(L.init, 'INIT', () => 'RAS client listening socket at 127.0.0.1<28028>');
    this.each(L.init, 'INIT', () => this.bootstrapTimings());
    this.each(
      L.init,
      'INIT',
      (r) => `MNNVL busId 0x${busId(gpu(r)?.pci)} fabric UUID 0.0 cliqueId 0x0 state 3 healthMask 0x0`,
    );
    if (net === 'IB' && !p.gdr) {
      for (const d of p.devices)
        this.each(L.init, 'INITNET', () => `NET/IB : GPU Direct RDMA Disabled for HCA ${d.index} '${d.rdma.name}'`);
    }
    if (net === 'Socket')
      this.each(L.init, 'INITNET', () => `NET/Socket : GPU Direct RDMA Disabled for HCA 0 '${sock.name}'`);
    this.each(
      L.init,
      'INIT',
      (r) =>
        `comm 0x${r.comm} rank ${r.rank} nRanks ${world} nNodes ${nNodes} localRanks ${this.input.localRanks} localRank ${r.localRank} MNNVL 0`,
    );
    const nch = this.channels();
    const first = ranks.find((r) => r.rank === 0);
    if (first) {
      const order = Array.from({ length: world }, (_, i) => String(i).padStart(3)).join(' ');
      for (let c = 0; c < nch; c++)
        this.info(
          L.init,
          first,
          'INIT',
          `Channel ${String(c).padStart(2, '0')}/${String(nch).padStart(2, '0')} : ${order}`,
        );
    }
    this.each(L.init, 'INIT', () => 'P2P Chunksize set to 131072');
    this.each(L.init, 'INIT', () => 'PROFILER/Plugin: Could not find: libnccl-profiler.so. ');

    // Connections: the ring inside the node over PCIe P2P, and the NET rails between nodes.
    if (this.connectFailure()) return L;
    const base = this.input.nodeRank * this.input.localRanks;
    for (let c = 0; c < nch; c++) {
      for (const r of ranks) {
        const next = r.localRank + 1;
        if (next < this.input.localRanks)
          this.info(
            L.connect,
            r,
            'INIT',
            `Channel ${String(c).padStart(2, '0')}/0 : ${r.rank}[${r.localRank}] -> ${base + next}[${next}] via P2P/IPC`,
          );
      }
    }
    if (nNodes > 1) {
      for (const r of ranks) {
        const g = gpuNet(p, r.localRank);
        const rail = net === 'IB' ? g?.device.index : 0;
        if (rail === undefined || (net === 'IB' && !this.ringGpu(r.localRank))) continue;
        const peerBase = ((this.input.nodeRank + 1) % nNodes) * this.input.localRanks;
        const prevBase = ((this.input.nodeRank + nNodes - 1) % nNodes) * this.input.localRanks;
        const via = net === 'IB' ? `NET/IB/${rail}${g?.gdr ? '/GDRDMA' : ''}` : 'NET/Socket/0';
        for (const c of [rail, rail + Math.max(1, nch / 2)]) {
          const ch = String(c % nch).padStart(2, '0');
          this.info(
            L.connect,
            r,
            'INITNET',
            `Channel ${ch}/0 : ${prevBase + r.localRank}[${r.localRank}] -> ${r.rank}[${r.localRank}] [receive] via ${via}`,
          );
          this.info(
            L.connect,
            r,
            'INITNET',
            `Channel ${ch}/0 : ${r.rank}[${r.localRank}] -> ${peerBase + r.localRank}[${r.localRank}] [send] via ${via}`,
          );
        }
      }
    }
    this.each(L.connect, 'INIT', () => `Connected all rings, use ring PXN 0 GDR ${o.gdr ? 1 : 0}`);
    this.each(L.connect, 'INIT', () => 'Connected all trees');
    if (o.failure?.kind === 'invalid-usage') {
      if (p.algoError) {
        for (const r of ranks) {
          this.warn(L.failure, r, 'graph/tuning.cc:130', p.algoError);
          this.trail(L.failure, r, NCCL_RESULT.invalidUsage, [
            'graph/tuning.cc:130',
            'graph/tuning.cc:197',
            'init.cc:1399',
            'init.cc:1738',
            'init.cc:1785',
            'group.cc:87|[Async thread]',
          ]);
        }
      } else this.remoteClosed();
      return L;
    }
    this.each(L.complete, 'INIT', () => 'threadThresholds 8/8/64 | 128/8/64 | 512 | 512');
    this.each(
      L.complete,
      'INIT',
      () =>
        `${nch} coll channels, ${nch} collnet channels, 0 nvls channels, ${nch} p2p channels, 2 p2p channels per peer`,
    );
    this.each(L.complete, 'INIT', () => 'TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.');
    this.each(
      L.complete,
      'INIT',
      (r) =>
        `ncclCommInitRankConfig comm 0x${r.comm} rank ${r.rank} nranks ${world} cudaDev ${r.localRank} nvmlDev ${r.localRank} busId ${busId(gpu(r)?.pci)} commId 0x${this.input.commId} - Init COMPLETE`,
    );
    this.each(L.complete, 'INIT', (r) => this.initTimings(r, world));
    this.each(
      L.destroy,
      'INIT',
      (r) =>
        `comm 0x${r.comm} rank ${r.rank} nranks ${world} cudaDev ${r.localRank} busId ${busId(gpu(r)?.pci)} - Destroy COMPLETE`,
    );
    if (o.failure?.kind === 'completion') this.completionFailure(o.failure);
    return L;
  }

  /** Local GPUs at the ends of the inter-node rings: the ones closest to each NET device. */
  private ringGpu(localRank: number): boolean {
    const p = this.plan;
    const g = gpuNet(p, localRank);
    if (!g) return false;
    for (let r = 0; r < localRank; r++) if (gpuNet(p, r)?.device.index === g.device.index) return false;
    return true;
  }

  private channels(): number {
    const o = this.input.outcome;
    return o.plans.length > 1 && this.plan.devices.length > 0 ? Math.max(2, 2 * this.plan.devices.length) : 8;
  }

  private bootstrapTimings(): string {
    const r = this.input.rng;
    const ring = 0.002 + r.next() * 0.008;
    const recv = r.next() * 0.0008;
    return `Bootstrap timings total ${(ring + recv + 0.0004).toFixed(6)} (create 0.0000${r.int(18, 40)}, send 0.000${r.int(60, 380)}, recv ${recv.toFixed(6)}, ring ${ring.toFixed(6)}, delay 0.000000)`;
  }

  private initTimings(r: RankIds, world: number): string {
    const g = this.input.rng;
    const kernels = 0.22 + g.next() * 0.1;
    const alloc = 0.4 + g.next() * 0.3;
    const conn = 0.05 + g.next() * 0.2;
    const topo = 0.03 + g.next() * 0.04;
    const total = kernels + alloc + conn + topo + 0.02;
    return `Init timings - ncclCommInitRankConfig: rank ${r.rank} nranks ${world} total ${total.toFixed(2)} (kernels ${kernels.toFixed(2)}, alloc ${alloc.toFixed(2)}, bootstrap 0.01, allgathers 0.01, topo ${topo.toFixed(2)}, graphs 0.00, connections ${conn.toFixed(2)}, rest 0.00)`;
  }

  /** NCCL's return-code trail: `file.cc:LINE -> N`, a thread tag after `|` (`proxy.cc:952|[Proxy Thread]`). */
  private trail(into: string[], r: RankIds, code: number, where: readonly string[], tid?: number): void {
    for (const w of where) {
      const [at, tag] = w.split('|');
      this.info(into, r, 'ALL', `${at} -> ${code}${tag ? ` ${tag}` : ''}`, tid);
    }
  }

  /** A failure while connecting: ibv_modify_qp on this host, or the peer went away. */
  private connectFailure(): boolean {
    const f = this.input.outcome.failure;
    if (!f || f.kind === 'invalid-usage' || f.kind === 'completion') return false;
    if (f.kind === 'bootstrap' && f.host === this.plan.host) {
      for (const r of this.input.ranks) {
        this.warn(
          this.lines.failure,
          r,
          'misc/socket.cc:481',
          `socketStartConnect: Connect to ${f.peer}<${40000 + this.input.rng.int(0, 20000)}> failed : Software caused connection abort`,
        );
        this.trail(this.lines.failure, r, NCCL_RESULT.systemError, [
          'misc/socket.cc:564',
          'misc/socket.cc:668',
          'bootstrap.cc:297',
          'init.cc:1385',
          'init.cc:1785',
          'group.cc:87|[Async thread]',
        ]);
      }
      return true;
    }
    if (f.kind === 'modify-qp' && f.host === this.plan.host) {
      const text =
        f.errno === 101 ? 'Network is unreachable' : f.errno === 110 ? 'Connection timed out' : 'Invalid argument';
      const qp = `on dev ${f.device.rdma.name}:${f.device.rdma.port}, curr state INIT, next state RTR, local GID index ${f.device.gidIndex}, local GID ${f.localGid}, remote GID ${f.remoteGid}`;
      for (const r of this.input.ranks.filter(
        (x) => gpuNet(this.plan, x.localRank)?.device.index === f.device.index && this.ringGpu(x.localRank),
      )) {
        if (f.errno === 110) {
          for (let i = 1; i <= 3; i++)
            this.info(
              this.lines.failure,
              r,
              'NET',
              `Call to ibv_modify_qp failed with 110 Connection timed out, ${qp}, retrying ${i}/34 after ${100 * i} msec of sleep`,
              r.proxyTid,
            );
        }
        this.warn(
          this.lines.failure,
          r,
          'misc/ibvwrap.cc:268',
          `Call to ibv_modify_qp failed with ${f.errno} ${text}, ${qp}`,
          r.proxyTid,
        );
        this.trail(
          this.lines.failure,
          r,
          NCCL_RESULT.systemError,
          [
            'transport/net_ib/connect.cc:1012',
            'transport/net_ib/connect.cc:1236',
            'transport/net.cc:697',
            'proxy.cc:1520',
            'proxy.cc:1693',
          ],
          r.proxyTid,
        );
        this.warn(
          this.lines.failure,
          r,
          'proxy.cc:1835',
          `[Proxy Service ${r.rank}] Failed to execute operation Connect from rank ${r.rank}, retcode ${NCCL_RESULT.systemError}`,
          r.proxyTid,
        );
        this.trail(this.lines.failure, r, NCCL_RESULT.systemError, [
          'transport/net.cc:362',
          'transport.cc:193',
          'init.cc:1523',
          'init.cc:1785',
          'group.cc:87',
        ]);
      }
      return true;
    }
    this.remoteClosed();
    return true;
  }

  /** What the healthy ranks see when a peer process died: its sockets close. */
  private remoteClosed(): void {
    const f = this.input.outcome.failure;
    const other = this.input.outcome.plans.find((x) => x.host !== this.plan.host);
    if (!f || !other?.socket) return;
    for (const r of this.input.ranks) {
      this.warn(
        this.lines.failure,
        r,
        'misc/socket.cc:50',
        `socketProgress: Connection closed by remote peer ${other.host}<${40000 + this.input.rng.int(0, 20000)}>`,
      );
      this.trail(this.lines.failure, r, NCCL_RESULT.remoteError, [
        'misc/socket.cc:752',
        'bootstrap.cc:692',
        'init.cc:1399',
        'init.cc:1785',
        'group.cc:87',
      ]);
    }
  }

  private completionFailure(f: Extract<JobFailure, { kind: 'completion' }>): void {
    if (f.host !== this.plan.host) return;
    const peer = this.input.outcome.plans.find((x) => x.host === f.peerHost);
    const r =
      this.input.ranks.find((x) => gpuNet(this.plan, x.localRank)?.device.index === f.device.index) ??
      this.input.ranks[0];
    if (!r) return;
    const peerAddr = `${peer?.socket?.address ?? '0.0.0.0'}<${40000 + this.input.rng.int(0, 20000)}>`;
    this.warn(
      this.lines.failure,
      r,
      'transport/net_ib/p2p.cc:559',
      `NET/IB : Got completion from peer ${peerAddr} with status=${f.status} opcode=128 len=0 vendor err ${f.vendorErr} (Recv) localGid ${f.localGid} remoteGids ${f.remoteGid} hca ${f.device.rdma.name}`,
      r.progressTid,
    );
    this.trail(
      this.lines.failure,
      r,
      NCCL_RESULT.remoteError,
      ['transport/net.cc:1379', 'proxy.cc:777', 'proxy.cc:952|[Proxy Thread]'],
      r.progressTid,
    );
  }
}
