/**
 * Booting and rebooting a machine.
 *
 * reboot (`sudo reboot`, `sudo systemctl reboot`, `sudo shutdown -r now`): the machine goes
 * down — its SSH server drops every connection and refuses new ones — systemd stops the running
 * units (ExecStop= runs), 'shutdown' hooks drop runtime state, every process ends; the boot
 * takes REBOOT_MS of modelled time (≈ 90 s at speed 1); then a new boot id, a fresh kernel ring,
 * modules (hardware autoload minus modprobe.d blacklists, then modules-load.d and /etc/modules),
 * the 'kernel'/'modules'/'network' hooks, the enabled units (oneshots run their ExecStart), the
 * 'up' hooks, and SSH answers again.
 *
 * Other parts of the lab register what a reboot does to their state:
 *   registerBootHook('shutdown', 'qos', ({ machine }) => resetQos(machine));   // runtime-only QoS
 *   registerBootHook('kernel', 'grub', ({ machine }) => applyGrubCmdline(machine));
 *   registerBootHook('modules', 'rdma-names', ({ machine }) => renameRdma(machine));
 *   registerBootHook('network', 'netplan', ({ machine }) => applyNetplanAtBoot(machine));
 * Hooks do not run at the lab's initial boot (the scenario set that state) unless registered
 * with `{ cold: true }`.
 */
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import type { Machine } from '../model/types.js';
import { rng } from '../util/prng.js';
import { installBaseUnits } from './base-units.js';
import {
  isAvailable,
  loadModule,
  parseBlacklist,
  parseModulesLoad,
  registeredModules,
  type LoadResult,
} from './kernel.js';
import type { MachineSystem } from './machine-system.js';
import type { Cluster } from '../model/cluster.js';

/** Modelled time from `reboot` until SSH answers again. */
export const REBOOT_MS = 90_000;

export type BootPhase = 'shutdown' | 'kernel' | 'modules' | 'network' | 'up';

export interface BootHookContext {
  machine: Machine;
  system: MachineSystem;
  cluster: Cluster | undefined;
  /** The lab's initial boot (only for hooks registered with `{ cold: true }`). */
  cold: boolean;
}

interface Hook {
  phase: BootPhase;
  name: string;
  cold: boolean;
  run: (ctx: BootHookContext) => void | Promise<void>;
}

const HOOKS: Hook[] = [];

/** Adds (or replaces, by phase and name) a boot hook. Hooks of a phase run in registration order. */
export function registerBootHook(
  phase: BootPhase,
  name: string,
  run: Hook['run'],
  opts: { cold?: boolean } = {},
): void {
  const i = HOOKS.findIndex((h) => h.phase === phase && h.name === name);
  const hook = { phase, name, run, cold: opts.cold ?? false };
  if (i >= 0) HOOKS[i] = hook;
  else HOOKS.push(hook);
}

/** Runtime state a reboot drops (QoS, ACS writes, addresses nothing configures): a 'shutdown' hook. */
export function onReboot(name: string, drop: (ctx: BootHookContext) => void | Promise<void>): void {
  registerBootHook('shutdown', name, drop);
}

async function runHooks(sys: MachineSystem, phase: BootPhase, cold: boolean): Promise<void> {
  for (const h of HOOKS) {
    if (h.phase !== phase || (cold && !h.cold)) continue;
    await h.run({ machine: sys.machine, system: sys, cluster: sys.cluster, cold });
  }
}

