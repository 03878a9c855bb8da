/**
 * kmod 29 and util-linux 2.37 kernel tools: lsmod (kmod's `%-19s %8lu  %d` rows, newest first,
 * "Used by" from loaded dependents), modprobe [-r], rmmod, modinfo [-F field], and dmesg (which
 * jammy's kernel.dmesg_restrict=1 refuses to non-root users).
 */
import type { ExecResult } from 'just-bash';
import type { Machine } from '../model/types.js';
import { fail, getopt, has, ok, value } from '../shell/args.js';
import type { Tool } from '../tools/types.js';
import { rng } from '../util/prng.js';
import { toolIo } from './live.js';
import {
  holders,
  isAvailable,
  kernelModule,
  loadModule,
  moduleName,
  modulePath,
  moduleVersion,
  unloadModule,
  type KernelMessage,
} from './kernel.js';

function lsmodText(m: Machine): string {
  let out = 'Module                  Size  Used by\n';
  for (const mod of [...m.modules].reverse()) {
    const users = holders(m, mod);
    const size = kernelModule(mod)?.size ?? 16384;
    out += `${mod.padEnd(19)} ${String(size).padStart(8)}  ${users.length}${users.length > 0 ? ` ${users.join(',')}` : ''}\n`;
  }
  return out;
}

/** /proc/modules (newest first): name size refcount holders state address. */
export function procModules(m: Machine): string {
  return [...m.modules]
    .reverse()
    .map((mod) => {
      const users = holders(m, mod);
      const size = kernelModule(mod)?.size ?? 16384;
      return `${mod} ${size} ${users.length} ${users.length > 0 ? `${users.join(',')},` : '-'} Live 0x0000000000000000\n`;
    })
    .join('');
}

export const lsmod: Tool = {
  name: 'lsmod',
  path: '/usr/sbin/lsmod',
  packages: ['kmod'],
  run: (_args, { machine }) => ok(lsmodText(machine)),
};

const release = (m: Machine): string => m.os.kernelRelease;

export const modprobe: Tool = {
  name: 'modprobe',
  path: '/usr/sbin/modprobe',
  packages: ['kmod'],
  run(args, { machine: m, root }) {
    const p = getopt(args, 'rvqnaC:d:S:', {
      remove: false,
      verbose: false,
      quiet: false,
      'dry-run': false,
      all: false,
      'first-time': false,
      config: true,
      dirname: true,
      'set-version': true,
      'show-depends': false,
      'ignore-install': false,
      'ignore-remove': false,
    });
    if (p.error)
      return fail(1, `modprobe: unrecognized option '${p.error.option.length > 1 ? '--' : '-'}${p.error.option}'\n`);
    const remove = has(p, 'r', 'remove');
    const quiet = has(p, 'q', 'quiet');
    const names = has(p, 'a', 'all') || remove ? p.operands : p.operands.slice(0, 1);
    if (names.length === 0) return fail(1, 'modprobe: ERROR: missing parameters. See -h.\n');
    let err = '';
    for (const raw of names) {
      const name = moduleName(raw);
      const def = kernelModule(name);
      if (remove) {
        if (!m.modules.includes(name)) {
          if (!isAvailable(def, m)) return fail(1, `${err}modprobe: FATAL: Module ${name} not found.\n`);
          return fail(1, `${err}modprobe: FATAL: Module ${name} is not in kernel.\n`);
        }
        if (!root) return fail(1, `${err}modprobe: ERROR: could not remove '${name}': Operation not permitted\n`);
        const r = unloadModule(m, name);
        if (!r.ok) return fail(1, `${err}modprobe: FATAL: Module ${r.module} is in use.\n`);
        continue;
      }
      if (!isAvailable(def, m)) {
        if (quiet) return fail(1, err);
        return fail(1, `${err}modprobe: FATAL: Module ${raw} not found in directory /lib/modules/${release(m)}\n`);
      }
      if (m.modules.includes(name)) continue;
      if (!root) return fail(1, `${err}modprobe: ERROR: could not insert '${name}': Operation not permitted\n`);
      const r = loadModule(m, m.system.kernel, name);
      if (!r.ok) {
        if ('missing' in r)
          return fail(
            1,
            `${err}modprobe: FATAL: Module ${r.missing} not found in directory /lib/modules/${release(m)}\n`,
          );
        err += `modprobe: ERROR: could not insert '${r.failed}': ${r.failure.error}\n`;
        return fail(1, err);
      }
    }
    return { stdout: '', stderr: err, exitCode: 0 };
  },
};

export const rmmod: Tool = {
  name: 'rmmod',
  path: '/usr/sbin/rmmod',
  packages: ['kmod'],
  run(args, { machine: m, root }) {
    const names = args.filter((a) => !a.startsWith('-')).map(moduleName);
    if (names.length === 0) return fail(1, 'rmmod: ERROR: missing module name.\n');
    for (const name of names) {
      if (!m.modules.includes(name)) return fail(1, `rmmod: ERROR: Module ${name} is not currently loaded\n`);
      const users = holders(m, name);
      if (users.length > 0) return fail(1, `rmmod: ERROR: Module ${name} is in use by: ${users.join(' ')}\n`);
      if (!root) return fail(1, `rmmod: ERROR: could not remove module ${name}: Operation not permitted\n`);
      unloadModule(m, name);
    }
    return ok('');
  },
};

