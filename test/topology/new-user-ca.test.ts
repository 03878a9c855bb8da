/**
 * Issue 17's new-user path, with the real tools: two servers reachable only through a bastion, every host key
 * signed by an SSH CA (`ssh-keygen -s`; known_hosts holds only `@cert-authority` lines) and the user's key signed
 * for the account (every sshd has AuthorizedKeysFile none: only the certificate gets in). The operator's
 * ~/.ssh/config says `ProxyJump bastion`; the inventory names the two aliases and nothing else. The built CLI
 * reaches both (transport auto chooses the system ssh, for the certificate), and `resolve` says why.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cli, cliEnv } from '../helpers/cli.js';
import { startTopology, tcpConnects, type Topology } from '../helpers/netns-topology.js';
import { newCertificateAuthority, signKey, startSshd, type Sshd } from '../helpers/sshd.js';
import { sshConfigPath } from '../../src/transport/quote.js';

let topo: Topology;
let servers: Sshd[] = [];
let work: string;
let home: string;

beforeAll(async () => {
  topo = await startTopology();
  work = mkdtempSync(join(tmpdir(), 'l20-newuser-'));
  home = join(work, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  const hostCa = newCertificateAuthority(work, 'host_ca');
  const userCa = newCertificateAuthority(work, 'user_ca');
  const certOnly = { trustedUserCAKeys: userCa, authorizedKeys: false } as const;
  const bastion = await startSshd({
    netns: topo.bastion1.ns,
    listenAddress: topo.bastion1.address,
    extraConfig: ['AllowTcpForwarding yes'],
    hostCertificate: { ca: hostCa, principals: [topo.bastion1.address] },
    ...certOnly,
  });
  const targets = await Promise.all(
    [22, 2222].map((port) =>
      startSshd({
        netns: topo.target.ns,
        listenAddress: topo.target.address,
        port,
        hostCertificate: { ca: hostCa, principals: [topo.target.address] },
        ...certOnly,
      }),
    ),
  );
  servers = [bastion, ...targets];
  const key = join(home, '.ssh', 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'operator', '-f', key]);
  signKey(userCa, `${key}.pub`, { principals: [bastion.users.nopw] });
  const ca = hostCa.publicLine;
  const patterns = [topo.bastion1.address, topo.target.address, `[${topo.target.address}]:2222`].join(',');
  writeFileSync(join(home, '.ssh', 'known_hosts'), `@cert-authority ${patterns} ${ca}\n`, { mode: 0o600 });
  // What the operator's ssh already works with: no inventory field needed beyond the aliases.
  writeFileSync(
    join(home, '.ssh', 'config'),
    [
      'Host bastion',
      `  HostName ${topo.bastion1.address}`,
      '',
      'Host gpu1 gpu2',
      `  HostName ${topo.target.address}`,
      '  ProxyJump bastion',
      '',
      'Host gpu2',
      '  Port 2222',
      '',
      'Host *',
      `  User ${bastion.users.nopw}`,
      `  IdentityFile ${sshConfigPath(key)}`,
      `  UserKnownHostsFile ${sshConfigPath(join(home, '.ssh', 'known_hosts'))}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  writeFileSync(
    join(home, 'inventory.json'),
    JSON.stringify({
      version: 1,
      hosts: [
        { name: 'gpu1', address: 'gpu1', role: 'head' },
        { name: 'gpu2', address: 'gpu2', role: 'worker' },
      ],
    }),
  );
  // The servers really are behind the bastion.
  for (const port of [22, 2222]) expect(await tcpConnects(topo.target.address, port)).toBe(false);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await topo?.teardown();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface CheckReport {
  stages: { checks: { id: string; host: string | null; status: string; summary: string; evidence: string }[] }[];
}

it('check --stage inventory reaches both servers through the bastion with the certificate alone', async () => {
  const r = await cli(
    ['check', '--stage', 'inventory', '--json', '--inventory', join(home, 'inventory.json')],
    cliEnv(home),
  );
  expect(r.code, r.stderr).not.toBe(2);
  const checks = (JSON.parse(r.stdout) as CheckReport).stages[0]!.checks;
  // Each server's own /etc/os-release was read (this machine's OS: a verdict on it, not a connection error).
  const os = checks.filter((k) => k.id === 'inventory.os');
  expect(os.map((k) => k.host).sort()).toEqual(['gpu1', 'gpu2']);
  const release = execFileSync('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"'], { encoding: 'utf8' }).trim();
  for (const k of os) expect(k.summary).toContain(release.split(' ')[0]);
  // Two servers, not one twice: each session arrived on its own sshd's port (SSH_CONNECTION, through the bastion).
  const mgmt = checks.filter((k) => k.id === 'inventory.mgmt').map((k) => [k.host, k.status, k.evidence]);
  expect(mgmt).toEqual([
    ['gpu1', 'pass', expect.stringContaining(`server address ${topo.target.address} port 22\n`)],
    ['gpu2', 'pass', expect.stringContaining(`server address ${topo.target.address} port 2222\n`)],
  ]);
  const text = JSON.stringify(checks);
  expect(text).not.toMatch(/cannot connect|host key|certificate/i);
});

it('resolve shows the path: the jump host, and OpenSSH chosen for the certificate', async () => {
  const r = await cli(['resolve', 'gpu2', '--json'], cliEnv(home));
  expect(r.code, r.stderr).toBe(0);
  const out = JSON.parse(r.stdout) as { path: { hops: { host: string }[]; transport: string; why: string } };
  expect(out.path.transport).toBe('openssh');
  expect(out.path.why).toMatch(/certificate/i);
  expect(JSON.stringify(out.path.hops)).toContain(topo.bastion1.address);
});
