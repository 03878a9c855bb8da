/** `l20-setup lab serve`: simulated hosts until interrupted, with inventories for us, OpenSSH and Ansible. */
import { mkdirSync, writeFileSync, renameSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { dirname, resolve } from 'node:path';
import { UsageError } from './common.js';
import { showValue } from '../config/errors.js';
import { labInventory } from '../target.js';
import { writeInventoryFile } from '../config/store.js';
import { quoteWord, sshConfigPath } from '../transport/quote.js';

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
  return ansibleIniValue(
    [
      ...(keyInArgs ? [opt('IdentityFile', files.identityFile)] : []),
      opt('UserKnownHostsFile', files.knownHostsFile),
    ].join(' '),
  );
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

/**
 * `--address`: an address of one of this machine's (or network namespace's) own interfaces, or loopback. The
 * lab's servers accept anyone holding the lab's key, so they never listen on all interfaces (0.0.0.0, ::)
 * nor on an address that is not ours (which the OS would refuse less clearly).
 */
export function labListenAddress(address: string): string {
  const shown = showValue(address);
  if (isIP(address) === 0) {
    throw new UsageError(`--address ${shown}: expected an IPv4 or IPv6 address of a local interface`);
  }
  const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  if (address.startsWith('127.') || address === '::1' || own.includes(address)) return address;
  throw new UsageError(
    `--address ${shown}: not an address of this machine's interfaces (${own.join(', ') || 'none'}); ` +
      'the lab listens only on loopback or an address a local interface holds',
  );
}

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
}

export async function serveLab(options: {
  hosts: number;
  scenario: string;
  seed: number;
  speed?: number | 'max';
  inventoryOut?: string;
  load?: boolean;
  address?: string;
}): Promise<number> {
  const { startLab } = await import('../../lab/index.js');
  const lab = await startLab({
    hosts: options.hosts,
    scenario: options.scenario,
    seed: options.seed,
    ...(options.speed !== undefined ? { speed: options.speed } : {}),
    ...(options.address !== undefined ? { address: labListenAddress(options.address) } : {}),
  });
  const load = options.load ? await (await import('../../lab/load.js')).startLabLoad(lab) : undefined;
  const out = options.inventoryOut ? resolve(options.inventoryOut) : undefined;
  const dir = out ? `${out}.d` : resolve(`l20-lab-${process.pid}.d`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { config, files } = labInventory(lab, dir);
  const lines = lab.hosts.map(
    (h) =>
      `${h.name}  ssh -i ${quoteWord(files.identityFile)} -o ${quoteWord(`UserKnownHostsFile=${files.knownHostsFile}`)} -p ${h.port} ${h.user}@${h.address}   ${h.hostKeyFingerprint}`,
  );
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    await writeInventoryFile(out, config);
    writeAtomic(
      `${out}.ssh_config`,
      lab.hosts
        .map(
          (h) =>
            `Host ${h.name}\n  HostName ${h.address}\n  Port ${h.port}\n  User ${h.user}\n  IdentityFile ${sshConfigPath(files.identityFile)}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${sshConfigPath(files.knownHostsFile)}\n  StrictHostKeyChecking yes\n`,
        )
        .join('\n'),
    );
    writeAtomic(
      `${out}.ansible.ini`,
      `[l20]\n${lab.hosts.map((h) => `${h.name} ansible_host=${h.address} ansible_port=${h.port} ansible_user=${h.user} ${ansibleConnectionVars(files)}`).join('\n')}\n`,
    );
  }
  process.stdout.write(
    `l20-setup lab: ${lab.hosts.length} host(s), scenario ${options.scenario}, seed ${options.seed}\n${lines.join('\n')}\n`,
  );
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
