/**
 * The evidence bundle on the lab: archive layout (SUMMARY.md first, the expected files per host, each
 * starting with its command line and exit code), SUMMARY.md naming pfc-mismatch's failing check with
 * R26, and planted secrets (the scenario's vLLM API key, an hf_ token, a password, a private key)
 * absent from every byte of the extracted archive — checked with the system's tar, not our reader.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { buildBundle, writeBundleFile, type Bundle } from '../../src/bundle/index.js';

const HF_TOKEN = 'hf_PlantedTokenAbCdEfGhIjKlMnOpQrStUv123';
const PASSWORD = 'Plant3d-Passw0rd-xyz';
const PEM =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZWQyNTUxOQ\nPLANTEDKEYMATERIALPLANTEDKEYMATERIAL\n-----END OPENSSH PRIVATE KEY-----';

function extract(archive: Buffer): { dir: string; list: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'l20-bundle-x-'));
  const file = join(dir, 'b.tar.gz');
  writeFileSync(file, archive);
  const list = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const out = join(dir, 'x');
  execFileSync('mkdir', [out]);
  execFileSync('tar', ['-xzf', file, '-C', out]);
  return { dir: out, list };
}

function allFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name));
}

describe('bundle on the ready lab with planted secrets', () => {
  let t: LabTarget;
  let bundle: Bundle;
  let apiKey: string;
  let x: { dir: string; list: string[] };

  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    const head = t.hosts[0]!;
    apiKey = /VLLM_API_KEY=(\S+)/.exec(
      (await head.run({ argv: ['cat', '/etc/l20/vllm.env'] }, { sudo: true })).stdout,
    )![1]!;
    expect(apiKey.length).toBeGreaterThan(20);
    // An hf_ token and a password in the env file, a bare hf_ token in nccl.conf, a key in a unit the bundle reads.
    await head.run(
      { argv: ['tee', '-a', '/etc/l20/vllm.env'] },
      { sudo: true, stdin: `HF_TOKEN=${HF_TOKEN}\nDB_PASSWORD=${PASSWORD}\n` },
    );
    await head.run({ argv: ['tee', '-a', '/etc/nccl.conf'] }, { sudo: true, stdin: `# fetched with ${HF_TOKEN}\n` });
    await head.run(
      { argv: ['tee', '/etc/systemd/system/l20-leak.service'] },
      {
        sudo: true,
        stdin: `[Service]\nExecStart=/bin/true --password ${PASSWORD}\n# ${PEM.split('\n').join('\n# ')}\n${PEM}\n`,
      },
    );
    bundle = await buildBundle({
      config: t.config,
      hosts: t.hosts,
      source: 'lab ready',
      runId: '20260101T000000Z',
      deltaSeconds: 1,
    });
    x = extract(bundle.archive);
  }, 240_000);

  afterAll(async () => {
    if (x) rmSync(join(x.dir, '..'), { recursive: true, force: true });
    await t?.close();
  });

  it('lists SUMMARY.md first, then the checks and every host folder with the expected files', () => {
    expect(x.list[0]).toBe('SUMMARY.md');
    expect(x.list).toContain('checks.json');
    for (const h of ['l20-n1', 'l20-n2']) {
      for (const f of [
        'versions.txt',
        'nvidia-smi-q.txt',
        'nvidia-smi-topo-m.txt',
        'rdma-link.txt',
        'ibv_devinfo-v.txt',
        'gids.txt',
        'dmesg.txt',
        'nccl-conf.txt',
        'netplan.txt',
        'env-files.txt',
        'l20-setup-state.txt',
      ]) {
        expect(x.list).toContain(`${h}/${f}`);
      }
      for (const p of ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']) {
        expect(x.list).toContain(`${h}/ethtool-S-${p}.txt`);
        // The inbox stack has no mlnx_qos: iproute2's dcb stands in.
        expect(x.list).toContain(`${h}/dcb-${p}.txt`);
      }
    }
  });

  it('starts every host file with the exact command line and its exit code', () => {
    const topo = readFileSync(join(x.dir, 'l20-n1', 'nvidia-smi-topo-m.txt'), 'utf8').split('\n');
    expect(topo[0]).toBe('$ LC_ALL=C nvidia-smi topo -m');
    expect(topo[1]).toMatch(/^# exit 0, \d+ ms$/);
    expect(topo.join('\n')).toContain('NIC Legend:');
    const dmesg = readFileSync(join(x.dir, 'l20-n1', 'dmesg.txt'), 'utf8');
    // The header is the line as an operator reads it: the sudo wrapper's plumbing left out.
    expect(dmesg.split('\n')[0]).toBe('$ sudo -n -- env LC_ALL=C dmesg');
    expect(dmesg).toMatch(/# kept \d+ of \d+ lines/);
    expect(dmesg).toContain('NVRM: loading NVIDIA UNIX Open Kernel Module');
    expect(dmesg).not.toContain('Linux version 5.15');
    const gids = readFileSync(join(x.dir, 'l20-n2', 'gids.txt'), 'utf8');
    expect(gids).toMatch(/^\$ LC_ALL=C bash -s -- <<'L20_SCRIPT'$/m);
    expect(gids).toMatch(/rocep26s0f0\t1\t3\t0000:0000:0000:0000:0000:ffff:c0a8:6502\t192\.168\.101\.2\tv2\tens1f0/);
    const eth = readFileSync(join(x.dir, 'l20-n1', 'ethtool-S-ens1f0.txt'), 'utf8');
    expect(eth).toMatch(/^# before\n\$ LC_ALL=C ethtool -S ens1f0\n# exit 0/);
    expect(eth).toContain('$ LC_ALL=C sleep 1');
    expect(eth).toContain('# delta over 1 s');
  });

  it('puts the versions of both hosts side by side in SUMMARY.md', () => {
    const s = readFileSync(join(x.dir, 'SUMMARY.md'), 'utf8');
    expect(s).toMatch(/^\| \| l20-n1 \| l20-n2 \| \|$/m);
    expect(s).toMatch(/^\| NVIDIA driver \| 580\.126\.09 \| 580\.126\.09 \| {2}\|$/m);
    expect(s).toMatch(/^\| vLLM \| 0\.11\.0 \| 0\.11\.0 \| {2}\|$/m);
    expect(s).toMatch(/^\| rdma-core \| 39\.0-1 \| 39\.0-1 \| {2}\|$/m);
    expect(s).toContain('| l20-n1/dmesg.txt | kernel messages about mlx5');
  });

  it('never writes a planted secret into any file of the archive', () => {
    const files = allFiles(x.dir);
    expect(files.length).toBe(x.list.filter((n) => !n.endsWith('/')).length);
    const secrets = [apiKey, HF_TOKEN, PASSWORD, 'PLANTEDKEYMATERIAL', 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'];
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const s of secrets) expect(bytes.includes(Buffer.from(s)), `${s.slice(0, 6)}… in ${f}`).toBe(false);
    }
    // The key was there to leak: in the env file (the unit loads it as VLLM_API_KEY, so ps never shows it).
    const env = readFileSync(join(x.dir, 'l20-n1', 'env-files.txt'), 'utf8');
    expect(env).toContain('VLLM_API_KEY=[REDACTED:api-key]');
    expect(env).toContain('HF_TOKEN=[REDACTED:hf-token]');
    expect(env).toContain('DB_PASSWORD=[REDACTED:password]');
    expect(env).toContain(
      '-----BEGIN OPENSSH PRIVATE KEY-----\n[REDACTED:private-key]\n-----END OPENSSH PRIVATE KEY-----',
    );
    const ps = readFileSync(join(x.dir, 'l20-n1', 'processes.txt'), 'utf8');
    expect(ps).toMatch(/vllm serve .*--host 10\.0\.0\.1 --port 8000/);
    expect(ps).not.toContain('--api-key');
    expect(readFileSync(join(x.dir, 'l20-n1', 'nccl-conf.txt'), 'utf8')).toContain(
      '# fetched with [REDACTED:hf-token]',
    );
    const summary = readFileSync(join(x.dir, 'SUMMARY.md'), 'utf8');
    expect(summary).toMatch(/Redacted in the files: .*\d+ × api-key/);
    expect(summary).toMatch(/\d+ × private-key/);
  });

  it('writes the archive atomically with mode 0600', () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-bundle-w-'));
    try {
      const file = join(dir, 'out.tar.gz');
      writeBundleFile(file, bundle.archive);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['out.tar.gz']);
      expect(readFileSync(file).equals(bundle.archive)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bundle on pfc-mismatch', () => {
  it('names the failing PFC check with R26 and its fix in SUMMARY.md', async () => {
    const t = await labTarget({ scenario: 'pfc-mismatch' });
    try {
      const b = await buildBundle({
        config: t.config,
        hosts: t.hosts,
        source: 'lab pfc-mismatch',
        runId: '20260101T000001Z',
        deltaSeconds: 1,
      });
      const failing = b.summary.slice(b.summary.indexOf('## Failing checks'), b.summary.indexOf('## Redaction'));
      const row = failing.split('\n').find((l) => l.includes('| R26 |'));
      expect(row, failing).toBeDefined();
      expect(row).toMatch(
        /^\| qos \| qos\.\S+ \| l20-n2 \| FAIL \| R26 \| PFC off on priority 3 .+ \| apply qos\.\S+ .+ \|$/,
      );
      // Node 2's PFC vector is visibly different in its own dcb file.
      const n2 = b.collections.find((c) => c.host === 'l20-n2')!.files.find((f) => f.file === 'dcb-ens1f0.txt')!.text;
      expect(n2).toMatch(/prio-pfc 0:off 1:off 2:off 3:off/);
    } finally {
      await t.close();
    }
  }, 240_000);
});
