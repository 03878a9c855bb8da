/** Waiting on the monitor: the first published frame that satisfies a condition. */
import type { MonitorSession } from '../../src/monitor/session.js';
import type { MonitorFrame } from '../../src/monitor/types.js';

export function frameWhere(
  session: MonitorSession,
  ok: (f: MonitorFrame) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<MonitorFrame> {
  return new Promise((resolve, reject) => {
    let last: MonitorFrame | undefined;
    const timer = setTimeout(() => {
      off();
      reject(
        new Error(
          `timed out waiting for ${what}; last sample: ${JSON.stringify(last?.sample.hosts.map((h) => ({ name: h.name, stale: h.stale, error: h.error, ports: h.ports, alerts: h.alerts })))}`,
        ),
      );
    }, timeoutMs);
    const off = session.subscribe((f) => {
      last = f;
      if (!ok(f)) return;
      clearTimeout(timer);
      off();
      resolve(f);
    });
  });
}
