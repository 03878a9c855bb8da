/**
 * A host pouring out output must not keep the event loop to itself. libuv reads a socket up to 32 times in
 * one go (2 MB of SSH data), and handling that much output took tens of ms, during which a key the operator
 * pressed waited. Once output has been handled for SLICE_MS since the event loop last came round, the
 * connection's socket stops reading until the loop's next turn: keys, timers and the other hosts go first,
 * and nothing is lost (the kernel holds the data, the SSH window bounds it).
 *
 * ssh2 1.x internals (feature-checked): the client's socket is `_sock`, read in flowing mode.
 */
const SLICE_MS = 8;

/** When output handling began in this turn of the event loop (0: not yet). */
let sliceStart = 0;
const resting = new WeakSet<object>();

type Socket = { pause(): unknown; resume(): unknown; destroyed?: boolean };

export function yieldWhenBusy(client: unknown): void {
  const now = performance.now();
  if (sliceStart === 0) {
    sliceStart = now;
    setImmediate(() => {
      sliceStart = 0;
    });
    return;
  }
  if (now - sliceStart < SLICE_MS) return;
  const sock = (client as { _sock?: Partial<Socket> } | undefined)?._sock;
  if (!sock || typeof sock.pause !== 'function' || typeof sock.resume !== 'function' || resting.has(sock)) return;
  resting.add(sock);
  sock.pause();
  setImmediate(() => {
    resting.delete(sock);
    if (!sock.destroyed) (sock as Socket).resume();
  });
}
