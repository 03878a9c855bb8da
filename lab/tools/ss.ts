/**
 * `ss` (iproute2 5.15) for listening TCP sockets: `-l -t -n`, `-H` (no header), `-p` (processes,
 * root sees every owner), `-4`/`-6`. The sockets come from model/sockets.ts (sshd, resolved, and
 * whatever modelled daemon runs: Ray, vLLM). Layout source-derived from misc/ss.c: the local and
 * peer columns right-align the address and left-align the port, IPv6 addresses in brackets.
 */
import type { ExecResult } from 'just-bash';
import { listeningSockets, type ListenSocket } from '../model/sockets.js';
import type { Tool } from './types.js';

function addr(a: string): string {
  return a.includes(':') && !a.startsWith('[') ? `[${a}]` : a;
}

export function renderSs(
  socks: readonly ListenSocket[],
  opts: { header: boolean; processes: boolean; root: boolean },
): string {
  const rows = socks.map((s) => ({
    local: addr(s.address),
    lport: String(s.port),
    peer: s.address.includes(':') ? '[::]' : '0.0.0.0',
    pport: '*',
    send: String(s.backlog),
    proc:
      opts.processes && s.pid && opts.root ? `users:(("${s.process ?? '?'}",pid=${s.pid},fd=${3 + (s.port % 7)}))` : '',
  }));
  const lw = Math.max('Local Address'.length, ...rows.map((r) => r.local.length));
  const lpw = Math.max('Port'.length, ...rows.map((r) => r.lport.length));
  const pw = Math.max('Peer Address'.length, ...rows.map((r) => r.peer.length));
  const ppw = Math.max('Port'.length, ...rows.map((r) => r.pport.length));
  const out: string[] = [];
  if (opts.header)
    out.push(
      `State  Recv-Q Send-Q ${'Local Address'.padStart(lw)}:${'Port'.padEnd(lpw)} ${'Peer Address'.padStart(pw)}:${'Port'.padEnd(ppw)}Process`,
    );
  for (const r of rows) {
    out.push(
      `LISTEN ${'0'.padEnd(6)} ${r.send.padEnd(6)} ${r.local.padStart(lw)}:${r.lport.padEnd(lpw)} ${r.peer.padStart(pw)}:${r.pport.padEnd(ppw)}${r.proc}`,
    );
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

export const ss: Tool = {
  name: 'ss',
  path: '/usr/bin/ss',
  packages: ['iproute2'],
  run(args, env): ExecResult {
    let listening = false,
      tcp = false,
      header = true,
      processes = false,
      v4 = false,
      v6 = false;
    for (const a of args) {
      if (/^-[a-zA-Z0-9]+$/.test(a)) {
        for (const c of a.slice(1)) {
          if (c === 'l') listening = true;
          else if (c === 't') tcp = true;
          else if (c === 'H') header = false;
          else if (c === 'p') processes = true;
          else if (c === '4') v4 = true;
          else if (c === '6') v6 = true;
          else if (c === 'n' || c === 'a') continue;
          else return { stdout: '', stderr: `ss: invalid option -- '${c}'\nUsage: ss [ OPTIONS ]\n`, exitCode: 255 };
        }
      } else if (a === '--listening') listening = true;
      else if (a === '--tcp') tcp = true;
      else if (a === '--no-header') header = false;
      else if (a === '--processes') processes = true;
      else if (a === '--numeric') continue;
      else return { stdout: '', stderr: `ss: filters are not modelled by the l20-setup lab ("${a}")\n`, exitCode: 1 };
    }
    if (!listening || !tcp)
      return { stdout: '', stderr: 'l20-lab: ss: only listening TCP sockets (-ltn) are modelled\n', exitCode: 1 };
    let socks = listeningSockets(env.machine);
    if (v4 && !v6) socks = socks.filter((s) => !s.address.includes(':'));
    if (v6 && !v4) socks = socks.filter((s) => s.address.includes(':'));
    socks = [...socks.filter((s) => !s.address.includes(':')), ...socks.filter((s) => s.address.includes(':'))];
    return { stdout: renderSs(socks, { header, processes, root: env.root }), stderr: '', exitCode: 0 };
  },
};
