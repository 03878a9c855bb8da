/**
 * Any log holding `NCCL_DEBUG=INFO` / `NCCL WARN` lines: a torch job, nccl-tests with NCCL INFO interleaved,
 * sglang/vLLM workers. One pass over the lines, no backtracking regexes, so 50 MB logs stay linear.
 *
 * Line shape (2.4 … 2.29): `<host>:<pid>:<tid> [<cudaDev>] NCCL INFO <message>`; WARN lines add the source
 * location before `NCCL WARN`; lines may carry `[Rank N]` (2.29) or timestamp / launcher prefixes
 * (`[default0]:`, `0: `), and ranks interleave. Wording that moved between versions:
 *   `Bootstrap : Using` (≤ 2.22) / `Bootstrap: Using` (2.27+); the version line printed bare
 *   (`NCCL version 2.21.5+cuda12.4`, ≤ 2.21) or as an INFO line (2.22+); `NET/Plugin : No plugin found`
 *   (old) / `NET/Plugin: Could not find: libnccl-net.so` (2.22+); `Using network IB|Socket|<plugin>`.
 * Transport: `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>`, fallback
 * `NET/IB : No device found.` then `NET/Socket : Using [0]eth0:…`; channels `via NET/IB/0/GDRDMA`,
 * `via NET/Socket/0`, `via P2P/IPC`.
 *
 * This file: the line scanner and the entry points; the facts schema, hit types and shared patterns are in `nccl-log-schema.ts`.
 */
import { compact, guard, validate } from './common.js';
import { clip, logLines } from './log-lines.js';
import {
  CONFIG_REJECTED,
  NcclLogFactsSchema,
  UNHANDLED,
  WATCHDOG,
  emptyScan,
  mayRejectConfig,
  type CompletionHit,
  type LogHit,
  type NcclLogFacts,
  type NcclLogScan,
} from './nccl-log-schema.js';

const MAX_HITS = 20;
const MAX_ERRORS = 100;

function push<T>(arr: T[], v: T): void {
  if (arr.length < MAX_HITS) arr.push(v);
}

// `host:pid:tid [dev] NCCL INFO|WARN|TRACE`; the host is the token right before `:pid:tid`.
const PREFIX = /([^\s:[\]]+):(\d+):(\d+) \[\d+\]/;
const CHANNEL_VIA = /\bvia ([A-Za-z0-9]+\/[^\s]*|SHM|P2P)/;
const HCA_TOKEN = /\[\d+\]([^\s[\];]+)/g;

/** errno of the messages `ibv_modify_qp` reports, for the texts NCCL prints without a number. */
const ERRNO_BY_TEXT: Record<string, number> = {
  'network is unreachable': 101,
  'connection timed out': 110,
  'invalid argument': 22,
  'no route to host': 113,
  'connection refused': 111,
};

