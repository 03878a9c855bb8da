/**
 * A real OpenSSH sshd on loopback for the transport's reliability tests (test/sshd/), so SshHost is checked
 * against the server it meets in production rather than only against ssh2's Server.
 *
 *   const sshd = await startSshd();                       // in beforeAll
 *   const host = new SshHost(sshd.hostOptions(sshd.users.nopw));
 *   ...
 *   await sshd.stop();                                    // in afterAll (close your hosts first)
 *
 * What it sets up (needs root and /usr/sbin/sshd, sudo, visudo: .ci/run installs them; there is no skipping):
 * - Two local accounts, created when missing and reused otherwise: `l20t-nopw` (passwordless sudo) and `l20t-pw`
 *   (sudo asks for its password). Their sudo rules live in /etc/sudoers.d/l20t-test-users (checked with
 *   `visudo -cf`, mode 0440). l20t-pw gets a new random password when a test first reads `users.pwPassword`,
 *   set through chpasswd's stdin and kept only in memory; reading it in two test files at once would have them
 *   replace each other's, so tests that sudo with the password belong in one file (test/sshd/sudo.test.ts).
 * - A temp dir (mode 0755: sshd reads authorized_keys with the user's privileges) holding a fresh ed25519 host
 *   key (or one fresh key of each type `startSshd({ hostKeyTypes })` names), a fresh ed25519 client key
 *   (0600, for this process only), authorized_keys with that client key for both users (AuthorizedKeysFile
 *   points here, hence StrictModes no: /tmp is world-writable), a known_hosts file with the first host key,
 *   the sshd_config and the server log (LogLevel VERBOSE, sshd -E).
 * - sshd on 127.0.0.1 and a free port (or, with `netns`, inside a network namespace on its `listenAddress`, port 22
 *   by default): pubkey authentication only, MaxSessions 10, UsePAM yes (works here:
 *   pam_loginuid does not refuse the session), logins limited to the two accounts.
 * - `l20t-cli`: a second password-sudo account with its own password (`users.cliPassword`), for the CLI secrets test.
 * - Certificates, on request: `hostCertificate` has a CA sign every host key (HostCertificate), `trustedUserCAKeys`
 *   lets user certificates log in (TrustedUserCAKeys), `authorizedKeys: false` turns authorized_keys off
 *   (`AuthorizedKeysFile none`) so that only a certificate does; newCertificateAuthority / signKey make them.
 * The accounts and the sudoers file stay after stop(); the temp dir and every sshd process go.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SshHostOptions } from '../../src/transport/ssh-options.js';
import { isAlive, processTree, waitFor } from './processes.js';

export { listProcesses, processTree, uidOf, waitFor, type ProcessInfo } from './processes.js';

export const SSHD = '/usr/sbin/sshd';
export const NOPW_USER = 'l20t-nopw';
export const PW_USER = 'l20t-pw';
/** A second password-sudo account, for the CLI secrets test (its own password, so it never races l20t-pw's). */
export const CLI_USER = 'l20t-cli';
const SUDOERS_FILE = '/etc/sudoers.d/l20t-test-users';

export interface SshdUsers {
  /** Passwordless sudo. */
  nopw: string;
  /** sudo needs `pwPassword`. */
  pw: string;
  /** Generated and set on first read; never written to a file or passed in argv. */
  readonly pwPassword: string;
  /** sudo needs `cliPassword` (set on first read, like pwPassword). */
  cli: string;
  readonly cliPassword: string;
}

export type HostKeyType = 'ed25519' | 'ecdsa' | 'rsa';

export interface SshdHostKey {
  type: HostKeyType;
  /** `SHA256:…` exactly as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  /** The .pub line (`ssh-ed25519 AAAA… comment`). */
  publicLine: string;
  path: string;
  /** The host certificate (`<path>-cert.pub`) when `hostCertificate` was asked for. */
  certificatePath?: string;
}

/** An SSH CA made with ssh-keygen: a key pair that signs host and user keys. */
export interface CertificateAuthority {
  keyPath: string;
  publicKeyPath: string;
  /** The .pub line (`ssh-ed25519 AAAA… comment`), as a `@cert-authority` line carries it. */
  publicLine: string;
}

