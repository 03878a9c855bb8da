/**
 * Listening TCP sockets of a machine (what `ss -ltn` lists and what a connection needs at the other
 * end). Every jammy server listens for SSH on all addresses and has systemd-resolved's stub on
 * 127.0.0.53; daemons the lab models (Ray, vLLM, perftest servers…) add theirs through a source
 * registered here, computed from their live state, so a socket exists exactly while its owner runs.
 */
import type { Machine } from './types.js';

export interface ListenSocket {
  /** `0.0.0.0`, `::`, or an address of the machine; `127.0.0.53%lo` keeps ss's interface suffix. */
  address: string;
  port: number;
  /** Accept queue limit (ss's Send-Q for a listener). */
  backlog: number;
  pid?: number;
  /** Process name as `ss -p` prints it. */
  process?: string;
}

type Source = (m: Machine) => ListenSocket[];

const sources = new Map<string, Source>();

/** Adds (or replaces, by name) a source of listening sockets. */
export function registerListenSource(name: string, source: Source): void {
  sources.set(name, source);
}

function base(m: Machine): ListenSocket[] {
  const sshd = m.system?.processes.list().find((p) => p.comm === 'sshd')?.pid;
  const resolved = m.system?.processes.list().find((p) => p.comm === 'systemd-resolve')?.pid;
  return [
    {
      address: '127.0.0.53%lo',
      port: 53,
      backlog: 4096,
      ...(resolved ? { pid: resolved, process: 'systemd-resolve' } : {}),
    },
    { address: '0.0.0.0', port: m.mgmt.sshPort, backlog: 128, ...(sshd ? { pid: sshd, process: 'sshd' } : {}) },
    { address: '::', port: m.mgmt.sshPort, backlog: 128, ...(sshd ? { pid: sshd, process: 'sshd' } : {}) },
  ];
}

export function listeningSockets(m: Machine): ListenSocket[] {
  const all = [...base(m)];
  for (const s of sources.values()) all.push(...s(m));
  return all;
}

const WILDCARD4 = '0.0.0.0';
const WILDCARD6 = '::';

/** Whether something accepts connections to `ip`:`port` on this machine. */
export function listensOn(m: Machine, ip: string, port: number): ListenSocket | undefined {
  return listeningSockets(m).find(
    (s) =>
      s.port === port &&
      (s.address === ip ||
        s.address === WILDCARD4 ||
        s.address === WILDCARD6 ||
        (ip.startsWith('127.') && s.address.startsWith(ip))),
  );
}
