/**
 * The jump-host topology itself (test/helpers/netns-topology.ts), proven with the real OpenSSH client before the
 * product is tried through it: the target is reachable only through the bastions, `ssh -J` and
 * `ProxyCommand ssh -W` reach the lab's hosts and a plain sshd behind them, host keys are checked at every hop,
 * and teardown (or the next run, after a kill) leaves nothing behind.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliEnv } from '../helpers/cli.js';
import { serveLab, stopLab } from '../helpers/lab-serve.js';
import { cleanLeftovers, NETNS_PREFIX, startTopology, tcpConnects, type Topology } from '../helpers/netns-topology.js';
import { isAlive } from '../helpers/processes.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { sshConfigPath } from '../../src/transport/quote.js';

let topo: Topology;
let bastion1: Sshd;
let bastion2: Sshd;
let target: Sshd;
let lab: ChildProcess;
let dir: string;
let config: string;
let labInventory: string;

function ssh(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('ssh', ['-F', config, ...args], { timeout: 20_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
    // The lab's sessions wait a while for the end of stdin before they exit, as sshd does for a pipe.
    child.stdin!.end();
  });
}

/** An ssh_config block for one of our sshds: its own key and known_hosts, host keys checked. */
function sshdBlock(alias: string, s: Sshd): string {
  return [
    `Host ${alias}`,
    `  HostName ${s.address}`,
    `  Port ${s.port}`,
    `  User ${s.users.nopw}`,
    `  IdentityFile ${sshConfigPath(s.clientKeyPath)}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${sshConfigPath(s.knownHostsPath)}`,
    '  StrictHostKeyChecking yes',
    '',
  ].join('\n');
}

