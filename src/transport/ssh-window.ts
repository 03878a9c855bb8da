/**
 * Backpressure at the SSH window. When the session log falls behind a host pouring out output, reading must
 * slow down. Pausing the channel stream would keep what the server already had window for (up to 2 MB per
 * channel) as received Buffers until it resumes; over a long stream those outlive the young-generation
 * collections, pile up in the old generation and wait for a full collection: tens of MB of RSS. Instead the
 * channel keeps flowing and its window adjustments are withheld: the server stops once the window it has is
 * used up, and every byte that arrives is handled at once.
 *
 * ssh2 1.x internals (feature-checked, like sendSignal in ssh-exec.ts): ssh2 grants window by calling
 * `_protocol.channelWindowAdjust(remoteId, amount)` after counting the amount in `channel.incoming.window`.
 * Holding the message back leaves the server's window smaller than ssh2 believes, never larger, so the server
 * never sends what ssh2 would drop; releasing sends the sum, and the two agree again.
 */
import type { ClientChannel } from 'ssh2';
import type { OutputFlow } from './output.js';

type Protocol = { channelWindowAdjust: (remoteId: number, amount: number) => unknown };

/** Per connection: the original sender and, per remote channel id held back, the amount withheld so far. */
const held = new WeakMap<
  Protocol,
  { send: (remoteId: number, amount: number) => unknown; amounts: Map<number, number> }
>();

function valvesOf(protocol: Protocol) {
  let v = held.get(protocol);
  if (!v) {
    const send = protocol.channelWindowAdjust.bind(protocol);
    const amounts = new Map<number, number>();
    v = { send, amounts };
    held.set(protocol, v);
    protocol.channelWindowAdjust = (remoteId: number, amount: number) => {
      const withheld = amounts.get(remoteId);
      if (withheld === undefined) return send(remoteId, amount);
      amounts.set(remoteId, withheld + amount);
      return true;
    };
  }
  return v;
}

/** A flow control over `channel`'s window, or undefined where ssh2 does not look as expected (pause instead). */
export function windowValve(channel: ClientChannel): (OutputFlow & { forget(): void }) | undefined {
  const c = channel as unknown as {
    outgoing?: { id?: unknown; state?: unknown };
    incoming?: { state?: unknown };
    _client?: { _protocol?: Partial<Protocol> };
  };
  const protocol = c._client?._protocol;
  const remoteId = c.outgoing?.id;
  if (!protocol || typeof protocol.channelWindowAdjust !== 'function' || typeof remoteId !== 'number') return undefined;
  const v = valvesOf(protocol as Protocol);
  // The server reuses a closed channel's id: window withheld for this one must never reach the next.
  const open = () => (c.outgoing?.state === 'open' || c.outgoing?.state === 'eof') && c.incoming?.state !== 'closed';
  return {
    stop: () => {
      if (!v.amounts.has(remoteId)) v.amounts.set(remoteId, 0);
    },
    start: () => {
      const amount = v.amounts.get(remoteId);
      v.amounts.delete(remoteId);
      if (amount && open()) v.send(remoteId, amount);
    },
    forget: () => {
      v.amounts.delete(remoteId);
    },
  };
}
