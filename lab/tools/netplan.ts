/**
 * `netplan` 0.106 (jammy): `get [KEY]`, `generate`, `apply`, `try` (netplan/cli/commands/*.py,
 * source-derived apart from `netplan get`'s layout, which follows the corpus sample).
 *
 * - get: the merged configuration (netplan-config.ts); `--root-dir DIR` reads DIR/{lib,etc,run}/netplan.
 * - generate: validates; errors exit 1; GLib warnings (world-readable files, `gateway4`) on stderr;
 *   writes the networkd/NetworkManager files under the root (netplan-generate.ts).
 * - apply: generate, then renders the configuration into the machine (netplan-apply.ts); takes ≈3 s.
 * - try (try_command.py, terminal.py): refuses a configuration whose bonds or bridges have
 *   `parameters` — prints `<bond>: reverting custom parameters for bridges and bonds is not
 *   supported`, a blank line, `Please carefully review the configuration and use 'netplan apply'
 *   directly.` and exits 78 (EX_CONFIG, R22). Without a terminal (an exec channel without a pty)
 *   tcgetattr fails before anything is applied: `An error occured: (25, 'Inappropriate ioctl for
 *   device')`, `Reverting.`. On a terminal it applies, counts down, and with no ENTER before the
 *   timeout (default 120 s) restores the previous files and re-applies them.
 * apply and generate need root (generate writes under /run); the non-root wording is approximate.
 */
import { decodeBytesToUtf8, type IFileSystem } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import type { Machine } from '../model/types.js';
import { fail, getopt, has, value } from '../shell/args.js';
import { applyNetplan } from './netplan-apply.js';
import { notifyManagement } from './mgmt-path.js';
import { loadNetplan, netplanGet, readNetplanFiles, type NetplanConfig } from './netplan-config.js';
import { renderBackends } from './netplan-generate.js';
import type { Tool } from './types.js';

/** Modelled duration of `netplan apply` (docs/STAGES.md §4.5). */
export const APPLY_MS = 3000;
const EX_CONFIG = 78;

const pids = new WeakMap<Machine, number>();

/** A fresh PID per GLib program run (generate runs as its own process). */
function nextPid(m: Machine): number {
  const p = (pids.get(m) ?? 2100 + ((m.index * 137) % 700)) + 3;
  pids.set(m, p);
  return p;
}

function glibTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** GLib's `** (prog:PID): WARNING **: HH:MM:SS.mmm: text` lines for the config's warnings. */
export function glibWarnings(m: Machine, cfg: NetplanConfig, prog: string): string {
  if (cfg.warnings.length === 0) return '';
  const pid = nextPid(m);
  return cfg.warnings.map((w) => `\n** (${prog}:${pid}): WARNING **: ${glibTime(m.clock.now())}: ${w}\n`).join('');
}

export async function loadConfig(fs: IFileSystem, root = ''): Promise<NetplanConfig> {
  return loadNetplan(await readNetplanFiles(fs, root));
}

/**
 * Renders the current files into the machine as `netplan apply` would (also used at boot and by
 * the rollback script through the command). Returns the validation errors, if any (nothing applied).
 */
export async function applyFromFiles(
  m: Machine,
  cluster: Cluster,
  fs: IFileSystem,
): Promise<{ cfg: NetplanConfig; errors: string[] }> {
  const cfg = await loadConfig(fs);
  if (cfg.errors.length > 0) return { cfg, errors: cfg.errors };
  applyNetplan(m, cluster, cfg);
  notifyManagement(m);
  return { cfg, errors: [] };
}

/** Replaces what an earlier generate wrote under `root` with the configuration's backend files. */
async function writeBackends(fs: IFileSystem, root: string, cfg: NetplanConfig): Promise<void> {
  const dirs: Array<[string, string]> = [
    ['run/systemd/network', '10-netplan-'],
    ['run/NetworkManager/system-connections', 'netplan-'],
  ];
  for (const [dir, prefix] of dirs) {
    let names: string[];
    try {
      names = await fs.readdir(`${root}/${dir}`);
    } catch {
      continue;
    }
    for (const n of names.filter((x) => x.startsWith(prefix))) await fs.rm(`${root}/${dir}/${n}`);
  }
  for (const [path, text] of renderBackends(cfg)) {
    const abs = `${root}/${path}`;
    await fs.mkdir(abs.slice(0, abs.lastIndexOf('/')), { recursive: true });
    await fs.writeFile(abs, text);
  }
}

const USAGE = 'usage: /usr/sbin/netplan  [-h] [--debug]  ...\n';

/** Files under /etc/netplan before `try` changed anything, to restore on timeout. */
async function snapshot(fs: IFileSystem): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of await readNetplanFiles(fs)) out.set(f.path, f.text);
  return out;
}

