/**
 * The os stage's package guard on the lab: a clean host costs one read; an apt-get cut off mid-unpack is
 * finished (dpkg --configure -a, then apt-get -f install for the half-installed package); a dpkg lock held by
 * a live process is waited for and never broken — past the bound the guard says who holds it and leaves it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostRunner } from '../../src/engine/types.js';
import {
  PACKAGE_STATE_COMMAND,
  interrupted,
  parsePackageState,
  repairPackageState,
} from '../../checks/os/package-guard.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { waitFor } from '../lab/helpers.js';

let t: LabTarget;
const ran: string[] = [];
const run: HostRunner = (_host, _label, command, o = {}) => {
  ran.push('argv' in command ? command.argv.join(' ') : 'script');
  return t.hosts[0]!.run(command, {
    ...(o.sudo ? { sudo: true } : {}),
    ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
  });
};

beforeAll(async () => {
  t = await labTarget({ scenario: 'fresh', speed: 40, hosts: 1 });
}, 60_000);
afterAll(() => t?.close());

/** An apt-get install cancelled while it unpacks `pkg`: what Ctrl-C in the TUI leaves. */
async function cutOff(pkg: string): Promise<void> {
  const ac = new AbortController();
  const install = t.hosts[0]!.run({ argv: ['apt-get', 'install', '-y', pkg] }, { sudo: true, signal: ac.signal });
  await waitFor(() => t.lab.hosts[0]!.machine.packages.get(pkg)?.status === 'iH ', `${pkg} to be unpacking`, 30_000);
  ac.abort();
  expect((await install).cancelled).toBe(true);
  expect(interrupted(parsePackageState(await t.hosts[0]!.run(PACKAGE_STATE_COMMAND)))).toBe(true);
}

describe('the package guard', () => {
  it('on a clean host it only reads', async () => {
    ran.length = 0;
    expect(await repairPackageState(run, 'l20-n1')).toMatchObject({ outcome: 'clean', ran: [] });
    expect(ran).toEqual(['script']);
  });

  it('finishes an install cut off mid-unpack: configure -a, then apt-get -f install', async () => {
    await cutOff('jq');
    const notes: string[] = [];
    const r = await repairPackageState(run, 'l20-n1', { note: (l) => notes.push(l) });
    expect(r.outcome).toBe('repaired');
    expect(r.ran).toEqual(['dpkg --configure -a', 'apt-get -f install -y']);
    expect(notes[0]).toMatch(
      new RegExp(
        '^l20-n1: a package operation was interrupted ' +
          '\\(\\d+ dpkg journal entr(y|ies) in /var/lib/dpkg/updates; dpkg --audit: (\\S+, )*jq\\)',
      ),
    );
    expect(parsePackageState(await t.hosts[0]!.run(PACKAGE_STATE_COMMAND))).toEqual({ audit: '', journal: [] });
    expect((await t.hosts[0]!.run({ script: 'command -v jq\n' })).stdout).toBe('/usr/bin/jq\n');
  });

  it('waits for a live lock holder, never breaks the lock, and names it once the bound passes', async () => {
    await cutOff('lldpd');
    const apt = t.lab.hosts[0]!.machine.apt!;
    apt.lock = { pid: 4242, command: 'unattended-upgr' };
    const busy = await repairPackageState(run, 'l20-n1', { lockWaitMs: 300, retryMs: 50 });
    expect(busy.outcome).toBe('busy');
    expect(busy.detail).toContain('held by live process 4242');
    expect(busy.detail).toContain('never broken');
    expect(apt.lock).toEqual({ pid: 4242, command: 'unattended-upgr' });
    expect(interrupted(parsePackageState(await t.hosts[0]!.run(PACKAGE_STATE_COMMAND)))).toBe(true);

    // The holder finishes while the guard waits: it goes on and repairs.
    const notes: string[] = [];
    const waiting = repairPackageState(run, 'l20-n1', { lockWaitMs: 60_000, retryMs: 50, note: (l) => notes.push(l) });
    const waitingNoted = () => notes.some((l) => l.includes('waiting for it to finish'));
    await waitFor(waitingNoted, 'the guard to wait on the lock', 30_000);
    apt.lock = undefined;
    expect((await waiting).outcome).toBe('repaired');
    expect(parsePackageState(await t.hosts[0]!.run(PACKAGE_STATE_COMMAND))).toEqual({ audit: '', journal: [] });
  });
});
