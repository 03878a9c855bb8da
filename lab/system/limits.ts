/**
 * Resource limits (RLIMIT_*) of processes: the kernel defaults a jammy service or session starts
 * with, what pam_limits applies to login sessions from /etc/security/limits.conf and
 * limits.d/*.conf, what a unit's `LimitMEMLOCK=` / `LimitNOFILE=` set, and the
 * /proc/<pid>/limits table (fs/proc/base.c proc_pid_limits of Linux 5.15).
 *
 * Only the limits the stages look at are modelled per process (locked memory, open files); the
 * rest of the table is the jammy default for a 1 TiB machine.
 */
import type { IFileSystem } from 'just-bash';

/** null = unlimited (RLIM_INFINITY). Values in bytes (memlock) or counts (nofile). */
export type Limit = number | null;

export interface ResourceLimits {
  memlock: readonly [soft: Limit, hard: Limit];
  nofile: readonly [soft: Limit, hard: Limit];
}

/** 8 MiB locked memory (jammy's 5.15 kernel default, `ulimit -l` 8192), 1024/524288 files. */
export const DEFAULT_LIMITS: ResourceLimits = { memlock: [8388608, 8388608], nofile: [1024, 524288] };

/** pam_limits item names → our fields, and how their values scale (memlock is in KiB there). */
const PAM_ITEMS: Record<string, { key: keyof ResourceLimits; scale: number }> = {
  memlock: { key: 'memlock', scale: 1024 },
  nofile: { key: 'nofile', scale: 1 },
};

/**
 * Applies limits.conf lines (`<domain> <type> <item> <value>`) to `base` for a user: domains `*`,
 * the user name and `@group` match (root only by name, as pam_limits does); type soft, hard or
 * `-` (both); later lines win.
 */
export function applyLimitsConf(
  base: ResourceLimits,
  text: string,
  user: string,
  groups: readonly string[],
): ResourceLimits {
  const out: { memlock: [Limit, Limit]; nofile: [Limit, Limit] } = {
    memlock: [...base.memlock],
    nofile: [...base.nofile],
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const [domain, type, item, value] = line.split(/\s+/);
    if (!domain || !type || !item || value === undefined) continue;
    const matches =
      domain === user ||
      (domain === '*' && user !== 'root') ||
      (domain.startsWith('@') && groups.includes(domain.slice(1)));
    const spec = PAM_ITEMS[item];
    if (!matches || !spec) continue;
    const v: Limit = /^(unlimited|infinity|-1)$/.test(value)
      ? null
      : /^\d+$/.test(value)
        ? Number(value) * spec.scale
        : (undefined as never);
    if (v === undefined) continue;
    const pair = out[spec.key];
    if (type === 'soft' || type === '-') pair[0] = v;
    if (type === 'hard' || type === '-') pair[1] = v;
  }
  return out;
}

/** The limits pam_limits gives a login session of `user`: limits.conf, then limits.d/*.conf in name order. */
export async function sessionLimits(fs: IFileSystem, user: string, groups: readonly string[]): Promise<ResourceLimits> {
  let limits = DEFAULT_LIMITS;
  const files = ['/etc/security/limits.conf'];
  try {
    const names = (await fs.readdir('/etc/security/limits.d')).filter((n) => n.endsWith('.conf')).sort();
    files.push(...names.map((n) => `/etc/security/limits.d/${n}`));
  } catch {
    // no limits.d
  }
  for (const f of files) {
    try {
      limits = applyLimitsConf(limits, await fs.readFile(f), user, groups);
    } catch {
      // unreadable or missing: pam_limits skips it
    }
  }
  return limits;
}

/** systemd's `LimitX=` value: `infinity`, a number with K/M/G/T (1024-based) suffix, or `soft:hard`. */
export function parseUnitLimit(value: string, bytes: boolean): readonly [Limit, Limit] | undefined {
  const one = (v: string): Limit | undefined => {
    if (v === 'infinity') return null;
    const m = /^(\d+)\s*([KMGTPE]?)i?B?$/i.exec(v.trim());
    if (!m) return undefined;
    const exp = m[2] ? 'KMGTPE'.indexOf(m[2].toUpperCase()) + 1 : 0;
    return Number(m[1]) * (bytes ? 1024 : 1000) ** exp;
  };
  const [a, b] = value.split(':');
  const soft = one(a ?? '');
  const hard = b === undefined ? soft : one(b);
  if (soft === undefined || hard === undefined) return undefined;
  return [soft, hard];
}

const ROWS: Array<[name: string, unit: string, value: (l: ResourceLimits) => readonly [Limit, Limit]]> = [
  ['Max cpu time', 'seconds', () => [null, null]],
  ['Max file size', 'bytes', () => [null, null]],
  ['Max data size', 'bytes', () => [null, null]],
  ['Max stack size', 'bytes', () => [8388608, null]],
  ['Max core file size', 'bytes', () => [0, null]],
  ['Max resident set', 'bytes', () => [null, null]],
  ['Max processes', 'processes', () => [4125295, 4125295]],
  ['Max open files', 'files', (l) => l.nofile],
  ['Max locked memory', 'bytes', (l) => l.memlock],
  ['Max address space', 'bytes', () => [null, null]],
  ['Max file locks', 'locks', () => [null, null]],
  ['Max pending signals', 'signals', () => [4125295, 4125295]],
  ['Max msgqueue size', 'bytes', () => [819200, 819200]],
  ['Max nice priority', '', () => [0, 0]],
  ['Max realtime priority', '', () => [0, 0]],
  ['Max realtime timeout', 'us', () => [null, null]],
];

/** /proc/<pid>/limits. */
export function renderProcLimits(l: ResourceLimits): string {
  const v = (x: Limit): string => (x === null ? 'unlimited' : String(x));
  let out = `${'Limit'.padEnd(25)} ${'Soft Limit'.padEnd(20)} ${'Hard Limit'.padEnd(20)} ${'Units'.padEnd(10)}\n`;
  for (const [name, unit, get] of ROWS) {
    const [soft, hard] = get(l);
    out += `${name.padEnd(25)} ${v(soft).padEnd(20)} ${v(hard).padEnd(20)} ${unit ? unit.padEnd(10) : ''}\n`;
  }
  return out;
}
