/**
 * systemctl (systemd 249): unit verbs over the machine's Systemd, enablement through [Install]
 * symlinks, and the polkit refusal a non-root caller gets over SSH (no agent, no tty).
 */
import { posix } from 'node:path';
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import type { MachineSystem } from '../machine-system.js';
import { requestReboot } from '../boot.js';
import { isUtf8Locale, renderShow, renderStatus, renderTimers, unitProperties } from './render.js';
import type { Systemd } from './manager.js';
import { unitName, type UnitRuntime } from './types.js';
import { unitList } from './unit-file.js';

interface Options {
  now: boolean;
  noBlock: boolean;
  quiet: boolean;
  value: boolean;
  all: boolean;
  properties: string[];
  lines: number;
  args: string[];
}

function parse(args: readonly string[]): Options | string {
  const o: Options = {
    now: false,
    noBlock: false,
    quiet: false,
    value: false,
    all: false,
    properties: [],
    lines: 10,
    args: [],
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      o.args.push(...args.slice(i + 1));
      break;
    }
    if (a === '--now') o.now = true;
    else if (a === '--no-block') o.noBlock = true;
    else if (a === '-q' || a === '--quiet') o.quiet = true;
    else if (a === '--value') o.value = true;
    else if (a === '-a' || a === '--all') o.all = true;
    else if (a === '-p' || a === '--property') o.properties.push(...(args[++i] ?? '').split(','));
    else if (a.startsWith('--property=')) o.properties.push(...a.slice(11).split(','));
    else if (/^-p./.test(a)) o.properties.push(...a.slice(2).split(','));
    else if (a === '-n' || a === '--lines') o.lines = Number(args[++i] ?? '10');
    else if (a.startsWith('--lines=')) o.lines = Number(a.slice(8));
    else if (
      [
        '--no-pager',
        '--no-legend',
        '--plain',
        '--full',
        '-l',
        '--system',
        '--no-ask-password',
        '-f',
        '--force',
        '--runtime',
      ].includes(a)
    )
      continue;
    else if (
      /^--(type|state|output|job-mode)=/.test(a) ||
      a === '-t' ||
      a === '--type' ||
      a === '--state' ||
      a === '-o'
    ) {
      if (!a.includes('=')) i++;
    } else if (a.startsWith('-') && a !== '-') return `systemctl: unrecognized option '${a}'`;
    else o.args.push(a);
  }
  return o;
}

const AUTH = 'Interactive authentication required.';
const res = (stdout: string, stderr: string, exitCode: number): ExecResult => ({ stdout, stderr, exitCode });

/** enabled / disabled / static / masked / transient, from the [Install] section and the symlinks. */
export async function unitFileState(sys: MachineSystem, u: UnitRuntime): Promise<string> {
  if (u.loadState === 'masked') return 'masked';
  if (u.transient) return 'transient';
  if (u.loadState !== 'loaded') return '';
  const targets = [
    ...unitList(u.file, 'Install', 'WantedBy').map((t) => `${t}.wants`),
    ...unitList(u.file, 'Install', 'RequiredBy').map((t) => `${t}.requires`),
  ];
  const aliases = unitList(u.file, 'Install', 'Alias');
  if (targets.length === 0 && aliases.length === 0 && unitList(u.file, 'Install', 'Also').length === 0) return 'static';
  const fs = sys.shell.fsAs(0);
  // An enable link counts whether or not its target resolves, as systemctl reads the link itself.
  for (const t of targets)
    if (
      await fs.lstat(`/etc/systemd/system/${t}/${u.name}`).then(
        () => true,
        () => false,
      )
    )
      return 'enabled';
  return 'disabled';
}

const NO_INSTALL = `The unit files have no installation config (WantedBy=, RequiredBy=, Also=,
Alias= settings in the [Install] section, and DefaultInstance= for template
units). This means they are not meant to be enabled using systemctl.
 
Possible reasons for having this kind of units are:
• A unit may be statically enabled by being symlinked from another unit's
  .wants/ or .requires/ directory.
• A unit's purpose may be to act as a helper for some other unit which has
  a requirement dependency on it.
• A unit may be started when needed via activation (socket, path, timer,
  D-Bus, udev, scripted systemctl call, ...).
• In case of template units, the unit is meant to be enabled with some
  instance name specified.
`;

