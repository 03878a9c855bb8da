/**
 * apt's number and list formatting (apt-pkg/contrib/strutl.cc SizeToStr/TimeToStr,
 * apt-private/private-output.cc ShowList): sizes in SI units with at most four digits, grouped
 * with the locale's thousands separator (none in C and C.UTF-8, `,` in en_US.UTF-8), lists
 * wrapped to the 80-column screen apt assumes without a terminal.
 */

/** Whether the environment's LC_NUMERIC groups thousands (glibc: C and C.UTF-8 do not). */
export function groupsThousands(env: ReadonlyMap<string, string> | Record<string, string | undefined>): boolean {
  const get = (k: string): string | undefined =>
    env instanceof Map ? env.get(k) : (env as Record<string, string | undefined>)[k];
  const loc = get('LC_ALL') || get('LC_NUMERIC') || get('LANG') || 'C';
  return !/^(C|POSIX)(\.|$)/i.test(loc);
}

function group(n: string, grouping: boolean): string {
  if (!grouping) return n;
  const [int, frac] = n.split('.');
  const g = (int ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return frac === undefined ? g : `${g}.${frac}`;
}

/** SizeToStr(bytes) + "B": `148 kB`, `24.6 MB`, `512 B`. */
export function sizeToStr(bytes: number, grouping: boolean): string {
  const ext = ['', 'k', 'M', 'G', 'T', 'P'];
  let size = Math.abs(bytes);
  for (let i = 0; i < ext.length; i++) {
    if (size < 100 && i !== 0) return `${group(size.toFixed(1), grouping)} ${ext[i]}B`;
    if (size < 10000) return `${group(size.toFixed(0), grouping)} ${ext[i]}B`;
    size /= 1000;
  }
  return `${group(size.toFixed(0), grouping)} EB`;
}

/** TimeToStr(seconds): `1s`, `1min 5s`, `1h 2min 3s`. */
export function timeToStr(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}min ${s % 60}s`;
  if (s >= 60) return `${Math.floor(s / 60)}min ${s % 60}s`;
  return `${s}s`;
}

/** A titled package list as apt prints it: two-space indent, wrapped before column 80. */
export function showList(title: string, names: readonly string[]): string {
  if (names.length === 0) return '';
  const lines: string[] = [];
  let cur = ' ';
  for (const n of names) {
    if (cur.length + 1 + n.length >= 80 && cur.trim() !== '') {
      lines.push(cur);
      cur = ' ';
    }
    cur += ` ${n}`;
  }
  lines.push(cur);
  return `${title}\n${lines.join('\n')}\n`;
}
