/**
 * One cluster served by two labs (startLab's `serve`, as lab processes on separate CPUs would): each
 * serves its own hosts under the one client key, both model the whole cluster from the same seed,
 * so a host sees its cable peer in the other lab as LLDP neighbour exactly as in a single lab, and
 * their clocks agree when they start the simulated time at one instant.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLab, type Lab } from '../../lab/index.js';
import { LAB_EPOCH_MS } from '../../lab/util/clock.js';
import { generateEd25519 } from '../../src/util/ssh-keys.js';
import { connect, exec, text } from './helpers.js';

const NEIGHBOURS = 'sudo -n lldpcli -f keyvalue show neighbors';

describe('a cluster served by two labs', () => {
  let whole: Lab;
  let first: Lab;
  let second: Lab;
  const clockStartedAt = Date.now() - 3_600_000;

  beforeAll(async () => {
    const clientKey = generateEd25519('l20-setup-lab');
    [whole, first, second] = await Promise.all([
      startLab({ hosts: 2, scenario: 'ready' }),
      startLab({ hosts: 2, scenario: 'ready', serve: [0], clientKey, clockStartedAt }),
      startLab({ hosts: 2, scenario: 'ready', serve: [1], clientKey, clockStartedAt }),
    ]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([whole, first, second].map((l) => l?.close()));
  });

  test('each lab serves its slice, and both accept the one client key', async () => {
    expect(first.hosts.map((h) => h.name)).toEqual(['l20-n1']);
    expect(second.hosts.map((h) => h.name)).toEqual(['l20-n2']);
    expect(second.clientPrivateKey).toBe(first.clientPrivateKey);
    for (const lab of [first, second]) {
      const c = await connect(lab, lab.hosts[0]!);
      try {
        expect(text(await exec(c, 'hostname'))).toEqual({ out: `${lab.hosts[0]!.name}\n`, err: '', code: 0 });
      } finally {
        c.end();
      }
    }
  });

  test('a host sees its peer in the other lab as it does in a single lab', async () => {
    const split = await connect(first, first.hosts[0]!);
    const single = await connect(whole, whole.hosts[0]!);
    try {
      const seen = text(await exec(split, NEIGHBOURS));
      expect(seen.code).toBe(0);
      expect(seen.out).toContain('lldp.ens1f0.chassis.name=l20-n2\n');
      expect(seen).toEqual(text(await exec(single, NEIGHBOURS)));
    } finally {
      split.end();
      single.end();
    }
  });

  test('both labs read the simulated time from the shared start instant', async () => {
    for (const lab of [first, second]) {
      const c = await connect(lab, lab.hosts[0]!);
      try {
        const before = Date.now();
        const remote = Number(text(await exec(c, 'date +%s.%N')).out) * 1000;
        const after = Date.now();
        // The simulated time has flowed since the shared instant, an hour before the test.
        expect(remote).toBeGreaterThanOrEqual(LAB_EPOCH_MS + (before - clockStartedAt) - 1);
        expect(remote).toBeLessThanOrEqual(LAB_EPOCH_MS + (after - clockStartedAt) + 1);
      } finally {
        c.end();
      }
    }
  });

  test('a slice naming no host of the cluster is refused', async () => {
    await expect(startLab({ hosts: 2, serve: [2] })).rejects.toThrow('lab: serve: no host 2 among 2');
  });
});
