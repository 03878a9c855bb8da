import { mkdtempSync, readFileSync, writeFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadInventoryFile, SavedConfig, validateCluster, writeInventoryFile } from '../../src/config/store.js';
import { ConfigError } from '../../src/config/errors.js';
import type { ClusterInput } from '../../src/config/schema.js';

const good: ClusterInput = {
  hosts: [
    { name: 'l20-n1', address: '10.0.0.1', user: 'ubuntu', role: 'head', auth: { method: 'agent' } },
    { name: 'l20-n2', address: 'l20-n2.lab.example', port: 2222, role: 'worker', fabricPorts: ['ens1f0', 'ens1f1np1'] },
  ],
};

function problemsOf(input: unknown): string[] {
  try {
    validateCluster(input, 'test.json');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('cluster schema', () => {
  it('accepts a valid inventory and fills defaults', () => {
    const c = validateCluster(good, 'x');
    expect(c.network.design).toBe('A');
    expect(c.qos).toEqual({ priority: 3, dscp: 26, trust: 'dscp' });
    expect(c.hosts[1]?.port).toBe(2222);
  });

  it('names the field, the value and what is expected', () => {
    const p = problemsOf({ hosts: [{ ...good.hosts[0], port: 70000 }] });
    expect(p[0]).toMatch(/^hosts\[0\]\.port = 70000: .*65535/);
    const q = problemsOf({ hosts: [{ ...good.hosts[0], user: 'root; rm -rf /' }] });
    expect(q[0]).toContain('hosts[0].user = "root; rm -rf /": expected a POSIX user name');
    const r = problemsOf({ hosts: [{ ...good.hosts[0], fabricPorts: ['ens1f0', 'eth0 && reboot'] }] });
    expect(r[0]).toContain('hosts[0].fabricPorts[1] = "eth0 && reboot": expected an interface name');
  });

  it('rejects unknown fields, duplicate names and a DSCP that does not map to the PFC priority', () => {
    expect(problemsOf({ hosts: [{ ...good.hosts[0], pasword: 'x' }] })[0]).toContain('unknown field "pasword"');
    expect(problemsOf({ hosts: [good.hosts[0], good.hosts[0]] })[0]).toContain('unique host names');
    expect(problemsOf({ ...good, qos: { priority: 3, dscp: 46 } })[0]).toContain('qos.dscp');
  });

  it('shows control characters in bad values escaped, never raw', () => {
    const p = problemsOf({ hosts: [{ ...good.hosts[0], name: 'evil\u001b]52;c;AAAA\u0007' }] });
    expect(p[0]).not.toMatch(/\u001b/);
    expect(p[0]).toContain('\\u001b');
  });
});

describe('inventory files and the saved config', () => {
  it('writes atomically and reads back JSON and YAML', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-cfg-'));
    const file = join(dir, 'inv.json');
    await writeInventoryFile(file, good);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect((await loadInventoryFile(file)).hosts).toHaveLength(2);
    expect(readdirSync(dir)).toEqual(['inv.json']);
    const yml = join(dir, 'inv.yaml');
    writeFileSync(yml, 'hosts:\n  - name: a\n    address: 10.0.0.9\n    role: head\n');
    expect((await loadInventoryFile(yml)).hosts[0]?.address).toBe('10.0.0.9');
  });

  it('refuses to write an invalid inventory and leaves the old file intact', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-cfg-'));
    const file = join(dir, 'inv.json');
    await writeInventoryFile(file, good);
    const before = readFileSync(file, 'utf8');
    await expect(
      writeInventoryFile(file, { hosts: [{ name: 'x', address: 'bad host', role: 'head' }] }),
    ).rejects.toThrow(/hosts\[0\]\.address/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('reports unreadable and malformed files clearly', async () => {
    await expect(loadInventoryFile('/nonexistent/inv.json')).rejects.toThrow(/cannot read inventory .*ENOENT/);
    const dir = mkdtempSync(join(tmpdir(), 'l20-cfg-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "hosts": [ ');
    await expect(loadInventoryFile(bad)).rejects.toThrow(/not valid JSON or YAML/);
  });

  it('SavedConfig saves only valid configs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'l20-conf-'));
    const saved = new SavedConfig({ cwd: dir });
    expect(saved.load()).toBeUndefined();
    saved.save(good);
    expect(saved.load()?.hosts.map((h) => h.name)).toEqual(['l20-n1', 'l20-n2']);
    expect(() => saved.save({ hosts: [] })).toThrow(ConfigError);
    expect(saved.load()?.hosts).toHaveLength(2);
    expect(existsSync(saved.path)).toBe(true);
  });
});