function uuid(seed: number, host: string, boot: number): string {
  const h = rng(seed, host, 'boot', boot).hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[parseInt(h[16] ?? '0', 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function readAll(sys: MachineSystem, dirs: readonly string[], suffix: string): Promise<string[]> {
  const fs = sys.shell.fsAs(0);
  const texts: string[] = [];
  // systemd-modules-load reads files by name across directories; /etc overrides /lib of the same name.
  const byName = new Map<string, string>();
  for (const d of [...dirs].reverse()) {
    const names = await fs.readdir(d).catch(() => [] as string[]);
    for (const n of names) if (n.endsWith(suffix)) byName.set(n, `${d}/${n}`);
  }
  for (const n of [...byName.keys()].sort()) {
    texts.push(await sys.readFile(byName.get(n) as string).catch(() => ''));
  }
  return texts;
}

/** The kernel's first lines: version, command line, the IOMMU default domain. */
function kernelBanner(sys: MachineSystem): void {
  const m = sys.machine;
  const k = sys.kernel;
  k.ring.push({
    t: 0,
    level: 5,
    text: `Linux version ${m.os.kernelRelease} (buildd@lcy02-amd64-029) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) ${m.os.kernelVersion} (Ubuntu ${m.os.kernelRelease.replace(/-generic$/, '')}.136-generic 5.15.167)`,
  });
  k.ring.push({ t: 0, level: 6, text: `Command line: ${m.os.cmdline}` });
  k.ring.push({ t: 0.412716, level: 6, text: 'DMAR: IOMMU enabled' });
  const pt = /(^|\s)iommu=pt(\s|$)/.test(m.os.cmdline);
  k.ring.push({
    t: 1.137402,
    level: 6,
    text: `iommu: Default domain type: ${pt ? 'Passthrough (set via kernel command line)' : 'Translated '}`,
  });
}

/** Hardware autoload, then modules-load.d and /etc/modules, as udev and systemd-modules-load do. */
async function loadBootModules(sys: MachineSystem): Promise<void> {
  const m = sys.machine;
  const blacklist = new Set(
    (await readAll(sys, ['/etc/modprobe.d', '/lib/modprobe.d'], '.conf')).flatMap(parseBlacklist),
  );
  m.modules.length = 0;
  for (const def of registeredModules()) {
    if (def.autoload?.(m) && isAvailable(def, m) && !blacklist.has(def.name)) loadModule(m, sys.kernel, def.name);
  }
  const lists = await readAll(sys, ['/etc/modules-load.d', '/run/modules-load.d', '/lib/modules-load.d'], '.conf');
  lists.push(await sys.readFile('/etc/modules').catch(() => ''));
  const log = (message: string): void =>
    sys.journal.add({
      at: m.clock.now(),
      boot: sys.boot.count,
      ident: 'systemd-modules-load',
      pid: 412,
      unit: 'systemd-modules-load.service',
      message,
    });
  for (const name of lists.flatMap(parseModulesLoad)) {
    const r: LoadResult = loadModule(m, sys.kernel, name);
    if (r.ok) {
      if (r.loaded.length > 0) log(`Inserted module '${name.replace(/-/g, '_')}'`);
    } else if ('missing' in r) log(`Failed to find module '${name}'`);
    else log(`Failed to insert module '${r.failed}': ${r.failure.error}`);
  }
  m.revision++;
}

/** /run is a tmpfs and jammy empties /tmp at boot (tmpfiles.d/tmp.conf): both start empty. */
async function clearVolatile(sys: MachineSystem): Promise<void> {
  const fs = sys.shell.fsAs(0);
  for (const dir of ['/run', '/tmp']) {
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      // The lab's own bookkeeping and the login user's runtime directory (recreated at login) stay.
      if (name.startsWith('.lab-') || (dir === '/run' && name === 'user')) continue;
      await fs.rm(`${dir}/${name}`, { recursive: true, force: true }).catch(() => undefined);
    }
  }
}

/** PID 1 and the kernel threads ps shows first. */
function baseProcesses(sys: MachineSystem): void {
  const p = sys.processes;
  p.spawn({ argv: ['/sbin/init'], comm: 'systemd' });
  for (const k of ['kthreadd', 'rcu_gp', 'rcu_par_gp', 'slub_flushwq', 'netns'])
    p.spawn({ argv: [`[${k}]`], comm: k, ppid: 2 });
}

/**
 * The lab's initial boot: the machine has been up for INITIAL_UPTIME_MS; the scenario's state
 * stands (modules, files); daemons of enabled units start, oneshots are recorded as done.
 */
export async function coldBoot(sys: MachineSystem): Promise<void> {
  sys.bootIds[0] = sys.machine.bootId;
  await installBaseUnits(sys);
  if (sys.processes.list().length === 0) {
    sys.pinTime(sys.boot.at);
    baseProcesses(sys);
    sys.pinTime(undefined);
  }
  kernelBanner(sys);
  for (const mod of sys.machine.modules) {
    const def = registeredModules().find((d) => d.name === mod);
    for (const text of def?.messages?.(sys.machine) ?? []) sys.kernel.log(text);
  }
  await runHooks(sys, 'kernel', true);
  await runHooks(sys, 'modules', true);
  await runHooks(sys, 'network', true);
  await sys.systemd.bootUnits(true);
  await runHooks(sys, 'up', true);
}

let rebooting = new WeakSet<MachineSystem>();

/** Runs a full reboot; resolves once the machine is up again. */
export async function reboot(sys: MachineSystem): Promise<void> {
  if (rebooting.has(sys)) return;
  rebooting.add(sys);
  try {
    const m = sys.machine;
    sys.setPower('down');
    sys.journal.add({
      at: m.clock.now(),
      boot: sys.boot.count,
      ident: 'systemd-logind',
      pid: 880,
      message: 'System is rebooting.',
    });
    await sys.systemd.shutdown();
    await runHooks(sys, 'shutdown', false);
    sys.processes.reset(sys.boot.count + 1);
    await clearVolatile(sys);
    // Firmware, kernel and early boot; at 'max' the clock jumps. A lab closing meanwhile ends it.
    if (!(await m.clock.sleep(REBOOT_MS - 20_000))) return;
    sys.boot.count++;
    sys.boot.at = m.clock.now();
    m.bootId = uuid(m.seed, m.hostname, sys.boot.count);
    sys.bootIds[sys.boot.count] = m.bootId;
    sys.kernel.clear();
    baseProcesses(sys);
    kernelBanner(sys);
    await runHooks(sys, 'kernel', false);
    await loadBootModules(sys);
    await runHooks(sys, 'modules', false);
    await runHooks(sys, 'network', false);
    await sys.systemd.bootUnits(false);
    await runHooks(sys, 'up', false);
    if (!(await m.clock.sleep(20_000))) return;
    m.revision++;
    sys.setPower('up');
  } finally {
    rebooting.delete(sys);
  }
}

/** For tests: forget in-flight reboots (a lab that closed mid-reboot). */
export function resetRebootState(): void {
  rebooting = new WeakSet<MachineSystem>();
}

/**
 * What `reboot` does to the command that asked for it: the reboot starts, the SSH session is
 * dropped with the connection, and the command never reports an exit status (the client sees the
 * connection close, as with a real `sudo reboot`).
 */
export function requestReboot(sys: MachineSystem, ctx: ResolvedCommandContext): Promise<ExecResult> {
  const signal = ctx.signal;
  return new Promise<ExecResult>((resolve) => {
    const done = (): void => resolve({ stdout: '', stderr: '', exitCode: 0 });
    setImmediate(() => void reboot(sys).then(done, done));
    if (signal?.aborted) done();
    else signal?.addEventListener('abort', done, { once: true });
  });
}

/** Re-reads the per-boot modules (exported for `systemctl restart systemd-modules-load`-like uses and tests). */
export { loadBootModules };
