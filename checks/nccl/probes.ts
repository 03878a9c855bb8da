/** The nccl stage's read-only probes (docs/STAGES.md §3.9), besides the fabric discovery every stage repeats. */
import type { ProbeDef } from '../../src/engine/types.js';
import { CLUSTER_VENV } from '../common/pins.js';
import { FABRIC_PROBES } from '../common/fabric.js';
import { BENCH_PATH } from './bench-script.js';

/**
 * NCCL's own configuration files in its order of precedence below the environment: `$NCCL_CONF_FILE`
 * or `~/.nccl.conf`, then `/etc/nccl.conf`. Each as `==> PATH MODE <==`, the content, `<== end`.
 */
export const CONF_SCRIPT = `first="\${NCCL_CONF_FILE:-$HOME/.nccl.conf}"
for f in "$first" /etc/nccl.conf; do
  if [ -f "$f" ]; then
    printf '==> %s %s <==\\n' "$f" "$(stat -c %a "$f" 2>/dev/null)"
    cat "$f"
    printf '\\n<== end\\n'
  fi
done
true
`;

/** systemd units that set NCCL variables (R11, R13 read their Environment= lines). */
export const UNITS_SCRIPT = `for f in /etc/systemd/system/*.service; do
  [ -f "$f" ] || continue
  grep -q 'NCCL_' "$f" 2>/dev/null || continue
  printf '==> %s <==\\n' "$f"
  cat "$f"
  printf '\\n<== end\\n'
done
true
`;

/** NCCL and torch versions: the cluster venv's torch, else the system python3's (a user-site install), and libnccl2. */
export const VERSION_SCRIPT = `if [ -x ${CLUSTER_VENV}/bin/python ]; then
  echo '== venv ${CLUSTER_VENV}'
  ${CLUSTER_VENV}/bin/python -c 'import torch; print(torch.__version__); print(torch.cuda.nccl.version())' 2>&1
else
  echo '== python3'
  python3 -c 'import torch; print(torch.__version__); print(torch.cuda.nccl.version())' 2>&1
fi
echo '== libnccl2'
dpkg-query -W -f='\${Version}\\n' libnccl2 2>/dev/null
true
`;

/** What the validation run needs: a torchrun, the benchmark script and the venv's pinned packages. */
export const TOOLS_SCRIPT = `[ -x ${CLUSTER_VENV}/bin/torchrun ] && echo "torchrun ${CLUSTER_VENV}/bin/torchrun"
[ -x "$HOME/.local/bin/torchrun" ] && echo "torchrun $HOME/.local/bin/torchrun"
if [ -x ${CLUSTER_VENV}/bin/pip ]; then ${CLUSTER_VENV}/bin/pip freeze 2>/dev/null | grep -iE '^(vllm|ray|torch)==' | sed 's/^/dist /'; fi
if [ -f ${BENCH_PATH} ]; then echo '==> bench <=='; cat ${BENCH_PATH}; printf '\\n<== end\\n'; fi
true
`;

/** Whether GPUDirect RDMA has a path (R34): the open kernel module (DMA-BUF, kernel ≥ 5.12) or nvidia-peermem. */
export const GDR_SCRIPT = `grep -q 'Open Kernel Module' /proc/driver/nvidia/version 2>/dev/null && echo open-module
grep -q '^nvidia_peermem ' /proc/modules 2>/dev/null && echo peermem
echo "kernel $(uname -r)"
true
`;

export const ncclProbes: readonly ProbeDef[] = [
  ...FABRIC_PROBES,
  { id: 'nccl-conf', command: { script: CONF_SCRIPT } },
  { id: 'nccl-env', command: { argv: ['bash', '-lc', "printenv | grep -E '^(NCCL_|GLOO_SOCKET_IFNAME=)' || true"] } },
  { id: 'nccl-units', command: { script: UNITS_SCRIPT } },
  { id: 'nccl-version', command: { script: VERSION_SCRIPT }, timeoutMs: 60_000 },
  { id: 'nccl-tools', command: { script: TOOLS_SCRIPT } },
  { id: 'gdr', command: { script: GDR_SCRIPT } },
];