export interface SshdOptions {
  /** Host key types sshd gets, each a fresh key (default ['ed25519']); the first is `hostKeyFingerprint`'s. */
  hostKeyTypes?: readonly HostKeyType[];
  /** Accounts created (like the standard ones, without sudo rules: the test writes its own) and allowed to log in. */
  extraUsers?: readonly string[];
  /** Lines appended to sshd_config (`Match User x` blocks go here: they must come last). */
  extraConfig?: readonly string[];
  /** Every host key is signed by this CA for these principals (ssh-keygen -h -n) and served as HostCertificate. */
  hostCertificate?: { ca: CertificateAuthority; principals: readonly string[] };
  /** TrustedUserCAKeys: user certificates this CA signed for the account's name log in. */
  trustedUserCAKeys?: CertificateAuthority;
  /** false: `AuthorizedKeysFile none`, so only a certificate logs in (default: the harness's authorized_keys). */
  authorizedKeys?: boolean;
  /**
   * Run sshd inside this network namespace (`ip netns exec`; test/helpers/netns-topology.ts makes them), listening
   * on `listenAddress` (default 127.0.0.1) and `port` (default: a free port, or 22 inside a namespace: its own).
   */
  netns?: string;
  listenAddress?: string;
  port?: number;
}

export interface Sshd {
  /** 127.0.0.1 unless `listenAddress` said otherwise. */
  readonly address: string;
  readonly port: number;
  /** `SHA256:…` exactly as `ssh-keygen -lf` prints it; the new key's after rotateHostKey(). */
  readonly hostKeyFingerprint: string;
  /** The host key's .pub line (`ssh-ed25519 AAAA… comment`); the new key's after rotateHostKey(). */
  readonly hostPublicKeyLine: string;
  /** Every host key, in `hostKeyTypes` order (the first is the one above); new ones after rotateHostKey(). */
  readonly hostKeys: readonly SshdHostKey[];
  /** A known_hosts file (0600) listing the first host key sshd started with; rotateHostKey() leaves it alone. */
  readonly knownHostsPath: string;
  /** The ed25519 client key both users accept. */
  readonly clientKeyPath: string;
  readonly users: SshdUsers;
  /** The sshd log (sshd -E, LogLevel VERBOSE): connections, "Accepted publickey …", session starts and closes. */
  readonly logPath: string;
  /** The harness's temp dir (removed by stop()). */
  readonly dir: string;
  /** The listening sshd's pid; its descendants are the per-connection processes and the users' commands. */
  readonly pid: number;
  readLog(): string;
  /** SshHost options for `user` on this server: the client key and knownHostsPath; `extra` overrides. */
  hostOptions(user: string, extra?: Partial<SshHostOptions>): SshHostOptions;
  /**
   * Restarts sshd on the same port with new host keys, as a reinstalled server would come back; the old
   * sshd's connections are cut.
   */
  rotateHostKey(): Promise<void>;
  /** Kills sshd and its connections' processes (as when the server dies), keeping its keys and config. */
  kill(): Promise<void>;
  /** Starts sshd again after kill(): same port, same host keys. */
  restart(): Promise<void>;
  /** Kills sshd and its connections' processes and removes the temp dir. */
  stop(): Promise<void>;
}

function run(cmd: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(input !== undefined ? { input } : {}),
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(e.stderr ?? '').trim() || e.message}`, { cause: err });
  }
}

function userExists(user: string): boolean {
  try {
    execFileSync('id', ['-u', user], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Test files start their harnesses in parallel workers, so two may create the same account at once, and the
 * shadow tools refuse while another holds /etc/passwd's lock: retry until the account is there.
 */
async function ensureUser(user: string): Promise<void> {
  let lastError = '';
  try {
    await waitFor(() => {
      if (userExists(user)) return true;
      try {
        run('useradd', ['--create-home', '--shell', '/bin/bash', user]);
      } catch (err) {
        lastError = (err as Error).message;
      }
      return userExists(user);
    }, `account ${user} to exist`);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last error: ${lastError}`, { cause: err });
  }
}

