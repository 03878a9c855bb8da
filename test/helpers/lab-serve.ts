/** `l20-setup lab serve` as a child process (the built CLI), ready once it writes its inventory and says so. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { BIN } from './cli.js';

/**
 * Starts `lab serve ARGS --inventory-out INVENTORY`; resolves when it serves (rejects if it exits first). With
 * `netns`, inside that network namespace (`ip netns exec` execs node in place: the child's pid is the lab's).
 */
export async function serveLab(
  args: string[],
  inventory: string,
  env: NodeJS.ProcessEnv,
  netns?: string,
): Promise<ChildProcess> {
  const argv = [BIN, 'lab', 'serve', ...args, '--inventory-out', inventory];
  const lab = netns
    ? spawn('ip', ['netns', 'exec', netns, process.execPath, ...argv], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  lab.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  lab.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      if (existsSync(`${inventory}.ansible.ini`) && out.includes('serving; Ctrl-C to stop')) {
        clearInterval(poll);
        resolve();
      }
    }, 50);
    lab.once('exit', (code) => {
      clearInterval(poll);
      reject(new Error(`lab serve exited ${code}: ${out}`));
    });
  });
  return lab;
}

/** Stops a served lab with Ctrl-C and waits for it to exit. */
export async function stopLab(lab: ChildProcess | undefined): Promise<void> {
  if (!lab || lab.exitCode !== null) return;
  const exited = new Promise((r) => lab.once('exit', r));
  lab.kill('SIGINT');
  await exited;
}

/** OpenSSH with the config `lab serve` wrote; the script (if any) on its stdin. */
export function sshVia(
  inventory: string,
  env: NodeJS.ProcessEnv,
  args: string[],
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const argv = ['-F', `${inventory}.ssh_config`, '-o', 'BatchMode=yes', ...args];
    const child = execFile('ssh', argv, { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
    child.stdin!.end(stdin);
  });
}
