/**
 * Python one-liners of the ray stage (docs/STAGES.md §3.10), answered from the Ray and network model:
 *  - `import ray, json; ray.init(address="auto"); print(json.dumps([n["NodeManagerAddress"] for n in
 *    ray.nodes() if n["Alive"]]))`: the addresses the cluster registered (R45);
 *  - `import socket; socket.create_connection(("<ip>", <port>), 2)`: the worker unit's wait for the
 *    head's GCS port.
 * Tracebacks follow CPython 3.10 and Ray 2.x's worker.py/services.py (source-derived).
 */
import { clusterNodes, gcsReachable, rayNode } from '../model/ray-runtime.js';
import { tcpPath } from '../model/rdma-path.js';
import { listensOn } from '../model/sockets.js';
import type { Machine } from '../model/types.js';
import { registerPythonSnippet, type PythonContext, type PythonResult } from './python-eval.js';

function stamp(m: Machine, extraMs = 0): string {
  const d = new Date(m.clock.now() + extraMs).toISOString();
  return `${d.slice(0, 10)} ${d.slice(11, 19)},${d.slice(20, 23)}`;
}

function noModule(name: string): PythonResult {
  return {
    stdout: '',
    stderr: `Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nModuleNotFoundError: No module named '${name}'\n`,
    exitCode: 1,
  };
}

const NODES_CODE = /ray\.init\(\s*address\s*=\s*["']auto["']\s*\)[\s\S]*ray\.nodes\(\)/;

function rayNodes(py: PythonContext): PythonResult {
  const site = py.py.sites[0] ?? '/usr/lib/python3/dist-packages';
  if (!py.py.dists.get('ray')) return noModule('ray');
  const m = py.machine;
  const local = rayNode(m);
  if (!local || !gcsReachable(py.cluster, m, local.gcs)) {
    return {
      stdout: '',
      stderr:
        `Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n  File "${site}/ray/_private/client_mode_hook.py", line 103, in wrapper\n    return func(*args, **kwargs)\n` +
        `  File "${site}/ray/_private/worker.py", line 1797, in init\n    bootstrap_address = services.canonicalize_bootstrap_address(address, _temp_dir)\n` +
        `  File "${site}/ray/_private/services.py", line 529, in canonicalize_bootstrap_address\n    addr = get_ray_address_from_environment(addr, temp_dir)\n` +
        `  File "${site}/ray/_private/services.py", line 416, in get_ray_address_from_environment\n    raise ConnectionError(\n` +
        'ConnectionError: Could not find any running Ray instance. Please specify the one to connect to by setting `--address` flag or `RAY_ADDRESS` environment variable.\n',
      exitCode: 1,
    };
  }
  const head = clusterNodes(py.cluster, local.gcs).find((n) => n.node.head)?.node;
  const dash = head
    ? `${/^(?:0\.0\.0\.0|::)$/.test(head.opts.dashboardHost) ? head.nodeIp : head.opts.dashboardHost}:${head.opts.dashboardPort}`
    : '';
  const ips = clusterNodes(py.cluster, local.gcs).map((n) => n.node.nodeIp);
  return {
    stdout: `${JSON.stringify(ips).replace(/","/g, '", "')}\n`,
    stderr: `${stamp(m)}\tINFO worker.py:1630 -- Connecting to existing Ray cluster at address: ${local.gcs}...\n${stamp(m, 23)}\tINFO worker.py:1807 -- Connected to Ray cluster. View the dashboard at ${dash} \n`,
    exitCode: 0,
  };
}

const CONNECT = /socket\.create_connection\(\(\s*["']([\d.]+)["']\s*,\s*(\d+)\s*\)\s*(?:,\s*([\d.]+))?\)/;

async function connect(code: string, py: PythonContext): Promise<PythonResult> {
  const [, ip = '', port = '0', timeout = '0'] = CONNECT.exec(code) ?? [];
  const m = py.machine;
  const tb = (frames: string, err: string): PythonResult => ({
    stdout: '',
    stderr: `Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n${frames}${err}\n`,
    exitCode: 1,
  });
  const sock =
    '  File "/usr/lib/python3.10/socket.py", line 845, in create_connection\n    raise err\n  File "/usr/lib/python3.10/socket.py", line 833, in create_connection\n    sock.connect(sa)\n';
  const path = tcpPath(py.cluster, m, ip, Number(port));
  if (!path.ok) {
    if (path.reason === 'noroute') return tb(sock, 'OSError: [Errno 101] Network is unreachable');
    await m.clock.sleep(Number(timeout) * 1000 || 2000);
    return tb(sock, 'TimeoutError: timed out');
  }
  if (!listensOn(path.machine, ip, Number(port)))
    return tb(sock, 'ConnectionRefusedError: [Errno 111] Connection refused');
  return { stdout: '', stderr: '', exitCode: 0 };
}

registerPythonSnippet({ name: 'ray-nodes', match: (code) => NODES_CODE.test(code), run: (_code, py) => rayNodes(py) });
registerPythonSnippet({
  name: 'socket-connect',
  match: (code) => /^\s*import socket\s*;/.test(code) && CONNECT.test(code),
  run: connect,
});
