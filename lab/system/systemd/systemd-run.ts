/**
 * systemd-run (systemd 249): a transient service running a command now, or a transient timer
 * (`--on-active=`) that runs it when the simulated clock gets there. The units are written to
 * /run/systemd/transient as systemd does, so `systemctl cat/status/show` see them.
 */
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import { leadingOptions } from '../arg-loops.js';
import type { MachineSystem } from '../machine-system.js';
import { formatTimespan, parseTimespan } from './unit-file.js';

const res = (stdout: string, stderr: string, exitCode: number): ExecResult => ({ stdout, stderr, exitCode });
const TAKES_VALUE = new Set([
  '--unit',
  '-u',
  '--property',
  '-p',
  '--description',
  '--on-active',
  '--on-boot',
  '--on-calendar',
  '--timer-property',
  '--setenv',
  '-E',
  '--uid',
  '--gid',
  '--working-directory',
  '--service-type',
  '--slice',
  '--nice',
  '--path-property',
  '--socket-property',
]);

/** systemd quotes every word of a transient ExecStart=. */
const quoteExec = (argv: readonly string[]): string => argv.map((a) => `"${a.replace(/(["\\])/g, '\\$1')}"`).join(' ');

let anonymous = 0;

export async function systemdRun(
  sys: MachineSystem,
  args: string[],
  ctx: ResolvedCommandContext,
  root: boolean,
): Promise<ExecResult> {
  let unit: string | undefined;
  let collect = false;
  let wait = false;
  let quiet = false;
  let description: string | undefined;
  let onActive: string | undefined;
  let remain = false;
  const props: string[] = [];
  const timerProps: string[] = [];
  const env: string[] = [];
  const start = leadingOptions(args, (a, next) => {
    if (!a.startsWith('-')) return 'command';
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    let value: string | undefined;
    if (TAKES_VALUE.has(name)) {
      value = a.startsWith('--') && eq > 0 ? a.slice(eq + 1) : /^-[upE]./.test(a) ? a.slice(2) : next();
      if (value === undefined) return res('', `systemd-run: option '${name}' requires an argument\n`, 1);
    }
    const key = /^-[upE]./.test(a) ? a.slice(0, 2) : name;
    switch (key) {
      case '--unit':
      case '-u':
        unit = value;
        break;
      case '--property':
      case '-p':
        props.push(value as string);
        break;
      case '--timer-property':
        timerProps.push(value as string);
        break;
      case '--setenv':
      case '-E':
        env.push(value as string);
        break;
      case '--description':
        description = value;
        break;
      case '--on-active':
        onActive = value;
        break;
      case '--collect':
      case '-G':
        collect = true;
        break;
      case '--wait':
        wait = true;
        break;
      case '--quiet':
      case '-q':
        quiet = true;
        break;
      case '--remain-after-exit':
      case '-r':
        remain = true;
        break;
      case '--no-block':
      case '--no-ask-password':
      case '--system':
        break;
      default:
        if (!TAKES_VALUE.has(name)) return res('', `systemd-run: unrecognized option '${a}'\n`, 1);
    }
    return undefined;
  });
  if (typeof start !== 'number') return start;
  const argv = args.slice(start);
  if (argv.length === 0) return res('', 'Command line to execute required.\n', 1);
  if (!root)
    return res(
      '',
      `Failed to start transient ${onActive ? 'timer' : 'service'} unit: Interactive authentication required.\n`,
      1,
    );

  // systemd-run resolves the command to an absolute path first, as execve() needs one.
  let exe = argv[0] as string;
  if (!exe.startsWith('/')) {
    const dirs = (ctx.env.get('PATH') ?? '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin').split(':');
    let found: string | undefined;
    for (const d of dirs) {
      if (await ctx.fs.exists(`${d}/${exe}`).catch(() => false)) {
        found = `${d}/${exe}`;
        break;
      }
    }
    if (!found) return res('', `Failed to find executable ${exe}: No such file or directory\n`, 1);
    exe = found;
  }
  const cmd = [exe, ...argv.slice(1)];
  const base = (unit ?? `run-u${++anonymous}`).replace(/\.(service|timer)$/, '');
  const service = `${base}.service`;
  const timer = `${base}.timer`;
  const sd = sys.systemd;
  for (const n of onActive ? [service, timer] : [service]) {
    const existing = sd.units.get(n);
    if (existing && existing.active !== 'inactive') {
      return res(
        '',
        `Failed to start transient ${n.endsWith('.timer') ? 'timer' : 'service'} unit: Unit ${n} was already loaded or has a fragment file.\n`,
        1,
      );
    }
  }
  const desc = description ?? cmd.join(' ');
  const head = `# This is a transient unit file, created programmatically via the systemd API. Do not edit.\n[Unit]\nDescription=${desc}\n`;
  const serviceText = `${head}\n[Service]\n${env.map((e) => `Environment=${e}\n`).join('')}${props.map((p) => `${p}\n`).join('')}${remain ? 'RemainAfterExit=yes\n' : ''}ExecStart=\nExecStart=${quoteExec(cmd)}\n`;
  const u = await sd.addTransient(service, serviceText, { collect });

  if (onActive) {
    const ms = parseTimespan(onActive);
    if (ms === undefined) return res('', `Failed to parse timer value: ${onActive}\n`, 1);
    const timerText = `${head}\n[Timer]\nOnActiveSec=${formatTimespan(ms)}\n${timerProps.map((p) => `${p}\n`).join('')}RemainAfterElapse=no\n`;
    await sd.addTransient(timer, timerText, { collect });
    await sd.start(timer);
    return res('', quiet ? '' : `Running timer as unit: ${timer}\nWill run service as unit: ${service}\n`, 0);
  }
  const started = await sd.start(service);
  const msg = quiet ? '' : `Running as unit: ${service}\n`;
  if (!started.ok) return res('', `${msg}${started.error}\n`, 1);
  if (!wait) return res('', msg, 0);
  while ((u.active === 'active' || u.active === 'activating') && u.run) await u.run.done;
  const st = u.execMain?.status;
  const text = `${msg}Finished with result: ${u.result}\nMain processes terminated with: code=${st?.signal ? 'killed' : 'exited'}/status=${st?.signal ?? st?.code ?? 0}\n`;
  return res('', text, st?.signal ? 1 : (st?.code ?? 0));
}
