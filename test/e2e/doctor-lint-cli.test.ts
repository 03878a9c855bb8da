/** `doctor` and `lint` through the built binary: the JSON contracts and exit codes scripts rely on. */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/l20-setup.js');
const FIX = join(ROOT, 'test/fixtures');

function cli(args: string[], stdin?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        resolvePromise({ code: err ? (err as unknown as { code: number }).code : 0, stdout, stderr });
      },
    );
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

describe('l20-setup doctor', () => {
  it('reads the H200 NCCL log: kind nccl-log, the socket fallback as D01', async () => {
    const r = await cli(['doctor', join(FIX, 'h200-x2/nccl_info_torch_allreduce.txt'), '--json']);
    const report = JSON.parse(r.stdout) as {
      version: number;
      kind: string;
      facts: { ncclVersion?: string; network?: string };
      findings: Array<{ rule: string; severity: string; evidence: string; fix: string }>;
    };
    expect(report.version).toBe(1);
    expect(report.kind).toBe('nccl-log');
    expect(report.facts.ncclVersion).toMatch(/^2\.28\.9/);
    expect(report.facts.network).toBe('Socket');
    const d01 = report.findings.find((f) => f.rule === 'D01');
    expect(d01?.evidence.length).toBeGreaterThan(0);
    expect(r.code).toBe(0);
  });

  it('reads standard input, prints a human table, and says unknown for noise', async () => {
    const r = await cli(
      ['doctor', '-'],
      "CA 'mlx5_0'\n\tCA type: MT4117\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 40\n\t\tLink layer: Ethernet\n",
    );
    expect(r.stdout).toContain('kind: ibstat');
    expect(r.stdout).toContain('D08');
    expect(r.code).toBe(0); // a high finding is the output, not a failure of doctor
    const dir = mkdtempSync(join(tmpdir(), 'l20-doc-'));
    writeFileSync(join(dir, 'noise.bin'), randomBytes(4096));
    const n = await cli(['doctor', join(dir, 'noise.bin'), '--json']);
    expect(n.code).toBe(0);
    expect(JSON.parse(n.stdout).kind).toBe('unknown');
  });

  it('exits 2 with a clear message for an unreadable file', async () => {
    const r = await cli(['doctor', '/nonexistent/file.txt']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot read /nonexistent/file.txt (ENOENT)');
  });
});

describe('l20-setup lint', () => {
  it("finds the tutorial's mistakes with lines, evidence and fixes, and exits 1", async () => {
    const dir = join(FIX, 'tutorial');
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => join(d.parentPath, d.name));
    const r = await cli(['lint', ...files, '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as {
      version: number;
      files: Array<{
        file: string;
        kind: string;
        findings: Array<{ rule: string; severity: string; line?: number; evidence: string; fix: string }>;
      }>;
    };
    expect(report.version).toBe(1);
    const rules = new Set(report.files.flatMap((f) => f.findings.map((x) => x.rule)));
    for (const id of ['R01', 'R06', 'R16', 'R25', 'R40', 'R41']) expect(rules.has(id)).toBe(true);
    const r01 = report.files.flatMap((f) => f.findings).find((f) => f.rule === 'R01')!;
    expect(r01.severity).toBe('blocker');
    expect(r01.evidence).toContain('COLLNET_CHAIN');
    expect(r01.line).toBeGreaterThan(0);
  });

  it('exits 2 naming an unreadable file', async () => {
    const r = await cli(['lint', '/nonexistent/nccl.conf']);
    expect(r.code).toBe(2);
    expect(r.stderr + r.stdout).toContain('/nonexistent/nccl.conf');
  });
});
