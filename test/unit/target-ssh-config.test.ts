/** An inventory address through an ssh config OpenSSH refuses: a ConfigError naming file and line, no connection. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/errors.js';
import { hostFromConfig } from '../../src/target.js';

const savedHome = process.env.HOME;
let home: string | undefined;
afterEach(() => {
  process.env.HOME = savedHome;
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('hostFromConfig and a refused ~/.ssh/config', () => {
  it('throws a ConfigError with the file, line and reason', () => {
    home = mkdtempSync(join(tmpdir(), 'l20-target-home-'));
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    const config = join(home, '.ssh', 'config');
    writeFileSync(config, 'Host gpu-a\n  HostName 10.0.0.1\n  Port 70000\n', { mode: 0o600 });
    process.env.HOME = home;
    let err: unknown;
    try {
      hostFromConfig({ name: 'l20-n1', address: 'gpu-a', role: 'head' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(
      `l20-n1: ${config} line 3: Bad port '70000' (OpenSSH refuses this; ssh would exit 255)`,
    );
  });
});
