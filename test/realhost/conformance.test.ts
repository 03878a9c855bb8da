/**
 * The real-host conformance suite: every read-only verb run against this real Debian machine over the real
 * OpenSSH server .ci/run installs — once with its tools and once as a user whose PATH (and sudo's secure_path)
 * lacks lspci, ip, ethtool, rdma, systemctl and nvidia-smi. The lab is our own model; this machine is not.
 *
 * What must hold on both runs, for every check: no pass or warn without evidence, no value that was never read
 * (`?`, `undefined`, `NaN`, an empty value spliced into a sentence), and the engine's evidence guard never has to
 * step in. Between the runs only the tools differ, so any verdict that changes must be "cannot tell" naming a
 * removed tool and its package — a missing tool is never a verdict about hardware or configuration — and the
 * other verbs may not find anything without the tools that they did not find with them.
 *
 * Needs root, /usr/sbin/sshd and sudo (test/helpers/sshd.ts); there is no skipping.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliEnv } from '../helpers/cli.js';
import { ungroundedVerdicts } from '../helpers/evidence.js';
import { NOPW_USER, startSshd, type Sshd } from '../helpers/sshd.js';

const BARE_USER = 'l20t-bare';
const REMOVED = ['lspci', 'ip', 'ethtool', 'rdma', 'systemctl', 'nvidia-smi'] as const;
const PACKAGE: Record<(typeof REMOVED)[number], string> = {
  lspci: 'pciutils',
  ip: 'iproute2',
  ethtool: 'ethtool',
  rdma: 'iproute2',
  systemctl: 'systemd',
  'nvidia-smi': 'nvidia-utils',
};
const SUDOERS = `/etc/sudoers.d/${BARE_USER}`;
const STAGES = [
  'inventory',
  'os',
  'nic-stack',
  'network',
  'qos',
  'rdma-link',
  'gpu-driver',
  'gpudirect',
  'nccl',
  'ray',
  'vllm',
];

interface Check {
  id: string;
  host: string | null;
  status: string;
  summary: string;
  evidence: string;
  fix?: string;
}
interface CheckReport {
  stages: Array<{ id: string; checks: Check[] }>;
}

let sshd: Sshd;
let farm: string;
let work: string;
const runs: Record<'full' | 'bare', { inventory: string; check?: CheckReport; checkCode?: number }> = {
  full: { inventory: '' },
  bare: { inventory: '' },
};

/** A bin directory holding every program of the standard PATH but the removed ones (links, as a package would). */
function binFarm(): string {
  const dir = mkdtempSync(join(tmpdir(), 'l20-bare-bin-'));
  chmodSync(dir, 0o755);
  for (const d of ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    if (!existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      if ((REMOVED as readonly string[]).includes(name) || existsSync(join(dir, name))) continue;
      symlinkSync(join(d, name), join(dir, name));
    }
  }
  return dir;
}

