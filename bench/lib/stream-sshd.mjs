// A throwaway OpenSSH sshd on 127.0.0.1 for bench/stream.mjs: two ports (two inventory hosts), a fresh host key
// and client key in a temp dir, logins only for the current user (no root needed: sshd runs as whoever runs the
// bench). Writes our inventory (host key pinned, host key verification on), a known_hosts and an ssh_config for
// the OpenSSH baseline. stop() kills sshd and every session it forked, and removes the temp dir.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const SSHD = '/usr/sbin/sshd';
export const HOST_NAMES = ['alpha', 'bravo'];

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port) {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** Pids of `root` and every descendant (from /proc), children first so a parent cannot re-fork them. */
function tree(root) {
  const children = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  const out = [];
  const walk = (pid) => {
    for (const c of children.get(pid) ?? []) walk(c);
    out.push(pid);
  };
  walk(root);
  return out;
}

export async function startSshd() {
  const user = userInfo().username;
  const dir = mkdtempSync(join(tmpdir(), 'l20-stream-sshd-'));
  chmodSync(dir, 0o755);
  const hostKey = join(dir, 'host_ed25519');
  const clientKey = join(dir, 'client_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'l20-stream-host', '-f', hostKey]);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'l20-stream-client', '-f', clientKey]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`), { mode: 0o644 });
  const fingerprint = execFileSync('ssh-keygen', ['-lf', `${hostKey}.pub`], { encoding: 'utf8' }).split(/\s+/)[1];
  const [keyType, keyBlob] = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/);
  const ports = [await freePort(), await freePort()];
  const config = [
    'ListenAddress 127.0.0.1',
    ...ports.map((p) => `Port ${p}`),
    `HostKey ${hostKey}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    // The keys live under /tmp (world-writable), which StrictModes refuses; PAM needs root.
    'StrictModes no',
    'UsePAM no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    `AllowUsers ${user}`,
    'MaxSessions 20',
    'MaxStartups 100',
    'LogLevel ERROR',
    'PrintMotd no',
    'PrintLastLog no',
    'X11Forwarding no',
  ].join('\n');
  const configPath = join(dir, 'sshd_config');
  writeFileSync(configPath, `${config}\n`, { mode: 0o644 });
  // Run as root, sshd wants its privilege separation directory.
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  execFileSync(SSHD, ['-t', '-f', configPath]);
  const child = spawn(SSHD, ['-D', '-e', '-f', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${stderr}`);
    if ((await accepts(ports[0])) && (await accepts(ports[1]))) break;
    if (Date.now() > deadline) throw new Error(`sshd did not listen: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(knownHosts, ports.map((p) => `[127.0.0.1]:${p} ${keyType} ${keyBlob}\n`).join(''), { mode: 0o600 });
  const inventory = join(dir, 'inventory.json');
  writeFileSync(
    inventory,
    `${JSON.stringify(
      {
        version: 1,
        hosts: HOST_NAMES.map((name, i) => ({
          name,
          address: '127.0.0.1',
          port: ports[i],
          user,
          role: i === 0 ? 'head' : 'worker',
          auth: { method: 'identityFile', path: clientKey },
          knownHostsFile: knownHosts,
          hostKeyFingerprint: fingerprint,
        })),
      },
      null,
      2,
    )}\n`,
    { mode: 0o600 },
  );
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(
    sshConfig,
    HOST_NAMES.map((name, i) =>
      [
        `Host ${name}`,
        '  HostName 127.0.0.1',
        `  Port ${ports[i]}`,
        `  User ${user}`,
        `  IdentityFile ${clientKey}`,
        '  IdentitiesOnly yes',
        `  UserKnownHostsFile ${knownHosts}`,
        '  StrictHostKeyChecking yes',
        '  BatchMode yes',
        '',
      ].join('\n'),
    ).join(''),
    { mode: 0o600 },
  );

  return {
    dir,
    ports,
    user,
    inventory,
    sshConfig,
    fingerprint,
    async stop() {
      const pids = child.pid ? tree(child.pid) : [];
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
      await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