async function enableDisable(sys: MachineSystem, names: string[], enable: boolean, utf8: boolean): Promise<ExecResult> {
  const verb = enable ? 'enable' : 'disable';
  const arrow = utf8 ? '→' : '->';
  let err = '';
  const fs = sys.shell.fsAs(0);
  for (const n of names) {
    const u = await sys.systemd.load(n);
    if (u.loadState === 'not-found')
      return res('', `${err}Failed to ${verb} unit: Unit file ${u.name} does not exist.\n`, 1);
    if (u.transient) return res('', `${err}Failed to ${verb} unit: Unit ${u.name} is transient or generated.\n`, 1);
    if (u.loadState === 'masked')
      return res(
        '',
        `${err}Failed to ${verb} unit: Unit file ${posix.join('/etc/systemd/system', u.name)} is masked.\n`,
        1,
      );
    const base = u.name.replace(/\.service$/, '');
    if (u.path?.startsWith('/lib/') && (await fs.exists(`/etc/init.d/${base}`))) {
      err += `Synchronizing state of ${u.name} with SysV service script with /lib/systemd/systemd-sysv-install.\nExecuting: /lib/systemd/systemd-sysv-install ${verb} ${base}\n`;
    }
    const links = [
      ...unitList(u.file, 'Install', 'WantedBy').map((t) => `/etc/systemd/system/${t}.wants/${u.name}`),
      ...unitList(u.file, 'Install', 'RequiredBy').map((t) => `/etc/systemd/system/${t}.requires/${u.name}`),
      ...unitList(u.file, 'Install', 'Alias').map((a) => `/etc/systemd/system/${a}`),
    ];
    if (links.length === 0) {
      if (enable) err += NO_INSTALL;
      continue;
    }
    for (const link of links) {
      const exists = await fs.lstat(link).then(
        () => true,
        () => false,
      );
      if (enable && !exists) {
        await fs.mkdir(posix.dirname(link), { recursive: true });
        await fs.symlink(u.path as string, link);
        err += `Created symlink ${link} ${arrow} ${u.path}.\n`;
      } else if (!enable && exists) {
        await fs.rm(link);
        err += `Removed ${link}.\n`;
      }
    }
  }
  return res('', err, 0);
}

/** The timers a jammy server has out of the box (list-timers shows them beside the lab's). */
function standardTimers(sys: MachineSystem): Array<{ next: number; last?: number; unit: string; activates: string }> {
  const boot = sys.boot.at;
  const now = sys.machine.clock.now();
  const day = 86400000;
  const nextDaily = (hour: number, min: number): number => {
    const d = new Date(now);
    let t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), hour, min);
    if (t <= now) t += day;
    return t;
  };
  return [
    {
      next: boot + 15 * 60000 + day,
      last: boot + 15 * 60000 <= now ? boot + 15 * 60000 : undefined,
      unit: 'systemd-tmpfiles-clean.timer',
      activates: 'systemd-tmpfiles-clean.service',
    },
    { next: nextDaily(6, 12), unit: 'apt-daily-upgrade.timer', activates: 'apt-daily-upgrade.service' },
    { next: nextDaily(13, 41), unit: 'apt-daily.timer', activates: 'apt-daily.service' },
    { next: nextDaily(0, 0), unit: 'logrotate.timer', activates: 'logrotate.service' },
    { next: nextDaily(0, 0), unit: 'man-db.timer', activates: 'man-db.service' },
    { next: nextDaily(0, 0), unit: 'dpkg-db-backup.timer', activates: 'dpkg-db-backup.service' },
  ].map((t) => (t.last === undefined ? { next: t.next, unit: t.unit, activates: t.activates } : t)) as Array<{
    next: number;
    last?: number;
    unit: string;
    activates: string;
  }>;
}