function scanImpl(text: string): NcclLogScan {
  const s = emptyScan();
  const f = s.facts;
  const lines = logLines(text);
  const hosts = new Set<string>();
  const hcas = new Set<string>();
  const errors = new Set<string>();
  const socketIfs = new Set<string>();
  let gdrTrue = false;
  let gdrFalse = false;
  let ringGdr: boolean | undefined;
  let nNodes: number | undefined;
  let nRanks: number | undefined;
  let initComplete = 0;
  let network: string | undefined;
  let fallbackNetwork: string | undefined;
  let nccllessVersion: string | undefined;
  let lastPrefix = '';

  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    if (raw.length < 6) continue;
    const lineNo = i + 1;
    const hit = (): LogHit => ({ line: lineNo, text: clip(raw) });
    const hasNccl = raw.includes('NCCL');
    // Patterns that appear outside NCCL INFO/WARN lines too (torch, Python tracebacks).
    if (raw.includes('atchdog') && WATCHDOG.test(raw)) push(s.watchdog, hit());
    if (raw.includes('unhandled') || raw.includes('remote process exited')) {
      if (UNHANDLED.test(raw)) {
        push(s.unhandled, hit());
        if (!raw.includes('NCCL INFO') && errors.size < MAX_ERRORS)
          errors.add(
            clip(raw.replace(/^.*?(?=NCCL [Ee]rror|RuntimeError|torch\.|ncclSystemError|ncclUnhandledCudaError)/, '')),
          );
      }
    }
    if (!hasNccl) {
      const v = /using nccl==(\d+\.\d+\.\d+)/.exec(raw);
      if (v) nccllessVersion ??= v[1];
      // The same messages pasted without their `NCCL WARN` prefix.
      if (mayRejectConfig(raw) && CONFIG_REJECTED.test(raw)) push(s.configRejected, hit());
      if (raw.includes('ibv_modify_qp') || raw.includes('Got completion')) scanIbErrors(s, raw, hit);
      if (
        /Bootstrap\s*:\s*no socket interface found|NET\/Socket\s*:\s*(?:No usable listening interface found|no interface found)/i.test(
          raw,
        )
      )
        push(s.noSocketInterface, hit());
      continue;
    }
    const level = raw.includes('NCCL INFO') ? 'INFO' : raw.includes('NCCL WARN') ? 'WARN' : undefined;
    const verM =
      f.ncclVersion === undefined && raw.includes('NCCL version')
        ? /NCCL version (\d+\.\d+\.\d+)(\S*)/.exec(raw)
        : null;
    if (verM && f.ncclVersion === undefined) {
      f.ncclVersion = verM[1];
      f.ncclBuild = `${verM[1]}${verM[2] ?? ''}`;
    }
    if (!level) {
      if (mayRejectConfig(raw) && CONFIG_REJECTED.test(raw)) push(s.configRejected, hit());
      continue;
    }
    const at = raw.indexOf(`NCCL ${level}`);
    const msg = raw.slice(at + 10).trim();
    // Consecutive lines mostly share a prefix (one rank): parse each distinct prefix once.
    const preText = raw.slice(0, at);
    if (preText !== lastPrefix) {
      lastPrefix = preText;
      const pre = PREFIX.exec(preText);
      if (pre?.[1] && hosts.size < 1000) hosts.add(pre[1]);
    }

    if (level === 'WARN') {
      f.warnCount++;
      if (errors.size < MAX_ERRORS) errors.add(clip(msg));
    }
    if (mayRejectConfig(msg) && CONFIG_REJECTED.test(msg)) push(s.configRejected, hit());

    const first = msg.charCodeAt(0);
    // Channel lines dominate INFO logs: handle them first and cheaply.
    if ((msg.startsWith('Channel ') || msg.startsWith('Ring ')) && msg.includes(' via ')) {
      const via = CHANNEL_VIA.exec(msg);
      if (via?.[1]) {
        const parts = via[1].split('/');
        const family = parts[0] === 'NET' ? `NET/${parts[1] ?? ''}` : parts.slice(0, 2).join('/');
        f.channels[family] = (f.channels[family] ?? 0) + 1;
        if (via[1].includes('GDRDMA')) {
          f.gdrdmaChannels++;
          gdrTrue = true;
        } else if (family === 'NET/IB') s.ibChannelsNoGdr++;
        if (family === 'NET/Socket') push(s.socketChannels, hit());
      }
      continue;
    }
    if (first === 78 /* N */ && msg.startsWith('NET/')) {
      if (/^NET\/IB\s*:\s*Using\b/.test(msg)) {
        for (const m of msg.matchAll(HCA_TOKEN)) if (m[1] && hcas.size < 256) hcas.add(m[1]);
        const oob = /OOB\s+(\S+)/.exec(msg);
        if (oob?.[1]) f.oobInterface = oob[1];
        fallbackNetwork ??= 'IB';
      } else if (/^NET\/IB\s*:\s*No device found/i.test(msg)) {
        push(s.ibNoDevice, hit());
      } else if (/^NET\/Socket\s*:\s*Using\b/.test(msg)) {
        push(s.socketUsing, hit());
        for (const m of msg.matchAll(HCA_TOKEN)) if (m[1] && socketIfs.size < 64) socketIfs.add(m[1]);
        if (fallbackNetwork === undefined || s.ibNoDevice.length > 0) fallbackNetwork = 'Socket';
      } else if (/^NET\/Socket\s*:\s*(?:No usable listening interface found|no interface found)/i.test(msg)) {
        push(s.noSocketInterface, hit());
      } else if (/^NET\/Plugin\s*:/.test(msg)) {
        if (/Plugin load \(.*\) returned \d+/.test(msg) || /^NET\/Plugin\s*:\s*\S+\.so\S*\s*:\s*\S/.test(msg)) {
          push(s.pluginLoadFailed, hit());
        } else if (/Failed to find ncclNetPlugin_v\d+ symbol/.test(msg)) {
          push(s.pluginSymbolMissing, hit());
        } else if (/Could not find:|No plugin found/.test(msg)) {
          push(s.pluginNotFound, hit());
        } else if (/Plugin name set by env to/.test(msg)) {
          push(s.pluginRequested, hit());
        } else if (/Loaded net plugin\s+\S/.test(msg)) {
          push(s.loadedPlugin, hit());
          f.netPlugin = msg.replace(/^.*Loaded net plugin\s+/, '').trim();
        }
      }
      if (msg.includes('GPU Direct RDMA')) {
        const g = /GPU Direct RDMA (Enabled|Disabled) for HCA\s+(\d+)\s+'([^']*)'/.exec(msg);
        if (g) {
          const socket = msg.startsWith('NET/Socket');
          if (g[1] === 'Enabled') gdrTrue = true;
          else {
            gdrFalse = true;
            if (!socket) s.ibGdrDisabled.push({ ...hit(), index: Number(g[2]), hca: g[3] ?? '' });
          }
        }
      }
      if (msg.includes('ibv_modify_qp') || msg.includes('Got completion')) scanIbErrors(s, msg, hit);
      continue;
    }
    if (msg.includes('ibv_modify_qp') || msg.includes('Got completion')) {
      scanIbErrors(s, msg, hit);
      continue;
    }
    if (msg.startsWith('Using internal Network ')) {
      // NCCL ≤ 2.3 wording.
      const n = msg.slice(23).trim();
      if (n) network = n;
      if (/^Socket\b/.test(n)) push(s.usingNetworkSocket, hit());
      continue;
    }
    if (msg.startsWith('Using network ')) {
      const n = msg.slice(14).trim();
      if (n) network = n;
      push(s.usingNetwork, hit());
      if (/^Socket\b/.test(n)) push(s.usingNetworkSocket, hit());
      continue;
    }
    if (msg.includes('NET plugin')) {
      const fi = /Failed to initiali[sz]e NET plugin\s+(.+?)\s*$/.exec(msg);
      if (fi?.[1]) {
        if (/^IB\b/.test(fi[1])) push(s.ibInitFailed, hit());
        else if (!/^Socket\b/.test(fi[1])) push(s.pluginInitFailed, hit());
        continue;
      }
      const ini = /Initiali[sz]ed NET plugin\s+(.+?)\s*$/.exec(msg);
      if (ini?.[1] && !/^(?:IB|Socket)$/.test(ini[1])) push(s.pluginInitialized, hit());
      continue;
    }
    if (/^Bootstrap\s*:\s*Using\s+(\S+)/.test(msg)) {
      f.bootstrapInterface ??= /^Bootstrap\s*:\s*Using\s+(\S+)/.exec(msg)?.[1];
      continue;
    }
    if (/^Bootstrap\s*:\s*no socket interface found/i.test(msg)) {
      push(s.noSocketInterface, hit());
      continue;
    }
    if (msg.includes(' set ') && msg.startsWith('NCCL_')) {
      const e = /^(NCCL_[A-Z0-9_]+) set (?:by environment )?to\s?(.*)$/.exec(msg);
      if (e?.[1]) {
        let v = (e[2] ?? '').trim();
        if (/^-?\d+\.$/.test(v)) v = v.slice(0, -1);
        if (Object.keys(f.env).length < 200 || e[1] in f.env) f.env[e[1]] = v;
        const seen = s.envEcho.some((x) => x.key === e[1] && x.value === v);
        if (s.envEcho.length < 200 && !seen) s.envEcho.push({ ...hit(), key: e[1], value: v });
        if (e[1] === 'NCCL_ALGO' || e[1] === 'NCCL_PROTO') push(s.algoEnv, hit());
      }
      continue;
    }
    if (msg.includes('nNodes') || msg.includes('nranks') || msg.includes('nRanks')) {
      const nn = /\bnNodes (\d+)/.exec(msg);
      if (nn) nNodes = Math.max(nNodes ?? 0, Number(nn[1]));
      const nr = /\bn[Rr]anks[ =](\d+)/.exec(msg);
      if (nr) nRanks = Math.max(nRanks ?? 0, Number(nr[1]));
      if (msg.includes('Init COMPLETE')) initComplete++;
      continue;
    }
    if (msg.startsWith('Connected all rings')) {
      const g = /\bGDR (\d)/.exec(msg);
      if (g) ringGdr = ringGdr === true || g[1] === '1';
      continue;
    }
    if (msg.startsWith('cudaDriverVersion')) {
      const d = /cudaDriverVersion (\d+)/.exec(msg);
      if (d) f.cudaDriverVersion = Number(d[1]);
      continue;
    }
    if (msg.includes('GPU Direct RDMA Enabled for GPU')) gdrTrue = true;
  }

  f.ncclVersion ??= nccllessVersion;
  f.hcas = [...hcas];
  f.errors = [...errors];
  f.hosts = [...hosts];
  if (socketIfs.size > 0) f.socketInterfaces = [...socketIfs];
  const net = network ?? fallbackNetwork ?? inferFromChannels(f.channels);
  if (net !== undefined) f.network = net;
  if (nNodes !== undefined) f.nNodes = nNodes;
  if (nRanks !== undefined) f.nRanks = nRanks;
  if (initComplete > 0) f.initComplete = initComplete;
  // GDRDMA channels or `GDR Enabled` prove use; a `Disabled` line disables it; the ring summary's `GDR 0|1`
  // only counts when the job used an RDMA network (it says 1 on socket-only jobs too).
  if (gdrTrue) f.gdr = true;
  else if (gdrFalse) f.gdr = false;
  else if (ringGdr !== undefined && net !== undefined && !/^Socket/.test(net)) f.gdr = ringGdr;
  return s;
}

