/**
 * Special files at every reader: a FIFO, /dev/zero, /dev/urandom, a directory, a socket and a too-big regular
 * file given as a key, known_hosts, ssh config, inventory, doctor or lint input are refused by name, in bounded
 * time (the CLI is spawned with a hard timeout) and memory. Deep YAML is refused with a message, NUL-tailed
 * text is linted as text, and a missing explicit identity file is named in the connect error.
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../src/util/ssh-keys.js';
import { cutLong } from '../../src/util/cut-long.js';
import { looksBinary, readFileSafely, readFileSafelySync } from '../../src/util/read-file-safely.js';
import { yamlTooDeepAt } from '../../src/parse/yaml-depth.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'l20-setup.js');
const LIMIT_MS = 10_000;

let dir: string;
let sock: Server;
const special: Record<string, { path: string; what: RegExp }> = {};

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  ms: number;
  maxRssKb: number;
}

/** Runs the CLI under /usr/bin/time (max RSS) with a hard kill after LIMIT_MS. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const timeFile = join(dir, `time.${Math.random().toString(36).slice(2)}`);
  const started = Date.now();
  const p = spawn('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, BIN, ...args], {
    env: { ...process.env, NO_COLOR: '1', SSH_AUTH_SOCK: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const killer = setTimeout(() => p.kill('SIGKILL'), LIMIT_MS);
  return new Promise((resolve) => {
    p.on('close', (code, signal) => {
      clearTimeout(killer);
      let maxRssKb = 0;
      try {
        maxRssKb = Number(execFileSync('tail', ['-n1', timeFile]).toString().trim());
      } catch {
        /* killed before time wrote */
      }
      resolve({ code, signal, out, ms: Date.now() - started, maxRssKb });
    });
  });
}

function inventory(name: string, host: { key: string; knownHosts: string }): string {
  const file = join(dir, `${name}.json`);
  const h = (n: string, role: string) => ({
    name: n,
    address: '127.0.0.1',
    port: 1,
    user: 'root',
    role,
    mgmtInterface: 'eno1',
    auth: { method: 'identityFile', path: host.key },
    knownHostsFile: host.knownHosts,
  });
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      hosts: [h('n1', 'head'), h('n2', 'worker')],
      network: { design: 'A', mtu: 9000 },
      qos: { priority: 3, dscp: 26, trust: 'dscp' },
      nccl: { gidIndex: 'auto', crossNic: 0, debug: 'WARN' },
      ray: { port: 6379, dashboardPort: 8265 },
      vllm: { model: 'Qwen/Qwen2.5-7B-Instruct', port: 8000, layout: 'auto' },
    }),
  );
  return file;
}

const figures: Array<{ reader: string; file: string; ms: number; rssKb: number }> = [];
function expectRefused(r: Ran, reader: string, file: string, what: RegExp): void {
  expect(r.signal, `${reader} on ${file} was killed after ${LIMIT_MS} ms: ${r.out}`).toBeNull();
  expect(r.code, r.out).toBe(2);
  expect(r.out).toContain(special[file]?.path ?? file);
  expect(r.out).toMatch(what);
  expect(r.maxRssKb, 'max RSS').toBeLessThan(400 * 1024);
  figures.push({ reader, file, ms: r.ms, rssKb: r.maxRssKb });
}

