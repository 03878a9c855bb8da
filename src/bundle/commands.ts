/**
 * What the bundle runs on every host: the outputs NCCL's and NVIDIA's support ask for in a bug report
 * (versions, `nvidia-smi -q`, `nvidia-smi topo -m`, `rdma link`, GID tables, per-port QoS and
 * counters, kernel messages) and the configuration files that decide the fabric's behaviour. Every
 * entry is read-only. Port names are discovered on the host first and then passed as argv words,
 * never spliced into a script.
 */
import type { Command } from '../transport/types.js';
import { CONF_SCRIPT as NCCL_CONF_SCRIPT, UNITS_SCRIPT as NCCL_UNITS_SCRIPT } from '../../checks/nccl/probes.js';
import { CLUSTER_VENV } from '../../checks/common/pins.js';

export interface BundleCommand {
  /** File name inside the host's folder (`<host>/<file>`). */
  file: string;
  /** One line for SUMMARY.md's file list. */
  what: string;
  command: Command;
  sudo?: boolean;
  timeoutMs?: number;
  /** Keep only the lines this matches (the file says so under its command line). */
  filter?: { re: RegExp; why: string };
}

/** ConnectX physical functions' netdevs, and whether the OFED `mlnx_qos` is installed. */
export const DISCOVER_SCRIPT = `for b in $(lspci -D -d 15b3: 2>/dev/null | cut -d' ' -f1); do
  for n in /sys/bus/pci/devices/$b/net/*; do [ -e "$n" ] && echo "port \${n##*/}"; done
done
command -v mlnx_qos >/dev/null 2>&1 && echo 'tool mlnx_qos'
true
`;

export function parseDiscovery(stdout: string): { ports: string[]; mlnxQos: boolean } {
  const ports: string[] = [];
  let mlnxQos = false;
  for (const line of stdout.split('\n')) {
    const m = /^port ([A-Za-z0-9_.:@-]{1,15})$/.exec(line.trim());
    if (m && !ports.includes(m[1]!)) ports.push(m[1]!);
    if (line.trim() === 'tool mlnx_qos') mlnxQos = true;
  }
  return { ports, mlnxQos };
}

/** `### name` blocks, parsed by versions.ts; each tool may be missing (its error is kept). */
export const VERSIONS_SCRIPT = `echo '### kernel'; uname -r
echo '### os'; . /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"
echo '### nvidia-module'; cat /proc/driver/nvidia/version 2>&1 | head -n 1
echo '### nvidia-smi'; nvidia-smi 2>&1 | grep -m1 -E 'Driver Version|NVIDIA-SMI has failed|Failed to initialize NVML|not found'
echo '### nvcc'; nvcc --version 2>&1 | grep -m1 -E 'release|not found'
echo '### ofed'; ofed_info -s 2>&1 | head -n 1
echo '### mlx5_core'; modinfo -F version mlx5_core 2>&1 | head -n 1
echo '### packages'; dpkg-query -W -f='\${Package} \${Version}\\n' rdma-core ibverbs-providers libibverbs1 perftest mlnx-tools doca-ofed mlnx-ofed-kernel-dkms libnccl2 2>/dev/null
echo '### python'; if [ -x ${CLUSTER_VENV}/bin/python ]; then ${CLUSTER_VENV}/bin/python -c 'import vllm, ray, torch; print(vllm.__version__, ray.__version__, torch.__version__, torch.cuda.nccl.version())' 2>&1 | tail -n 4; else echo 'no ${CLUSTER_VENV}'; fi
true
`;

