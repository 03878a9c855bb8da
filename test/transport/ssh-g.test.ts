/**
 * `ssh -G` as the source of truth (src/transport/ssh-g.ts): over the oracle's corpus the built-in resolver and
 * the real ssh agree (no disagreement warning); where they disagree ssh's value wins with a warning naming
 * the field, both values and the built-in's line; ssh's refusal is an SshConfigError at its file and line;
 * without ssh the built-in resolver is used with a note.
 */
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SshConfigError } from '../../src/transport/ssh-config-read.js';
import { parseSshG, resolveThroughSsh, runSshG } from '../../src/transport/ssh-g.js';
import { corpusAliases, corpusContext, corpusTrees, installTree, removeAll } from './helpers/ssh-config-corpus.js';

const temps: string[] = [];
afterAll(() => removeAll(temps));

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'l20-sshg-'));
  temps.push(d);
  return d;
}

/** A stand-in `ssh` that runs the real one and rewrites its output (a client that resolves differently). */
function standIn(dir: string, script: string): string {
  const path = join(dir, 'ssh');
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('ssh -G and the built-in resolver', () => {
  it('agree on every corpus alias; both refuse what ssh refuses', () => {
    let agreed = 0;
    let refused = 0;
    const problems: string[] = [];
    for (const tree of corpusTrees()) {
      const home = installTree(tree, temps);
      const { env, ctx } = corpusContext(home);
      const configFile = join(home, '.ssh', 'config');
      for (const alias of corpusAliases(tree)) {
        let r;
        try {
          r = resolveThroughSsh(alias, ctx, { configFile, env });
        } catch (e) {
          if (!(e instanceof SshConfigError)) throw e;
          refused++;
          continue;
        }
        const disagreements = r.resolved.warnings.filter((w) => w.startsWith('ssh -G disagrees'));
        if (r.by !== 'ssh -G') problems.push(`${tree}/${alias}: resolved by ${r.by} (${r.note})`);
        else if (disagreements.length > 0) problems.push(`${tree}/${alias}: ${disagreements.join('; ')}`);
        else agreed++;
      }
    }
    expect(problems).toEqual([]);
    expect(agreed).toBeGreaterThanOrEqual(50);
    expect(refused).toBeGreaterThanOrEqual(20);
  }, 60_000);

  it('where they disagree, ssh wins and a warning names the field, both values and the line', () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  HostName 10.0.0.5\n  Port 2201\n  GSSAPIAuthentication no\n');
    // As a newer OpenSSH with a feature the built-in parser lacks would: another port, GSSAPI on.
    const rewrite = `-e 's/^port .*/port 2299/' -e 's/^gssapiauthentication .*/gssapiauthentication yes/'`;
    const ssh = standIn(dir, `ssh "$@" | sed ${rewrite}`);
    const { ctx } = corpusContext(dir);
    const r = resolveThroughSsh('gpu', ctx, { configFile: config, sshBinary: ssh });
    expect(r.by).toBe('ssh -G');
    expect(r.resolved.port).toBe(2299);
    expect(r.resolved.sources.port).toBe('ssh -G');
    expect(r.resolved.hostName).toBe('10.0.0.5');
    expect(r.resolved.sources.hostName).toBe(`${config}:2`);
    expect(r.resolved.gssapiAuthentication).toBe(true);
    expect(r.resolved.warnings).toEqual([
      `ssh -G disagrees on port: ssh 2299, built-in 2201 (from ${config}:3); ssh's value is used`,
      `ssh -G disagrees on gssapiAuthentication: ssh true, built-in false (from ${config}:4); ssh's value is used`,
    ]);
  });

  it('an IdentityFile that only ssh sees is expanded like the built-in would', () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  IdentityFile ~/.ssh/a\n');
    const ssh = standIn(dir, `ssh "$@" | sed -e 's|^identityfile .*|identityfile ~/.ssh/k_%h|'`);
    const { ctx } = corpusContext(dir);
    const r = resolveThroughSsh('gpu', ctx, { configFile: config, sshBinary: ssh });
    expect(r.resolved.identityFilesConfigured).toEqual(['~/.ssh/k_%h']);
    expect(r.resolved.identityFiles).toEqual([`${userInfo().homedir}/.ssh/k_gpu`]);
    expect(r.resolved.sources.identityFiles).toEqual(['ssh -G']);
  });

  it("ssh's refusal is an SshConfigError at the file and line it names", () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  HostName 10.0.0.5\n');
    const ssh = standIn(dir, `echo "${config} line 2: Unsupported option \\"frob\\"." >&2; exit 255`);
    const { ctx } = corpusContext(dir);
    let error: unknown;
    try {
      resolveThroughSsh('gpu', ctx, { configFile: config, sshBinary: ssh });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SshConfigError);
    expect(error).toMatchObject({ file: config, line: 2, reason: 'Unsupported option "frob"' });
  });

  it('without ssh on PATH the built-in resolver is used, with a note', () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  Port 2201\n');
    const { ctx } = corpusContext(dir);
    const r = resolveThroughSsh('gpu', ctx, { configFile: config, env: { PATH: join(dir, 'empty') } });
    expect(r.by).toBe('built-in');
    expect(r.note).toMatch(/ssh -G not consulted \(no ssh on PATH\)/);
    expect(r.resolved.port).toBe(2201);
    expect(r.resolved.warnings).toEqual([]);
  });

  it('an ssh that is not OpenSSH (no -G, exit 1) leaves the built-in resolver, with a note', () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  Port 2201\n');
    const ssh = standIn(dir, 'echo "unknown option -- G" >&2; exit 1');
    const { ctx } = corpusContext(dir);
    const r = resolveThroughSsh('gpu', ctx, { configFile: config, sshBinary: ssh });
    expect(r.by).toBe('built-in');
    expect(r.note).toBe(`ssh -G not consulted (${ssh} -G exited 1: not OpenSSH's ssh?): the built-in resolver alone`);
  });

  it('a HOME other than the account home (ssh would read other files) leaves ssh -G out', () => {
    const dir = tempDir();
    const config = join(dir, 'config');
    writeFileSync(config, 'Host gpu\n  Port 2201\n');
    const { ctx } = corpusContext(dir);
    const r = resolveThroughSsh('gpu', { ...ctx, homeDir: dir }, { configFile: config });
    expect(r.by).toBe('built-in');
    expect(r.note).toContain(`HOME ${dir} is not the account's home`);
  });

  it('refuses an alias that ssh would read as an option; parses keyword lines', () => {
    expect(() => runSshG('-oProxyCommand=x')).toThrow(SshConfigError);
    expect(parseSshG('user root\nidentityfile ~/a\nidentityfile ~/b\n\n')).toEqual(
      new Map([
        ['user', ['root']],
        ['identityfile', ['~/a', '~/b']],
      ]),
    );
  });
});
