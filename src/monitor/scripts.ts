/**
 * What the monitor runs on each host: two long-lived commands, started once and read line by line —
 * never a command per sample.
 *
 * 1. GPUs: `nvidia-smi --query-gpu=… --format=csv,noheader,nounits -lms N` (NVML polled by the
 *    driver's own tool; one line per GPU per interval).
 * 2. Everything else: one bash loop (sent on stdin to `bash -s`) that reads counters from sysfs and
 *    procfs with the `read` builtin (no process per file) and prints one tagged frame per interval.
 *    Per-priority PFC pause and discard counters exist only in `ethtool -S` (no sysfs file carries
 *    them), so that runs once per port per interval, filtered by one grep; the GPUs' processes,
 *    vLLM's /metrics and Xid lines change slowly and are read every few frames.
 *
 * Frame protocol of the loop (one tag per line; values are raw counters, the client computes rates):
 *   B <uptime s>                                   frame begins (host clock, from /proc/uptime)
 *   N <netdev> <rdma dev> <operstate> <speed Mb/s> <tx_bytes> <rx_bytes> <rx_dropped> <flags (IFF_UP = 0x1)>
 *   R <netdev> <port_xmit_data> <port_rcv_data> <out_of_buffer>   (RDMA counters; words of 4 octets)
 *   E <netdev>  then `ethtool -S` lines (`     rx_prio3_pause: 12`)
 *   A  then `--query-compute-apps` CSV lines, then A.          (every APPS_EVERY frames)
 *   M  then the vLLM metric lines, then M.  (every frame when a port is set — tokens/s is a rate between
 *      two readings; from loopback, else the SSH session's server address)
 *   X  then Xid lines from the kernel log, then X. <1 readable | 0 not> (every XID_EVERY frames)
 *   Z                                              frame ends
 * A missing file prints `-` in its place.
 */

/** Query fields in the order the parser expects; the last one is dropped on drivers that do not know it. */
export const GPU_FIELDS = [
  'index',
  'uuid',
  'name',
  'utilization.gpu',
  'memory.used',
  'memory.total',
  'temperature.gpu',
  'power.draw',
  'power.limit',
  'clocks.sm',
  'clocks.max.sm',
  'pstate',
] as const;

/**
 * The event-reasons field went by two names: `clocks_throttle_reasons.active` (drivers before 535) and
 * `clocks_event_reasons.active` (535 and later, the old name kept as an alias for a while). We ask for
 * the new one first and fall back, then go without.
 */
export const EVENT_REASON_FIELDS = ['clocks_event_reasons.active', 'clocks_throttle_reasons.active'] as const;

export const APPS_FIELDS = ['gpu_uuid', 'pid', 'process_name', 'used_memory'] as const;

export const APPS_EVERY = 5;
export const XID_EVERY = 10;

/** The vLLM series the loop keeps (grep on the host, so a large /metrics page never crosses the wire). */
export const VLLM_METRICS = [
  'vllm:num_requests_running',
  'vllm:num_requests_waiting',
  'vllm:generation_tokens_total',
  'vllm:prompt_tokens_total',
  'vllm:kv_cache_usage_perc',
  'vllm:gpu_cache_usage_perc',
  'vllm:time_to_first_token_seconds_sum',
  'vllm:time_to_first_token_seconds_count',
] as const;

export function gpuCommand(intervalMs: number, fieldSet: number): string[] {
  const extra = EVENT_REASON_FIELDS[fieldSet];
  const fields = extra ? [...GPU_FIELDS, extra] : [...GPU_FIELDS];
  return [
    'nvidia-smi',
    `--query-gpu=${fields.join(',')}`,
    '--format=csv,noheader,nounits',
    '-lms',
    String(checkInterval(intervalMs)),
  ];
}

/** How many GPU field sets there are to try (with each event-reasons name, then without). */
export const GPU_FIELD_SETS = EVENT_REASON_FIELDS.length + 1;

function checkInterval(ms: number): number {
  if (!Number.isInteger(ms) || ms < 100 || ms > 3_600_000)
    throw new RangeError(`monitor interval must be an integer number of ms between 100 and 3600000, not ${ms}`);
  return ms;
}

