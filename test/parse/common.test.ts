import { describe, expect, it } from 'vitest';
import { cleanText, isPromptLine, normalizeBdf, parseJsonLoose, toInt, toNum } from '../../src/parse/common.js';

describe('cleanText', () => {
  it('converts CRLF, strips ANSI escapes and keeps tabs', () => {
    expect(cleanText('a\tb\r\n\u001b[4mGPU0\u001b[0m\r\n')).toBe('a\tb\nGPU0\n');
  });

  it('drops unmistakable leading prompt lines', () => {
    for (const prompt of [
      'sean@gb10-1:~$ rdma link',
      '[root@master01 network-scripts]# ethtool p4p2',
      '[tgillis@node1019 ~]$ ofed_info -s',
      'root@lg-cmc-gpu-tf-prod-008:~# ethtool -i ens4np0',
      'sh-5.1# ofed_info -s',
      '(base) [szymon.ozog@gh-3714u06 ~]$ lsmod | grep nvidia',
      '((sglang-0.5.9) ) [dcbsr_dev@tpgds-aihub0007 ~]$ nvidia-smi topo -m',
      'root@node2$ lspci | grep Mellanox',
      '[csi-trex-19]> ofed_info ',
    ]) {
      expect(cleanText(`${prompt}\noutput line\n`)).toBe('output line\n');
    }
  });

  it('drops bare `# cmd` / `$ cmd` / pasted command lines only for hinted commands', () => {
    expect(cleanText('# ethtool enp65s0f0\nSettings for enp65s0f0:', { commands: ['ethtool'] })).toBe(
      'Settings for enp65s0f0:',
    );
    expect(cleanText('$ ofed_info -s\nMLNX_OFED_LINUX-4.0-2.0.0.1:', { commands: ['ofed_info'] })).toBe(
      'MLNX_OFED_LINUX-4.0-2.0.0.1:',
    );
    expect(cleanText('ethtool ens16f1np1\nSettings for ens16f1np1:', { commands: ['ethtool'] })).toBe(
      'Settings for ens16f1np1:',
    );
    expect(cleanText('sudo ethtool -i ens1f0\ndriver: mlx5_core', { commands: ['ethtool'] })).toBe('driver: mlx5_core');
    // Output that merely starts with `#` or names the tool is kept.
    expect(cleanText('# gpu   pwr\n# Idx     W')).toBe('# gpu   pwr\n# Idx     W');
    expect(cleanText('ofed_info: command not found', { commands: ['ofed_info'] })).toBe('ofed_info: command not found');
    expect(isPromptLine('# 12', ['rdma'])).toBe(false);
    expect(isPromptLine('(rev ff)')).toBe(false);
  });

  it('removes editor truncation markers', () => {
    expect(cleanText('a\n[... truncated ...]\nb\n[... truncated by excerpt ...]')).toBe('a\nb');
  });

  it('never throws on non-strings', () => {
    expect(cleanText(undefined)).toBe('');
    expect(cleanText(42)).toBe('');
  });
});

describe('helpers', () => {
  it('normalises PCI addresses to the kernel domain form', () => {
    expect(normalizeBdf('1a:00.0')).toBe('0000:1a:00.0');
    expect(normalizeBdf('00000000:18:00.0')).toBe('0000:18:00.0');
    expect(normalizeBdf('00000001:17:00.0')).toBe('0001:17:00.0');
    expect(normalizeBdf('0000000A:00:1C.0')).toBe('000a:00:1c.0');
    expect(normalizeBdf('10000:01:00.0')).toBe('10000:01:00.0');
    expect(normalizeBdf('garbage')).toBeUndefined();
  });

  it('reads numbers strictly', () => {
    expect(toInt('42')).toBe(42);
    expect(toInt('4.2')).toBeUndefined();
    expect(toInt('-')).toBeUndefined();
    expect(toNum('2.5')).toBe(2.5);
    expect(toNum('N/A')).toBeUndefined();
  });

  it('parses JSON after junk, recovers a cut array, reports errors', () => {
    expect(parseJsonLoose('$ ip -j link\n[{"a":1}]\n$ ').value).toEqual([{ a: 1 }]);
    expect(parseJsonLoose('[{"a":1},{"b":2},{"c"')).toEqual({ value: [{ a: 1 }, { b: 2 }], partial: true });
    expect(parseJsonLoose('').error).toBe('empty output');
    expect(parseJsonLoose('Device "x" does not exist.').error).toBe('no JSON document in output');
    expect(parseJsonLoose('[{').error).toMatch(/^invalid JSON/);
  });
});
