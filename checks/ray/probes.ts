/** Read-only probes of the ray stage (docs/STAGES.md §3.10), plus the serving probes the layout advisor needs. */
import type { ProbeDef } from '../../src/engine/types.js';
import { SHARED_PROBES } from '../vllm/probes.js';

export const RAY_UNIT = 'l20-ray.service';
export const RAY_UNIT_PATH = `/etc/systemd/system/${RAY_UNIT}`;

export const RAY_UNIT_SCRIPT = `echo "### is-active"; systemctl is-active l20-ray.service
echo "### show"; systemctl show -p LoadState -p ActiveState -p SubState -p NRestarts l20-ray.service
echo "### file"; cat /etc/systemd/system/l20-ray.service 2>/dev/null
`;

/** The addresses the cluster registered (R45): what `ray list nodes` shows, from the running cluster. */
export const NODE_IPS_CODE =
  'import ray, json; ray.init(address="auto"); print(json.dumps([n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]]))';

/** Ray's daemons on this host, whichever installation started them (the tutorial's ran from the system Python). */
export const RAY_PROCS_SCRIPT = `ps -eo pid,args | grep -E '[r]aylet|[g]cs_server|[d]ashboard/dashboard.py|ray start' || true
`;

export const MEMLOCK_SCRIPT = `p=$(pgrep -o raylet) || { echo "no raylet"; exit 0; }
echo "pid $p"
grep 'Max locked memory' /proc/$p/limits
`;

export const rayProbes: readonly ProbeDef[] = [
  ...SHARED_PROBES,
  { id: 'ray-unit', command: { script: RAY_UNIT_SCRIPT }, tools: ['systemctl'] },
  // The venv's python missing is an answer (no cluster venv: nccl.bench-tools), not a tool to install.
  {
    id: 'node-ips',
    command: { argv: ['/opt/l20/venv/bin/python', '-c', NODE_IPS_CODE] },
    timeoutMs: 60_000,
    tools: [],
  },
  { id: 'ray-procs', command: { script: RAY_PROCS_SCRIPT }, tools: ['ps'] },
  // Without pgrep the script would print "no raylet" whether or not one runs.
  { id: 'memlock', command: { script: MEMLOCK_SCRIPT }, tools: ['pgrep'] },
];
