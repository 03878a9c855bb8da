/**
 * The /proc entries the system layer owns, merged over fs/procfs.ts's tree: one directory per
 * process (cmdline, comm, status, limits), uptime from the machine's boot time, and /proc/modules
 * with sizes and holders as lsmod reads them.
 */
import { dir, file, type VDir, type VNode } from '../fs/vfs.js';
import type { Machine } from '../model/types.js';
import { procModules } from './kmod-commands.js';
import { renderProcLimits } from './limits.js';
import type { Process } from './processes.js';

function status(p: Process, m: Machine): string {
  const gid = p.uid === m.user.uid ? m.user.gid : 0;
  return (
    [
      `Name:\t${p.comm}`,
      'Umask:\t0022',
      'State:\tS (sleeping)',
      `Tgid:\t${p.pid}`,
      'Ngid:\t0',
      `Pid:\t${p.pid}`,
      `PPid:\t${p.ppid}`,
      'TracerPid:\t0',
      `Uid:\t${p.uid}\t${p.uid}\t${p.uid}\t${p.uid}`,
      `Gid:\t${gid}\t${gid}\t${gid}\t${gid}`,
      'FDSize:\t64',
      'Threads:\t1',
    ].join('\n') + '\n'
  );
}

function processDir(p: Process, m: Machine): VDir {
  return dir(
    () => ({
      // Kernel threads have an empty command line.
      cmdline: file(() => (p.argv[0]?.startsWith('[') ? '' : `${p.argv.join('\0')}\0`)),
      comm: file(() => `${p.comm}\n`),
      status: file(() => status(p, m)),
      limits: file(() => renderProcLimits(p.limits)),
    }),
    0o555,
  );
}

export function withSystemProc(base: VDir, m: Machine): VDir {
  return dir(() => {
    const e: Record<string, VNode> = { ...base.entries() };
    e.uptime = file(() => {
      const up = m.system.uptimeMs() / 1000;
      return `${up.toFixed(2)} ${(up * 127.9).toFixed(2)}\n`;
    });
    e.modules = file(() => procModules(m));
    for (const p of m.system.processes.list()) e[String(p.pid)] = processDir(p, m);
    return e;
  });
}
