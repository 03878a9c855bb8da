/** The ssh_config corpus of test/fixtures/ssh-config, installed as $HOME/.ssh of a fresh HOME for real `ssh`. */
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import {
  defaultSshConfigContext,
  runInShell,
  type SshConfigContext,
} from '../../../src/transport/ssh-config-context.js';

export const CORPUS = join(__dirname, '..', '..', 'fixtures', 'ssh-config');

/** The corpus trees (one directory each, with `config` and `aliases`), sorted. */
export function corpusTrees(): string[] {
  return readdirSync(CORPUS)
    .filter((d) => statSync(join(CORPUS, d)).isDirectory())
    .sort();
}

export function corpusAliases(tree: string): string[] {
  return readFileSync(join(CORPUS, tree, 'aliases'), 'utf8')
    .split('\n')
    .filter((a) => a !== '');
}

/**
 * A copy of one tree as $HOME/.ssh of a fresh HOME, with the modes ssh insists on for included files; the
 * directory is added to `temps` for the caller to remove.
 */
export function installTree(tree: string, temps: string[]): string {
  const home = mkdtempSync(join(tmpdir(), 'l20-sshcfg-'));
  temps.push(home);
  const dotSsh = join(home, '.ssh');
  cpSync(join(CORPUS, tree), dotSsh, { recursive: true });
  const fixModes = (dir: string): void => {
    chmodSync(dir, 0o700);
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) fixModes(p);
      else chmodSync(p, 0o644);
    }
  };
  fixModes(dotSsh);
  mkdirSync(join(home, 'keys'), { recursive: true });
  return home;
}

export function removeAll(temps: string[]): void {
  temps.forEach((d) => rmSync(d, { recursive: true, force: true }));
}

/**
 * The environment ssh runs with for an installed tree (HOME the tree, Match exec through /bin/sh) and the
 * resolver context that sees what ssh sees: `~` and %d are the passwd home; only Include's glob uses $HOME.
 */
export function corpusContext(home: string): { env: Record<string, string>; ctx: SshConfigContext } {
  const account = userInfo();
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    SHELL: '/bin/sh',
    LC_ALL: 'C',
    L20_KEYDIR: join(home, 'keys'),
  };
  const ctx: SshConfigContext = {
    ...defaultSshConfigContext(),
    homeDir: account.homedir,
    localUser: account.username,
    localHostName: hostname(),
    uid: account.uid,
    env,
    runMatchExec: (command) => runInShell(command, env),
  };
  return { env, ctx };
}
