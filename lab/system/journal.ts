/**
 * The systemd journal of one machine: what services printed (stdout/stderr to the journal, the
 * default) and what systemd says about units ("Starting …", "Finished …"). It is persistent
 * (jammy keeps /var/log/journal), so entries from earlier boots stay and `-b` selects the current
 * boot.
 */

export interface JournalEntry {
  /** Simulated ms since the Unix epoch. */
  at: number;
  /** Boot number the entry belongs to. */
  boot: number;
  /** SYSLOG_IDENTIFIER: `systemd`, `kernel`, the program's name. */
  ident: string;
  pid?: number;
  /** The unit the entry is about or from (`journalctl -u`). */
  unit?: string;
  message: string;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const p2 = (n: number): string => String(n).padStart(2, '0');

/** `Jan 06 09:00:05` (journalctl's short format; the lab's machines run in UTC). */
export function shortTime(ms: number): string {
  const d = new Date(ms);
  return `${MONTHS[d.getUTCMonth()]} ${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())}`;
}

/** `Mon 2025-01-06 09:00:05 UTC` (systemd's timestamp format). */
export function systemdTime(ms: number): string {
  const d = new Date(ms);
  return `${DAYS[d.getUTCDay()]} ${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} UTC`;
}

export class Journal {
  readonly entries: JournalEntry[] = [];

  constructor(private readonly hostname: string) {}

  add(entry: JournalEntry): void {
    // Kept in time order: a service's lines may be added after systemd's own for the same instant.
    let i = this.entries.length;
    while (i > 0 && (this.entries[i - 1] as JournalEntry).at > entry.at) i--;
    this.entries.splice(i, 0, entry);
  }

  /** `Jan 06 09:00:05 l20-n1 systemd[1]: Started …` */
  short(e: JournalEntry): string {
    return `${shortTime(e.at)} ${this.hostname} ${e.ident}${e.pid !== undefined ? `[${e.pid}]` : ''}: ${e.message}`;
  }
}
