/** Whether a process still runs, for waiting on processes we did not start ourselves (an ssh master daemon). */
import { existsSync, readFileSync } from 'node:fs';

/**
 * True while `pid` exists and is not a zombie: a daemon's parent is init, and an init that does not reap (a
 * container's) leaves an exited one a zombie, which has stopped running. The zombie test reads Linux /proc;
 * elsewhere kill(pid, 0) alone decides.
 */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return !existsSync('/proc/self/stat'); // with /proc there, an unreadable entry means it just exited
  }
}