export const GIDS_SCRIPT = `if command -v show_gids >/dev/null 2>&1; then show_gids; exit $?; fi
# show_gids (MLNX_OFED) is absent: the same table from sysfs.
printf 'DEV\\tPORT\\tINDEX\\tGID\\t\\t\\t\\t\\tIPv4\\t\\tVER\\tDEV\\n'
for d in /sys/class/infiniband/*; do
  [ -d "$d" ] || continue
  for g in $d/ports/1/gids/*; do
    i=\${g##*/}; gid=$(cat "$g" 2>/dev/null)
    case "$gid" in ''|0000:0000:0000:0000:0000:0000:0000:0000) continue;; esac
    t=$(cat $d/ports/1/gid_attrs/types/$i 2>/dev/null); nd=$(cat $d/ports/1/gid_attrs/ndevs/$i 2>/dev/null)
    v=v1; [ "$t" = 'RoCE v2' ] && v=v2
    ip=
    case "$gid" in 0000:0000:0000:0000:0000:ffff:*)
      h=\${gid#0000:0000:0000:0000:0000:ffff:}; h=\${h%%:*}\${h#*:}
      ip=$(printf '%d.%d.%d.%d' 0x\${h:0:2} 0x\${h:2:2} 0x\${h:4:2} 0x\${h:6:2});;
    esac
    printf '%s\\t1\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "\${d##*/}" "$i" "$gid" "$ip" "$v" "$nd"
  done
done
`;

export const NETPLAN_SCRIPT = `for f in /etc/netplan/*.yaml /etc/netplan/*.yml; do
  [ -f "$f" ] || continue
  printf '==> %s <==\\n' "$f"; cat "$f"; printf '\\n'
done
true
`;

/** Environment files and units that configure vLLM, Ray and NCCL (the bundle redacts their secrets). */
export const ENV_FILES_SCRIPT = `for f in /etc/l20/*.env /etc/environment /etc/systemd/system/l20-*.service; do
  [ -f "$f" ] || continue
  printf '==> %s <==\\n' "$f"; cat "$f"; printf '\\n'
done
true
`;

/**
 * l20-setup's own state on the host: the saved results of earlier runs (vllm bench JSON in bench/,
 * NCCL_DEBUG=INFO logs where a validation run kept them), newest first. backup/ holds earlier copies
 * of configuration files and is only listed.
 */
export const STATE_SCRIPT = `d=/var/lib/l20-setup
if [ ! -d "$d" ]; then echo "$d: not present (no saved results on this host)"; exit 0; fi
ls -R "$d" 2>&1 | head -n 200
for f in $(ls -t "$d"/bench/*.json 2>/dev/null | head -n 3) $(ls -t "$d"/nccl/*.log "$d"/nccl/*.txt 2>/dev/null | head -n 4); do
  printf '\\n==> %s <==\\n' "$f"; head -c 262144 "$f"; printf '\\n'
done
true
`;

/** Kernel messages support asks about: mlx5, NVRM and Xid, peermem, PCIe ACS/AER, IOMMU, link changes. */
export const DMESG_FILTER =
  /mlx5|NVRM|Xid|peermem|nvidia|ib_core|ib_register|rdma|\bACS\b|\bAER\b|pcieport|DMAR|iommu|Link (?:is )?(?:up|down)|link becomes ready|bond/i;

const PROCESS_FILTER = /vllm|ray|torchrun|gcs_server|raylet|ib_write_bw|nvidia-persistenced|python/i;

