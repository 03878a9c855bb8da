/**
 * Real OpenSSH: reaching a host through jump hosts (ProxyJump: forwardOut over each hop's own connection) and
 * through a ProxyCommand (the real `ssh -W`, its stdio as the connection). Host keys are checked at every hop,
 * failures name the hop, a hop's loss is the target's, reconnects rebuild the chain, cancel reaches the
 * remote process through the tunnel and no ProxyCommand outlives its connection (issue 17). All on loopback:
 * the target is reachable directly too, so "through the hop" is shown by a bastion that forbids forwarding
 * refusing the connection, and by the bastions' logins.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostConfig } from '../../src/config/schema.js';
import { hostFromConfig } from '../../src/target.js';
import { quoteArgv } from '../../src/transport/quote.js';
import { SshHost } from '../../src/transport/ssh.js';
import type { SshHostOptions } from '../../src/transport/ssh-options.js';
import { ConnectionLostError, HostKeyError, type HostConnectionState } from '../../src/transport/types.js';
import { listProcesses, processTree, startSshd, uidOf, waitFor, type Sshd } from '../helpers/sshd.js';

let bastion: Sshd;
let bastion2: Sshd;
let noForwarding: Sshd;
let target: Sshd;
let uid: number;
let dir: string;
const hosts: SshHost[] = [];
const leftovers: number[] = [];

beforeAll(async () => {
  [bastion, bastion2, noForwarding, target] = await Promise.all([
    startSshd(),
    startSshd(),
    startSshd({ extraConfig: ['AllowTcpForwarding no'] }),
    startSshd(),
  ]);
  uid = uidOf(target.users.nopw);
  dir = mkdtempSync(join(tmpdir(), 'l20-jump-'));
});

afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all([bastion, bastion2, noForwarding, target].map((s) => s?.stop()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function hop(sshd: Sshd, name: string, extra: Partial<SshHostOptions> = {}): SshHostOptions {
  return sshd.hostOptions(sshd.users.nopw, { name, ...extra });
}

function targetHost(extra: Partial<SshHostOptions>): SshHost {
  const host = new SshHost(target.hostOptions(target.users.nopw, { name: 'l20-n1', ...extra }));
  hosts.push(host);
  return host;
}

const logins = (sshd: Sshd) =>
  sshd
    .readLog()
    .split('\n')
    .filter((l) => l.includes(`Accepted publickey for ${sshd.users.nopw}`)).length;

async function rejection(p: Promise<unknown>): Promise<Error> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e as Error,
  );
}

/** The real OpenSSH client as the ProxyCommand: only its own key and known_hosts, never ~/.ssh. */
function sshW(via: Sshd): string {
  return quoteArgv([
    'ssh',
    '-F',
    'none',
    '-o',
    'BatchMode=yes',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${via.knownHostsPath}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-i',
    via.clientKeyPath,
    '-p',
    String(via.port),
    '-l',
    via.users.nopw,
    '-W',
    '%h:%p',
    '127.0.0.1',
  ]);
}

/**
 * `sleep SECONDS` on the target, resolved once it runs there and its exec's reply has come back (the run is
 * then ours to lose, not a command not sent). The sleep outlives a cut connection: afterAll ends it.
 */
async function sleepOn(host: SshHost, seconds: string): Promise<{ run: Promise<unknown> }> {
  let started = false;
  const run = host.run({ argv: ['sleep', seconds] }, { onStart: () => (started = true) });
  run.catch(() => undefined); // awaited by the caller; must not count as unhandled meanwhile
  const mine = () =>
    listProcesses()
      .filter((p) => p.uid === uid && p.args === `sleep ${seconds}`)
      .map((p) => p.pid);
  await waitFor(() => started && mine().length > 0, `sleep ${seconds} to run on the target`);
  leftovers.push(...mine());
  return { run }; // wrapped: an async function would wait for the run itself
}

const proxies = () =>
  listProcesses().filter((p) => p.args.startsWith('ssh -F none') && p.args.includes(`-W 127.0.0.1:${target.port}`));