/**
 * An account that can log in with a key: useradd leaves the password field '!', which sshd treats as a locked
 * account unless PAM decides; '*' only rules out passwords. A password already set is left alone (another file's
 * test may be using it).
 */
async function ensureKeyLoginUser(user: string): Promise<void> {
  await ensureUser(user);
  const field =
    readFileSync('/etc/shadow', 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${user}:`))
      ?.split(':')[1] ?? '';
  if (field.startsWith('!')) run('usermod', ['-p', '*', user]);
}

/** Both accounts and their sudo rules. */
async function ensureUsers(): Promise<void> {
  for (const user of [NOPW_USER, PW_USER, CLI_USER]) await ensureKeyLoginUser(user);

  const rules =
    '# l20-setup real-sshd tests (test/helpers/sshd.ts): throwaway loopback accounts.\n' +
    `${NOPW_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n` +
    `${PW_USER} ALL=(ALL:ALL) ALL\n` +
    `Defaults:${PW_USER} lecture=never\n` +
    `${CLI_USER} ALL=(ALL:ALL) ALL\n` +
    `Defaults:${CLI_USER} lecture=never\n`;
  let current: string | undefined;
  try {
    current = readFileSync(SUDOERS_FILE, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== rules) {
    // sudo ignores names with a dot, so the candidate is inert until checked and renamed into place.
    const candidate = `${SUDOERS_FILE}.${process.pid}.tmp`;
    writeFileSync(candidate, rules, { mode: 0o440 });
    try {
      run('visudo', ['-cf', candidate]);
      chmodSync(candidate, 0o440);
      renameSync(candidate, SUDOERS_FILE);
    } finally {
      rmSync(candidate, { force: true });
    }
  }
}

function newPwPassword(user = PW_USER): string {
  const password = randomBytes(18).toString('base64url');
  run('chpasswd', [], `${user}:${password}\n`);
  return password;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function acceptsTcp(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host, port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

/** TERM, then KILL whatever is still there after 5 s. */
async function killAll(pids: readonly number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  try {
    await waitFor(() => pids.every((p) => !isAlive(p)), 'sshd processes to exit', 5000);
  } catch {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await waitFor(() => pids.every((p) => !isAlive(p)), 'sshd processes to die after SIGKILL', 5000);
  }
}

function opensshVersion(): number {
  const out = (() => {
    try {
      return execFileSync(SSHD, ['-V'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      return String((err as { stderr?: string }).stderr ?? '');
    }
  })();
  const m = /OpenSSH_(\d+)\.(\d+)/.exec(out);
  return m ? Number(m[1]) + Number(m[2]) / 100 : 0;
}

/** A fresh ed25519 CA key pair `dir/name` (no passphrase). */
export function newCertificateAuthority(dir: string, name: string): CertificateAuthority {
  const keyPath = join(dir, name);
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `l20t-${name}`, '-f', keyPath]);
  const publicKeyPath = `${keyPath}.pub`;
  return { keyPath, publicKeyPath, publicLine: readFileSync(publicKeyPath, 'utf8').trim() };
}

/**
 * Signs `publicKeyPath` with `ca` (ssh-keygen -s), a host certificate with `host`, for `principals`; returns the
 * certificate's path (`<key>-cert.pub`, where ssh and sshd look for it).
 */
export function signKey(
  ca: CertificateAuthority,
  publicKeyPath: string,
  opts: { principals: readonly string[]; host?: boolean; id?: string },
): string {
  const id = opts.id ?? `l20t-${opts.host ? 'host' : 'user'}`;
  run('ssh-keygen', [
    '-q',
    '-s',
    ca.keyPath,
    '-I',
    id,
    ...(opts.host ? ['-h'] : []),
    '-n',
    opts.principals.join(','),
    publicKeyPath,
  ]);
  return publicKeyPath.replace(/\.pub$/, '-cert.pub');
}

function newHostKey(dir: string, type: HostKeyType, opts: SshdOptions = {}): SshdHostKey {
  const path = join(dir, `ssh_host_${type}_key`);
  rmSync(path, { force: true });
  rmSync(`${path}.pub`, { force: true });
  run('ssh-keygen', ['-q', '-t', type, '-N', '', '-C', 'l20t-sshd-host', '-f', path]);
  const fingerprint = run('ssh-keygen', ['-lf', `${path}.pub`]).split(/\s+/)[1] ?? '';
  if (!fingerprint.startsWith('SHA256:'))
    throw new Error(`ssh-keygen -lf printed no SHA256 fingerprint for ${path}.pub`);
  const key: SshdHostKey = { type, fingerprint, publicLine: readFileSync(`${path}.pub`, 'utf8').trim(), path };
  if (opts.hostCertificate) {
    const { ca, principals } = opts.hostCertificate;
    key.certificatePath = signKey(ca, `${path}.pub`, { principals, host: true });
  }
  return key;
}

function sshdConfig(dir: string, port: number, hostKeys: readonly SshdHostKey[], opts: SshdOptions = {}): string {
  const lines = [
    '# Written by test/helpers/sshd.ts for one test run.',
    `ListenAddress ${opts.listenAddress ?? '127.0.0.1'}`,
    `Port ${port}`,
    ...hostKeys.map((k) => `HostKey ${k.path}`),
    ...hostKeys.flatMap((k) => (k.certificatePath ? [`HostCertificate ${k.certificatePath}`] : [])),
    ...(opts.trustedUserCAKeys ? [`TrustedUserCAKeys ${opts.trustedUserCAKeys.publicKeyPath}`] : []),
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${opts.authorizedKeys === false ? 'none' : join(dir, 'authorized_keys')}`,
    // The keys file sits under /tmp (world-writable), which StrictModes would refuse.
    'StrictModes no',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM yes',
    'PermitRootLogin no',
    `AllowUsers ${[NOPW_USER, PW_USER, CLI_USER, ...(opts.extraUsers ?? [])].join(' ')}`,
    'MaxSessions 10',
    'LogLevel VERBOSE',
    'PrintMotd no',
    'X11Forwarding no',
  ];
  // OpenSSH 9.8+ shuts a source address out for a while after "crashes" (a killed session process, which
  // the connection-loss test does on purpose) and failed logins; every test here comes from 127.0.0.1.
  if (opensshVersion() >= 9.08) lines.push('PerSourcePenalties no');
  lines.push(...(opts.extraConfig ?? []));
  return `${lines.join('\n')}\n`;
}

/**
 * Starts sshd and resolves once it listens: its port accepts TCP connections, or, inside a network namespace
 * (which this process may have no route into), sshd logs that it listens. Rejects with sshd's own words if it
 * exits. `ip netns exec` execs sshd in place, so the child's pid is sshd's.
 */
async function launch(
  configPath: string,
  logPath: string,
  port: number,
  opts: SshdOptions = {},
): Promise<ChildProcess> {
  run(SSHD, ['-t', '-f', configPath]); // config errors, with sshd's message
  const argv = [SSHD, '-D', '-e', '-f', configPath, '-E', logPath];
  const logBefore = readLogFile(logPath).length; // a restart (rotateHostKey) appends to the same log
  const [cmd, ...args] = opts.netns ? ['ip', 'netns', 'exec', opts.netns, ...argv] : argv;
  const child = spawn(cmd as string, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const address = opts.listenAddress ?? '127.0.0.1';
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited: string | undefined;
  child.once(
    'exit',
    (code, signal) =>
      (exited = `sshd exited (${code ?? signal}) before listening: ${stderr.trim()} ${readLogFile(logPath).trim()}`),
  );
  const listening = `Server listening on ${address} port ${port}.`;
  await waitFor(
    async () => {
      if (exited) throw new Error(exited);
      return opts.netns ? readLogFile(logPath).slice(logBefore).includes(listening) : acceptsTcp(port, address);
    },
    `sshd to listen on ${address}:${port}${opts.netns ? ` in network namespace ${opts.netns}` : ''}`,
  );
  return child;
}

/** sshd -E ends its lines with CRLF; tests match on whole lines. */
function readLogFile(path: string): string {
  try {
    return readFileSync(path, 'utf8').replace(/\r\n/g, '\n');
  } catch {
    return '';
  }
}

export async function startSshd(opts: SshdOptions = {}): Promise<Sshd> {
  const hostKeyTypes = opts.hostKeyTypes ?? ['ed25519'];
  if (hostKeyTypes.length === 0) throw new Error('startSshd: hostKeyTypes must name at least one key type');
  if (!existsSync(SSHD) || process.getuid?.() !== 0) {
    throw new Error(
      `the real-sshd tests need ${SSHD} and root (found: sshd ${existsSync(SSHD) ? 'present' : 'missing'}, uid ${process.getuid?.()}): ` +
        '.ci/run installs openssh-server and sudo; run as root',
    );
  }
  for (const tool of ['/usr/bin/sudo', '/usr/sbin/visudo']) {
    if (!existsSync(tool)) throw new Error(`${tool} is missing: .ci/run installs openssh-server and sudo; run as root`);
  }
  await ensureUsers();
  for (const user of opts.extraUsers ?? []) await ensureKeyLoginUser(user);
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // privilege separation dir; sshd refuses to start without it

  const dir = mkdtempSync(join(tmpdir(), 'l20-sshd-'));
  chmodSync(dir, 0o755);
  const clientKeyPath = join(dir, 'client_ed25519');
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'l20t-sshd-client', '-f', clientKeyPath]);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${clientKeyPath}.pub`), { mode: 0o644 });
  chmodSync(join(dir, 'authorized_keys'), 0o644);

  const port = opts.port ?? (opts.netns ? 22 : await freePort());
  const address = opts.listenAddress ?? '127.0.0.1';
  const logPath = join(dir, 'sshd.log');
  const configPath = join(dir, 'sshd_config');
  const newHostKeys = () => hostKeyTypes.map((type) => newHostKey(dir, type, opts));
  let keys = newHostKeys();
  const firstKey = () => keys[0] as SshdHostKey;
  let pwPassword: string | undefined;
  let cliPassword: string | undefined;
  const knownHostsPath = join(dir, 'known_hosts');
  const [keyType, keyBlob] = firstKey().publicLine.split(/\s+/);
  const knownName = port === 22 ? address : `[${address}]:${port}`;
  writeFileSync(knownHostsPath, `${knownName} ${keyType} ${keyBlob}\n`, { mode: 0o600 });
  writeFileSync(configPath, sshdConfig(dir, port, keys, opts), { mode: 0o644 });

  let child: ChildProcess;
  try {
    child = await launch(configPath, logPath, port, opts);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // A worker that dies without afterAll must not leave sshd listening.
  const killOnExit = () => {
    try {
      child.kill('SIGKILL');
    } catch {
      // gone
    }
  };
  process.once('exit', killOnExit);

  const stopServer = async () => {
    const pid = child.pid;
    if (pid === undefined) return;
    await killAll(processTree(pid).map((p) => p.pid));
  };

  const sshd: Sshd = {
    address,
    port,
    get hostKeyFingerprint() {
      return firstKey().fingerprint;
    },
    get hostPublicKeyLine() {
      return firstKey().publicLine;
    },
    get hostKeys() {
      return keys;
    },
    knownHostsPath,
    clientKeyPath,
    users: {
      nopw: NOPW_USER,
      pw: PW_USER,
      get pwPassword() {
        return (pwPassword ??= newPwPassword());
      },
      cli: CLI_USER,
      get cliPassword() {
        return (cliPassword ??= newPwPassword(CLI_USER));
      },
    },
    logPath,
    dir,
    get pid() {
      return child.pid ?? -1;
    },
    readLog: () => readLogFile(logPath),
    hostOptions: (user, extra = {}) => ({
      name: `sshd-${user}`,
      host: address,
      port,
      user,
      identityFiles: [clientKeyPath],
      knownHostsFiles: [knownHostsPath],
      reconnectBackoffMs: 100,
      ...extra,
    }),
    async rotateHostKey() {
      await stopServer();
      keys = newHostKeys();
      child = await launch(configPath, logPath, port, opts);
    },
    kill: stopServer,
    async restart() {
      child = await launch(configPath, logPath, port, opts);
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return sshd;
}
