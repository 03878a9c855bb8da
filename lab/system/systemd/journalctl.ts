/**
 * journalctl (systemd 249) over the machine's journal: `-u UNIT` (repeatable), `-o short|cat|
 * short-iso`, `-n N`, `-b`, `-k`, `-t IDENT`, `-q`, `-f` (follows, streaming new entries until
 * the command is cancelled). Like 249 it opens with `-- Journal begins at …, ends at … --`,
 * separates boots with `-- Boot <id> --` and says `-- No entries --` when nothing matches.
 */
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import { toolIo } from '../live.js';
import { systemdTime, type JournalEntry } from '../journal.js';
import type { MachineSystem } from '../machine-system.js';
import { unitName } from './types.js';

const res = (stdout: string, stderr: string, exitCode: number): ExecResult => ({ stdout, stderr, exitCode });

export async function journalctl(sys: MachineSystem, args: string[], ctx: ResolvedCommandContext): Promise<ExecResult> {
  const units: string[] = [];
  const idents: string[] = [];
  let output = 'short';
  let lines: number | undefined;
  let bootOnly = false;
  let kernel = false;
  let quiet = false;
  let follow = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const val = (): string | undefined =>
      a.includes('=') ? a.slice(a.indexOf('=') + 1) : /^-[uontb]./.test(a) ? a.slice(2) : args[++i];
    if (a === '-u' || a.startsWith('--unit') || /^-u./.test(a)) units.push(unitName(val() ?? ''));
    else if (a === '-o' || a.startsWith('--output') || /^-o./.test(a)) output = val() ?? 'short';
    else if (a === '-n' || a.startsWith('--lines') || /^-n\d/.test(a)) {
      const v = a === '--lines' || a === '-n' ? (/^\d+$/.test(args[i + 1] ?? '') ? args[++i] : '10') : val();
      lines = Number(v ?? '10');
    } else if (a === '-t' || a.startsWith('--identifier') || /^-t./.test(a)) idents.push(val() ?? '');
    else if (a === '-b' || a === '--boot') {
      bootOnly = true;
      if (/^-?\d+$/.test(args[i + 1] ?? '')) i++;
    } else if (a === '-k' || a === '--dmesg') {
      kernel = true;
      bootOnly = true;
    } else if (a === '-q' || a === '--quiet') quiet = true;
    else if (a === '-f' || a === '--follow') follow = true;
    else if (a === '-e' || a === '--pager-end') lines ??= 1000;
    else if (
      [
        '--no-pager',
        '-x',
        '--catalog',
        '-a',
        '--all',
        '--no-hostname',
        '--system',
        '--merge',
        '-m',
        '-l',
        '--full',
      ].includes(a)
    )
      continue;
    else if (a.startsWith('-')) return res('', `journalctl: unrecognized option '${a}'\n`, 1);
  }
  if (!['short', 'cat', 'short-iso', 'short-precise', 'with-unit'].includes(output)) {
    return res('', `Unknown output format '${output}'.\n`, 1);
  }

  const hostname = sys.machine.hostname;
  const kernelEntries = (): JournalEntry[] =>
    sys.kernel.ring.map((k) => ({
      at: sys.boot.at + k.t * 1000,
      boot: sys.boot.count,
      ident: 'kernel',
      message: k.text,
    }));
  const select = (): JournalEntry[] => {
    let all = kernel ? kernelEntries() : sys.journal.entries;
    if (bootOnly) all = all.filter((e) => e.boot === sys.boot.count);
    if (units.length > 0) all = all.filter((e) => e.unit !== undefined && units.includes(e.unit));
    if (idents.length > 0) all = all.filter((e) => idents.includes(e.ident));
    return all;
  };
  const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, '+0000');
  const format = (e: JournalEntry): string => {
    if (output === 'cat') return e.message;
    const who = `${e.ident}${e.pid !== undefined ? `[${e.pid}]` : ''}`;
    if (output === 'short-iso') return `${iso(e.at)} ${hostname} ${who}: ${e.message}`;
    return sys.journal.short(e);
  };
  const render = (entries: JournalEntry[], prevBoot: number | undefined): string => {
    let out = '';
    let boot = prevBoot;
    for (const e of entries) {
      if (!quiet && boot !== undefined && e.boot !== boot) out += `-- Boot ${sys.bootIdOf(e.boot)} --\n`;
      boot = e.boot;
      out += `${format(e)}\n`;
    }
    return out;
  };

  const entries = select();
  const shown = lines !== undefined ? entries.slice(Math.max(0, entries.length - lines)) : entries;
  let out = '';
  const everything = sys.journal.entries;
  if (!quiet && (lines !== 0 || follow) && everything.length > 0) {
    const first = (everything[0] as JournalEntry).at;
    const last = (everything[everything.length - 1] as JournalEntry).at;
    out += follow
      ? `-- Journal begins at ${systemdTime(first)}. --\n`
      : `-- Journal begins at ${systemdTime(first)}, ends at ${systemdTime(last)}. --\n`;
  }
  if (shown.length === 0 && !quiet && !follow) out += '-- No entries --\n';
  out += render(shown, undefined);
  if (!follow) return res(out, '', 0);

  // -f: print what is there, then each new matching entry as it arrives, until cancelled.
  const io = toolIo(ctx, sys.machine.clock);
  await io.out(out);
  let seen = entries.length;
  let lastBoot = shown[shown.length - 1]?.boot;
  while (!io.signal?.aborted) {
    if (!(await sys.machine.clock.sleep(200, io.signal, true))) break;
    const now = select();
    if (now.length > seen) {
      const fresh = now.slice(seen);
      await io.out(render(fresh, lastBoot));
      lastBoot = fresh[fresh.length - 1]?.boot ?? lastBoot;
      seen = now.length;
    }
  }
  return io.result(0);
}