let goodKey: string;
let goodKnownHosts: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'l20-special-'));
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const directory = join(dir, 'a-directory');
  mkdirSync(directory);
  const socketPath = join(dir, 'a-socket');
  sock = createServer();
  await new Promise<void>((r) => sock.listen(socketPath, r));
  const big = join(dir, 'big');
  writeFileSync(big, '');
  truncateSync(big, 300 * 1024 * 1024); // sparse: above every cap, costs no disk
  special.fifo = { path: fifo, what: /is a FIFO \(named pipe\), not a file/ };
  special['/dev/zero'] = { path: '/dev/zero', what: /is a character device, not a file/ };
  special['/dev/urandom'] = { path: '/dev/urandom', what: /is a character device, not a file/ };
  special.directory = { path: directory, what: /is a directory, not a file/ };
  special.socket = { path: socketPath, what: /is a socket, not a file/ };
  special.big = { path: big, what: /is larger than \d+ (MiB|KiB)/ };
  goodKey = join(dir, 'id_ed25519');
  writeFileSync(goodKey, generateEd25519().private, { mode: 0o600 });
  goodKnownHosts = join(dir, 'known_hosts');
  writeFileSync(goodKnownHosts, '');
});

afterAll(() => {
  sock.close();
  rmSync(dir, { recursive: true, force: true });
  // The figures for docs/RELIABILITY.md.
  const worst = { ms: Math.max(0, ...figures.map((f) => f.ms)), rssKb: Math.max(0, ...figures.map((f) => f.rssKb)) };
  console.log(`special files: ${figures.length} refused by name; max ${worst.ms} ms, max RSS ${worst.rssKb} KiB`);
});

const FILES = ['fifo', '/dev/zero', '/dev/urandom', 'directory', 'socket', 'big'];

describe('special files are refused by name, in bounded time and memory', () => {
  it.each(FILES)('doctor and lint refuse %s', async (name) => {
    const { path, what } = special[name]!;
    expectRefused(await cli(['doctor', path]), 'doctor', name, what);
    expectRefused(await cli(['lint', path]), 'lint', name, what);
  });

  it.each(FILES)('an inventory that is %s is refused', async (name) => {
    const { path, what } = special[name]!;
    expectRefused(await cli(['check', '--stage', 'inventory', '--inventory', path]), 'inventory', name, what);
  });

  it.each(FILES)('a key that is %s is refused before connecting', async (name) => {
    const { path, what } = special[name]!;
    const inv = inventory(`key-${name.replace(/\W/g, '')}`, { key: path, knownHosts: goodKnownHosts });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv]);
    expectRefused(r, 'key', name, what);
    expect(r.out).toMatch(/no usable SSH key/);
  });

  it.each(FILES)('a known_hosts that is %s is refused by name before connecting', async (name) => {
    const { path, what } = special[name]!;
    const inv = inventory(`kh-${name.replace(/\W/g, '')}`, { key: goodKey, knownHosts: path });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv]);
    expectRefused(r, 'known_hosts', name, what);
    expect(r.out).toMatch(/known_hosts/);
    expect(r.out).not.toMatch(/ECONNREFUSED/);
  });

  const notDirectory = FILES.filter((f) => f !== 'directory');
  it.each(notDirectory)('an ~/.ssh/config Include that is %s is refused by name', async (name) => {
    const { path, what } = special[name]!;
    const home = join(dir, `home-${name.replace(/\W/g, '')}`);
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'config'), `Include ${path}\n`, { mode: 0o600 });
    const inv = inventory(`cfg-${name.replace(/\W/g, '')}`, { key: goodKey, knownHosts: goodKnownHosts });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv], { HOME: home });
    expectRefused(r, 'ssh config', name, what);
  });

  it('an ~/.ssh/config Include that is a directory is skipped, as the real ssh skips it (oracle)', async () => {
    const home = join(dir, 'home-include-dir');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'config'), `Include ${special.directory!.path}\n`, { mode: 0o600 });
    const inv = inventory('cfg-include-dir', { key: goodKey, knownHosts: goodKnownHosts });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv], { HOME: home });
    expect(r.out).not.toContain(special.directory!.path);
    expect(r.out).toMatch(/cannot connect to root@127\.0\.0\.1:1/);
  });

  it('a FIFO key does not hold the process: SIGTERM is not needed, and the event loop stays live', async () => {
    // The refusal above returns at once; nothing waits on the FIFO, so no writer ever has to open it.
    const inv = inventory('fifo-again', { key: special.fifo!.path, knownHosts: goodKnownHosts });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv]);
    expect(r.ms).toBeLessThan(LIMIT_MS);
    expect(r.signal).toBeNull();
  });
});