/**
 * The loop script. Every value that varies is a number checked here or a fixed word, so nothing from
 * a config file reaches the shell unquoted (the vLLM port is an integer, the interval too).
 */
export function hostLoopScript(opts: {
  intervalMs: number;
  vllmPort: number | null;
  netdevs?: readonly string[];
}): string {
  const ms = checkInterval(opts.intervalMs);
  const seconds = (ms / 1000).toFixed(3);
  const port = opts.vllmPort;
  if (port !== null && (!Number.isInteger(port) || port < 1 || port > 65535))
    throw new RangeError(`vLLM port must be 1–65535, not ${port}`);
  const grepMetrics = VLLM_METRICS.join('|');
  // Netdev names come from the inventory's schema (interface names: [A-Za-z0-9_.:-]); they are
  // still matched with `case`, never spliced as code.
  const only = (opts.netdevs ?? []).filter((n) => /^[A-Za-z0-9_.:-]{1,15}$/.test(n));
  const filter = only.length ? `case " ${only.join(' ')} " in *" $n "*) ;; *) continue ;; esac` : ':';
  return `export LC_ALL=C
rd() { v=-; { read -r v _ < "$1"; } 2>/dev/null; [ -n "$v" ] || v=-; }
# dmesg needs CAP_SYSLOG on Ubuntu (kernel.dmesg_restrict=1); the journal's kernel log is readable
# by the adm group. No sudo here: it would log a line to auth.log every few seconds.
if dmesg >/dev/null 2>&1; then dm() { dmesg; }; dmok=1
elif journalctl -k -q -n 1 >/dev/null 2>&1; then dm() { journalctl -k -q -o cat --no-pager -n 2000; }; dmok=1
else dm() { :; }; dmok=0; fi
# vLLM binds its API to the management address (RULES.md R46), which is the address this SSH
# session came in on; try loopback first for a server bound to all interfaces.
set -- \${SSH_CONNECTION:-}; mg=\${3:-}
case $mg in *:*) mg="[$mg]" ;; esac
i=0
while :; do
  rd /proc/uptime; printf 'B %s\\n' "$v"
  devs=
  for p in /sys/class/net/*/device/infiniband/*; do
    [ -e "$p" ] || continue
    r=\${p##*/}; d=\${p%/device/infiniband/*}; n=\${d##*/}
    ${filter}
    devs="$devs $n"
    rd "$d/operstate"; o=$v; rd "$d/speed"; s=$v
    rd "$d/statistics/tx_bytes"; t=$v; rd "$d/statistics/rx_bytes"; x=$v; rd "$d/statistics/rx_dropped"; q=$v; rd "$d/flags"
    printf 'N %s %s %s %s %s %s %s %s\\n' "$n" "$r" "$o" "$s" "$t" "$x" "$q" "$v"
    c=/sys/class/infiniband/$r/ports/1
    rd "$c/counters/port_xmit_data"; t=$v; rd "$c/counters/port_rcv_data"; x=$v; rd "$c/hw_counters/out_of_buffer"; q=$v
    printf 'R %s %s %s %s\\n' "$n" "$t" "$x" "$q"
  done
  if [ -n "$devs" ]; then
    for n in $devs; do printf 'E %s\\n' "$n"; ethtool -S "$n" 2>/dev/null; done | grep -E '^E |(prio[0-7]_pause|rx_discards_phy|rx_out_of_buffer|vport_rdma_unicast_bytes):'
  fi
  if [ $((i % ${APPS_EVERY})) -eq 0 ]; then
    printf 'A\\n'; nvidia-smi --query-compute-apps=${APPS_FIELDS.join(',')} --format=csv,noheader,nounits 2>/dev/null; printf 'A.\\n'
  fi
${
  port === null
    ? ''
    : `  printf 'M\\n'
  for h in 127.0.0.1 $mg; do curl -sf -m 1 "http://$h:${port}/metrics" && break; done | grep -E '^(${grepMetrics})[{ ]'
  printf 'M.\\n'
`
}  if [ $((i % ${XID_EVERY})) -eq 0 ]; then
    printf 'X\\n'; dm 2>/dev/null | grep 'NVRM: Xid' | tail -n 5; printf 'X. %s\\n' "$dmok"
  fi
  printf 'Z\\n'
  i=$((i + 1))
  sleep ${seconds}
done
`;
}
