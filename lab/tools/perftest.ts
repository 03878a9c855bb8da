/**
 * perftest's `ib_write_bw` (also answering as `ib_read_bw` and `ib_send_bw`, which differ only in the
 * title and counters here) across the lab's machines.
 *
 * A server (`ib_write_bw -d <dev> … -p <port>`, no host) prints its banner and waits on the port; a
 * client (`… <peer-ip>`) opens the TCP control connection (model/rdma-path.ts decides whether it gets
 * through), both print the test parameters and their QPs' addresses, and the client writes for `-D`
 * seconds (or `-n` messages) at the rate model/perftest.ts gives, streaming its lines as they happen.
 * The server prints the client's result row. The counters of both ports move over the test's time
 * (model/traffic.ts), so a monitor sampling them meanwhile sees the rate. A QP whose packets reach no HCA that owns it ends in the
 * completion error NCCL and perftest show for it (status 12, transport retry counter exceeded).
 *
 * Output: perftest_parameters.c's ctx_print_test_info (TAB pairs between the two header columns,
 * `rdma_cm QPs\t :`), ctx_print_pingpong_data, REPORT_FMT rows; the sample files are fixtures/corpus/
 * ib_write_bw__gb10-cx7-roce-client-duration-cpu-util-masked.txt (client) and
 * ib_write_bw__roce-server-duration-raw-tabs-TRUNCATED.txt (server). perftest 4.4+0.37 (jammy).
 */
import type { Cluster } from '../model/cluster.js';
import { flowRate, MAX_MPPS, runRng, startFlow, type Flow } from '../model/perftest.js';
import { activeMtu, gidTable, gidToIpv4, ibMtuForNetdevMtu, rdmaPortState } from '../model/rdma.js';
import { physicalPorts, qpPath, tcpPath } from '../model/rdma-path.js';
import type { Machine, RdmaDevice } from '../model/types.js';
import { toolIo, type ToolIo } from '../system/live.js';
import { SIGNALS } from '../system/processes.js';
import { fail } from '../shell/args.js';
import type { Tool, ToolEnv } from './types.js';

const RESULT_LINE = `${'-'.repeat(87)}\n`;
const BANNER =
  '\n************************************\n* Waiting for client to connect... *\n************************************\n';
const DEFAULT_PORT = 18515;

type Verb = 'write' | 'read' | 'send';
const TITLES: Record<Verb, string> = { write: 'RDMA_Write', read: 'RDMA_Read', send: 'Send' };

export interface PerftestParams {
  verb: Verb;
  device?: string;
  ibPort: number;
  gidIndex: number;
  gbits: boolean;
  qps: number;
  duration?: number;
  iters: number;
  size: number;
  all: boolean;
  tclass?: number;
  port: number;
  mtu?: number;
  sl: number;
  cpuUtil: boolean;
  server?: string;
}

type Parsed = { ok: true; params: PerftestParams } | { ok: false; stderr: string; code: number };

const LONG_VALUE: Record<string, string> = {
  '--ib-dev': 'd',
  '--ib-port': 'i',
  '--gid-index': 'x',
  '--qp': 'q',
  '--duration': 'D',
  '--iters': 'n',
  '--size': 's',
  '--port': 'p',
  '--mtu': 'm',
  '--sl': 'S',
  '--tclass': 'tclass',
};
const LONG_FLAG: Record<string, string> = {
  '--CPU-freq': 'F',
  '--report_gbits': 'gbits',
  '--all': 'a',
  '--cpu_util': 'cpu',
};

