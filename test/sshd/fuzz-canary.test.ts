/**
 * The fuzz's hostile strings through a real OpenSSH server and real bash/sudo (issue 7): every string
 * comes back byte-identical in every form the transport builds — argv, argv under sudo (through the sudo
 * wrapper), an environment value, and arguments to a `bash -s` script, as both test users — and the
 * canary file every injection payload tries to create never appears (the server is this machine, so the
 * canary is checked right here). Figure: `fuzz sshd: N strings × 4 forms × 2 users, 0 injected`.
 */
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/transport/ssh.js';
import { batches, caseRng, hostileAtoms, hostileString, shellSpecial, show } from '../helpers/fuzz.js';
import { startSshd, type Sshd } from '../helpers/sshd.js';

const SEED = 20261130;
const canary = `/tmp/l20-sshd-canary-${process.pid}`;
let sshd: Sshd;
const hosts: SshHost[] = [];

beforeAll(async () => {
  rmSync(canary, { force: true });
  sshd = await startSshd();
});
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
  await sshd?.stop();
  rmSync(canary, { force: true });
});

describe('real sshd: hostile strings stay data', () => {
  it('every string comes back byte-identical in argv, sudo, env and bash -s forms; the canary never appears', async () => {
    const rng = caseRng(SEED, 0);
    // NUL cannot be in an argument (the transport refuses it); everything else goes.
    const words = [
      ...hostileAtoms(canary),
      ...Array.from({ length: 2000 }, () => hostileString(rng, { canary, bigChars: 20_000 })),
    ].filter((w) => !w.includes('\0'));
    expect(words.filter(shellSpecial).length).toBeGreaterThan(1500);
    const problems: string[] = [];
    for (const user of [sshd.users.nopw, sshd.users.cli]) {
      const h = new SshHost(sshd.hostOptions(user));
      hosts.push(h);
      for (const batch of batches(words, 48_000)) {
        const names = batch.map((_, i) => `FUZZ_W${i}`);
        const forms: Array<[string, Promise<{ stdout: string; exitCode: number | null; stderr: string }>]> = [
          ['argv', h.run({ argv: ['printf', '%s\\0', ...batch] })],
          ['bash -s', h.run({ script: 'printf "%s\\0" "$@"\n', args: batch })],
          [
            'env',
            h.run(
              { script: `for n in ${names.join(' ')}; do printf '%s\\0' "\${!n}"; done\n` },
              { env: Object.fromEntries(names.map((n, i) => [n, batch[i]!])) },
            ),
          ],
        ];
        // Passwordless sudo only: l20t-cli's sudo asks for a password this file does not set.
        if (user === sshd.users.nopw)
          forms.push(['sudo', h.run({ argv: ['printf', '%s\\0', ...batch] }, { sudo: true })]);
        for (const [form, pending] of forms) {
          const r = await pending;
          const got = r.stdout.split('\0');
          const bad = batch
            .map((w, i) => (got[i] === w ? '' : `${user} ${form} word ${i}: sent ${show(w)}, got ${show(got[i])}`))
            .filter(Boolean);
          problems.push(
            ...bad.slice(0, 3),
            ...(r.exitCode === 0
              ? []
              : [`${user} ${form}: exit ${r.exitCode} ${r.stderr.slice(0, 200)} (${batch.length} words)`]),
          );
        }
      }
    }
    console.log(
      `fuzz sshd: ${words.length} strings (${words.filter(shellSpecial).length} a shell treats specially) × 4 forms as the passwordless user, × 3 as the other, ${problems.length} mismatches, ${existsSync(canary) ? 'INJECTED' : '0 injected'}`,
    );
    expect(problems).toEqual([]);
    expect(existsSync(canary)).toBe(false);
  }, 180_000);
});
