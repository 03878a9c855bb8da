/**
 * Read-only probes of the vllm stage (docs/STAGES.md §3.11); the ray stage reuses the version, GPU and
 * model probes (the layout advisor decides whether Ray is needed at all). Scripts are constants:
 * venv programs are named by literal absolute paths, and nothing of the configuration is spliced in —
 * checks pick the configured model out of what the probes list.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { SSH_CONNECTION_SCRIPT } from '../inventory/probes.js';

export const VENV_BIN = '/opt/l20/venv/bin';
export const VLLM_UNIT = 'l20-vllm.service';
export const VLLM_UNIT_PATH = `/etc/systemd/system/${VLLM_UNIT}`;
export const VLLM_ENV_FILE = '/etc/l20/vllm.env';
/** The variable the env file holds: vLLM reads it when `--api-key` is not given. */
export const API_KEY_VAR = 'VLLM_API_KEY';
/** What l20-setup before VLLM_API_KEY wrote (the unit passed `--api-key ${L20_API_KEY}`); vllm.units renames it. */
export const OLD_API_KEY_VAR = 'L20_API_KEY';
export const BENCH_DIR = '/var/lib/l20-setup/bench';

/** Every version R47 compares, one `### name` block each (a missing venv shows as bash's error). */
export const VERSIONS_SCRIPT = `echo "### python"; /opt/l20/venv/bin/python -V 2>&1
echo "### ray"; /opt/l20/venv/bin/ray --version 2>&1
echo "### vllm-torch"; /opt/l20/venv/bin/python -c 'import vllm, torch; print(vllm.__version__, torch.__version__)' 2>&1
echo "### vllm"; /opt/l20/venv/bin/vllm --version 2>&1
echo "### nccl"; /opt/l20/venv/bin/python -c 'import torch; print(torch.cuda.nccl.version())' 2>&1
echo "### driver"; nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1 | head -n 1
`;

/**
 * Each model directory: size, hashes of config.json and the safetensors index, the index's total_size
 * (or the shards' size when there is no index), then config.json itself.
 */
export const MODELS_SCRIPT = `for d in /opt/l20/models/*/; do
  [ -d "$d" ] || continue
  d=\${d%/}
  echo "### model $d"
  echo "du $(du -sb "$d" | cut -f1)"
  [ -f "$d/config.json" ] && echo "config-sha256 $(sha256sum "$d/config.json" | cut -d' ' -f1)"
  if [ -f "$d/model.safetensors.index.json" ]; then
    echo "index-sha256 $(sha256sum "$d/model.safetensors.index.json" | cut -d' ' -f1)"
    grep -o '"total_size": *[0-9]*' "$d/model.safetensors.index.json" | head -n 1
  else
    echo "weights $(du -cb "$d"/*.safetensors 2>/dev/null | tail -n 1 | cut -f1)"
  fi
  echo "### config $d"
  cat "$d/config.json" 2>/dev/null
  echo
done
`;

export const UNIT_SCRIPT = `echo "### is-active"; systemctl is-active l20-vllm.service
echo "### show"; systemctl show -p LoadState -p ActiveState -p SubState -p NRestarts l20-vllm.service
echo "### file"; cat /etc/systemd/system/l20-vllm.service 2>/dev/null
`;

/**
 * Whether the API key file is there, its mode and whether it holds a key under the name vLLM reads (or only
 * under the old name): never the key itself.
 */
export const ENV_FILE_SCRIPT = `f=/etc/l20/vllm.env
if [ -f "$f" ]; then
  echo "mode $(stat -c '%a %U' "$f")"
  if grep -q '^VLLM_API_KEY=[A-Za-z0-9_-]\\{32,\\}$' "$f"; then echo "key set"
  elif grep -q '^L20_API_KEY=[A-Za-z0-9_-]\\{32,\\}$' "$f"; then echo "key under the old name"
  else echo "key missing"; fi
else
  echo "absent"
fi
`;

/** Start scripts and Python launchers in the login user's home that run vLLM (the tutorial's start_vllm.sh). */
export const LAUNCHERS_SCRIPT = `for f in "$HOME"/*.sh "$HOME"/*.py; do
  [ -f "$f" ] || continue
  grep -qE 'vllm(\\.entrypoints| serve)|from vllm import|import vllm' "$f" || continue
  echo "### launcher $f"
  cat "$f"
done
`;

export const GPU_QUERY = ['nvidia-smi', '--query-gpu=index,memory.total', '--format=csv,nounits'] as const;

/** Probes both serving stages share. */
export const SHARED_PROBES: readonly ProbeDef[] = [
  { id: 'ssh-connection', command: { script: SSH_CONNECTION_SCRIPT } },
  { id: 'user', command: { argv: ['id', '-un'] } },
  { id: 'ip-addr', command: { argv: ['ip', '-j', 'addr', 'show'] } },
  // A missing venv program or nvidia-smi is an answer (no venv, no driver), not a tool to install.
  { id: 'versions', command: { script: VERSIONS_SCRIPT }, timeoutMs: 180_000, tools: [] },
  { id: 'gpus', command: { argv: [...GPU_QUERY] }, tools: [] },
  { id: 'p2p', command: { argv: ['nvidia-smi', 'topo', '-p2p', 'r'] }, tools: [] },
  { id: 'models', command: { script: MODELS_SCRIPT }, timeoutMs: 120_000 },
  { id: 'listening', command: { argv: ['ss', '-ltnH'] } },
];

export const vllmProbes: readonly ProbeDef[] = [
  ...SHARED_PROBES,
  { id: 'unit', command: { script: UNIT_SCRIPT }, tools: ['systemctl'] },
  // -n 1000, not 200: sixteen engines' start-up lines and the route list outgrow 200 before the API is up.
  {
    id: 'journal',
    command: { argv: ['journalctl', '-u', VLLM_UNIT, '-o', 'cat', '-n', '1000', '--no-pager'] },
    sudo: true,
  },
  { id: 'env-file', command: { script: ENV_FILE_SCRIPT }, sudo: true },
  { id: 'launchers', command: { script: LAUNCHERS_SCRIPT } },
  { id: 'help', command: { argv: [`${VENV_BIN}/vllm`, 'serve', '--help=all'] }, timeoutMs: 180_000, tools: [] },
];
