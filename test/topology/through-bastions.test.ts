/**
 * The product through a real bastion chain (issue 17 item 4): the lab's two hosts served inside a network namespace
 * reachable only through one or two bastions (real sshd, test/helpers/netns-topology.ts). The built CLI reaches
 * them with the inventory's `jump:` and with a ~/.ssh/config ProxyJump or ProxyCommand (`ssh -W`), one and two
 * hops: `check --stage inventory`, `apply --stage os` (it writes a file), `monitor --once` and the TUI; a hop whose
 * host key is not the recorded one stops the connection naming the hop; the bastion dying mid-apply is a lost
 * connection that `--resume` completes, with no half-written file.
 * Figure: `topology figures: …` (hops × transports × ways tried, all reached, host keys verified at every hop).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cli, cliEnv } from '../helpers/cli.js';
import { serveLab, stopLab } from '../helpers/lab-serve.js';
import { startTopology, tcpConnects, type Topology } from '../helpers/netns-topology.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';
import { tmuxServer } from '../helpers/tmux.js';
import { waitFor } from '../helpers/processes.js';
import { sshConfigPath } from '../../src/transport/quote.js';
import type { JournalFile } from '../../src/engine/journal.js';

type Transport = 'ssh2' | 'openssh';
type Way = 'inventory jump' | 'ssh_config ProxyJump' | 'ssh_config ProxyCommand';
interface Case {
  transport: Transport;
  hops: 1 | 2;
  way: Way;
}

const MEMLOCK = '/etc/security/limits.d/90-l20-memlock.conf';

let topo: Topology;
let bastions: Sshd[];
let lab: ChildProcess;
let dir: string;
let labInventory: string;
const reached: string[] = [];
const refusedHops: string[] = [];

/** The ssh_config blocks of the bastions: each its own key and known_hosts, host keys checked. */
function bastionBlocks(knownHosts: (i: number) => string = (i) => bastions[i]!.knownHostsPath): string {
  return bastions
    .map((s, i) =>
      [
        `Host bastion${i + 1}`,
        `  HostName ${s.address}`,
        `  User ${s.users.nopw}`,
        `  IdentityFile ${sshConfigPath(s.clientKeyPath)}`,
        '  IdentitiesOnly yes',
        `  UserKnownHostsFile ${sshConfigPath(knownHosts(i))}`,
        '  StrictHostKeyChecking yes',
        '  BatchMode yes',
        '',
      ].join('\n'),
    )
    .join('\n');
}

