import { describe, expect, it } from 'vitest';
import * as c from '../../checks/os/checks.js';
import type { OsFacts } from '../../checks/os/facts.js';
import { collectOs } from '../../checks/os/facts.js';
import type { HostCheckDef, PairCheckDef } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';

const ctx = testContext();
const run = (stdout: string, exitCode = 0, stderr = ''): RunResult => ({
  commandLine: 'x',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});
const host = (check: unknown, f: OsFacts) => (check as HostCheckDef<OsFacts>).evaluate(f, f.host, ctx);

function facts(over: Record<string, RunResult> = {}): OsFacts {
  return collectOs({
    host: 'l20-n1',
    results: {
      sudo: run(''),
      packages: run(
        'ii  chrony 4.2-2ubuntu2\nii  pciutils 1:3.7.0-6\nii  ethtool 1:5.16-1ubuntu0.1\nii  iproute2 5.15.0-1ubuntu2\nii  jq 1.6-2.1ubuntu3\nii  curl 7.81.0-1ubuntu1.18\nii  python3-venv 3.10.6-1~22.04.1\nii  lldpd 1.0.13-1\n',
        1,
        'dpkg-query: no packages found matching ibutils\ndpkg-query: no packages found matching ifenslave\ndpkg-query: no packages found matching ntp\n',
      ),
      'held-candidates': run(
        'ii  linux-generic 5.15.0.126.125\nii  linux-image-generic 5.15.0.126.125\n',
        1,
        'dpkg-query: no packages found matching nvidia-driver-*\n',
      ),
      'ntp-sync': run('yes\n'),
      memlock: run('unlimited\n'),
      holds: run('linux-generic\nlinux-image-generic\n'),
      hostname: run('l20-n1\n'),
      ...over,
    },
  });
}

describe('os checks', () => {
  it('a prepared host passes every host check', () => {
    const f = facts();
    for (const check of [c.sudoCheck, c.packagesCheck, c.timeSyncCheck, c.memlockCheck, c.holdsCheck]) {
      expect(host(check, f).status, check.id).toBe('pass');
    }
  });
  it('names what is missing and how to fix it', () => {
    expect(host(c.sudoCheck, facts({ sudo: run('', 1, 'sudo: a password is required\n') }))).toMatchObject({
      status: 'fail',
      evidence: expect.stringContaining('a password is required'),
    });
    const pk = host(
      c.packagesCheck,
      facts({ packages: run('ii  chrony 4.2-2ubuntu2\n', 1, 'dpkg-query: no packages found matching lldpd\n') }),
    );
    expect(pk.status).toBe('fail');
    expect(pk.summary).toContain('lldpd');
    expect(host(c.timeSyncCheck, facts({ 'ntp-sync': run('no\n') }))).toMatchObject({ status: 'fail', rule: 'R51' });
    expect(host(c.memlockCheck, facts({ memlock: run('8192\n') }))).toMatchObject({
      status: 'fail',
      rule: 'R35',
      summary: expect.stringContaining('8192'),
    });
    expect(host(c.holdsCheck, facts({ holds: run('') })).status).toBe('warn');
  });
  it('pair: duplicate host names fail, clock skew above 0.5 s warns', () => {
    const a = facts();
    const b = { ...facts(), host: 'l20-n2' };
    const pair = c.hostnamesCheck as PairCheckDef<OsFacts, c.OsCluster>;
    const offsets = (x: number) => ({
      offsets: [
        { host: 'l20-n1', offsetS: 0, evidence: '' },
        { host: 'l20-n2', offsetS: x, evidence: '' },
      ],
    });
    expect(
      pair.evaluate(
        [
          { host: 'l20-n1', facts: a },
          { host: 'l20-n2', facts: b },
        ],
        { ...ctx, cluster: offsets(0.01) },
      ).status,
    ).toBe('fail');
    const b2 = { ...b, hostname: 'l20-n2' };
    expect(
      pair.evaluate(
        [
          { host: 'l20-n1', facts: a },
          { host: 'l20-n2', facts: b2 },
        ],
        { ...ctx, cluster: offsets(0.01) },
      ).status,
    ).toBe('pass');
    expect(
      pair.evaluate(
        [
          { host: 'l20-n1', facts: a },
          { host: 'l20-n2', facts: b2 },
        ],
        { ...ctx, cluster: offsets(0.9) },
      ),
    ).toMatchObject({ status: 'warn', rule: 'R51' });
  });
});
