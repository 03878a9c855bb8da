/** `l20-setup lab serve`: simulated hosts until interrupted, with inventories for us, OpenSSH and Ansible. */
import { mkdirSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { labInventory, writeInventoryFile } from './target.js';
import { quoteWord } from './transport/quote.js';

/**
 * A path as an ssh_config value: double-quoted so spaces stay in it, `\` and `"` escaped (OpenSSH
 * splits config lines like a shell), `%` doubled because IdentityFile and UserKnownHostsFile expand %-tokens.
 */
export function sshConfigPath(path: string): string {
  return `"${path.replace(/%/g, '%%').replace(/[\\"]/g, '\\$&')}"`;
}

/** A value in Ansible's INI inventory, whose lines are split with Python's shlex (POSIX): double-quoted. */
export function ansibleIniValue(value: string): string {
  return `"${value.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * Ansible shell-splits ansible_ssh_common_args and passes each word to ssh, which reads `-o` values as
 * config lines: the path is quoted for ssh_config, that word for the shell split, the whole for the INI line.
 */
function ansibleSshArgs(files: { identityFile: string; knownHostsFile: string }, keyInArgs: boolean): string {
  const opt = (name: string, path: string) => `-o ${quoteWord(`${name}=${sshConfigPath(path)}`)}`;
  return ansibleIniValue([...(keyInArgs ? [opt('IdentityFile', files.identityFile)] : []), opt('UserKnownHostsFile', files.knownHostsFile)].join(' '));
}

/**
 * The connection variables of one host line. Ansible passes ansible_ssh_private_key_file to ssh as
 * `IdentityFile="PATH"` without escaping, which a path holding `"`, `\` or `%` breaks: such a key goes in
 * the common args instead, quoted like the known_hosts file.
 */
export function ansibleConnectionVars(files: { identityFile: string; knownHostsFile: string }): string {
  const keyInArgs = /["\\%]/.test(files.identityFile);
  return `${keyInArgs ? '' : `ansible_ssh_private_key_file=${ansibleIniValue(files.identityFile)} `}ansible_ssh_common_args=${ansibleSshArgs(files, keyInArgs)}`;
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

export async function serveLab(options: { hosts: number; scenario: string; seed: number; speed?: number | 'max'; inventoryOut?: string; load?: boolean }): Promise<number> {
  const { startLab } = await import('./lab/index.js');
  const lab = await startLab({ hosts: options.hosts, scenario: options.scenario, seed: options.seed, ...(options.speed !== undefined ? { speed: options.speed } : {}) });
  const load = options.load ? await (await import('./lab/load.js')).startLabLoad(lab) : undefined;
  const out = options.inventoryOut ? resolve(options.inventoryOut) : undefined;
  const dir = out ? `${out}.d` : resolve(`l20-lab-${process.pid}.d`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { config, files } = labInventory(lab, dir);
  const lines = lab.hosts.map((h) => `${h.name}  ssh -i ${quoteWord(files.identityFile)} -o ${quoteWord(`UserKnownHostsFile=${files.knownHostsFile}`)} -p ${h.port} ${h.user}@${h.address}   ${h.hostKeyFingerprint}`);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    await writeInventoryFile(out, config);
    writeAtomic(
      `${out}.ssh_config`,
      lab.hosts.map((h) => `Host ${h.name}\n  HostName ${h.address}\n  Port ${h.port}\n  User ${h.user}\n  IdentityFile ${sshConfigPath(files.identityFile)}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${sshConfigPath(files.knownHostsFile)}\n  StrictHostKeyChecking yes\n`).join('\n'),
    );
    writeAtomic(
      `${out}.ansible.ini`,
      `[l20]\n${lab.hosts.map((h) => `${h.name} ansible_host=${h.address} ansible_port=${h.port} ansible_user=${h.user} ${ansibleConnectionVars(files)}`).join('\n')}\n`,
    );
  }
  process.stdout.write(`l20-setup lab: ${lab.hosts.length} host(s), scenario ${options.scenario}, seed ${options.seed}\n${lines.join('\n')}\n`);
  if (out) process.stdout.write(`inventory: ${out}  (also ${out}.ssh_config, ${out}.ansible.ini)\n`);
  process.stdout.write('serving; Ctrl-C to stop\n');
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await load?.stop();
  await lab.close();
  return 0;
}