export const netplan: Tool = {
  name: 'netplan',
  path: '/usr/sbin/netplan',
  packages: ['netplan.io'],
  async run(args, env) {
    const m = env.machine;
    const fs = env.ctx.fs;
    const words = args.filter((a) => a !== '--debug');
    const verb = words[0];
    const p = getopt(words.slice(1), 'h', {
      'root-dir': true,
      help: false,
      timeout: true,
      'config-file': true,
      state: true,
      mapping: true,
    });
    if (!verb) return fail(2, `${USAGE}/usr/sbin/netplan: error: the following arguments are required: subcommand\n`);
    if (p.error) return fail(2, `${USAGE}/usr/sbin/netplan: error: unrecognized arguments: --${p.error.option}\n`);
    const root = value(p, 'root-dir') ?? '';
    switch (verb) {
      case 'get': {
        const cfg = await loadConfig(fs, root);
        if (cfg.errors.length > 0) return fail(1, `${cfg.errors.join('\n')}\n`);
        return { stdout: netplanGet(cfg, p.operands[0]), stderr: glibWarnings(m, cfg, 'process'), exitCode: 0 };
      }
      case 'generate': {
        if (!env.root && !root) return fail(1, `${glibNoPermission(m)}`);
        const cfg = await loadConfig(fs, root);
        const warn = glibWarnings(m, cfg, 'generate');
        if (cfg.errors.length > 0) return fail(1, `${warn}${cfg.errors.join('\n')}\n`);
        await writeBackends(fs, root, cfg);
        return { stdout: '', stderr: warn, exitCode: 0 };
      }
      case 'apply': {
        if (!env.root) return fail(1, glibNoPermission(m));
        const cfg = await loadConfig(fs);
        const warn = glibWarnings(m, cfg, 'generate');
        if (cfg.errors.length > 0) return fail(1, `${warn}${cfg.errors.join('\n')}\n`);
        await writeBackends(fs, '', cfg);
        applyNetplan(m, env.cluster, cfg);
        notifyManagement(m);
        await m.clock.sleep(APPLY_MS, env.ctx.signal);
        return { stdout: '', stderr: warn, exitCode: 0 };
      }
      case 'try': {
        const cfg = await loadConfig(fs);
        // is_revertable() runs first and refuses bond/bridge parameters (R22).
        const refused = cfg.netdefs.filter((n) => (n.type === 'bond' || n.type === 'bridge') && n.hasParameters);
        if (refused.length > 0) {
          const lines = refused
            .map((n) => `${n.name}: reverting custom parameters for bridges and bonds is not supported\n`)
            .join('');
          return {
            stdout: `${lines}\nPlease carefully review the configuration and use 'netplan apply' directly.\n`,
            stderr: '',
            exitCode: EX_CONFIG,
          };
        }
        if (cfg.errors.length > 0) return fail(1, `${cfg.errors.join('\n')}\n`);
        if (!env.ctx.env.get('TERM')) {
          // Terminal(stdin) calls tcgetattr before anything is backed up or applied; the error path
          // "reverts", which re-applies what the files say.
          applyNetplan(m, env.cluster, cfg);
          notifyManagement(m);
          return {
            stdout: "\nAn error occured: (25, 'Inappropriate ioctl for device')\n\nReverting.\n",
            stderr: '',
            exitCode: 0,
          };
        }
        const timeout = Number(value(p, 'timeout') ?? '120');
        const before = await snapshot(fs);
        applyNetplan(m, env.cluster, cfg);
        notifyManagement(m);
        let out =
          'Do you want to keep these settings?\n\n\nPress ENTER before the timeout to accept the new configuration\n\n\n';
        if (decodeBytesToUtf8(env.ctx.stdin).includes('\n'))
          return {
            stdout: `${out}Changes will revert in ${String(timeout).padStart(2)} seconds\r\nConfiguration accepted.\n`,
            stderr: '',
            exitCode: 0,
          };
        for (let left = timeout; left > 0; left--) {
          out += `Changes will revert in ${String(left).padStart(2)} seconds\r`;
          if (!(await m.clock.sleep(1000, env.ctx.signal))) return { stdout: out, stderr: '', exitCode: 130 };
        }
        // Reverted: the files as they were, applied again.
        for (const f of await readNetplanFiles(fs)) if (!before.has(f.path)) await fs.rm(f.path);
        for (const [path, text] of before) await fs.writeFile(path, text);
        await applyFromFiles(m, env.cluster, fs);
        return { stdout: `${out}\nReverting.\n`, stderr: '', exitCode: 0 };
      }
      default:
        if (has(p, 'h', 'help')) return { stdout: USAGE, stderr: '', exitCode: 0 };
        return fail(2, `${USAGE}/usr/sbin/netplan: error: argument : invalid choice: '${verb}'\n`);
    }
  },
};

/** A non-root generate cannot write the backend configuration under /run (approximate wording). */
function glibNoPermission(m: Machine): string {
  return `\n** (generate:${nextPid(m)}): ERROR **: ${glibTime(m.clock.now())}: Failed to create directory /run/systemd/network: Permission denied\n`;
}