export async function systemctl(
  sys: MachineSystem,
  args: string[],
  ctx: ResolvedCommandContext,
  root: boolean,
): Promise<ExecResult> {
  if (args[0] === '--version') args = ['version', ...args.slice(1)];
  const parsed = parse(args);
  if (typeof parsed === 'string') return res('', `${parsed}\n`, 1);
  const o = parsed;
  const [verb = 'list-units', ...rest] = o.args;
  const names = rest.map(unitName);
  const sd: Systemd = sys.systemd;
  const utf8 = isUtf8Locale(ctx.env);
  const needRoot = (msg: string): ExecResult | undefined => (root ? undefined : res('', `${msg}\n`, 1));
  const warn = (ws: string[]): string => ws.map((w) => `${w}\n`).join('');

  switch (verb) {
    case 'version':
      return res(
        'systemd 249 (249.11-0ubuntu3.12)\n+PAM +AUDIT +SELINUX +APPARMOR +IMA +SMACK +SECCOMP +GCRYPT +GNUTLS +OPENSSL +ACL +BLKID +CURL +ELFUTILS +FIDO2 +IDN2 -IDN +IPTC +KMOD +LIBCRYPTSETUP +LIBFDISK +PCRE2 -PWQUALITY -P11KIT -QRENCODE +BZIP2 +LZ4 +XZ +ZLIB +ZSTD -XKBCOMMON +UTMP +SYSVINIT default-hierarchy=unified\n',
        '',
        0,
      );
    case 'daemon-reload': {
      const denied = needRoot(`Failed to reload daemon: ${AUTH}`);
      if (denied) return denied;
      await sd.reload();
      return res('', '', 0);
    }
    case 'start':
    case 'stop':
    case 'restart':
    case 'try-restart':
    case 'reload-or-restart': {
      if (names.length === 0) return res('', `Too few arguments.\n`, 1);
      const word = verb === 'reload-or-restart' ? 'reload-or-restart' : verb === 'try-restart' ? 'try-restart' : verb;
      if (!root)
        return res(
          '',
          `Failed to ${word} ${names[0]}: ${AUTH}\nSee system logs and 'systemctl status ${names[0]}' for details.\n`,
          1,
        );
      let err = '';
      for (const n of names) {
        let r;
        if (verb === 'start') r = await sd.start(n, { noBlock: o.noBlock });
        else if (verb === 'stop') r = await sd.stop(n);
        else if (verb === 'try-restart') {
          const u = await sd.load(n);
          r = u.active === 'active' ? await sd.restart(n) : { ok: true as const, warnings: [] };
        } else r = await sd.restart(n);
        err += warn(r.warnings);
        if (!r.ok) return res('', `${err}${r.error}\n`, verb === 'stop' ? 5 : 1);
      }
      return res('', err, 0);
    }
    case 'enable':
    case 'disable': {
      if (names.length === 0) return res('', `Too few arguments.\n`, 1);
      const denied = needRoot(`Failed to ${verb} unit: ${AUTH}`);
      if (denied) return denied;
      const r = await enableDisable(sys, names, verb === 'enable', utf8);
      if (r.exitCode !== 0 || !o.now) return r;
      let err = r.stderr;
      for (const n of names) {
        const j = verb === 'enable' ? await sd.start(n) : await sd.stop(n);
        err += warn(j.warnings);
        if (!j.ok) return res('', `${err}${j.error}\n`, 1);
      }
      return res('', err, 0);
    }
    case 'mask':
    case 'unmask': {
      const denied = needRoot(`Failed to ${verb} unit: ${AUTH}`);
      if (denied) return denied;
      let err = '';
      const fs = sys.shell.fsAs(0);
      for (const n of names) {
        const link = `/etc/systemd/system/${n}`;
        if (verb === 'mask') {
          await fs.rm(link, { force: true }).catch(() => undefined);
          await fs.symlink('/dev/null', link);
          err += `Created symlink ${link} ${utf8 ? '→' : '->'} /dev/null.\n`;
        } else if (
          await fs.lstat(link).then(
            (s) => s.isSymbolicLink,
            () => false,
          )
        ) {
          await fs.rm(link);
          err += `Removed ${link}.\n`;
        }
      }
      // systemctl reloads the manager after (un)masking: a running unit keeps running, masked.
      await sd.reload();
      return res('', err, 0);
    }
    case 'is-active':
    case 'is-failed': {
      let out = '';
      let ok = false;
      for (const n of names) {
        const u = await sd.load(n);
        out += `${u.active}\n`;
        if (verb === 'is-active' ? u.active === 'active' || u.active === 'reloading' : u.active === 'failed') ok = true;
      }
      return res(o.quiet ? '' : out, '', ok ? 0 : verb === 'is-active' ? 3 : 1);
    }
    case 'is-enabled': {
      let out = '';
      let err = '';
      let ok = false;
      for (const n of names) {
        const u = await sd.load(n);
        if (u.loadState === 'not-found') {
          err += `Failed to get unit file state for ${u.name}: No such file or directory\n`;
          continue;
        }
        const st = await unitFileState(sys, u);
        out += `${st}\n`;
        if (['enabled', 'static', 'transient', 'alias', 'indirect', 'generated', 'enabled-runtime'].includes(st))
          ok = true;
      }
      return res(o.quiet ? '' : out, err, ok ? 0 : 1);
    }
    case 'show': {
      let out = '';
      for (const [i, n] of names.entries()) {
        const u = await sd.load(n);
        const props = unitProperties(sys, u, await unitFileState(sys, u));
        if (i > 0 && o.properties.length === 0) out += '\n';
        out += renderShow(props, o.properties, o.value);
      }
      return res(out, '', 0);
    }
    case 'status': {
      let out = '';
      let err = '';
      let code = 0;
      for (const [i, n] of names.entries()) {
        const u = await sd.load(n);
        if (u.loadState === 'not-found') {
          err += `Unit ${u.name} could not be found.\n`;
          code = 4;
          continue;
        }
        const w = await sd.changedOnDisk(u);
        if (w) err += `${w}\n`;
        if (i > 0) out += '\n';
        out += renderStatus(sys, u, await unitFileState(sys, u), utf8, o.lines);
        if (u.active !== 'active' && u.active !== 'reloading' && code === 0) code = 3;
      }
      return res(out, err, code);
    }
    case 'cat': {
      let out = '';
      let err = '';
      for (const [i, n] of names.entries()) {
        const u = await sd.load(n);
        if (u.loadState !== 'loaded' || !u.path) {
          err += `No files found for ${u.name}.\n`;
          continue;
        }
        out += `${i > 0 ? '\n' : ''}# ${u.path}\n${await sys.readFile(u.path).catch(() => u.text ?? '')}`;
      }
      return res(out, err, err ? 1 : 0);
    }
    case 'list-timers':
      return res(renderTimers(sys, sd.timers(o.all), standardTimers(sys)), '', 0);
    case 'reset-failed': {
      const denied = needRoot(`Failed to reset failed state of unit ${names[0] ?? ''}: ${AUTH}`);
      if (denied) return denied;
      if (names.length === 0) sd.resetFailed();
      for (const n of names) sd.resetFailed(n);
      return res('', '', 0);
    }
    case 'reboot': {
      if (!root)
        return res(
          '',
          `Failed to reboot system via logind: ${AUTH}\nFailed to start reboot.target: ${AUTH}\nSee system logs and 'systemctl status reboot.target' for details.\n`,
          1,
        );
      return requestReboot(sys, ctx);
    }
    case 'list-units': {
      const units = [...sd.units.values()]
        .filter((u) => u.loadState === 'loaded' && (o.all || u.active !== 'inactive'))
        .sort((a, b) => a.name.localeCompare(b.name));
      const rows = units.map((u) => [u.name, u.loadState, u.active, u.sub, u.description]);
      const w = [4, 4, 6, 3].map((min, i) => Math.max(min, ...rows.map((r) => (r[i] as string).length)));
      const line = (r: string[]): string =>
        `  ${r
          .slice(0, 4)
          .map((x, i) => x.padEnd(w[i] as number))
          .join(' ')} ${r[4]}`;
      return res(
        `${line(['UNIT', 'LOAD', 'ACTIVE', 'SUB', 'DESCRIPTION'])}\n${rows.map((r) => `${line(r)}\n`).join('')}\nLOAD   = Reflects whether the unit definition was properly loaded.\nACTIVE = The high-level unit activation state, i.e. generalization of SUB.\nSUB    = The low-level unit activation state, values depend on unit type.\n${rows.length} loaded units listed.\n`,
        '',
        0,
      );
    }
    default:
      return res('', `Unknown command verb ${verb}.\n`, 1);
  }
}
