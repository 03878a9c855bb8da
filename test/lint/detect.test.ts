/** Kinds are detected by content: the same files under random names (no extension) get the same kinds. */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectKind } from '../../src/lint/detect.js';
import { lintFiles, lintText } from '../../src/lint/index.js';
import { DESIGN_A, TUTORIAL } from './helpers.js';

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'l20-lint-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('detection by content', () => {
  it('renamed files keep their kind and their findings', async () => {
    const originals = [...walk(TUTORIAL), ...walk(DESIGN_A)];
    const renamed = originals.map((p, i) => {
      const q = join(tmp, `f${i}-${Math.random().toString(36).slice(2, 10)}`);
      copyFileSync(p, q);
      return q;
    });
    const a = await lintFiles(originals);
    const b = await lintFiles(renamed);
    expect(b.files.map((f) => f.kind)).toEqual(a.files.map((f) => f.kind));
    const key = (r: typeof a): string[][] =>
      r.files.map((f) =>
        f.findings.filter((x) => x.rule !== 'R21' && x.rule !== 'R27').map((x) => `${x.rule}@${x.line}`),
      );
    expect(key(b)).toEqual(key(a));
  });

  it.each([
    ['NCCL_IB_TC=106\nNCCL_CROSS_NIC=0\n', 'nccl-conf'],
    ['export NCCL_DEBUG=WARN\nexport NCCL_IB_HCA==mlx5_0:1\n', 'nccl-conf'],
    ['L20_API_KEY=abc\nHF_HOME=/data/hf\n', 'env'],
    ['network:\n  version: 2\n  ethernets:\n    ens1f0: {mtu: 9000}\n', 'netplan-yaml'],
    ['network:\n\tversion: 2\n  ethernets: {\n', 'netplan-yaml'],
    ['[Unit]\nDescription=x\n[Service]\nExecStart=/usr/bin/true\n', 'systemd-unit'],
    ['#!/bin/bash\necho hi\n', 'shell-script'],
    ['sudo mlnx_qos -i ens1f0 --trust dscp\nsudo mlnx_qos -i ens1f1 --trust dscp\n', 'shell-script'],
    ['vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2\n', 'command-line'],
    ['ray start --head --node-ip-address=192.168.101.1 \\\n  --port=6379\n', 'command-line'],
    ['from vllm import LLM\nllm = LLM(model="x")\n', 'python-launcher'],
    ['NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET torchrun --nnodes 2 bench.py\n', 'command-line'],
    [
      '# Title\n\nSome prose that explains how the cluster is built and why.\n\n```bash\nufw disable\n```\n',
      'markdown',
    ],
    ['', 'empty'],
    ['   \n\n', 'empty'],
    ['\u0000\u0001\u0002binary', 'binary'],
    ['lorem ipsum', 'unknown'],
  ])('%j → %s', (text, kind) => {
    expect(detectKind(text)).toBe(kind);
    expect(lintText(text).kind).toBe(kind);
  });

  it('a Markdown fence is linted as the kind of its content', () => {
    const md = [
      '# Setup',
      '',
      'Write the NCCL configuration file as follows:',
      '',
      '```',
      'NCCL_IB_GID_INDEX=3',
      '```',
      '',
      'and the bond:',
      '',
      '```yaml',
      'network:',
      '  bonds:',
      '    bond0:',
      '      interfaces: [ens1f0, ens2f0]',
      '      parameters: {mode: balance-rr, lacp-rate: fast}',
      '```',
      '',
    ].join('\n');
    const { kind, findings } = lintText(md);
    expect(kind).toBe('markdown');
    expect(findings.map((f) => `${f.rule}@${f.line}`)).toEqual(
      expect.arrayContaining(['R05@6', 'R16@15', 'R18@16', 'R22@16']),
    );
  });

  it('the tutorial README read as plain text is still markdown', () => {
    expect(detectKind(readFileSync(join(TUTORIAL, 'README.md'), 'utf8'))).toBe('markdown');
  });
});