describe('real sshd: ProxyJump', () => {
  it('one hop: the command runs on the target, logged in on the bastion first', async () => {
    const before = logins(bastion);
    const host = targetHost({ jump: [hop(bastion, 'bastion')] });
    expect(await host.run({ argv: ['id', '-un'] })).toMatchObject({ exitCode: 0, stdout: `${target.users.nopw}\n` });
    expect(logins(bastion)).toBe(before + 1);
    await host.probeFreshConnection(10_000); // a new chain: a new bastion login
    expect(logins(bastion)).toBe(before + 2);
    await host.close();
  });

  it('two hops: the second bastion is reached through the first', async () => {
    const [b1, b2] = [logins(bastion), logins(bastion2)];
    const host = targetHost({ jump: [hop(bastion, 'bastion'), hop(bastion2, 'inner')] });
    expect((await host.run({ argv: ['echo', 'two hops'] })).stdout).toBe('two hops\n');
    expect([logins(bastion), logins(bastion2)]).toEqual([b1 + 1, b2 + 1]);
    await host.close();
  });

  it('a bastion that forbids forwarding refuses the tunnel: the error names the hop', async () => {
    const host = targetHost({ jump: [hop(noForwarding, 'locked')] });
    const err = await rejection(host.connect());
    expect(err.message).toMatch(
      new RegExp(
        `^l20-n1: cannot connect via jump host locked \\(l20t-nopw@127\\.0\\.0\\.1:${noForwarding.port}\\): ` +
          `cannot open a channel to 127\\.0\\.0\\.1:${target.port}: .*administratively prohibited`,
      ),
    );
  });

  it("an unknown hop key is put to the hop's question and recorded; the target's key is checked as well", async () => {
    const khPath = join(dir, 'kh-unknown');
    writeFileSync(khPath, '', { mode: 0o600 });
    const asked: unknown[] = [];
    const host = targetHost({
      jump: [
        hop(bastion, 'bastion', {
          knownHostsFiles: [khPath],
          onUnknownHostKey: async (i) => (asked.push(i), true),
        }),
      ],
    });
    await host.connect();
    const question = { host: '127.0.0.1', port: bastion.port, fingerprint: bastion.hostKeyFingerprint };
    expect(asked).toEqual([expect.objectContaining(question)]);
    expect(readFileSync(khPath, 'utf8')).toContain(`[127.0.0.1]:${bastion.port} ssh-ed25519 `);
    await host.close();
  });

  it('a changed hop key is refused naming the hop, and never retried; the target is never reached', async () => {
    const khPath = join(dir, 'kh-changed');
    // The target's key recorded for the bastion's address: the bastion presents another one.
    const targetKey = target.hostPublicKeyLine.split(' ').slice(0, 2).join(' ');
    writeFileSync(khPath, `[127.0.0.1]:${bastion.port} ${targetKey}\n`, { mode: 0o600 });
    let asked = 0;
    const before = logins(target);
    const ask = async () => (asked++, true);
    const host = targetHost({ jump: [hop(bastion, 'bastion', { knownHostsFiles: [khPath], onUnknownHostKey: ask })] });
    const err = await rejection(host.connect());
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err).toMatchObject({ kind: 'changed', host: 'l20-n1', presentedFingerprint: bastion.hostKeyFingerprint });
    expect(err.message).toMatch(
      new RegExp(`^l20-n1: jump host bastion: the host key of 127\\.0\\.0\\.1:${bastion.port} has CHANGED`),
    );
    expect(await rejection(host.run({ argv: ['true'] }))).toBe(err);
    expect(host.connectionState).toBe('failed');
    expect(asked).toBe(0);
    expect(logins(target)).toBe(before);
  });

  it('a hop that is down, or silent past the readyTimeout, is named as the hop', async () => {
    const closed = await listening();
    const port = closed.port;
    await closed.close();
    const down = targetHost({ jump: [hop(bastion, 'bastion', { port })] });
    const err = await rejection(down.run({ argv: ['true'] }));
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(down.connectionState).toBe('failed');
    expect(err.message).toMatch(
      new RegExp(
        `^l20-n1: cannot connect via jump host bastion \\(l20t-nopw@127\\.0\\.0\\.1:${port}\\): ` + '.*ECONNREFUSED',
      ),
    );

    const silent = await listening(); // accepts and says nothing
    const started = Date.now();
    const hung = targetHost({ readyTimeoutMs: 600, jump: [hop(bastion, 'bastion', { port: silent.port })] });
    const timedOut = await rejection(hung.connect());
    expect(timedOut.message).toMatch(/^l20-n1: cannot connect via jump host bastion .*timed out after 600 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
    await silent.close();
  });

  it('the bastion dropping while a command runs is a lost connection; the next run rebuilds the chain', async () => {
    const host = targetHost({ jump: [hop(bastion, 'bastion')] });
    const states: HostConnectionState[] = [];
    host.onStateChange((s) => states.push(s));
    await host.connect();
    const { run } = await sleepOn(host, '330');
    const session = processTree(bastion.pid).filter((p) => p.uid === uid && p.args.startsWith('sshd'));
    expect(session).toHaveLength(1);
    process.kill(session[0]!.pid, 'SIGKILL');

    const err = await rejection(run);
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(err.message).toMatch(/^l20-n1: connection to 127\.0\.0\.1:\d+ lost: jump host bastion: /);
    expect(states).toContain('lost');
    const before = logins(bastion);
    expect((await host.run({ argv: ['id', '-un'] })).stdout).toBe(`${target.users.nopw}\n`);
    expect(logins(bastion)).toBe(before + 1);
    await host.close();
  });

  it('a bastion gone silent (stopped) is noticed by keepalives within the bound; the next run reconnects', async () => {
    const fast = { keepaliveIntervalMs: 300, keepaliveCountMax: 2 };
    const host = targetHost({ ...fast, jump: [hop(bastion, 'bastion', fast)] });
    await host.connect();
    const { run } = await sleepOn(host, '360');
    const sessions = processTree(bastion.pid).filter((p) => p.uid === uid && p.args.startsWith('sshd'));
    expect(sessions).toHaveLength(1);
    const [session] = sessions;
    const stoppedAt = Date.now();
    process.kill(session!.pid, 'SIGSTOP');
    try {
      const err = await rejection(run);
      expect(err).toBeInstanceOf(ConnectionLostError);
      expect(Date.now() - stoppedAt).toBeLessThan(host.lostBoundMs + 500);
    } finally {
      process.kill(session!.pid, 'SIGKILL'); // ours: the bastion's session process of this test's connection
    }
    expect((await host.run({ argv: ['echo', 'back'] })).stdout).toBe('back\n');
    await host.close();
  });

  it('cancel through two hops: the remote command and its children are gone on the target', async () => {
    const host = targetHost({ jump: [hop(bastion, 'bastion'), hop(bastion2, 'inner')] });
    const sleeps = ['sleep 340', 'sleep 341'];
    const pids = () =>
      listProcesses()
        .filter((p) => p.uid === uid && sleeps.includes(p.args))
        .map((p) => p.pid);
    const ac = new AbortController();
    const run = host.run({ argv: ['bash', '-c', 'sleep 340 & sleep 341; wait'] }, { signal: ac.signal });
    await waitFor(() => pids().length === 2, 'both sleeps to run on the target');
    ac.abort();
    expect(await run).toMatchObject({ cancelled: true });
    await waitFor(() => pids().length === 0, 'the sleeps to exit on the target', 10_000);
    expect((await host.run({ argv: ['echo', 'still here'] })).stdout).toBe('still here\n');
    await host.close();
  });
});

