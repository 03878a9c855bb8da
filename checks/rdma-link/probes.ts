/**
 * The rdma-link stage's read-only probes (docs/STAGES.md §3.6). Names come from FABRIC_PROBES (re-read every
 * stage, R07); everything device-specific loops over /sys/class/infiniband, so no name is spliced in.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { FABRIC_PROBES } from '../common/fabric.js';

/**
 * Every non-zero GID of every RDMA port: `<dev> <index> <type> <ndev> <gid>` (docs/STAGES.md §3.6, any stack).
 * A port has 256 GID slots and few are set: one `grep -l -v` per device names the set ones, so the
 * probe forks a handful of processes per port instead of a `cat` per slot (over a thousand per host).
 */
export const GIDS_SCRIPT = `for d in /sys/class/infiniband/*; do n=\${d##*/}
  for g in $(grep -l -v '^0000:0000:0000:0000:0000:0000:0000:0000$' $d/ports/1/gids/* 2>/dev/null); do i=\${g##*/}
  echo "$n $i $(cat $d/ports/1/gid_attrs/types/$i 2>/dev/null) $(cat $d/ports/1/gid_attrs/ndevs/$i 2>/dev/null) $(cat $g)"
done; done
`;

/** `ibv_devinfo -d <dev>` for every device (active_mtu, port state). */
export const DEVINFO_SCRIPT = `command -v ibv_devinfo >/dev/null 2>&1 || { echo 'ibv_devinfo: command not found (ibverbs-utils)' >&2; exit 127; }
for d in /sys/class/infiniband/*; do [ -e "$d" ] || continue; ibv_devinfo -d "\${d##*/}"; done
`;

/** Where ib_write_bw lives, if perftest is installed. */
export const PERFTEST_SCRIPT = 'command -v ib_write_bw\n';

/**
 * Counters before and after the bandwidth runs (R29): every port's hw_counters as `<path>:<value>`
 * lines (the `grep -H .` form, written with cat so a minimal grep will do), then `ethtool -S` of each
 * fabric netdev given as an argument.
 */
export const COUNTERS_SCRIPT = `echo '### hw_counters'
for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do [ -r "$f" ] && echo "$f:$(cat "$f")"; done
for i in "$@"; do echo "### ethtool -S $i"; ethtool -S "$i"; done
`;

/** Stray perftest servers (an earlier run cut short) hold their ports: list and end them by PID. */
export const KILL_STRAYS_SCRIPT = `for pid in $(pgrep -x ib_write_bw); do
  echo "stray ib_write_bw pid $pid: $(tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null)"
  kill "$pid"
done
`;

/** Ends the ib_write_bw server listening on port $1 (one the client never reached), by PID. */
export const KILL_PORT_SCRIPT = `for pid in $(pgrep -x ib_write_bw); do
  case " $(tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null)" in *" -p $1 "*) echo "ending ib_write_bw pid $pid (port $1)"; kill "$pid";; esac
done
`;

export const rdmaLinkProbes: readonly ProbeDef[] = [
  ...FABRIC_PROBES,
  { id: 'gids', command: { script: GIDS_SCRIPT } },
  { id: 'devinfo', command: { script: DEVINFO_SCRIPT }, tools: ['ibv_devinfo'] },
  { id: 'ibstat', command: { argv: ['ibstat'] } },
  { id: 'ibdev2netdev', command: { argv: ['ibdev2netdev'] } },
  { id: 'nccl-conf', command: { argv: ['cat', '/etc/nccl.conf'] } },
  { id: 'perftest', command: { script: PERFTEST_SCRIPT } },
];
