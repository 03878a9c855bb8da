/**
 * The shells sshd starts for exec requests. Each gets a pid of its own (`$$`) and leads its own process
 * group (sshd setsid()s it), so `kill -TERM -- -PID` from another session ends it, as the OpenSSH transport
 * does to cancel a command (its client cannot send a signal request). They are not in the process table
 * that ps and pgrep list: the lab does not model the session processes of sshd, only their signals.
 * Their pids come from a range of their own, so the seeded pids of services stay as they were.
 */
import type { SignalResult } from './processes.js';

/** Where session pids start: above anything the process table hands out in a lab's lifetime. */
const FIRST_SESSION_PID = 200_000;

interface SessionShell {
  uid: number;
  onSignal: (signal: string) => void;
}

export class SessionShells {
  private next = FIRST_SESSION_PID;
  private readonly live = new Map<number, SessionShell>();

  /** A session shell starts: its pid, and `end` for when it exits. */
  start(uid: number, onSignal: (signal: string) => void): { pid: number; end: () => void } {
    const pid = this.next++;
    this.live.set(pid, { uid, onSignal });
    return { pid, end: () => this.live.delete(pid) };
  }

  has(pid: number): boolean {
    return this.live.has(pid);
  }

  /** Delivers `signal` to session `pid` (or its process group: the same here); undefined when it is none. */
  signal(pid: number, signal: string, senderUid: number): SignalResult | undefined {
    const s = this.live.get(pid);
    if (!s) return undefined;
    if (senderUid !== 0 && senderUid !== s.uid) return 'EPERM';
    if (signal === '0' || signal === 'CONT' || signal === 'CHLD' || signal === 'WINCH' || signal === 'URG') return 'ok';
    if (signal === 'STOP' || signal === 'TSTP') return 'ok';
    s.onSignal(signal);
    return 'ok';
  }
}