export function parsePerftestArgs(prog: string, args: readonly string[], verb: Verb): Parsed {
  const p: PerftestParams = {
    verb,
    ibPort: 1,
    gidIndex: -1,
    gbits: false,
    qps: 1,
    iters: verb === 'write' ? 5000 : 1000,
    size: 65536,
    all: false,
    port: DEFAULT_PORT,
    sl: 0,
    cpuUtil: false,
  };
  const positional: string[] = [];
  const bad = (msg: string): Parsed => ({ ok: false, code: 1, stderr: `${msg} Parser function exited with Error\n` });
  for (let i = 0; i < args.length; i++) {
    let a = args[i] as string;
    let inline: string | undefined;
    if (a.startsWith('--') && a.includes('=')) {
      inline = a.slice(a.indexOf('=') + 1);
      a = a.slice(0, a.indexOf('='));
    }
    let opt: string | undefined;
    if (LONG_FLAG[a]) opt = LONG_FLAG[a];
    else if (LONG_VALUE[a]) opt = LONG_VALUE[a];
    else if (/^-[a-zA-Z]$/.test(a)) opt = a.slice(1);
    else if (/^-[a-zA-Z].+/.test(a) && 'dixqDnspmS'.includes(a[1] as string)) {
      opt = a[1];
      inline = a.slice(2);
    } else if (a.startsWith('-')) return bad(`${prog}: unrecognized option '${a}'\n`);
    else {
      positional.push(a);
      continue;
    }
    const takes = opt !== undefined && (Object.values(LONG_VALUE).includes(opt) || 'dixqDnspmS'.includes(opt));
    let v: string | undefined;
    if (takes) {
      v = inline ?? args[++i];
      if (v === undefined) return bad(`${prog}: option requires an argument -- '${opt}'\n`);
    }
    const num = (): number | undefined => (v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined);
    switch (opt) {
      case 'd':
        p.device = v;
        break;
      case 'i':
        p.ibPort = num() ?? 0;
        break;
      case 'x':
        p.gidIndex = num() ?? -1;
        break;
      case 'q':
        p.qps = num() ?? 0;
        break;
      case 'D':
        p.duration = num();
        if (p.duration === undefined || p.duration <= 0) return bad(' Duration period must be greater than 0\n');
        break;
      case 'n':
        p.iters = num() ?? 0;
        break;
      case 's':
        p.size = num() ?? 0;
        break;
      case 'p':
        p.port = num() ?? -1;
        break;
      case 'm':
        p.mtu = num();
        break;
      case 'S':
        p.sl = num() ?? 0;
        break;
      case 'tclass':
        p.tclass = num();
        if (p.tclass === undefined || p.tclass > 255) return bad(' Invalid tclass value\n');
        break;
      case 'F':
        break;
      case 'gbits':
        p.gbits = true;
        break;
      case 'a':
        p.all = true;
        break;
      case 'cpu':
        p.cpuUtil = true;
        break;
      default:
        return bad(`${prog}: invalid option -- '${opt}'\n`);
    }
  }
  if (positional.length > 1)
    return { ok: false, code: 1, stderr: ' Invalid Command line. Please check command rerun \n' };
  if (p.port < 0 || p.port > 65535) return bad(' Invalid port number\n');
  if (p.qps < 1) return bad(' Invalid number of QPs\n');
  if (positional[0] !== undefined) p.server = positional[0];
  return { ok: true, params: p };
}

interface Listener {
  machine: Machine;
  device: RdmaDevice;
  params: PerftestParams;
  arrive(s: Session): void;
}

interface Session {
  client: { machine: Machine; device: RdmaDevice; params: PerftestParams };
  /** Path MTU both sides print (the smaller active MTU, or -m). */
  mtuBytes: number;
  /** Resolves with the result row when the client finished, or null when it failed. */
  done: Promise<string | null>;
  /** Set when the responder's own ibv_modify_qp failed. */
  responderRtrFailed?: boolean;
}

const listeners = new WeakMap<Cluster, Map<string, Listener>>();
function registry(c: Cluster): Map<string, Listener> {
  let r = listeners.get(c);
  if (!r) listeners.set(c, (r = new Map()));
  return r;
}