describe('real sshd: ProxyCommand', () => {
  it('ssh -W as the connection: works, is one child while connected, and is gone after close', async () => {
    const before = logins(bastion);
    const host = targetHost({ proxyCommand: sshW(bastion) });
    expect((await host.run({ argv: ['id', '-un'] })).stdout).toBe(`${target.users.nopw}\n`);
    expect(proxies()).toHaveLength(1);
    expect(logins(bastion)).toBe(before + 1);
    await host.close();
    expect(proxies()).toEqual([]);
  });

  it('the proxy dying is a lost connection naming it; the next run starts a new one', async () => {
    const host = targetHost({ proxyCommand: sshW(bastion) });
    await host.connect();
    const { run } = await sleepOn(host, '350');
    const [proxy] = proxies();
    process.kill(proxy!.pid, 'SIGKILL');
    const err = await rejection(run);
    expect(err).toBeInstanceOf(ConnectionLostError);
    expect(err.message).toMatch(/lost: .*; ProxyCommand `ssh -F none .*` killed by SIGKILL/);
    expect((await host.run({ argv: ['echo', 'again'] })).stdout).toBe('again\n');
    expect(proxies()).toHaveLength(1);
    await host.close();
    expect(proxies()).toEqual([]);
  });

  it('a failing proxy: the error shows its stderr, cleaned of control sequences', async () => {
    const script = `printf 'no route to gpu1 \\033[31mred\\033[0m \\033]0;title\\007done\\n' >&2; exit 3`;
    const host = targetHost({ proxyCommand: quoteArgv(['sh', '-c', script]) });
    const err = await rejection(host.connect());
    expect(err.message).toMatch(
      new RegExp(
        '^l20-n1: cannot connect to l20t-nopw@127\\.0\\.0\\.1:\\d+: .*; ' +
          'ProxyCommand `sh -c .*` exited 3: no route to gpu1 red done$',
      ),
    );
    expect(err.message).not.toMatch(/[\u001b\u0007]/);
  });

  it('a proxy whose background child keeps its stdio open still fails promptly with its exit status', async () => {
    const host = targetHost({ proxyCommand: quoteArgv(['sh', '-c', 'sleep 371 & echo going >&2; exit 4']) });
    const started = Date.now();
    const err = await rejection(host.connect());
    leftovers.push(
      ...listProcesses()
        .filter((p) => p.args === 'sleep 371')
        .map((p) => p.pid),
    );
    expect(err.message).toMatch(/; ProxyCommand `sh -c .*` exited 4: going$/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('an unknown token is refused before anything runs', async () => {
    const host = targetHost({ proxyCommand: 'nc %h %x' });
    const err = await rejection(host.connect());
    expect(err.message).toMatch(/^l20-n1: cannot connect to .*: ProxyCommand nc %h %x: unknown token %x/);
  });
});

describe('real sshd: jump hosts from ~/.ssh/config and the inventory', () => {
  function config(khBastion: string): string {
    return [
      'Host bastion',
      '  HostName 127.0.0.1',
      `  Port ${bastion.port}`,
      `  User ${bastion.users.nopw}`,
      `  IdentityFile ${bastion.clientKeyPath}`,
      `  UserKnownHostsFile ${khBastion}`,
      'Host gpu1',
      '  HostName 127.0.0.1',
      `  Port ${target.port}`,
      `  User ${target.users.nopw}`,
      `  IdentityFile ${target.clientKeyPath}`,
      `  UserKnownHostsFile ${target.knownHostsPath}`,
      '  ProxyJump bastion',
      'Host gpu2',
      '  HostName 127.0.0.1',
      `  Port ${target.port}`,
      `  User ${target.users.nopw}`,
      `  IdentityFile ${target.clientKeyPath}`,
      `  UserKnownHostsFile ${target.knownHostsPath}`,
      `  ProxyCommand ${sshW(noForwarding)}`,
    ].join('\n');
  }
  const ctxFor = (text: string) => ({
    homeDir: dir,
    localUser: 'root',
    env: {},
    readFile: (p: string) => (p === join(dir, '.ssh', 'config') ? text : undefined),
  });

  it('config ProxyJump: the hop resolved from the same config, its unknown key asked about by its name', async () => {
    const kh = join(dir, 'kh-config-bastion');
    writeFileSync(kh, '', { mode: 0o600 });
    const asked: unknown[] = [];
    const h: HostConfig = { name: 'l20-n1', address: 'gpu1', role: 'head' };
    const host = hostFromConfig(h, { onUnknownHostKey: async (i) => (asked.push(i), true) }, ctxFor(config(kh)));
    hosts.push(host as SshHost);
    const before = logins(bastion);
    expect((await host.run({ argv: ['id', '-un'] })).stdout).toBe(`${target.users.nopw}\n`);
    expect(asked).toEqual([expect.objectContaining({ name: 'bastion', jumpHostFor: 'l20-n1', port: bastion.port })]);
    expect(logins(bastion)).toBe(before + 1);
    await host.close();
  });

  it("the inventory's jump wins over the config's ProxyCommand; `none` goes direct", async () => {
    const kh = join(dir, 'kh-inventory');
    writeFileSync(kh, readFileSync(bastion.knownHostsPath));
    const text = config(kh);
    // gpu2's ProxyCommand goes through the bastion that forbids forwarding: only the inventory's choice works.
    const inventory: HostConfig = { name: 'l20-n2', address: 'gpu2', role: 'worker', jump: 'bastion' };
    const viaInventory = hostFromConfig(inventory, {}, ctxFor(text));
    const direct = hostFromConfig({ name: 'l20-n2', address: 'gpu1', role: 'worker', jump: 'none' }, {}, ctxFor(text));
    hosts.push(viaInventory as SshHost, direct as SshHost);
    const before = logins(bastion);
    expect((await viaInventory.run({ argv: ['echo', 'inventory'] })).stdout).toBe('inventory\n');
    expect((await direct.run({ argv: ['echo', 'direct'] })).stdout).toBe('direct\n');
    expect(logins(bastion)).toBe(before + 1);
  });
});

/** A TCP server that accepts and never says anything; `close()` also ends the connections it holds. */
async function listening(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const srv = createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const a = srv.address();
  return {
    port: typeof a === 'object' && a ? a.port : 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  };
}