function inferFromChannels(channels: Record<string, number>): string | undefined {
  const nets = Object.keys(channels).filter((k) => k.startsWith('NET/'));
  if (nets.length === 0) return undefined;
  const best = nets.sort((a, b) => (channels[b] ?? 0) - (channels[a] ?? 0))[0];
  return best?.slice(4);
}

function scanIbErrors(s: NcclLogScan, msg: string, hit: () => LogHit): void {
  if (msg.includes('ibv_modify_qp')) {
    // `Call to ibv_modify_qp failed with error Network is unreachable` (older) or
    // `… failed with 110 Connection timed out, on dev mlx5_1:1, curr state INIT, …`; an INFO `retrying` is not one.
    const m = /Call to ibv_modify_qp failed with\s+(?:error\s+)?(?:(\d+)\s+)?([A-Za-z][A-Za-z ]*[A-Za-z])/.exec(msg);
    if (m && !/retrying/i.test(msg)) {
      const message = (m[2] ?? '').trim();
      const errno = m[1] !== undefined ? Number(m[1]) : ERRNO_BY_TEXT[message.toLowerCase()];
      if (s.modifyQp.length < MAX_HITS)
        s.modifyQp.push({ ...hit(), message, ...(errno !== undefined ? { errno } : {}) });
    }
  }
  if (msg.includes('Got completion')) {
    const m =
      /Got completion from peer\s+(\S+?),?\s+with\s+(?:error\s+(\d+)|status\s*=\s*(?:[A-Za-z_][^()=]{0,60}\()?(\d+))(?=[\s,)])/.exec(
        msg,
      );
    if (m) {
      const status = Number(m[2] ?? m[3]);
      const vendor = /vendor[ _]err\s*=?\s*(\d+)/.exec(msg);
      const hca = /\bhca\s+([^\s,]+)/.exec(msg);
      const c: CompletionHit = { ...hit(), status, peer: m[1] };
      if (vendor) c.vendorErr = Number(vendor[1]);
      if (hca?.[1]) c.hca = hca[1];
      if (s.completion.length < MAX_HITS) s.completion.push(c);
    }
  }
}

let cache: { text: string; scan: NcclLogScan } | undefined;

/** The facts and the rule triggers of an NCCL log (memoised for the last text, parse then rules). */
export function scanNcclLog(text: string): NcclLogScan {
  if (typeof text !== 'string') return emptyScan();
  if (cache && cache.text === text) return cache.scan;
  const scan = guard(() => scanImpl(text), emptyScan);
  cache = { text, scan };
  return scan;
}

export function parseNcclLog(text: string): NcclLogFacts {
  return guard(
    () => validate(NcclLogFactsSchema, compact({ ...scanNcclLog(text).facts })),
    () => emptyScan().facts,
  );
}