/** Whether a server is listening on `host`:`port` (tests wait on it instead of retrying). */
export function perftestListening(cluster: Cluster, host: string, port: number): boolean {
  return registry(cluster).has(`${host}:${port}`);
}

/** Deterministic QPN/PSN/RKey/VAddr per side and QP. */
function addressLine(
  side: 'local' | 'remote',
  m: Machine,
  d: RdmaDevice,
  idx: number,
  qp: number,
  salt: number,
): string {
  const h = [...`${m.hostname}/${d.name}/${qp}/${salt}`].reduce(
    (a, ch) => (Math.imul(a, 31) + ch.charCodeAt(0)) >>> 0,
    7,
  );
  const hex = (v: number, w: number) => `0x${v.toString(16).padStart(w - 2, '0')}`;
  const qpn = hex(0x100 + ((h >>> 3) & 0x3ff) + qp, 6);
  const psn = hex(h & 0xffffff, 8);
  const rkey = hex((h >>> 7) & 0x1fffff, 8);
  const vaddr = `0x${(0x7f0000000000 + ((h & 0xfffffff) << 12)).toString(16).padStart(14, '0')}`;
  const gid = gidTable(m, d)[idx]?.gid ?? '0000:0000:0000:0000:0000:0000:0000:0000';
  const bytes = gid.split(':').flatMap((g) => [parseInt(g.slice(0, 2), 16), parseInt(g.slice(2), 16)]);
  return ` ${side} address: LID 0000 QPN ${qpn} PSN ${psn} RKey ${rkey} VAddr ${vaddr}\n GID: ${bytes.map((b) => String(b).padStart(2, '0')).join(':')}\n`;
}

function testInfo(p: PerftestParams, device: string, server: boolean, mtuBytes: number, gidIndex: number): string {
  const lines = [
    RESULT_LINE.trimEnd(),
    `                    ${TITLES[p.verb]} BW Test`,
    ` Dual-port       : OFF\t\tDevice         : ${device}`,
    ` Number of qps   : ${p.qps}\t\tTransport type : IB`,
    ` Connection type : RC\t\tUsing SRQ      : OFF`,
    ' PCIe relax order: ON',
    ' ibv_wr* API     : ON',
    ...(server ? [] : [' TX depth        : 128']),
    ...(p.verb === 'send' && server ? [' RX depth        : 512'] : []),
    ` CQ Moderation   : ${p.duration !== undefined ? 1 : 100}`,
    ` Mtu             : ${mtuBytes}[B]`,
    ' Link type       : Ethernet',
    ` GID index       : ${gidIndex}`,
    p.verb === 'read' ? ' Outstand reads  : 16' : ' Max inline data : 0[B]',
    ' rdma_cm QPs\t : OFF',
    ' Data ex. method : Ethernet',
    RESULT_LINE.trimEnd(),
  ];
  return `${lines.join('\n')}\n`;
}

function resultHeader(p: PerftestParams): string {
  const u = p.gbits ? 'Gb/sec' : 'MB/sec';
  return `${RESULT_LINE} #bytes     #iterations    BW peak[${u}]    BW average[${u}]   MsgRate[Mpps]${p.cpuUtil ? '    CPU_Util[%]' : ''}\n`;
}

/** perftest's REPORT_FMT row (`%-7lu    %-10lu       %-7.2lf            %-7.2lf            %-7.6lf`). */
function row(p: PerftestParams, size: number, iters: number, peak: number, avg: number, mpps: number): string {
  const conv = (gbps: number) => (p.gbits ? gbps : (gbps * 1e9) / 8 / 1048576);
  const l = (s: string, w: number) => s.padEnd(w);
  return ` ${l(String(size), 7)}    ${l(String(iters), 10)}       ${l(conv(peak).toFixed(2), 7)}            ${l(conv(avg).toFixed(2), 7)}            ${l(mpps.toFixed(6), 7)}${p.cpuUtil ? `         ${(4 + (iters % 300) / 100).toFixed(2)}` : ''}\n`;
}

