/**
 * A probe whose tool is missing, that sudo refused, or that needed systemd says nothing about the host: the
 * checks resting on it say "cannot tell" and name the package. And no check may pass without evidence.
 */
import { describe, expect, it } from 'vitest';
import { cannotTellVerdict, notFoundTools, probeProblems, toolRemedy } from '../../src/engine/probe-health.js';
import { groundedVerdict, placeholderIn } from '../../src/engine/verdict-guard.js';
import type { ProbeDef } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { STAGES } from '../../checks/stages.js';

const result = (over: Partial<RunResult>): RunResult => ({
  commandLine: 'lspci -D -nn -d 10de:',
  exitCode: 0,
  signal: null,
  stdout: '',
  stderr: '',
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
  ...over,
});

describe('missing tools', () => {
  it('reads every form a shell, sudo, dash, env and command-not-found use', () => {
    expect(notFoundTools('bash: line 1: lspci: command not found\n')).toEqual(['lspci']);
    expect(notFoundTools('sudo: ethtool: command not found\n')).toEqual(['ethtool']);
    const cnf = "Command 'nvidia-smi' not found, but can be installed with:\n\nsudo apt install nvidia-utils-535\n";
    expect(notFoundTools(cnf)).toEqual(['nvidia-smi']);
    expect(notFoundTools('sh: 1: rdma: not found\n')).toEqual(['rdma']);
    expect(notFoundTools("env: 'ip': No such file or directory\n")).toEqual(['ip']);
    expect(notFoundTools('ls: cannot access x: No such file or directory\n')).toEqual([]);
  });

  it('an argv probe that exits 127 names its program and package', () => {
    const probe: ProbeDef = { id: 'lspci-gpus', command: { argv: ['lspci', '-D', '-nn', '-d', '10de:'] } };
    const problems = probeProblems(probe, result({ exitCode: 127, stderr: 'bash: lspci: command not found\n' }));
    expect(problems).toMatchObject([{ kind: 'missing-tool', tool: 'lspci' }]);
    const v = cannotTellVerdict(problems, 'n1');
    expect(v.status).toBe('error');
    expect(v.summary).toBe('cannot tell: lspci is not installed on n1 (package pciutils)');
    expect(v.fix).toContain('sudo apt-get install -y pciutils');
    expect(v.evidence).toContain('bash: lspci: command not found');
  });

  it('a script probe counts only the tools it declares; an undeclared miss is left to its collect', () => {
    const probe: ProbeDef = {
      id: 'ethtool',
      command: { script: 'lspci -d 15b3:; ethtool x; lldpcli show' },
      tools: ['ethtool'],
    };
    const stderr = 'bash: line 3: lldpcli: command not found\nbash: line 2: ethtool: command not found\n';
    const out = result({ exitCode: 0, stderr });
    expect(probeProblems(probe, out).map((p) => p.kind === 'missing-tool' && p.tool)).toEqual(['ethtool']);
  });

  it('sudo refusals and a host without systemd are their own reasons', () => {
    const sudo: ProbeDef = { id: 'pcie', command: { script: 'lspci -vv' }, sudo: true, tools: ['lspci'] };
    const refused = result({ exitCode: 1, stderr: 'sudo: a password is required\n' });
    expect(probeProblems(sudo, refused)).toMatchObject([{ kind: 'sudo' }]);
    const unit: ProbeDef = { id: 'units', command: { argv: ['systemctl', 'is-active', 'chrony'] } };
    const said = "System has not been booted with systemd as init system (PID 1). Can't operate.\n";
    const problems = probeProblems(unit, result({ exitCode: 1, stdout: said }));
    expect(problems).toMatchObject([{ kind: 'unit-manager' }]);
    expect(cannotTellVerdict(problems, 'n1').summary).toContain('no systemd unit manager');
  });

  it('a root probe on a host without sudo names sudo, whatever the probe runs', () => {
    const probe: ProbeDef = { id: 'pcie', command: { script: 'lspci -vv' }, sudo: true, tools: ['lspci'] };
    const problems = probeProblems(probe, result({ exitCode: 127, stderr: 'bash: line 1: sudo: command not found\n' }));
    expect(problems).toMatchObject([{ kind: 'missing-tool', tool: 'sudo' }]);
    expect(cannotTellVerdict(problems, 'n1').summary).toBe('cannot tell: sudo is not installed on n1 (package sudo)');
  });

  it('an accepted absence under sudo is not blamed on sudo', () => {
    const probe: ProbeDef = { id: 'dkms', command: { argv: ['dkms', 'status'] }, sudo: true, tools: [] };
    expect(probeProblems(probe, result({ exitCode: 127, stderr: 'env: ‘dkms’: No such file or directory\n' }))).toEqual(
      [],
    );
  });

  it('nvidia-smi comes with the driver, not a package of its own name', () => {
    expect(toolRemedy('nvidia-smi').install).toContain('gpu-driver.install');
    expect(toolRemedy('ip').package).toBe('iproute2');
  });

  it('an output that ran fine is no problem', () => {
    const probe: ProbeDef = { id: 'lspci-gpus', command: { argv: ['lspci'] } };
    const listed = result({ stdout: '0000:3b:00.0 3D controller [0302]: NVIDIA Corporation ...\n' });
    expect(probeProblems(probe, listed)).toEqual([]);
  });
});

describe('verdicts rest on evidence', () => {
  it('a pass with no evidence, or with a value never read, is "cannot tell"', () => {
    expect(groundedVerdict({ status: 'pass', summary: '0 cables mapped', evidence: '' }).status).toBe('error');
    const gid = groundedVerdict({ status: 'pass', summary: 'GID at index ? on its netdev', evidence: 'x' });
    expect(gid.status).toBe('error');
    const width = groundedVerdict({ status: 'warn', summary: 'ok', evidence: 'LnkSta 16GT/s x?' });
    expect(width.summary).toMatch(/^cannot tell/);
    expect(groundedVerdict({ status: 'pass', summary: 'driver undefined', evidence: 'x' }).status).toBe('error');
    expect(groundedVerdict({ status: 'pass', summary: 'rate NaN Gb/s', evidence: 'x' }).status).toBe('error');
  });

  it('leaves honest verdicts and questions in prose alone', () => {
    const evidence = '0000:3b:00.0 3D controller: NVIDIA [10de:26ba]';
    const v = { status: 'pass' as const, summary: '8 × NVIDIA L20', evidence };
    expect(groundedVerdict(v)).toEqual(v);
    expect(placeholderIn('is the daemon still running?')).toBeUndefined();
    expect(placeholderIn('ibverbs-utils missing?')).toBeUndefined();
    expect(placeholderIn('firmware ? on 1 hosts')).toBe('firmware ? on 1 hosts');
    const fail = { status: 'fail' as const, summary: 'x', evidence: '' };
    expect(groundedVerdict(fail)).toEqual(fail);
  });

  it('every check names only probes its stage runs', () => {
    const wrong: string[] = [];
    for (const stage of STAGES) {
      const probes = new Set(stage.probes.map((p) => p.id));
      for (const check of stage.checks) {
        for (const n of check.needs ?? []) if (!probes.has(n)) wrong.push(`${check.id} → ${n}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
