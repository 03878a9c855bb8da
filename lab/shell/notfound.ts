/**
 * What bash prints for a command that is not installed. For names Ubuntu's command-not-found
 * database knows, the jammy block (CommandNotFound.py: one candidate → bare `sudo apt install
 * pkg`; several → names padded to the longest, `  # version V, or` on all but the last line;
 * `apt install` without sudo for root). Candidate lists and versions are jammy-updates as of late
 * 2024 (source-derived: no captured jammy block for these names is in the corpus).
 *
 * Real bash 5.1 on an ssh exec channel would say `bash: line 1: x: command not found` and only
 * interactive shells run the command-not-found hook; the lab prints the forms the spec asks for.
 */
import type { ExecResult } from 'just-bash';

type Candidate = [pkg: string, version: string];

const NVIDIA_UTILS: Candidate[] = [
  ['nvidia-utils-535', '535.183.01-0ubuntu0.22.04.1'],
  ['nvidia-utils-535-server', '535.216.01-0ubuntu0.22.04.1'],
  ['nvidia-utils-550', '550.120-0ubuntu0.22.04.1'],
  ['nvidia-utils-550-server', '550.127.05-0ubuntu0.22.04.1'],
  ['nvidia-utils-470', '470.256.02-0ubuntu0.22.04.1'],
  ['nvidia-utils-470-server', '470.256.02-0ubuntu0.22.04.1'],
  ['nvidia-utils-390', '390.157-0ubuntu0.22.04.2'],
  ['nvidia-utils-418-server', '418.226.00-0ubuntu5~0.22.04.1'],
  ['nvidia-utils-450-server', '450.248.02-0ubuntu0.22.04.1'],
  ['nvidia-utils-545', '545.29.06-0ubuntu0.22.04.2'],
];

/** command → packages that ship it in jammy (main/universe/restricted/multiverse). */
const CNF: Record<string, Candidate[]> = {
  'nvidia-smi': NVIDIA_UTILS,
  lldpcli: [['lldpd', '1.0.13-1']],
  lldpctl: [['lldpd', '1.0.13-1']],
  ibstat: [['infiniband-diags', '39.0-1']],
  ibstatus: [['infiniband-diags', '39.0-1']],
  ibv_devinfo: [['ibverbs-utils', '39.0-1']],
  ibv_devices: [['ibverbs-utils', '39.0-1']],
  rdma_server: [['rdmacm-utils', '39.0-1']],
  ib_write_bw: [['perftest', '4.4+0.37-1']],
  ib_read_bw: [['perftest', '4.4+0.37-1']],
  ib_send_bw: [['perftest', '4.4+0.37-1']],
  nvcc: [['nvidia-cuda-toolkit', '11.5.1-1ubuntu1']],
  chronyc: [['chrony', '4.2-2ubuntu2']],
  lshw: [['lshw', '02.19.git.2021.06.19.996aaad9c7-2build1']],
};

export function hasCnfEntry(command: string): boolean {
  return CNF[command] !== undefined;
}

/**
 * The interpreter prints `bash: X: command not found` for every unknown command; for names the
 * command-not-found database knows, Ubuntu prints its install hint instead.
 */
export function rewriteNotFound(stderr: string, root: boolean): string {
  if (!stderr.includes(': command not found')) return stderr;
  return stderr.replace(/^bash: ([^\s:]+): command not found\n/gm, (line, cmd: string) =>
    hasCnfEntry(cmd) ? commandNotFound(cmd, root).stderr : line,
  );
}

export function commandNotFound(command: string, root: boolean): ExecResult {
  const candidates = CNF[command];
  if (!candidates) return { stdout: '', stderr: `bash: ${command}: command not found\n`, exitCode: 127 };
  const prompt = root ? 'apt install' : 'sudo apt install';
  const lines = [`Command '${command}' not found, but can be installed with:`, ''];
  if (candidates.length === 1) {
    lines.push(`${prompt} ${candidates[0]?.[0] ?? ''}`);
  } else {
    const pad = Math.max(...candidates.map(([p]) => p.length));
    candidates.forEach(([pkg, version], i) => {
      const last = i === candidates.length - 1;
      lines.push(`${prompt} ${pkg.padEnd(pad)}  # version ${version}${last ? '' : ', or'}`);
    });
  }
  return { stdout: '', stderr: `${lines.join('\n')}\n`, exitCode: 127 };
}

/**
 * just-bash's commands print a Node-style errno message (`EACCES: permission denied, mkdir
 * '<path>'`) where coreutils print strerror(); the lab rewrites them to what the real tools print.
 */
const NODE_ERRNO: Record<string, string> = {
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  ENOENT: 'No such file or directory',
  ENOTDIR: 'Not a directory',
  EISDIR: 'Is a directory',
  EEXIST: 'File exists',
  ENOTEMPTY: 'Directory not empty',
  EINVAL: 'Invalid argument',
};

export function rewriteErrno(stderr: string): string {
  if (!/\bE[A-Z]+: /.test(stderr)) return stderr;
  return stderr.replace(/\b(E[A-Z]+): [a-z ]+, [a-z]+ '[^'\n]*'/g, (all, code: string) => NODE_ERRNO[code] ?? all);
}

/** Every rewrite a command's stderr gets before it leaves the machine. */
export function rewriteStderr(stderr: string, root: boolean): string {
  return rewriteErrno(rewriteNotFound(stderr, root));
}