/** The port (or, for a device on a bond, its slaves') state check perftest does before anything. */
function findDevice(m: Machine, p: PerftestParams): { device: RdmaDevice } | { stderr: string } {
  const device = p.device
    ? m.rdma.find((r) => r.name === p.device)
    : [...m.rdma].sort((a, b) => a.name.localeCompare(b.name))[0];
  if (!device)
    return {
      stderr: `${p.device ? `IB device ${p.device} not found` : 'No IB devices found'}\n Unable to find the Infiniband/RoCE device\n`,
    };
  if (p.ibPort !== device.port)
    return { stderr: ` Invalid IB port ${p.ibPort}\n Couldn't get context for the device\n` };
  if (rdmaPortState(m, device).state !== 'ACTIVE') {
    return {
      stderr: ` Port number ${p.ibPort} state is Down\n Couldn't set the link layer\n Couldn't get context for the device\n`,
    };
  }
  return { device };
}

async function runServer(env: ToolEnv, io: ToolIo, p: PerftestParams, device: RdmaDevice): Promise<number> {
  const m = env.machine;
  await io.out(BANNER);
  const reg = registry(env.cluster);
  const key = `${m.hostname}:${p.port}`;
  if (reg.has(key)) {
    await io.err(`Couldn't listen to port ${p.port}\n Unable to init the socket connection\n`);
    return 1;
  }
  let arrive!: (s: Session) => void;
  const arrived = new Promise<Session>((resolve) => (arrive = resolve));
  const listener: Listener = { machine: m, device, params: p, arrive };
  reg.set(key, listener);
  const aborted = new Promise<null>((resolve) => {
    if (io.signal?.aborted) resolve(null);
    io.signal?.addEventListener('abort', () => resolve(null), { once: true });
  });
  const session = await Promise.race([arrived, aborted]);
  if (reg.get(key) === listener) reg.delete(key);
  if (!session) return 130;
  if (!(await io.sleep(1000))) return 130;
  const gidIndex = p.gidIndex;
  let text = testInfo(p, device.name, true, session.mtuBytes, gidIndex);
  for (let q = 0; q < p.qps; q++) text += addressLine('local', m, device, gidIndex, q, p.port);
  const c = session.client;
  for (let q = 0; q < p.qps; q++)
    text += addressLine('remote', c.machine, c.device, c.params.gidIndex, q, c.params.port);
  if (session.responderRtrFailed) {
    await io.out(text);
    await io.err(` Failed to modify QP ${0x100} to RTR\n Unable to Connect the HCA's through the link\n`);
    return 1;
  }
  await io.out(text + resultHeader(p));
  const result = await Promise.race([session.done, aborted]);
  if (result === null) {
    if (io.signal?.aborted) return 130;
    await io.err(' Failed to exchange data between server and clients\n');
    return 1;
  }
  await io.out(result + RESULT_LINE);
  return 0;
}

const CONNECT_DELAY_MS = { noroute: 0, unreachable: 3_000, filtered: 127_000 } as const;

