/**
 * `apt-mark` (apt 2.4): hold/unhold (dpkg selections: `hi` in dpkg-query, refused by apt-get
 * without --allow-change-held-packages), showhold, auto/manual, showauto/showmanual. Changing
 * holds runs `dpkg --set-selections`, so a non-root caller gets dpkg's superuser error.
 */
import type { ExecResult } from 'just-bash';
import type { Tool } from '../tools/types.js';
import { isKnown } from './archive.js';
import { aptState, installedVersion } from './state.js';

async function run(args: string[], env: Parameters<Tool['run']>[1]): Promise<ExecResult> {
  const { machine: m, root } = env;
  const operands = args.filter((a) => !a.startsWith('-'));
  const [cmd, ...names] = operands;
  const st = aptState(m);
  const installed = [...m.packages.keys()].filter((n) => installedVersion(m, n) !== undefined).sort();
  const matches = (n: string): boolean => names.length === 0 || names.includes(n);
  switch (cmd) {
    case 'showhold':
    case 'showholds': {
      const held = [...m.packages.values()]
        .filter((p) => p.status[0] === 'h' && matches(p.name))
        .map((p) => p.name)
        .sort();
      return { stdout: held.map((n) => `${n}\n`).join(''), stderr: '', exitCode: 0 };
    }
    case 'showauto':
      return {
        stdout: installed
          .filter((n) => st.auto.has(n) && matches(n))
          .map((n) => `${n}\n`)
          .join(''),
        stderr: '',
        exitCode: 0,
      };
    case 'showmanual':
      return {
        stdout: installed
          .filter((n) => !st.auto.has(n) && matches(n))
          .map((n) => `${n}\n`)
          .join(''),
        stderr: '',
        exitCode: 0,
      };
    case 'hold':
    case 'unhold':
    case 'auto':
    case 'manual':
      break;
    case undefined:
      return {
        stdout: 'apt 2.4.13 (amd64)\nUsage: apt-mark [options] {auto|manual} pkg1 [pkg2 ...]\n',
        stderr: '',
        exitCode: 0,
      };
    default:
      return { stdout: '', stderr: `E: Invalid operation ${cmd}\n`, exitCode: 100 };
  }
  if (names.length === 0) return { stdout: '', stderr: 'E: No packages found\n', exitCode: 100 };
  for (const n of names) {
    if (!isKnown(n) && !m.packages.has(n))
      return { stdout: '', stderr: `E: Unable to locate package ${n}\n`, exitCode: 100 };
  }
  let stdout = '';
  if (cmd === 'auto' || cmd === 'manual') {
    if (!root)
      return {
        stdout: '',
        stderr:
          'E: Could not create temporary file for /var/lib/apt/extended_states - mkstemp (13: Permission denied)\nE: Failed to write temporary StateFile /var/lib/apt/extended_states\n',
        exitCode: 100,
      };
    for (const n of names) {
      const auto = cmd === 'auto';
      if (st.auto.has(n) === auto)
        stdout += `${n} was already set to ${auto ? 'automatically' : 'manually'} installed.\n`;
      else {
        if (auto) st.auto.add(n);
        else st.auto.delete(n);
        stdout += `${n} set to ${auto ? 'automatically' : 'manually'} installed.\n`;
      }
    }
    return { stdout, stderr: '', exitCode: 0 };
  }
  const hold = cmd === 'hold';
  const changes = names.filter((n) => (m.packages.get(n)?.status[0] === 'h') !== hold);
  if (changes.length > 0 && !root)
    return {
      stdout: '',
      stderr:
        'dpkg: error: requested operation requires superuser privilege\nE: Executing dpkg failed. Are you root?\n',
      exitCode: 100,
    };
  for (const n of names) {
    const rec = m.packages.get(n);
    const isHeld = rec?.status[0] === 'h';
    if (isHeld === hold) {
      stdout += hold ? `${n} was already set on hold.\n` : `${n} was already not on hold.\n`;
      continue;
    }
    if (rec && !hold && rec.status[1] === 'n') m.packages.delete(n);
    else if (rec) m.packages.set(n, { ...rec, status: `${hold ? 'h' : 'i'}${rec.status.slice(1)}` });
    else if (hold) m.packages.set(n, { name: n, version: '', arch: 'amd64', status: 'hn ' });
    stdout += hold ? `${n} set on hold.\n` : `Canceled hold on ${n}.\n`;
  }
  m.revision++;
  return { stdout, stderr: '', exitCode: 0 };
}

export const aptMark: Tool = { name: 'apt-mark', path: '/usr/bin/apt-mark', packages: ['apt'], run };