function inventory(hosts: Array<{ name: string; user: string }>): string {
  const path = join(work, `${hosts.map((h) => h.name).join('+')}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      version: 1,
      hosts: hosts.map((h, i) => ({
        name: h.name,
        address: '127.0.0.1',
        port: sshd.port,
        user: h.user,
        role: i === 0 ? 'head' : 'worker',
        auth: { method: 'identityFile', path: sshd.clientKeyPath },
        knownHostsFile: sshd.knownHostsPath,
      })),
    }),
  );
  return path;
}

const allChecks = (r: CheckReport): Check[] => r.stages.flatMap((s) => s.checks);
const key = (c: Check) => `${c.id}@${c.host ?? 'cluster'}`;
const namesRemovedTool = (text: string) =>
  REMOVED.some((t) =>
    new RegExp(`\\b${t.replace('-', '\\-')} is not installed on \\S+ \\(package [^)]*${PACKAGE[t]}`).test(text),
  );

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'l20-realhost-'));
  farm = binFarm();
  // sudo resets PATH to secure_path: the bare user's root commands must lack the tools too.
  const rules = `${BARE_USER} ALL=(ALL:ALL) NOPASSWD: ALL\nDefaults:${BARE_USER} secure_path=${farm}\n`;
  const candidate = `${SUDOERS}.tmp`;
  writeFileSync(candidate, rules, { mode: 0o440 });
  execFileSync('visudo', ['-cf', candidate]);
  execFileSync('mv', [candidate, SUDOERS]);
  sshd = await startSshd({
    extraUsers: [BARE_USER],
    extraConfig: [`Match User ${BARE_USER}`, `  SetEnv PATH=${farm}`],
  });
  runs.full.inventory = inventory([{ name: 'real', user: NOPW_USER }]);
  runs.bare.inventory = inventory([{ name: 'real-bare', user: BARE_USER }]);
  for (const mode of ['full', 'bare'] as const) {
    const r = await cli(['check', '--inventory', runs[mode].inventory, '--json']);
    runs[mode].checkCode = r.code;
    runs[mode].check = JSON.parse(r.stdout) as CheckReport;
  }
}, 180_000);

afterAll(async () => {
  await sshd?.stop();
  rmSync(SUDOERS, { force: true });
  if (farm) rmSync(farm, { recursive: true, force: true });
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the bare user really lacks the tools', () => {
  it('over SSH and through sudo', async () => {
    const probe =
      'for t in lspci ip ethtool rdma systemctl nvidia-smi bash cat; do ' +
      'command -v $t >/dev/null && echo "has $t"; done';
    const ssh = (user: string, cmd: string) =>
      execFileSync(
        'ssh',
        [
          '-o',
          'BatchMode=yes',
          '-o',
          `UserKnownHostsFile=${sshd.knownHostsPath}`,
          '-o',
          'StrictHostKeyChecking=yes',
          '-i',
          sshd.clientKeyPath,
          '-p',
          String(sshd.port),
          `${user}@127.0.0.1`,
          cmd,
        ],
        { encoding: 'utf8' },
      );
    expect(ssh(BARE_USER, probe).trim().split('\n')).toEqual(['has bash', 'has cat']);
    expect(ssh(BARE_USER, `sudo -n bash -c '${probe}'`).trim().split('\n')).toEqual(['has bash', 'has cat']);
    expect(ssh(NOPW_USER, probe)).toContain('has lspci');
  });
});

describe.each(['full', 'bare'] as const)('check of every stage on the real host (%s tools)', (mode) => {
  it('reports every stage; exit code says something did not pass', () => {
    const r = runs[mode].check!;
    expect(r.stages.map((s) => s.id)).toEqual(STAGES);
    expect([1, 2]).toContain(runs[mode].checkCode);
    expect(allChecks(r).length).toBeGreaterThan(80);
  });

  it('no pass or warn without evidence, no value that was never read, and the evidence guard never stepped in', () => {
    const bad = ungroundedVerdicts(allChecks(runs[mode].check!));
    console.log(`real-host ${mode}: ${allChecks(runs[mode].check!).length} checks, ${bad.length} without evidence`);
    expect(bad).toEqual([]);
  });

  it('every "cannot tell" says what is missing and how to get it', () => {
    const vague = allChecks(runs[mode].check!).filter((c) => c.status === 'error' && !(c.fix ?? '').trim());
    expect(vague.map(key)).toEqual([]);
  });
});

describe('without the tools', () => {
  it('a verdict that changes is "cannot tell" naming the removed tool and its package, not a finding', () => {
    const full = new Map(allChecks(runs.full.check!).map((c) => [c.id, c]));
    const changed = allChecks(runs.bare.check!).filter((c) => full.get(c.id) && full.get(c.id)!.status !== c.status);
    const unexplained = changed.filter((c) => !(c.status === 'error' && namesRemovedTool(c.summary)));
    const each = unexplained.length === 0;
    console.log(`real-host bare: ${changed.length} verdicts changed, each naming its missing tool: ${each}`);
    expect(unexplained.map((c) => `${c.id}: ${full.get(c.id)!.status} → ${c.status} "${c.summary}"`)).toEqual([]);
    expect(changed.length).toBeGreaterThan(0);
  });

  it('the GPU and NIC inventory names lspci and pciutils, not missing GPUs', () => {
    const checks = allChecks(runs.bare.check!);
    for (const id of ['inventory.gpus', 'inventory.nics', 'inventory.pcie']) {
      const c = checks.find((x) => x.id === id)!;
      expect(c.status, id).toBe('error');
      expect(c.summary).toContain('lspci is not installed');
      expect(c.summary).toContain('pciutils');
      expect(c.fix).toContain('apt-get install -y pciutils');
    }
    const netdevs = checks.find((x) => x.id === 'inventory.netdevs')!;
    expect(netdevs.summary).toContain('ip is not installed');
    expect(netdevs.summary).toContain('iproute2');
    const hardware = checks.filter((c) => /seated|reseat|RMA\b|\b0 L20\b/.test(`${c.summary} ${c.fix ?? ''}`));
    expect(hardware.map(key)).toEqual([]);
  });
});

describe('the other read-only verbs', () => {
  type Run = { code: number; stdout: string; stderr: string };
  const verbs: Record<'full' | 'bare', Record<string, Run>> = { full: {}, bare: {} };

  beforeAll(async () => {
    for (const mode of ['full', 'bare'] as const) {
      const inv = runs[mode].inventory;
      const out = join(work, `bundle-${mode}.tar.gz`);
      verbs[mode].monitor = await cli(['monitor', '--once', '--json', '--inventory', inv]);
      verbs[mode].monitorPlain = await cli(['monitor', '--once', '--inventory', inv]);
      verbs[mode].troubleshoot = await cli(['troubleshoot', '--json', '--inventory', inv]);
      verbs[mode].bundle = await cli(['bundle', '--inventory', inv, '--out', out]);
      const dir = join(work, `bundle-${mode}`);
      mkdirSync(dir);
      execFileSync('tar', ['-xzf', out, '-C', dir]);
      verbs[mode].summary = { code: 0, stdout: readFileSync(join(dir, 'SUMMARY.md'), 'utf8'), stderr: '' };
      verbs[mode].report = await cli(['report', '--inventory', inv]);
    }
  }, 300_000);

  it.each(['full', 'bare'] as const)('monitor --once says the GPUs were not read and why (%s)', (mode) => {
    type Host = { gpus: unknown[]; gpuError: string | null; error: string | null };
    const j = JSON.parse(verbs[mode].monitor!.stdout) as { hosts: Host[] };
    expect(j.hosts).toHaveLength(1);
    expect(j.hosts[0]!.gpus).toEqual([]);
    expect(j.hosts[0]!.gpuError).toMatch(/nvidia-smi is not installed/);
    const plain = verbs[mode].monitorPlain!.stdout;
    expect(plain).toMatch(/nvidia-smi is not installed/);
    expect(plain).not.toMatch(/power 0 W|max 0 °C/); // no reading claimed from GPUs that were not read
  });

  it('troubleshoot finds nothing without the tools that it did not find with them', () => {
    type Diagnosis = { symptom: string; status: string; causeId: string | null };
    const full = JSON.parse(verbs.full.troubleshoot!.stdout) as { diagnoses: Diagnosis[] };
    const bare = JSON.parse(verbs.bare.troubleshoot!.stdout) as { diagnoses: Diagnosis[] };
    const before = new Set(full.diagnoses.filter((d) => d.status === 'found').map((d) => `${d.symptom}:${d.causeId}`));
    const extra = bare.diagnoses.filter((d) => d.status === 'found' && !before.has(`${d.symptom}:${d.causeId}`));
    expect(extra.map((d) => `${d.symptom}: ${d.causeId}`)).toEqual([]);
    expect(bare.diagnoses.length).toBe(full.diagnoses.length);
  });

  it.each(['full', 'bare'] as const)('bundle and report finish and show no unread value (%s)', (mode) => {
    expect(verbs[mode].bundle!.code, verbs[mode].bundle!.stderr).toBe(0);
    expect([0, 1, 2]).toContain(verbs[mode].report!.code);
    const texts = [
      ['SUMMARY.md', verbs[mode].summary!.stdout],
      ['report', verbs[mode].report!.stdout],
    ] as const;
    for (const [name, text] of texts) {
      expect(text.length, name).toBeGreaterThan(500);
      expect(
        text.split('\n').filter((l) => /\bundefined\b|\bNaN\b|\[object Object\]/.test(l)),
        name,
      ).toEqual([]);
    }
    if (mode === 'bare') {
      expect(verbs.bare.summary!.stdout).toContain('lspci is not installed');
      expect(verbs.bare.report!.stdout).toContain('lspci is not installed');
    }
  });
});

describe('one machine under two names', () => {
  it('is refused by name', async () => {
    const inv = inventory([
      { name: 'gpu-a', user: NOPW_USER },
      { name: 'gpu-b', user: NOPW_USER },
    ]);
    const r = await cli(['check', '--inventory', inv, '--stage', 'inventory', '--json'], cliEnv());
    const c = allChecks(JSON.parse(r.stdout) as CheckReport).find((x) => x.id === 'inventory.distinct-hosts')!;
    const machineId = readFileSync('/etc/machine-id', 'utf8').trim();
    expect(c.status).toBe('fail');
    expect(c.summary).toBe(`gpu-a and gpu-b are the same machine (machine-id ${machineId})`);
  });
});