async function runClient(
  env: ToolEnv,
  io: ToolIo,
  p: PerftestParams,
  device: RdmaDevice,
  server: string,
): Promise<number> {
  const m = env.machine;
  const refuse = async (): Promise<number> => {
    await io.err(`Couldn't connect to ${server}:${p.port}\n Unable to init the socket connection\n`);
    return 1;
  };
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(server)) return refuse();
  const path = tcpPath(env.cluster, m, server, p.port);
  if (!path.ok) {
    if (!(await io.sleep(CONNECT_DELAY_MS[path.reason]))) return 130;
    return refuse();
  }
  const key = `${path.machine.hostname}:${p.port}`;
  const listener = registry(env.cluster).get(key);
  if (!listener) return refuse();
  registry(env.cluster).delete(key);
  let finish!: (row: string | null) => void;
  const done = new Promise<string | null>((resolve) => (finish = resolve));
  const sp = listener.params;
  const mtuBytes = Math.min(
    activeMtu(m, device).bytes,
    activeMtu(listener.machine, listener.device).bytes,
    p.mtu ?? 4096,
    sp.mtu ?? 4096,
  );
  const qp = qpPath(
    env.cluster,
    { machine: m, device, gidIndex: p.gidIndex },
    { machine: listener.machine, device: listener.device, gidIndex: sp.gidIndex },
  );
  const session: Session = {
    client: { machine: m, device, params: p },
    mtuBytes,
    done,
    ...(!qp.ok && qp.kind === 'rtr' && qp.side === 'responder' ? { responderRtrFailed: true } : {}),
  };
  listener.arrive(session);
  try {
    if (!(await io.sleep(1000))) return 130;
    const gidIndex = p.gidIndex;
    let text = testInfo(p, device.name, false, mtuBytes, gidIndex);
    for (let q = 0; q < p.qps; q++) text += addressLine('local', m, device, gidIndex, q, p.port);
    if (!qp.ok && qp.kind === 'rtr' && qp.side === 'responder') {
      await io.out(text);
      await io.err(' Failed to exchange data between server and clients\n');
      return 1;
    }
    for (let q = 0; q < p.qps; q++)
      text += addressLine('remote', listener.machine, listener.device, sp.gidIndex, q, sp.port);
    if (!qp.ok && qp.kind === 'rtr') {
      await io.out(text);
      await io.err(` Failed to modify QP ${0x100} to RTR\n Unable to Connect the HCA's through the link\n`);
      return 1;
    }
    await io.out(text + resultHeader(p));
    if (!qp.ok) {
      // Seven retries of a 4.096 µs × 2^14 timeout before the first completion fails.
      if (!(await io.sleep(540))) return 130;
      await io.err(
        ' Completion with error at client\n Failed status 12: wr_id 0 syndrom 0x81\nscnt=128, ccnt=0\n Failed to complete run_iter_bw function successfully\n',
      );
      return 1;
    }
    const rows = await measure(env, io, p, device, listener, mtuBytes, qp.requesterPort, qp.responderPort);
    if (rows === null) return 130;
    await io.out(rows + RESULT_LINE);
    finish(rows);
    return 0;
  } finally {
    finish(null);
  }
}

/** Runs the traffic for the test's length and returns its result rows. */
async function measure(
  env: ToolEnv,
  io: ToolIo,
  p: PerftestParams,
  device: RdmaDevice,
  l: Listener,
  mtuBytes: number,
  reqPort: string,
  respPort: string,
): Promise<string | null> {
  const m = env.machine;
  const r = runRng(m);
  // A LAG device spreads its QPs over both member ports; elsewhere every QP uses the cabled port.
  const ports = physicalPorts(m, device.netdev);
  const used = ports.length > 1 ? ports.filter((_, i) => i < p.qps) : [reqPort];
  const linkGbps = (m.netdevs.find((d) => d.name === reqPort)?.linkSpeedMbps ?? 25000) / 1000;
  const sizes = p.all ? Array.from({ length: 23 }, (_, i) => 2 ** (i + 1)) : [p.size];
  let out = '';
  for (const size of sizes) {
    let gbps = 0;
    let flowsDone: Array<{ f: Flow; res: ReturnType<typeof flowRate> }> = [];
    for (const port of used) {
      const peer = env.cluster.peer(m.hostname, port);
      const f: Flow = {
        sender: m,
        senderPort: port,
        senderDevice: device.name,
        receiver: l.machine,
        receiverPort: peer?.ifname ?? respPort,
        receiverDevice: l.device.name,
        tclass: p.tclass,
        sl: p.sl,
        mtuBytes,
        linkGbps,
        share: 1,
      };
      const res = flowRate(f, r);
      gbps += res.gbps;
      flowsDone.push({ f, res });
    }
    // Small messages are bound by the message rate, not the wire.
    gbps = Math.min(gbps, (size * 8 * MAX_MPPS * used.length) / 1000);
    const seconds = p.duration ?? Math.max(0.001, (p.iters * size * 8) / (gbps * 1e9));
    const iters = p.duration !== undefined ? Math.round((gbps * 1e9 * seconds) / 8 / size) : p.iters;
    const wait = p.duration !== undefined ? (seconds + 2) * 1000 : seconds * 1000 + 50;
    // The bytes move while the test writes (a second of warm-up first with -D), so counters read
    // meanwhile show the rate; a killed client keeps what it sent.
    const total = iters * size;
    const from = m.clock.now() + (p.duration !== undefined ? 1000 : 25);
    const traffic = flowsDone.map(({ f, res }) =>
      startFlow(f, res, total / flowsDone.length, Math.ceil(iters / flowsDone.length), r, from, from + seconds * 1000),
    );
    if (!(await io.sleep(wait))) {
      for (const t of traffic) t.stop();
      return null;
    }
    for (const t of traffic) t.finish();
    flowsDone = [];
    const peak = p.duration !== undefined ? 0 : gbps * (1.001 + r.next() * 0.004);
    out += row(p, size, iters, peak, gbps, iters / seconds / 1e6);
  }
  return out;
}

