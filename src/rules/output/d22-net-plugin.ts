/**
 * D22 NCCL network plugin failed to load; internal transport used — info (docs/RULES.md §3).
 * Fires on `NET/Plugin : Plugin load (<lib>) returned <errno> : <dlerror>`, `NET/Plugin: <lib>: <dlerror>`,
 * `Failed to find ncclNetPlugin_v<N> symbol` with no `Loaded net plugin`, `Failed to initialize NET plugin <name>`
 * (name not IB/Socket), and — the same condition seen later — a plugin that initialised (`Initialized NET plugin X`)
 * but was dropped for `Using network IB|Socket`. `Could not find: libnccl-net.so` / `No plugin found` alone is normal,
 * unless NCCL_NET_PLUGIN asked for a plugin (`Plugin name set by env to …`, or the variable echoed in the log).
 */
import type { LogHit, NcclLogScan } from '../../parse/nccl-log-schema.js';
import type { Finding } from '../types.js';

export function d22NetPlugin(scan: NcclLogScan): Finding | undefined {
  const internal = scan.usingNetwork.find((h) => /Using network (?:IB|Socket)\s*$/.test(h.text));
  const usedPlugin = scan.usingNetwork.find((h) => !/Using network (?:IB|Socket)\s*$/.test(h.text));
  const triggers: LogHit[] = [...scan.pluginLoadFailed, ...scan.pluginInitFailed];
  if (scan.pluginSymbolMissing.length > 0 && scan.loadedPlugin.length === 0)
    triggers.push(scan.pluginSymbolMissing[0] as LogHit);
  if (scan.pluginInitialized.length > 0 && internal && !usedPlugin) triggers.push(scan.pluginInitialized[0] as LogHit);
  // `Could not find: libnccl-net.so` is the normal state, unless a plugin was asked for.
  const asked =
    scan.pluginRequested[0] ??
    (scan.facts.env.NCCL_NET_PLUGIN !== undefined && !/^none$/i.test(scan.facts.env.NCCL_NET_PLUGIN)
      ? scan.pluginNotFound[0]
      : undefined);
  if (asked && scan.pluginNotFound.length > 0 && scan.loadedPlugin.length === 0)
    triggers.push(scan.pluginNotFound[0] as LogHit);
  triggers.sort((a, b) => a.line - b.line);
  const first = triggers[0];
  if (!first) return undefined;
  const lines = triggers.slice(0, 3).map((h) => `line ${h.line}: ${h.text}`);
  if (internal) lines.push(`line ${internal.line}: ${internal.text}`);
  const socket = internal !== undefined && /Socket\s*$/.test(internal.text);
  return {
    rule: 'D22',
    severity: 'info',
    title: 'NCCL network plugin failed to load; internal transport used',
    evidence: lines.join('\n'),
    fix:
      'Causes: the image ships a plugin for another fabric or NCCL (HPC-X SHARP, aws-ofi-nccl); its dependencies are missing; ' +
      'NCCL_NET_PLUGIN names a library not on the loader path. Internal IB is the right transport on this cluster: set ' +
      `\`NCCL_NET_PLUGIN=none\`.${socket ? ' The fallback here went to Socket: see D01.' : ''}`,
    line: first.line,
  };
}
