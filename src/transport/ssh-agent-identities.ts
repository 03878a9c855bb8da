/**
 * The identities an ssh-agent holds, asked over its socket in the agent protocol (draft-miller-ssh-agent:
 * SSH_AGENTC_REQUEST_IDENTITIES, answered by SSH_AGENT_IDENTITIES_ANSWER), in pure JS. ssh2's own agent client
 * drops the keys its parser does not know, certificates among them, and certificates are what this is for
 * (certificates.ts). Bounded: one request, an answer of at most 256 KiB (OpenSSH's AGENT_MAX_LEN), and a time
 * limit; every failure rejects with an AgentListError naming the socket.
 */
import { createConnection } from 'node:net';
import { fingerprintSha256 } from './known-hosts.js';
import { keyTypeOfBlob } from './ssh-public-key.js';

const SSH_AGENT_FAILURE = 5;
const SSH_AGENTC_REQUEST_IDENTITIES = 11;
const SSH_AGENT_IDENTITIES_ANSWER = 12;
const AGENT_MAX_LEN = 256 * 1024;
const DEFAULT_TIMEOUT_MS = 2000;

export interface AgentIdentity {
  /** The type named inside the key blob (`ssh-ed25519`, `ssh-ed25519-cert-v01@openssh.com`, …); '?' if unreadable. */
  keyType: string;
  /** `SHA256:…` of the blob (of the whole certificate for a certificate). */
  fingerprint: string;
  /** As the agent gives it (ssh-add records the file name); raw: clean it before showing it. */
  comment: string;
  keyBlob: Buffer;
}

/** The agent could not be asked: absent, refused, too slow, or it answered something else. */
export class AgentListError extends Error {
  constructor(
    readonly socket: string,
    readonly reason: string,
  ) {
    super(`ssh-agent at ${socket}: ${reason}`);
    this.name = 'AgentListError';
  }
}

/** Reads the identities answer's body (after the message type); throws a reason string when malformed. */
function parseIdentities(body: Buffer): AgentIdentity[] {
  let offset = 0;
  const take = (): Buffer => {
    if (offset + 4 > body.length) throw new Error('truncated identities answer');
    const len = body.readUInt32BE(offset);
    if (offset + 4 + len > body.length) throw new Error('truncated identities answer');
    const value = body.subarray(offset + 4, offset + 4 + len);
    offset += 4 + len;
    return value;
  };
  if (body.length < 4) throw new Error('truncated identities answer');
  const count = body.readUInt32BE(0);
  offset = 4;
  const identities: AgentIdentity[] = [];
  for (let i = 0; i < count; i++) {
    const keyBlob = Buffer.from(take());
    const comment = take().toString('utf8');
    const keyType = keyTypeOfBlob(keyBlob) ?? '?';
    identities.push({ keyType, fingerprint: fingerprintSha256(keyBlob), comment, keyBlob });
  }
  return identities;
}

/** Lists the identities of the agent listening on `socket` (a unix socket path, as SSH_AUTH_SOCK names it). */
export function listAgentIdentities(socket: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<AgentIdentity[]> {
  return new Promise((resolve, reject) => {
    const conn = createConnection({ path: socket });
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (err: string | undefined, identities?: AgentIdentity[]): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      conn.destroy();
      if (err !== undefined) reject(new AgentListError(socket, err));
      else resolve(identities ?? []);
    };
    const timer = setTimeout(() => finish(`no answer within ${timeoutMs} ms`), timeoutMs);
    conn.once('connect', () => {
      const request = Buffer.alloc(5);
      request.writeUInt32BE(1, 0);
      request[4] = SSH_AGENTC_REQUEST_IDENTITIES;
      conn.write(request);
    });
    conn.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4) return;
      const len = received.readUInt32BE(0);
      if (len === 0 || len > AGENT_MAX_LEN) return finish(`answer of ${len} bytes (at most ${AGENT_MAX_LEN})`);
      if (received.length < 4 + len) return;
      const type = received[4];
      if (type === SSH_AGENT_FAILURE) return finish('the agent refused to list its identities');
      if (type !== SSH_AGENT_IDENTITIES_ANSWER) return finish(`unexpected answer type ${type}`);
      try {
        finish(undefined, parseIdentities(received.subarray(5, 4 + len)));
      } catch (err) {
        finish((err as Error).message);
      }
    });
    conn.once('error', (err: NodeJS.ErrnoException) => finish(err.code ?? err.message));
    conn.once('close', () => finish('closed the connection before answering'));
  });
}