function perftestTool(name: string, verb: Verb): Tool {
  return {
    name,
    path: `/usr/bin/${name}`,
    packages: ['perftest'],
    async run(args, env) {
      const parsed = parsePerftestArgs(name, args, verb);
      if (!parsed.ok) return fail(parsed.code, parsed.stderr);
      const p = parsed.params;
      if (p.mtu !== undefined && ibMtuForNetdevMtu(p.mtu + 96).bytes !== p.mtu)
        return fail(
          1,
          ` Invalid MTU - ${p.mtu} \n Please choose mtu from {256,512,1024,2048,4096}\n Parser function exited with Error\n`,
        );
      const found = findDevice(env.machine, p);
      if ('stderr' in found) return fail(1, found.stderr);
      if (p.gidIndex >= 256) return fail(1, ` Invalid GID index ${p.gidIndex}\n Couldn't get context for the device\n`);
      // Without -x perftest picks the port's first RoCE v2 GID carrying an IPv4 address, else index 0.
      if (p.gidIndex < 0)
        p.gidIndex = Math.max(
          0,
          gidTable(env.machine, found.device).findIndex((e) => e?.type === 'RoCE v2' && gidToIpv4(e.gid) !== undefined),
        );
      // A process ps/pgrep list while the test runs; a signal (kill PID) ends the test as it would.
      const m = env.machine;
      const stop = new AbortController();
      let killedBy: string | undefined;
      const proc = m.system.processes.spawn({
        argv: [name, ...args],
        uid: env.root ? 0 : m.user.uid,
        onSignal: (sig) => {
          killedBy = sig;
          stop.abort();
        },
      });
      const base = toolIo(env.ctx, m.clock);
      const signal = base.signal ? AbortSignal.any([base.signal, stop.signal]) : stop.signal;
      const io: ToolIo = { ...base, signal, sleep: (ms) => m.clock.sleep(ms, signal) };
      let code = 1;
      try {
        code =
          p.server === undefined
            ? await runServer(env, io, p, found.device)
            : await runClient(env, io, p, found.device, p.server);
      } finally {
        m.system.processes.exit(proc.pid, killedBy ? { code: null, signal: killedBy } : { code, signal: null });
      }
      return io.result(killedBy ? 128 + Math.max(1, SIGNALS.indexOf(killedBy)) : code);
    },
  };
}

export const ibWriteBw = perftestTool('ib_write_bw', 'write');
export const ibReadBw = perftestTool('ib_read_bw', 'read');
export const ibSendBw = perftestTool('ib_send_bw', 'send');
