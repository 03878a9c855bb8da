/**
 * A real SSH server (ssh2 Server) on 127.0.0.1 for transport tests. Exec requests run the command with
 * `/bin/sh -c` in a new process group; a signal request or the channel closing kills that group. It counts
 * open session channels and refuses more than `maxSessions` the way OpenSSH does ("open failed").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Server, utils, type Connection, type ParsedKey } from 'ssh2';
import { generateEd25519 as generateValidEd25519 } from '../../../src/util/ssh-keys.js';

export interface TestServerStats {
  connections: number;
  execRequests: string[];
  sessionsOpened: number;
  sessionsOpen: number;
  maxSessionsOpen: number;
  sessionsRefused: number;
  signals: string[];
}

export interface TestServer {
  port: number;
  hostKeyBlob: Buffer;
  hostPrivateKey: string;
  clientPrivateKey: string;
  stats: TestServerStats;
  /** Ends every client connection (the client sees the connection drop). */
  dropConnections(): void;
  /** Stops reading from every client connection: a peer that vanished without closing TCP. */
  freezeConnections(): void;
  close(): Promise<void>;
}

export function generateEd25519(): { privateKey: string; publicKey: string; blob: Buffer } {
  const pair = generateValidEd25519();
  const parsed = utils.parseKey(pair.private);
  if (parsed instanceof Error) throw parsed;
  return { privateKey: pair.private, publicKey: pair.public, blob: (parsed as ParsedKey).getPublicSSH() };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // gone
  }
}

export interface TestServerOptions {
  maxSessions?: number;
  hostPrivateKey?: string;
  /** More host keys the server can present (the client picks by its algorithm preference). */
  extraHostKeys?: string[];
  /** Extra environment for the commands (e.g. a PATH with a fake sudo). */
  env?: Record<string, string>;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const maxSessions = options.maxSessions ?? 10;
  const host = options.hostPrivateKey !== undefined ? { privateKey: options.hostPrivateKey } : generateEd25519();
  const hostParsed = utils.parseKey(host.privateKey);
  if (hostParsed instanceof Error) throw hostParsed;
  const client = generateEd25519();
  const clientPub = utils.parseKey(client.publicKey);
  if (clientPub instanceof Error) throw clientPub;
  const clientKey = clientPub as ParsedKey;

  const stats: TestServerStats = {
    connections: 0,
    execRequests: [],
    sessionsOpened: 0,
    sessionsOpen: 0,
    maxSessionsOpen: 0,
    sessionsRefused: 0,
    signals: [],
  };
  const connections = new Set<Connection>();
  const children = new Set<ChildProcess>();

  const server = new Server({ hostKeys: [host.privateKey, ...(options.extraHostKeys ?? [])] }, (conn) => {
    stats.connections++;
    connections.add(conn);
    // Refuse like OpenSSH's MaxSessions: "open failed".
    const proto = (
      conn as unknown as { _protocol: { channelOpenFail: (r: number, reason: number, desc: string) => void } }
    )._protocol;
    const openFail = proto.channelOpenFail.bind(proto);
    proto.channelOpenFail = (recipient, reason, desc) => openFail(recipient, reason, desc || 'open failed');

    conn.on('error', () => undefined);
    conn.on('close', () => connections.delete(conn));
    conn.on('authentication', (ctx) => {
      if (
        ctx.method === 'publickey' &&
        ctx.username === 'tester' &&
        ctx.key.algo === clientKey.type &&
        ctx.key.data.equals(clientKey.getPublicSSH())
      ) {
        if (!ctx.signature || !ctx.blob) return ctx.accept(); // key query
        if (clientKey.verify(ctx.blob, ctx.signature, ctx.hashAlgo)) return ctx.accept();
      }
      ctx.reject(['publickey']);
    });
    conn.on('ready', () => {
      conn.on('session', (accept, reject) => {
        if (stats.sessionsOpen >= maxSessions) {
          stats.sessionsRefused++;
          reject();
          return;
        }
        stats.sessionsOpen++;
        stats.sessionsOpened++;
        stats.maxSessionsOpen = Math.max(stats.maxSessionsOpen, stats.sessionsOpen);
        const session = accept();
        let child: ChildProcess | undefined;
        let closed = false;
        session.once('close', () => {
          if (closed) return;
          closed = true;
          stats.sessionsOpen--;
          if (child && child.exitCode === null && child.signalCode === null) killGroup(child, 'SIGTERM');
        });
        session.on('signal', (acceptSignal, _reject, info) => {
          stats.signals.push(info.name);
          if (child) killGroup(child, `SIG${info.name}` as NodeJS.Signals);
          acceptSignal?.();
        });
        session.on('exec', (acceptExec, _reject, info) => {
          stats.execRequests.push(info.command);
          const stream = acceptExec();
          const proc = spawn('/bin/sh', ['-c', info.command], {
            detached: true,
            stdio: ['pipe', 'pipe', 'pipe'],
            env: { ...process.env, ...options.env },
          });
          child = proc;
          children.add(proc);
          proc.stdin.on('error', () => undefined);
          stream.on('error', () => undefined);
          stream.pipe(proc.stdin);
          proc.stdout.pipe(stream, { end: false });
          proc.stderr.pipe(stream.stderr, { end: false });
          proc.on('close', (code, signal) => {
            children.delete(proc);
            if (closed) return;
            try {
              if (code !== null) stream.exit(code);
              else stream.exit(String(signal ?? 'KILL').replace(/^SIG/, ''), false, '');
              stream.end();
            } catch {
              // channel already gone
            }
          });
          stream.on('close', () => {
            if (proc.exitCode === null && proc.signalCode === null) killGroup(proc, 'SIGTERM');
          });
        });
      });
    });
  });

  // Like sshd (TCP_NODELAY for interactive sessions): no Nagle delay on small packets.
  (server as unknown as { _srv: import('node:net').Server })._srv.on('connection', (socket) => socket.setNoDelay(true));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');

  return {
    port: address.port,
    hostKeyBlob: (hostParsed as ParsedKey).getPublicSSH(),
    hostPrivateKey: host.privateKey,
    clientPrivateKey: client.privateKey,
    stats,
    dropConnections() {
      for (const c of connections) c.end();
    },
    freezeConnections() {
      for (const c of connections) {
        const sock = (c as unknown as { _sock: import('node:net').Socket })._sock;
        sock.pause();
        sock.removeAllListeners('data');
      }
    },
    async close() {
      for (const child of children) killGroup(child, 'SIGKILL');
      for (const c of connections) (c as unknown as { _sock: import('node:net').Socket })._sock.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `condition` until it holds (or fails after `timeoutMs`). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
