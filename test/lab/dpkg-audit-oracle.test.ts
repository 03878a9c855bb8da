/**
 * Real dpkg is the oracle for the lab's `dpkg --audit`: an apt-get cut off mid-unpack in the lab, then the
 * same package states written as a dpkg status file in a scratch admin directory (never this machine's) and
 * audited by the real dpkg with --admindir. Both must print the same. The guard reads the same text.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab, LabHost } from '../../lab/index.js';
import { describe as describePackage } from '../../lab/apt/dpkg-db.js';
import { qualifiedName } from '../../lab/apt/archive.js';
import { closeLab, collect, openExec, openLab, sh, waitFor } from './helpers.js';

let lab: Lab;
let host: LabHost;
let c: Client;
const admin = mkdtempSync(join(tmpdir(), 'l20-dpkg-admin-'));

beforeAll(async () => {
  ({ lab, host, conn: c } = await openLab({ speed: 40, hosts: 1 }));
});
afterAll(async () => {
  await closeLab(lab, c);
  rmSync(admin, { recursive: true, force: true });
});

const WORDS: Record<string, string> = { i: 'installed', U: 'unpacked', F: 'half-configured', H: 'half-installed' };

test('the lab prints what real dpkg --audit prints for the same half-done install', async () => {
  const found = spawnSync('sh', ['-c', 'command -v dpkg'], { encoding: 'utf8' });
  if (found.status !== 0) throw new Error('dpkg is not installed: apt-get install dpkg (CI installs it)');

  // Modelled time stands still while jq is half-installed (a wait then ends only when the signal
  // aborts it), so the TERM always lands in that state however slow this machine is.
  const clock = host.machine.clock;
  const flowing = clock.sleep.bind(clock);
  const held = vi.spyOn(clock, 'sleep').mockImplementation((ms, signal, wallClock) => {
    if (host.machine.packages.get('jq')?.status !== 'iH ' || !signal) return flowing(ms, signal, wallClock);
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true }));
  });
  const ch = await openExec(c, 'sudo apt-get install -y jq');
  const done = collect(ch);
  await waitFor(() => host.machine.packages.get('jq')?.status === 'iH ', 'jq to be unpacking', 30_000);
  ch.signal('TERM');
  await done;
  held.mockRestore();
  const lab = await sh(c, 'LC_ALL=C dpkg --audit');
  expect(lab.out).toContain('half installed');

  // The lab's broken packages as a status file (with the control files dpkg expects beside each).
  const broken = [...host.machine.packages.values()].filter((p) => 'UFH'.includes(p.status[1] ?? ''));
  expect(broken.length).toBeGreaterThan(0);
  mkdirSync(join(admin, 'info'), { recursive: true });
  mkdirSync(join(admin, 'updates'), { recursive: true });
  // The multiarch layout of info/ (control files of Multi-Arch: same packages are named pkg:arch.*).
  writeFileSync(join(admin, 'info', 'format'), '1\n');
  const stanzas = broken.map((p) => {
    const shown = qualifiedName(p.name);
    for (const ext of ['list', 'md5sums']) writeFileSync(join(admin, 'info', `${shown}.${ext}`), '');
    return [
      `Package: ${p.name}`,
      `Status: install ok ${WORDS[p.status[1] ?? 'U']}`,
      'Priority: optional',
      'Section: misc',
      'Maintainer: Ubuntu Developers <ubuntu-devel-discuss@lists.ubuntu.com>',
      `Architecture: ${p.arch}`,
      ...(shown.includes(':') ? ['Multi-Arch: same'] : []),
      `Version: ${p.version}`,
      `Description: ${describePackage(p)?.description.split('\n')[0] ?? ''}`,
      '',
    ].join('\n');
  });
  writeFileSync(join(admin, 'status'), `${stanzas.join('\n')}\n`);
  writeFileSync(join(admin, 'available'), '');
  const env = { ...process.env, LC_ALL: 'C' };
  const real = spawnSync('dpkg', [`--admindir=${admin}`, '--audit'], { encoding: 'utf8', env });
  expect(real.stderr).toBe('');
  expect(real.status).toBe(lab.code);
  expect(lab.out).toBe(real.stdout);
});
