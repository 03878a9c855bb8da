/**
 * A pasted `lsmod | grep …` that printed nothing: the command line, then the next prompt (or the end of the
 * paste). That silence is grep's answer: no loaded module matches. Samples are shaped as terminal transcripts
 * look (prompts as bash, zsh and root shells print them; kmod's lsmod row format for the loaded case).
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { LsmodFacts } from '../../src/parse/lsmod.js';
import { ansiWrap, toCrlf } from '../parse/fixtures.js';

const d14 = (text: string): ReturnType<typeof doctorText>['report']['findings'] =>
  doctorText(text).report.findings.filter((f) => f.rule === 'D14');

describe('lsmod | grep that printed nothing', () => {
  const samples: Record<string, string> = {
    'bare $ prompt, nothing after': '$ lsmod | grep nvidia_peermem\n',
    'bare $ prompt, then an empty prompt': '$ lsmod | grep nvidia_peermem\n$ \n',
    'root prompt, then the next prompt': 'root@l20-n1:~# lsmod | grep nvidia_peermem\nroot@l20-n1:~# \n',
    'user prompt, then the next command':
      'ubuntu@gpu-node-2:~$ lsmod | grep nvidia_peermem\nubuntu@gpu-node-2:~$ sudo modprobe nvidia-peermem\n',
    'RHEL prompt, nv_peer_mem': '[root@node01 ~]# lsmod | grep nv_peer_mem\n[root@node01 ~]#\n',
    'bare # prompt, then modprobe': '# lsmod | grep -i peermem\n# modprobe nvidia-peermem\n',
    'sudo, egrep': 'admin@h1:~$ sudo lsmod | egrep "nvidia_peermem|nv_peer_mem"\nadmin@h1:~$\n',
  };
  for (const [name, text] of Object.entries(samples)) {
    it(`${name}: lsmod, module not loaded (D14)`, () => {
      const { report } = doctorText(text);
      expect(report.kind).toBe('lsmod');
      const f = report.facts as LsmodFacts;
      expect(f.modules).toEqual([]);
      expect(f.grep?.empty).toBe(true);
      const d = d14(text);
      expect(d).toHaveLength(1);
      expect(d[0]?.evidence).toContain('printed nothing');
    });
  }

  it('an output pasted after the empty grep is the kind; lsmod is listed under also', () => {
    const text = [
      'ubuntu@gpu-node-2:~$ lsmod | grep nvidia_peermem',
      'ubuntu@gpu-node-2:~$ ofed_info -s',
      'OFED-internal-24.10-1.1.4:',
    ].join('\n');
    const { report } = doctorText(text);
    expect(report.kind).toBe('ofed_info');
    expect(report.also).toContain('lsmod');
  });

  it('a cut row after the command line is output, not silence', () => {
    const text = '$ lsmod | grep nvidia\nnvidia_peermem    163';
    expect((doctorText(text).report.facts as LsmodFacts).grep?.empty).toBeUndefined();
    expect(d14(text)).toEqual([]);
  });

  it('survives CRLF and colour escapes', () => {
    const text = 'root@l20-n1:~# lsmod | grep nvidia_peermem\nroot@l20-n1:~# \n';
    for (const t of [toCrlf(text), ansiWrap(text)]) {
      expect(doctorText(t).report.kind).toBe('lsmod');
      expect(d14(t)).toHaveLength(1);
    }
  });

  it('the summary says not loaded', () => {
    const { summary } = doctorText('$ lsmod | grep nvidia_peermem\n$\n');
    expect(summary.find(([k]) => k === 'peermem')?.[1]).toMatch(/^not loaded/);
  });

  it('a later listing that shows the module wins over an earlier empty grep', () => {
    const text = [
      'ubuntu@gpu:~$ lsmod | grep nvidia_peermem',
      'ubuntu@gpu:~$ sudo modprobe nvidia-peermem',
      'ubuntu@gpu:~$ lsmod | grep nvidia_peermem',
      'nvidia_peermem         16384  0',
      'ib_core               434176  9 nvidia_peermem,rdma_ucm,ib_uverbs,mlx5_ib',
      'ubuntu@gpu:~$',
    ].join('\n');
    expect(doctorText(text).report.kind).toBe('lsmod');
    expect(d14(text)).toEqual([]);
  });

  it('an empty grep for another module proves nothing about peermem', () => {
    const text = '$ lsmod | grep mlx5_ib\n$\n';
    expect(doctorText(text).report.kind).toBe('lsmod');
    expect(d14(text)).toEqual([]);
  });

  it('grep -q / -c print no lines whatever matched: their silence is no answer', () => {
    for (const text of ['$ lsmod | grep -q nvidia_peermem\n$\n', '$ lsmod | grep -c nvidia_peermem\n$\n']) {
      expect(d14(text)).toEqual([]);
    }
  });

  it('a grep inside a script line is not a typed command', () => {
    const text = 'if ! lsmod | grep nvidia_peermem; then modprobe nvidia-peermem; fi\n';
    expect(d14(text)).toEqual([]);
  });
});