describe('contents that broke the readers', () => {
  it('the null device reads as an empty file, as OpenSSH reads UserKnownHostsFile /dev/null; /dev/zero does not', async () => {
    expect((await readFileSafely('/dev/null', 'known_hosts')).length).toBe(0);
    expect(readFileSafelySync('/dev/null', 'known_hosts').length).toBe(0);
    await expect(readFileSafely('/dev/zero', 'known_hosts')).rejects.toThrow(/is a character device, not a file/);
    expect(() => readFileSafelySync('/dev/zero', 'known_hosts')).toThrow(/is a character device, not a file/);
  });
  it('a missing identity file the inventory names is named in the connect error', async () => {
    const missing = join(dir, 'no-such-key');
    const inv = inventory('missing', { key: missing, knownHosts: goodKnownHosts });
    const r = await cli(['check', '--stage', 'inventory', '--inventory', inv]);
    expect(r.code).toBe(2);
    expect(r.out).toContain(`no such identity: ${missing}`);
  });

  it('one trailing NUL leaves an nccl.conf text: lint still finds the HIGH finding and exits 1', async () => {
    const file = join(dir, 'nccl.conf');
    writeFileSync(file, 'NCCL_NET_GDR_LEVEL=0\n\0');
    const r = await cli(['lint', file]);
    expect(r.out).toMatch(/HIGH\s+R04/);
    expect(r.code).toBe(1);
    expect(looksBinary(Buffer.from('a\0b\n'))).toBe(true);
    expect(looksBinary(Buffer.from('a=b\n\0\0\0'))).toBe(false);
  });

  it('a 3000-level nested netplan is refused with a message, not a stack overflow', async () => {
    const flow = join(dir, 'deep-flow.yaml');
    const nested = `${'['.repeat(3000)}${']'.repeat(3000)}`;
    writeFileSync(flow, `network:\n  version: 2\n  ethernets:\n    eth0:\n      x: ${nested}\n`);
    const block = join(dir, 'deep-block.yaml');
    let text = 'network:\n';
    for (let i = 0; i < 3000; i++) text += `${' '.repeat(i + 1)}k${i}:\n`;
    writeFileSync(block, text);
    for (const file of [flow, block]) {
      for (const verb of ['lint', 'doctor']) {
        const r = await cli([verb, file]);
        expect(r.signal).toBeNull();
        expect(r.out).not.toMatch(/call stack/i);
        expect(r.out).toMatch(/nested more than 64 levels deep/);
      }
    }
    // (3000 block levels need 4.5 MB of indentation, over the inventory cap: the flow form tests the depth.)
    const r = await cli(['check', '--stage', 'inventory', '--inventory', flow]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/nested more than 64 levels deep/);
    expect(yamlTooDeepAt('network:\n  ethernets:\n    eth0:\n      addresses: [10.0.0.1/24]\n')).toBeUndefined();
  });

  it('doctor and lint cut a 50 MB single-line value and say how long it was', async () => {
    const file = join(dir, 'long.conf');
    const value = 'A'.repeat(50 * 1024 * 1024);
    writeFileSync(file, `NCCL_NET_GDR_LEVEL=${value}\nNCCL_P2P_LEVEL=5\n`);
    for (const verb of ['doctor', 'lint']) {
      const r = await cli([verb, file]);
      expect(r.signal).toBeNull();
      expect(r.out.length).toBeLessThan(20_000);
      if (verb === 'doctor') expect(r.out).toContain(`… (${value.length} characters)`);
    }
    expect(cutLong('x'.repeat(5000))).toBe(`${'x'.repeat(1000)}… (5000 characters)`);
  });
});