export const modinfo: Tool = {
  name: 'modinfo',
  path: '/usr/sbin/modinfo',
  packages: ['kmod'],
  run(args, { machine: m }) {
    const p = getopt(args, 'F:0ank:b:', {
      field: true,
      null: false,
      all: false,
      filename: false,
      'set-version': true,
      basedir: true,
    });
    if (p.error) return fail(1, `modinfo: unrecognized option '${p.error.option}'\n`);
    const field = has(p, 'n', 'filename') ? 'filename' : value(p, 'F', 'field');
    if (p.operands.length === 0) return fail(1, 'modinfo: ERROR: missing module or filename.\n');
    let out = '';
    let err = '';
    for (const raw of p.operands) {
      const def = kernelModule(raw);
      if (!isAvailable(def, m)) {
        err += `modinfo: ERROR: Module ${raw} not found.\n`;
        continue;
      }
      const version = moduleVersion(def, m);
      const intree = version === undefined;
      const src = rng('srcversion', def.name, version ?? release(m))
        .hex(23)
        .toUpperCase();
      const fields: Array<[string, string | undefined]> = [
        ['filename', modulePath(def, m)],
        ['version', version],
        ['license', def.license ?? 'GPL'],
        ['description', def.description],
        ['author', def.author || undefined],
        ['srcversion', src],
        ['depends', (def.depends ?? []).join(',')],
        ['retpoline', 'Y'],
        ['intree', intree ? 'Y' : undefined],
        ['name', def.name],
        ['vermagic', `${release(m)} SMP mod_unload modversions `],
      ];
      for (const [k, v] of fields) {
        if (v === undefined) continue;
        if (field !== undefined) {
          if (k === field) out += `${v}\n`;
        } else out += `${`${k}:`.padEnd(16)}${v}\n`;
      }
    }
    return { stdout: out, stderr: err, exitCode: err ? 1 : 0 };
  },
};

const LEVELS = ['emerg', 'alert', 'crit', 'err', 'warn', 'notice', 'info', 'debug'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function ctime(ms: number): string {
  const d = new Date(ms);
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2)} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${d.getUTCFullYear()}`;
}

export const dmesg: Tool = {
  name: 'dmesg',
  path: '/usr/bin/dmesg',
  packages: ['util-linux'],
  async run(args, { machine: m, root, ctx }): Promise<ExecResult> {
    const p = getopt(args, 'TtHkxcCwl:L::P', {
      ctime: false,
      notime: false,
      human: false,
      kernel: false,
      decode: false,
      'read-clear': false,
      clear: false,
      follow: false,
      level: true,
      color: false,
      nopager: false,
    });
    if (p.error)
      return fail(1, `dmesg: unrecognized option '${p.error.option}'\nTry 'dmesg --help' for more information.\n`);
    if (!root) return fail(1, 'dmesg: read kernel buffer failed: Operation not permitted\n');
    const sys = m.system;
    const levels = value(p, 'l', 'level')
      ?.split(',')
      .map((l) => LEVELS.indexOf(l.trim()));
    const line = (k: KernelMessage): string => {
      const secs = Math.floor(k.t);
      const us = Math.round((k.t - secs) * 1e6);
      const stamp = has(p, 't', 'notime')
        ? ''
        : has(p, 'T', 'ctime')
          ? `[${ctime(sys.boot.at + k.t * 1000)}] `
          : `[${String(secs).padStart(5)}.${String(us).padStart(6, '0')}] `;
      const decode = has(p, 'x', 'decode') ? `kern  :${LEVELS[k.level]?.padEnd(6)}: ` : '';
      return `${decode}${stamp}${k.text}\n`;
    };
    const pick = (ring: KernelMessage[]): KernelMessage[] =>
      levels ? ring.filter((k) => levels.includes(k.level)) : ring;
    const text = pick(sys.kernel.ring).map(line).join('');
    if (has(p, 'C', 'clear')) {
      sys.kernel.clear();
      return ok('');
    }
    if (has(p, 'c', 'read-clear')) sys.kernel.clear();
    if (!has(p, 'w', 'follow')) return ok(text);
    // -w: the ring so far, then new lines as the kernel logs them, until cancelled.
    const io = toolIo(ctx, m.clock);
    await io.out(text);
    let seen = sys.kernel.ring.length;
    while (!io.signal?.aborted) {
      if (!(await m.clock.sleep(200, io.signal, true))) break;
      const ring = sys.kernel.ring;
      if (ring.length < seen) seen = 0;
      if (ring.length > seen) {
        await io.out(pick(ring.slice(seen)).map(line).join(''));
        seen = ring.length;
      }
    }
    return io.result(0);
  },
};

export const KMOD_TOOLS: readonly Tool[] = [lsmod, modprobe, rmmod, modinfo, dmesg];