/** Everything the bundle runs per host besides the per-port commands. */
export function hostCommands(): BundleCommand[] {
  return [
    {
      file: 'versions.txt',
      what: 'kernel, OS, NVIDIA driver and CUDA, OFED/DOCA, rdma-core, perftest, vLLM/Ray/torch/NCCL',
      command: { script: VERSIONS_SCRIPT },
      timeoutMs: 90_000,
    },
    { file: 'nvidia-smi.txt', what: 'nvidia-smi (GPUs, driver, CUDA, processes)', command: { argv: ['nvidia-smi'] } },
    {
      file: 'nvidia-smi-q.txt',
      what: "nvidia-smi -q (every GPU's full state)",
      command: { argv: ['nvidia-smi', '-q'] },
      timeoutMs: 90_000,
    },
    {
      file: 'nvidia-smi-topo-m.txt',
      what: 'nvidia-smi topo -m (GPU/NIC PCIe affinity)',
      command: { argv: ['nvidia-smi', 'topo', '-m'] },
    },
    {
      file: 'rdma-link.txt',
      what: 'rdma link (RDMA device ↔ netdev, state)',
      command: { argv: ['rdma', 'link', 'show'] },
    },
    {
      file: 'ibv_devinfo-v.txt',
      what: 'ibv_devinfo -v (HCAs, firmware, ports, MTU)',
      command: { argv: ['ibv_devinfo', '-v'] },
    },
    {
      file: 'gids.txt',
      what: 'GID tables (show_gids, or the same table from sysfs)',
      command: { script: GIDS_SCRIPT },
    },
    {
      file: 'ip-addr.txt',
      what: 'ip -d addr show (addresses, MTU, bonds)',
      command: { argv: ['ip', '-d', 'addr', 'show'] },
    },
    {
      file: 'dmesg.txt',
      what: 'kernel messages about mlx5, NVRM/Xid, peermem, ACS/AER, IOMMU, links (root)',
      command: { argv: ['dmesg'] },
      sudo: true,
      filter: {
        re: DMESG_FILTER,
        why: 'lines about mlx5, NVRM/Xid, nvidia, peermem, ib_core/rdma, ACS/AER/pcieport, DMAR/IOMMU, links and bonds',
      },
    },
    {
      file: 'nccl-conf.txt',
      what: 'NCCL configuration files ($NCCL_CONF_FILE or ~/.nccl.conf, /etc/nccl.conf)',
      command: { script: NCCL_CONF_SCRIPT },
    },
    {
      file: 'nccl-env.txt',
      what: 'NCCL_* and GLOO_SOCKET_IFNAME in a login shell',
      command: { argv: ['bash', '-lc', "printenv | grep -E '^(NCCL_|GLOO_SOCKET_IFNAME=)' || true"] },
    },
    { file: 'nccl-units.txt', what: 'systemd units that set NCCL_* variables', command: { script: NCCL_UNITS_SCRIPT } },
    {
      file: 'env-files.txt',
      what: '/etc/l20/*.env, /etc/environment and l20-* units, secrets redacted (root)',
      command: { script: ENV_FILES_SCRIPT },
      sudo: true,
    },
    { file: 'netplan.txt', what: 'every netplan YAML file (root)', command: { script: NETPLAN_SCRIPT }, sudo: true },
    {
      file: 'processes.txt',
      what: 'vLLM, Ray, torchrun and perftest processes (ps)',
      command: { argv: ['ps', '-eo', 'pid,user,etime,args'] },
      filter: {
        re: PROCESS_FILTER,
        why: 'the header and lines naming vllm, ray, torchrun, python, ib_write_bw or nvidia-persistenced',
      },
    },
    {
      file: 'journal-l20-units.txt',
      what: 'the last 200 journal lines of l20-vllm and l20-ray (root)',
      command: { argv: ['journalctl', '--no-pager', '-n', '200', '-u', 'l20-vllm.service', '-u', 'l20-ray.service'] },
      sudo: true,
    },
    {
      file: 'l20-setup-state.txt',
      what: '/var/lib/l20-setup: saved vllm bench results and NCCL validation logs, newest first (root)',
      command: { script: STATE_SCRIPT },
      sudo: true,
    },
  ];
}

/** Per fabric port: QoS (mlnx_qos with an OFED, else iproute2 dcb) and the driver/firmware line. */
export function portCommands(port: string, mlnxQos: boolean): BundleCommand[] {
  const qos: BundleCommand = mlnxQos
    ? {
        file: `mlnx_qos-${port}.txt`,
        what: `mlnx_qos -i ${port} (trust, DSCP map, PFC, buffers) (root)`,
        command: { argv: ['mlnx_qos', '-i', port] },
        sudo: true,
      }
    : {
        file: `dcb-${port}.txt`,
        what: `dcb pfc/app/dcbx of ${port} (mlnx_qos is not installed) (root)`,
        command: {
          script: 'dcb pfc show dev "$1"; dcb -N app show dev "$1" dscp-prio; dcb dcbx show dev "$1"\n',
          args: [port],
        },
        sudo: true,
      };
  return [
    qos,
    {
      file: `ethtool-i-${port}.txt`,
      what: `ethtool -i ${port} (driver, firmware)`,
      command: { argv: ['ethtool', '-i', port] },
    },
  ];
}

/** `ethtool -S` is taken twice, `sleep` apart, on the host's own clock. */
export function ethtoolStats(port: string): Command {
  return { argv: ['ethtool', '-S', port] };
}
