/**
 * A small SSH exec server (ssh2 `Server`) standing in for sshd on the device tool's H200 machine, which
 * has none: `check`, `monitor` and `bundle` then reach the real host over real SSH on 127.0.0.1.
 * Usage: node exec-server.mjs DIR — writes DIR/id_ed25519 (the one client key it accepts),
 * DIR/known_hosts (its generated host key, for [127.0.0.1]:PORT) and DIR/port, then serves until killed;
 * every exec is also kept in DIR/execs.jsonl (command line, stdin, stdout, stderr, exit), which the
 * tests replay (test/device/check-replay.test.ts).
 * Each `exec` runs through `bash -c` as the current user; stdin, stdout, stderr, the exit status and
 * signals pass through (a signal request goes to the command's process group, as a cancel needs).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';

const { Server, utils } = ssh2;
const dir = process.argv[2];
if (!dir) throw new Error('usage: node exec-server.mjs DIR');

const hostPair = utils.generateKeyPairSync('ed25519');
const clientPair = utils.generateKeyPairSync('ed25519');
const allowed = utils.parseKey(clientPair.public);
const allowedBlob = allowed.getPublicSSH();
const user = userInfo().username;
const SIGNALS = new Set(['HUP', 'INT', 'KILL', 'TERM', 'QUIT', 'USR1', 'USR2', 'ALRM', 'PIPE']);

/**
 * ssh2 passes `signal` requests to the session only before exec; afterwards they target the exec
 * channel and are dropped. Wrapping the connection's CHANNEL_REQUEST handler (ssh2 1.x internals)
 * delivers them to the running command, as sshd does.
 */
function interceptSignals(client, targets) {
  const handlers = client._protocol?._handlers;
  const orig = handlers?.CHANNEL_REQUEST;
  if (typeof orig !== 'function') return;
  handlers.CHANNEL_REQUEST = (p, recipient, type, wantReply, data) => {
    const target = type === 'signal' ? targets.get(recipient) : undefined;
    if (!target) return orig(p, recipient, type, wantReply, data);
    target(String(data).replace(/^SIG/, ''));
    return undefined;
  };
}

function runExec(channel, command, env, targets) {
  const child = spawn('bash', ['-c', command], { env: { ...process.env, ...env }, detached: true, stdio: 'pipe' });
  const signalGroup = (name) => {
    if (child.exitCode !== null || child.signalCode !== null || !SIGNALS.has(name)) return;
    try {
      process.kill(-child.pid, `SIG${name}`);
    } catch {
      /* already gone */
    }
  };
  targets.set(channel.incoming.id, signalGroup);
  const kept = { stdin: [], stdout: [], stderr: [] };
  child.stdin.on('error', () => undefined);
  channel.on('data', (d) => {
    kept.stdin.push(d);
    child.stdin.write(d);
  });
  channel.on('end', () => child.stdin.end());
  child.stdout.on('data', (d) => kept.stdout.push(d));
  child.stderr.on('data', (d) => kept.stderr.push(d));
  child.stdout.pipe(channel, { end: false });
  child.stderr.pipe(channel.stderr, { end: false });
  // The client went away before the command ended: sshd hangs its session up.
  channel.on('close', () => signalGroup('HUP'));
  child.on('close', (code, signal) => {
    targets.delete(channel.incoming.id);
    const text = (chunks) => Buffer.concat(chunks).toString('utf8');
    const entry = {
      line: command,
      stdin: text(kept.stdin),
      stdout: text(kept.stdout),
      stderr: text(kept.stderr),
      code,
      signal,
    };
    appendFileSync(join(dir, 'execs.jsonl'), `${JSON.stringify(entry)}\n`);
    if (signal) channel.exit(signal.replace(/^SIG/, ''), false, '');
    else channel.exit(code ?? 255);
    channel.end();
  });
}

const server = new Server({ hostKeys: [hostPair.private] }, (client, info) => {
  const targets = new Map();
  interceptSignals(client, targets);
  client.on('authentication', (ctx) => {
    const ok =
      ctx.method === 'publickey' &&
      ctx.username === user &&
      ctx.key.algo === allowed.type &&
      ctx.key.data.equals(allowedBlob);
    if (!ok) return ctx.reject(['publickey']);
    // Without a signature the client only asks whether the key would do.
    if (!ctx.signature || !ctx.blob) return ctx.accept();
    return allowed.verify(ctx.blob, ctx.signature, ctx.hashAlgo) ? ctx.accept() : ctx.reject(['publickey']);
  });
  client.on('ready', () => {
    client.on('session', (acceptSession) => {
      const session = acceptSession();
      const env = {
        SSH_CONNECTION: `${info.ip} ${info.port} 127.0.0.1 ${server.address().port}`,
        SSH_CLIENT: `${info.ip} ${info.port} ${server.address().port}`,
      };
      session.on('env', (accept, _reject, e) => {
        env[e.key] = e.val;
        accept?.();
      });
      session.on('pty', (accept) => accept?.());
      session.on('exec', (accept, _reject, e) => runExec(accept(), e.command, { ...env }, targets));
    });
  });
  client.on('error', () => undefined);
});

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  writeFileSync(join(dir, 'id_ed25519'), clientPair.private, { mode: 0o600 });
  const hostPublic = utils.parseKey(hostPair.public);
  const line = `[127.0.0.1]:${port} ${hostPublic.type} ${hostPublic.getPublicSSH().toString('base64')}\n`;
  writeFileSync(join(dir, 'known_hosts'), line);
  writeFileSync(join(dir, 'port'), `${port}\n`);
  process.stdout.write(`exec-server: ${user}@127.0.0.1:${port}\n`);
});