/** OpenSSH to a lab host through bastion1 (the lab's own ssh_config, the case's bastion blocks): a direct look. */
function sshThrough(
  inventory: string,
  home: string,
  host: string,
  command: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const proxy = `ProxyCommand=ssh -F ${join(home, '.ssh', 'config')} -W %h:%p bastion1`;
  return new Promise((resolve) => {
    const argv = ['-F', `${inventory}.ssh_config`, '-o', 'BatchMode=yes', '-o', proxy, host, command];
    const child = execFile('ssh', argv, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
    child.stdin!.end();
  });
}

function jumpSpec(hops: 1 | 2): string {
  return hops === 1 ? 'bastion1' : 'bastion1,bastion2';
}

/**
 * A HOME of its own (the CLI reads ~/.ssh/config there) and an inventory for one case: the lab's, with `jump:` or
 * with a ~/.ssh/config block for the lab's address holding the ProxyJump or ProxyCommand.
 */
function caseSetup(c: Case, knownHosts?: (i: number) => string): { env: NodeJS.ProcessEnv; inventory: string } {
  const home = mkdtempSync(join(dir, 'home-'));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const config = join(home, '.ssh', 'config');
  const inv = JSON.parse(readFileSync(labInventory, 'utf8')) as { hosts: Record<string, unknown>[] };
  for (const h of inv.hosts) {
    h.transport = c.transport;
    if (c.way === 'inventory jump') h.jump = jumpSpec(c.hops);
  }
  // ssh reads the config of the account's home, not $HOME: the ProxyCommand's ssh is given this one with -F.
  const proxy =
    c.hops === 1
      ? `ssh -F ${sshConfigPath(config)} -W %h:%p bastion1`
      : `ssh -F ${sshConfigPath(config)} -J bastion1 -W %h:%p bastion2`;
  const targetBlock =
    c.way === 'ssh_config ProxyJump'
      ? `Host ${topo.target.address}\n  ProxyJump ${jumpSpec(c.hops)}\n`
      : c.way === 'ssh_config ProxyCommand'
        ? `Host ${topo.target.address}\n  ProxyCommand ${proxy}\n`
        : '';
  writeFileSync(config, `${targetBlock}\n${bastionBlocks(knownHosts)}`, { mode: 0o600 });
  const inventory = join(home, 'inventory.json');
  writeFileSync(inventory, JSON.stringify(inv, null, 2));
  return { env: cliEnv(home), inventory };
}

const WAYS: Way[] = ['inventory jump', 'ssh_config ProxyJump', 'ssh_config ProxyCommand'];
const CASES: Case[] = (['ssh2', 'openssh'] as const).flatMap((transport) =>
  WAYS.flatMap((way) => ([1, 2] as const).map((hops) => ({ transport, hops, way }))),
);
const label = (c: Case) => `${c.transport}, ${c.hops} hop${c.hops > 1 ? 's' : ''}, ${c.way}`;

interface CheckReport {
  hosts: { name: string }[];
  stages: { id: string; checks: { id: string; host: string | null; status: string; summary: string }[] }[];
}

beforeAll(async () => {
  topo = await startTopology();
  const forwarding = ['AllowTcpForwarding yes'];
  bastions = await Promise.all([
    startSshd({ netns: topo.bastion1.ns, listenAddress: topo.bastion1.address, extraConfig: forwarding }),
    startSshd({ netns: topo.bastion2.ns, listenAddress: topo.bastion2.address, extraConfig: forwarding }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'l20-topo-'));
  labInventory = join(dir, 'lab.json');
  lab = await serveLab(['--speed', 'max', '--address', topo.target.address], labInventory, cliEnv(), topo.target.ns);
  // The path really is through the bastions: from here the lab's ports do not answer.
  const { hosts } = JSON.parse(readFileSync(labInventory, 'utf8')) as { hosts: { port: number }[] };
  for (const h of hosts) expect(await tcpConnects(topo.target.address, h.port)).toBe(false);
});

afterAll(async () => {
  process.stdout.write(
    `topology figures: ${reached.length} ways reached both lab hosts through real bastions (sshd in network ` +
      `namespaces; ${[...new Set(CASES.map((c) => c.transport))].join(', ')}; 1 and 2 hops; inventory jump, ` +
      `ssh_config ProxyJump, ProxyCommand ssh -W; publickey auth at every hop), host keys verified at every hop ` +
      `(${refusedHops.length} wrong hop keys refused: ${refusedHops.join(', ')})\n`,
  );
  await stopLab(lab);
  await Promise.all((bastions ?? []).map((b) => b.stop()));
  await topo?.teardown();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('check --stage inventory through the bastions', () => {
  for (const c of CASES) {
    it(label(c), async () => {
      const { env, inventory } = caseSetup(c);
      const r = await cli(['check', '--stage', 'inventory', '--json', '--inventory', inventory], env);
      expect(r.code, r.stderr).not.toBe(2);
      const report = JSON.parse(r.stdout) as CheckReport;
      const os = report.stages[0]!.checks.filter((k) => k.id === 'inventory.os');
      // Read from each host itself: its OS release, through the chain.
      expect(os.map((k) => [k.host, k.status])).toEqual([
        ['l20-n1', 'pass'],
        ['l20-n2', 'pass'],
      ]);
      reached.push(label(c));
    });
  }
});

describe('host keys at every hop', () => {
  const changedHop = '%s: a bastion whose key is not the recorded one stops the connection, naming that hop';
  it.each(['ssh2', 'openssh'] as const)(changedHop, async (transport) => {
    const other = mkdtempSync(join(dir, 'kh-'));
    // bastion1's recorded key is right, bastion2's file holds bastion1's key under bastion2's address: changed.
    const wrong = join(other, 'known_hosts');
    const bastion1Key = bastions[0]!.hostPublicKeyLine.split(' ').slice(0, 2).join(' ');
    writeFileSync(wrong, `${bastions[1]!.address} ${bastion1Key}\n`);
    const { env, inventory } = caseSetup({ transport, hops: 2, way: 'inventory jump' }, (i) =>
      i === 1 ? wrong : bastions[i]!.knownHostsPath,
    );
    const r = await cli(['check', '--stage', 'inventory', '--json', '--inventory', inventory], env);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toMatch(/bastion2/);
    expect(out).toMatch(/host key/i);
    expect(out).not.toMatch(/"status": "pass"/);
    refusedHops.push(`${transport} bastion2 changed`);
  });
});

describe('apply, monitor and the TUI through the bastions', () => {
  it('apply --stage os through two hops (ProxyCommand) writes the memlock file on both hosts', async () => {
    const { env, inventory } = caseSetup({ transport: 'ssh2', hops: 2, way: 'ssh_config ProxyCommand' });
    const r = await cli(['apply', '--stage', 'os', '--yes', '--inventory', inventory], env);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`[l20-n1] DONE  os.memlock  write ${MEMLOCK}`);
    expect(r.stdout).toMatch(/\[l20-n2\] DONE {2}os\.memlock/);
    // A later run through another path (one hop, inventory jump, the system ssh) sees the change.
    const again = caseSetup({ transport: 'openssh', hops: 1, way: 'inventory jump' });
    const check = await cli(['check', '--stage', 'os', '--json', '--inventory', again.inventory], again.env);
    const report = JSON.parse(check.stdout) as CheckReport;
    const memlock = report.stages[0]!.checks.filter((k) => k.id === 'os.memlock');
    expect(memlock.map((k) => [k.host, k.status])).toEqual(
      [
        ['l20-n2', 'pass'],
        ['l20-n1', 'pass'],
      ].sort(),
    );
  });

  const monitorOnce = '%s: monitor --once through one hop (ProxyJump in ~/.ssh/config) samples both hosts';
  it.each(['ssh2', 'openssh'] as const)(monitorOnce, async (transport) => {
    const { env, inventory } = caseSetup({ transport, hops: 1, way: 'ssh_config ProxyJump' });
    const r = await cli(['monitor', '--once', '--inventory', inventory], env);
    expect(r.code, r.stderr).toBe(0);
    // A fresh lab has no NVIDIA driver yet: the fabric ports and the note about nvidia-smi are each host's own.
    for (const host of ['l20-n1', 'l20-n2']) {
      expect(r.stdout).toMatch(new RegExp(`^\\[${host}\\] ens1f0/mlx5_0 DOWN tx 0\\.0 rx 0\\.0 Gb/s`, 'm'));
      expect(r.stdout).toContain(`[${host}] note: nvidia-smi is not installed`);
    }
  });

  it('the TUI reaches both hosts through two hops (inventory jump) and runs inventory', async () => {
    const { env, inventory } = caseSetup({ transport: 'ssh2', hops: 2, way: 'inventory jump' });
    const server = tmuxServer(`l20topo-${process.pid}`);
    try {
      const t = server.terminal('topo', 160, 48);
      // The case's HOME (its ~/.ssh/config) for the TUI, as the CLI runs above.
      t.keys(`HOME=${env.HOME} node bin/l20-setup.js --inventory ${inventory}; echo EXIT-CODE=$?`, 'Enter');
      await t.until((s) => s.includes('l20-setup · pipeline') && s.includes('l20-n2'), 'the pipeline');
      t.keys('r');
      const done = await t.until(
        (s) => /l20-n1\s+\S+\s+connected/.test(s) && /l20-n2\s+\S+\s+connected/.test(s) && /idle/.test(s),
        'inventory to run on both hosts through the bastions',
      );
      expect(done).toMatch(new RegExp(`l20-n1\\s+${topo.target.address.replace(/\./g, '\\.')}:\\d+\\s+connected`));
      t.keys('q');
      await t.until((s) => s.includes('EXIT-CODE=0'), 'the TUI to quit');
    } finally {
      server.close();
    }
  });
});

describe('the bastion dies mid-apply', () => {
  let slowLab: ChildProcess | undefined;
  afterAll(async () => {
    await stopLab(slowLab);
  });

  function journal(stateDir: string): JournalFile | undefined {
    const jdir = join(stateDir, 'l20-setup', 'journal');
    const file = existsSync(jdir) ? readdirSync(jdir).find((f) => f.endsWith('.json')) : undefined;
    return file ? (JSON.parse(readFileSync(join(jdir, file), 'utf8')) as JournalFile) : undefined;
  }

  /** A fresh lab of its own at 10× speed (the package install runs for seconds, long enough to cut), a case on it. */
  async function slowCase(): Promise<{ env: NodeJS.ProcessEnv; inventory: string; labInventory: string }> {
    await stopLab(slowLab);
    const slowInventory = join(mkdtempSync(join(dir, 'slow-')), 'lab.json');
    const args = ['--speed', '10', '--address', topo.target.address];
    slowLab = await serveLab(args, slowInventory, cliEnv(), topo.target.ns);
    const saved = labInventory;
    labInventory = slowInventory;
    try {
      return { ...caseSetup({ transport: 'ssh2', hops: 1, way: 'inventory jump' }), labInventory: slowInventory };
    } finally {
      labInventory = saved;
    }
  }

  /** `apply --stage os` as a child; resolves once bastion1 is killed while os.install-base runs. */
  async function applyUntilBastionDies(c: { env: NodeJS.ProcessEnv; inventory: string }) {
    const child = spawn(process.execPath, [BIN, 'apply', '--stage', 'os', '--yes', '--inventory', c.inventory], {
      env: c.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = { child, out: '', exited: new Promise<number | null>((r) => child.once('exit', (code) => r(code))) };
    child.stdout!.on('data', (d: Buffer) => (run.out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (run.out += d.toString()));
    const state = c.env.XDG_STATE_HOME!;
    const running = () => /▶ os\.install-base/.test(run.out) && journal(state) !== undefined;
    await waitFor(running, 'os.install-base to run', 30_000);
    await bastions[0]!.kill();
    // Both hosts' connections went with the bastion, and the apply says which hop took them.
    const lost = () => (run.out.match(/\] lost: .*jump host bastion1/g) ?? []).length === 2;
    await waitFor(lost, 'both hosts lost', 20_000);
    return run;
  }

  /** The memlock file on both hosts, read directly (OpenSSH through bastion1), with what else is in its directory. */
  async function memlockFiles(labInv: string, home: string): Promise<{ content: string; listing: string[] }[]> {
    return Promise.all(
      ['l20-n1', 'l20-n2'].map(async (host) => {
        const look = `cat ${MEMLOCK} 2>/dev/null; echo ---; ls -A /etc/security/limits.d 2>/dev/null; true`;
        const r = await sshThrough(labInv, home, host, look);
        expect(r.code, r.stderr).toBe(0);
        const [content = '', listing = ''] = r.stdout.split('---\n');
        return { content, listing: listing.split('\n').filter(Boolean) };
      }),
    );
  }

  const whole = (f: { content: string; listing: string[] }) => {
    expect(f.content).toMatch(/^\* soft memlock unlimited$/m);
    expect(f.content).toMatch(/^\* hard memlock unlimited$/m);
    expect(f.listing).toEqual(['90-l20-memlock.conf']); // no temporary file beside it
  };

  it('back within the reconnect bound: the apply resumes the step and finishes, the file whole', async () => {
    const c = await slowCase();
    const run = await applyUntilBastionDies(c);
    await bastions[0]!.restart();
    const code = await run.exited;
    expect(code, run.out).toBe(0);
    // The loss fell inside the step (the command in flight is resumed, or the next one reconnects first).
    const at = (re: RegExp) => run.out.search(re);
    expect(at(/\[l20-n1\] ▶ os\.install-base/)).toBeLessThan(at(/\[l20-n1\] lost: .*jump host bastion1/));
    expect(at(/\[l20-n1\] lost: .*jump host bastion1/)).toBeLessThan(at(/\[l20-n1\] DONE {2}os\.install-base/));
    expect(run.out).toMatch(/\[l20-n1\] DONE {2}os\.memlock/);
    expect(journal(c.env.XDG_STATE_HOME!)).toBeUndefined();
    for (const f of await memlockFiles(c.labInventory, c.env.HOME!)) whole(f);
  });

  it('the apply killed while the bastion is down: the journal names the step, --resume finishes', async () => {
    const c = await slowCase();
    const run = await applyUntilBastionDies(c);
    run.child.kill('SIGKILL');
    await run.exited;
    const j = journal(c.env.XDG_STATE_HOME!);
    expect(JSON.stringify(j), run.out).toContain('os.install-base');
    await bastions[0]!.restart();
    // Nothing half-written: the step that writes the file had not started.
    for (const f of await memlockFiles(c.labInventory, c.env.HOME!)) expect(f).toEqual({ content: '', listing: [] });
    const plain = await cli(['apply', '--stage', 'os', '--yes', '--inventory', c.inventory], c.env);
    expect(plain.code, plain.stderr).toBe(2); // refused: an interrupted apply is there
    const resumed = await cli(['apply', '--resume', '--yes', '--inventory', c.inventory], c.env);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    expect(journal(c.env.XDG_STATE_HOME!)).toBeUndefined();
    for (const f of await memlockFiles(c.labInventory, c.env.HOME!)) whole(f);
  });
});
