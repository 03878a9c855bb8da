/**
 * NCCL log facts schema and scan shapes: the zod facts, the hit types the output rules read, the empty scan,
 * and the trigger patterns other kinds (vLLM, torch logs) share. The line scanner lives in `nccl-log.ts`.
 */
import { z } from 'zod';

export const NcclLogFactsSchema = z.object({
  /** `2.28.9` (the `+cudaX.Y` suffix is in `ncclBuild`). */
  ncclVersion: z.string().optional(),
  /** `2.28.9+cuda13.0` as printed. */
  ncclBuild: z.string().optional(),
  /** The network NCCL used: `IB`, `Socket`, or a plugin's name (`IBext_v8`, `AWS Libfabric`). */
  network: z.string().optional(),
  /** HCAs as printed in `NET/IB : Using …` (`mlx5_0:1/RoCE`), in order, unique. */
  hcas: z.array(z.string()),
  /** true when GPUDirect RDMA was used, false when explicitly disabled; omitted when unknown. */
  gdr: z.boolean().optional(),
  /** WARN messages and NCCL error texts, verbatim, unique, in order (at most 100). */
  errors: z.array(z.string()),
  warnCount: z.number().int(),
  /** Hostnames from the line prefixes. */
  hosts: z.array(z.string()),
  nNodes: z.number().int().optional(),
  nRanks: z.number().int().optional(),
  cudaDriverVersion: z.number().int().optional(),
  /** Socket interfaces of `NET/Socket : Using [0]eth0:…`. */
  socketInterfaces: z.array(z.string()).optional(),
  /** `OOB` interface of the NET/IB line, `Bootstrap : Using` interface. */
  oobInterface: z.string().optional(),
  bootstrapInterface: z.string().optional(),
  /** Channel counts per transport family: `{ "NET/IB": 64, "P2P/IPC": 232 }`. */
  channels: z.record(z.string(), z.number().int()),
  /** Channels whose transport carries `/GDRDMA`. */
  gdrdmaChannels: z.number().int(),
  /** `NCCL_* set by environment to …` / `NCCL_* set to …` values (last wins). */
  env: z.record(z.string(), z.string()),
  /** Net plugin loaded (`Loaded net plugin AWS Libfabric (v6)` → `AWS Libfabric (v6)`). */
  netPlugin: z.string().optional(),
  initComplete: z.number().int().optional(),
});
export type NcclLogFacts = z.infer<typeof NcclLogFactsSchema>;

/** A triggering line: 1-based number and its text (control characters stripped). */
export interface LogHit {
  line: number;
  text: string;
}

export interface CompletionHit extends LogHit {
  status: number;
  peer?: string;
  vendorErr?: number;
  hca?: string;
}

export interface ModifyQpHit extends LogHit {
  errno?: number;
  message: string;
}

/** Everything the output rules need, with line numbers. */
export interface NcclLogScan {
  facts: NcclLogFacts;
  ibNoDevice: LogHit[];
  ibInitFailed: LogHit[];
  usingNetworkSocket: LogHit[];
  socketUsing: LogHit[];
  socketChannels: LogHit[];
  ibGdrDisabled: Array<LogHit & { hca: string; index: number }>;
  ibChannelsNoGdr: number;
  configRejected: LogHit[];
  completion: CompletionHit[];
  modifyQp: ModifyQpHit[];
  noSocketInterface: LogHit[];
  watchdog: LogHit[];
  unhandled: LogHit[];
  pluginLoadFailed: LogHit[];
  pluginSymbolMissing: LogHit[];
  pluginInitFailed: LogHit[];
  /** `NET/Plugin: Could not find: libnccl-net.so` / `No plugin found (libnccl-net.so)`: normal unless requested. */
  pluginNotFound: LogHit[];
  /** `NET/Plugin: Plugin name set by env to …` (NCCL_NET_PLUGIN). */
  pluginRequested: LogHit[];
  /** `Initialized NET plugin X` for a plugin other than IB/Socket. */
  pluginInitialized: LogHit[];
  usingNetwork: LogHit[];
  loadedPlugin: LogHit[];
  /** `NCCL_ALGO set by environment to …` lines. */
  algoEnv: LogHit[];
  /** Every `NCCL_<X> set [by environment] to <v>` echo, first line of each distinct KEY=value (ranks repeat them). */
  envEcho: EnvEchoHit[];
}

export interface EnvEchoHit extends LogHit {
  key: string;
  value: string;
}

export function emptyScan(): NcclLogScan {
  return {
    facts: { hcas: [], errors: [], warnCount: 0, hosts: [], channels: {}, gdrdmaChannels: 0, env: {} },
    ibNoDevice: [],
    ibInitFailed: [],
    usingNetworkSocket: [],
    socketUsing: [],
    socketChannels: [],
    ibGdrDisabled: [],
    ibChannelsNoGdr: 0,
    configRejected: [],
    completion: [],
    modifyQp: [],
    noSocketInterface: [],
    watchdog: [],
    unhandled: [],
    pluginLoadFailed: [],
    pluginSymbolMissing: [],
    pluginInitFailed: [],
    pluginNotFound: [],
    pluginRequested: [],
    pluginInitialized: [],
    usingNetwork: [],
    loadedPlugin: [],
    algoEnv: [],
    envEcho: [],
  };
}

/** Patterns other kinds (vLLM logs, torch logs) share: D03, D07, D17 triggers. */
export const CONFIG_REJECTED =
  /Unrecognized (?:element|prefix) token|All entries except the first must have a prefix|no algorithm\/protocol available|invalid usage \(run with NCCL_DEBUG=WARN/i;
export const WATCHDOG =
  /Watchdog caught collective operation timeout|Exception \(either an error or timeout\) detected by watchdog/i;
export const UNHANDLED = /unhandled (?:system|cuda) error|remote process exited or there was a network error/i;

/** Cheap pre-check for CONFIG_REJECTED (case variants of its words). */
export function mayRejectConfig(line: string): boolean {
  return (
    line.includes('nrecognized') ||
    line.includes('ntries except') ||
    line.includes('lgorithm/protocol') ||
    line.includes('nvalid usage')
  );
}