beforeAll(async () => {
  topo = await startTopology();
  const forwarding = ['AllowTcpForwarding yes'];
  [bastion1, bastion2, target] = await Promise.all([
    startSshd({ netns: topo.bastion1.ns, listenAddress: topo.bastion1.address, extraConfig: forwarding }),
    startSshd({ netns: topo.bastion2.ns, listenAddress: topo.bastion2.address, extraConfig: forwarding }),
    startSshd({ netns: topo.target.ns, listenAddress: topo.target.address }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'l20-topo-'));
  labInventory = join(dir, 'lab.json');
  lab = await serveLab(['--speed', 'max', '--address', topo.target.address], labInventory, cliEnv(), topo.target.ns);
  config = join(dir, 'ssh_config');
  writeFileSync(
    config,
    [
      // First: an Include inside a Host block applies only to that block's hosts.
      `Include ${sshConfigPath(`${labInventory}.ssh_config`)}`,
      sshdBlock('bastion1', bastion1),
      sshdBlock('bastion2', bastion2),
      sshdBlock('target', target),
      'Host *',
      '  BatchMode yes',
      '  ConnectTimeout 5',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await stopLab(lab);
  await Promise.all([bastion1?.stop(), bastion2?.stop(), target?.stop()]);
  await topo?.teardown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function labPorts(): number[] {
  const inv = JSON.parse(readFileSync(labInventory, 'utf8')) as { hosts: { address: string; port: number }[] };
  for (const h of inv.hosts) expect(h.address).toBe(topo.target.address);
  return inv.hosts.map((h) => h.port);
}

describe('the topology', () => {
  it('reaches bastion1 directly and nothing behind it', async () => {
    expect(await tcpConnects(bastion1.address, bastion1.port)).toBe(true);
    expect(await tcpConnects(bastion2.address, bastion2.port)).toBe(false);
    expect(await tcpConnects(target.address, target.port)).toBe(false);
    for (const port of labPorts()) expect(await tcpConnects(topo.target.address, port)).toBe(false);
    // …while bastion1 itself reaches the target (through bastion2), and bastion2 reaches it on its own link.
    const probe = (from: 'bastion1' | 'bastion2') =>
      topo.exec(from, 'bash', ['-c', `exec 3<>/dev/tcp/${target.address}/${target.port} && echo open`]);
    expect(probe('bastion1').trim()).toBe('open');
    expect(probe('bastion2').trim()).toBe('open');
  });
});

describe('OpenSSH through the bastions', () => {
  it('ssh -J bastion1 reaches both lab hosts', async () => {
    for (const name of ['l20-n1', 'l20-n2']) {
      const r = await ssh(['-J', 'bastion1', name, 'hostname']);
      expect(r, r.stderr).toMatchObject({ code: 0 });
      expect(r.stdout.trim()).toBe(name);
    }
  });

  it('ssh -J bastion1,bastion2 reaches a lab host and the plain sshd', async () => {
    const r = await ssh(['-J', 'bastion1,bastion2', 'l20-n2', 'true']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const t = await ssh(['-J', 'bastion1,bastion2', 'target', 'id -un']);
    expect(t, t.stderr).toMatchObject({ code: 0 });
    expect(t.stdout.trim()).toBe(target.users.nopw);
    // The target's sshd saw the connection come from bastion2, the last hop.
    expect(target.readLog()).toContain(`Accepted publickey for l20t-nopw from ${topo.bastion2.downAddress} `);
  });

  it("ProxyCommand 'ssh -W %h:%p bastion1' reaches a lab host and the plain sshd", async () => {
    const proxy = `ProxyCommand=ssh -F ${config} -W %h:%p bastion1`;
    const r = await ssh(['-o', proxy, 'l20-n1', 'true']);
    expect(r, r.stderr).toMatchObject({ code: 0 });
    const t = await ssh(['-o', proxy, 'target', 'true']);
    expect(t, t.stderr).toMatchObject({ code: 0 });
    // The target's sshd saw the connection come from bastion1 (routed through bastion2, which only forwards).
    expect(target.readLog()).toContain(`Accepted publickey for l20t-nopw from ${topo.bastion1.downAddress} `);
  });

  it('host keys are checked at every hop: a wrong key for bastion2 or the target stops the connection', async () => {
    const other = mkdtempSync(join(dir, 'kh-'));
    const wrong = join(other, 'known_hosts');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(other, 'k')]);
    const blob = readFileSync(join(other, 'k.pub'), 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(wrong, `${bastion2.address} ${blob}\n${target.address} ${blob}\n`);
    const cfg = readFileSync(config, 'utf8');
    const swap = (alias: string, s: Sshd) => {
      const block = sshdBlock(alias, s);
      return cfg.replace(block, block.replace(sshConfigPath(s.knownHostsPath), sshConfigPath(wrong)));
    };
    const cases = [
      ['bastion2', bastion2, 'bastion1,bastion2'],
      ['target', target, 'bastion1'],
    ] as const;
    for (const [alias, s, jump] of cases) {
      const bad = join(other, `cfg-${alias}`);
      writeFileSync(bad, swap(alias, s));
      const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile('ssh', ['-F', bad, '-J', jump, 'target', 'true'], (err, _o, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code) : 0, stderr }),
        ),
      );
      expect(r.code, alias).toBe(255);
      expect(r.stderr, alias).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    }
  });
});

describe('lab serve --address', () => {
  it("serves on the namespace's own address and names it in the inventory (above); refuses any other", async () => {
    for (const [address, why] of [
      ['0.0.0.0', /not an address of this machine's interfaces/],
      ['192.0.2.77', /not an address of this machine's interfaces/],
      ['l20-n1', /expected an IPv4 or IPv6 address of a local interface/],
    ] as const) {
      const r = await cli(['lab', 'serve', '--address', address, '--speed', 'max']);
      expect(r.code, address).toBe(2);
      expect(r.stderr, address).toMatch(why);
      expect(r.stdout, address).not.toContain('serving');
    }
  });
});

describe('cleanup', () => {
  it('a killed run’s namespaces, veths, routes and processes are removed by the next start', async () => {
    // A pid that is certainly dead: a child that has exited and been reaped.
    const dead = spawn('true');
    await new Promise((r) => dead.once('exit', r));
    const deadPid = dead.pid as number;
    expect(isAlive(deadPid)).toBe(false);
    const ns = `${NETNS_PREFIX}${deadPid}-0-bastion1`;
    execFileSync('ip', ['netns', 'add', ns]);
    execFileSync('ip', ['link', 'add', `l20t${deadPid}r0`, 'type', 'veth', 'peer', 'name', 'up0', 'netns', ns]);
    const net = topo.subnet.startsWith('10.231.252.') ? '10.231.248.0/22' : '10.231.252.0/22';
    execFileSync('ip', ['route', 'add', 'unreachable', net, 'metric', String(deadPid), 'proto', '231']);
    const sleeper = spawn('ip', ['netns', 'exec', ns, 'sleep', '600'], { stdio: 'ignore' });
    const sleeperExit = new Promise((r) => sleeper.once('exit', r));
    const pidsIn = () => execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).trim();
    await expect.poll(pidsIn).toBe(String(sleeper.pid));

    const removed = cleanLeftovers();
    expect(removed).toContain(ns);
    await sleeperExit;
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).not.toContain(ns);
    expect(execFileSync('ip', ['link'], { encoding: 'utf8' })).not.toContain(`l20t${deadPid}r0`);
    expect(execFileSync('ip', ['route', 'show', 'proto', '231'], { encoding: 'utf8' })).not.toContain(net);
    // Our own live topology is left alone.
    for (const n of topo.namespaces) expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(n);
  });

  it('teardown removes every namespace, veth, route and process', async () => {
    const t = await startTopology();
    const s = await startSshd({ netns: t.bastion2.ns, listenAddress: t.bastion2.address });
    const inside = t.pids('bastion2');
    expect(inside).toContain(s.pid);
    await t.teardown();
    const list = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    for (const n of t.namespaces) expect(list).not.toContain(n);
    expect(execFileSync('ip', ['-4', 'route', 'show', 'table', 'all'], { encoding: 'utf8' })).not.toContain(t.subnet);
    expect(execFileSync('ip', ['-4', 'addr'], { encoding: 'utf8' })).not.toContain(t.rootAddress);
    for (const p of inside) expect(isAlive(p)).toBe(false);
    await s.stop();
  });
});
