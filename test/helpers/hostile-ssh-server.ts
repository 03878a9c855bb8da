/**
 * A hostile SSH server on loopback (node `net`), for the inert-text tests: optional pre-identification lines,
 * an identification line, then an unencrypted SSH_MSG_DISCONNECT (RFC 4253 §6 binary packet, §11.1 message)
 * whose description holds terminal control sequences. No key exchange ever happens: anyone in the path can
 * send this, before any host key is checked.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';

const ESC = '\u001b';
const BEL = '\u0007';
/**
 * OSC 52 (clipboard), OSC 0 (title "pwned"), CSI 2J (clear), C1 CSI U+009B, RLO U+202E and BEL: what a
 * terminal would execute if any of it reached the operator's screen.
 */
export const HOSTILE_TEXT = `${ESC}]52;c;aGk=${BEL}${ESC}]0;pwned${BEL}${ESC}[2J\u009b2J\u202eevil${BEL}`;

/** SSH_MSG_DISCONNECT (byte 1, uint32 reason, string description, string language) as a binary packet. */
export function disconnectPacket(description: string, reason = 2): Buffer {
  const desc = Buffer.from(description, 'utf8');
  const payload = Buffer.alloc(1 + 4 + 4 + desc.length + 4);
  payload[0] = 1;
  payload.writeUInt32BE(reason, 1);
  payload.writeUInt32BE(desc.length, 5);
  desc.copy(payload, 9);
  payload.writeUInt32BE(0, 9 + desc.length); // language tag: empty
  // packet_length (4) + padding_length (1) + payload + padding is a multiple of 8, with at least 4 bytes of padding.
  let padding = 8 - ((5 + payload.length) % 8);
  if (padding < 4) padding += 8;
  const head = Buffer.alloc(5);
  head.writeUInt32BE(1 + payload.length + padding, 0);
  head[4] = padding;
  return Buffer.concat([head, payload, randomBytes(padding)]);
}

export interface HostileServerOptions {
  /** Lines sent before the identification line (RFC 4253 §4.2 allows them; clients must ignore them). */
  preIdent?: string[];
  /** The identification line, without CRLF. */
  ident?: string;
  /** The SSH_MSG_DISCONNECT description. */
  description?: string;
}

/** Listens on 127.0.0.1 on a free port; every connection gets the same bytes, then the socket is ended. */
export async function hostileSshServer(
  o: HostileServerOptions = {},
): Promise<{ port: number; close(): Promise<void> }> {
  const lines = [...(o.preIdent ?? []), o.ident ?? 'SSH-2.0-OpenSSH_9.6'].map((l) => `${l}\r\n`).join('');
  const bytes = Buffer.concat([Buffer.from(lines, 'utf8'), disconnectPacket(o.description ?? HOSTILE_TEXT)]);
  const open = new Set<Socket>();
  const server: Server = createServer((sock) => {
    open.add(sock);
    sock.on('close', () => open.delete(sock));
    sock.on('error', () => undefined); // the client may reset first
    sock.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('hostile server: no TCP address');
  return {
    port: address.port,
    // A client that never closes its side would keep server.close() waiting: those sockets are destroyed.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const sock of open) sock.destroy();
      }),
  };
}
