/**
 * The monitor watching the lab under load (lab/load.ts: vllm bench serve on the head, ib_write_bw
 * rail after rail) — values move as the work runs — and, with node 2's PFC off, the alerts an operator
 * must see: discards on the lossless priority and the pause frames of the mismatch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { startLabLoad, type LabLoad } from '../../lab/load.js';
import { MonitorSession } from '../../src/monitor/session.js';
import { frameWhere } from '../helpers/monitor.js';

describe('monitor on the lab under load, node 2 without PFC', () => {
  let t: LabTarget;
  let load: LabLoad;
  let session: MonitorSession;
  beforeAll(async () => {
    t = await labTarget({ speed: 1, scenario: 'ready+pfc-mismatch' });
    load = await startLabLoad(t.lab);
    session = new MonitorSession(t.hosts, { intervalMs: 500, config: t.config });
    session.start();
  });
  afterAll(async () => {
    await session?.stop();
    await load?.stop();
    await t?.close();
  });

  it('shows the GPUs busy, vLLM generating and RDMA crossing the first rail', async () => {
    const f = await frameWhere(
      session,
      (x) => {
        const [a, b] = x.sample.hosts;
        return (
          (a?.ports[0]?.txGbps ?? 0) > 10 &&
          (b?.ports[0]?.rxGbps ?? 0) > 10 &&
          (a?.vllm?.generationTokensPerSec ?? 0) > 0 &&
          (a?.gpus.every((g) => (g.utilPct ?? 0) >= 90) ?? false)
        );
      },
      'load on GPUs, vLLM and rail 1',
      45_000,
    );
    const [a, b] = f.sample.hosts;
    expect(a?.ports[0]?.rdmaTxGbps).toBeGreaterThan(10);
    expect(a?.ports[0]?.txGbps).toBeLessThanOrEqual(25);
    expect(b?.gpus.every((g) => (g.utilPct ?? 0) >= 90)).toBe(true); // the headless engines on node 2 work too
    expect(a?.vllm?.running).toBeGreaterThan(0);
    expect(a?.gpus[0]?.powerW).toBeGreaterThan(200);
    // The history has filled: the util sparkline of GPU 0 has points at 1 s resolution.
    expect(f.history['l20-n1']?.['gpu0.util']?.filter((v) => v !== null).length).toBeGreaterThan(1);
  }, 60_000);

  it('flags the receiver dropping on the lossless priority and counts the pause frames', async () => {
    const f = await frameWhere(
      session,
      (x) => x.sample.hosts[1]?.alerts.some((a) => a.kind === 'discards') ?? false,
      'a discards alert on node 2',
      45_000,
    );
    const n2 = f.sample.hosts[1]!;
    const alert = n2.alerts.find((a) => a.kind === 'discards')!;
    expect(alert).toMatchObject({
      severity: 'fail',
      subject: n2.ports.find((p) => (p.discardsPerSec ?? 0) > 0)?.netdev,
    });
    expect(alert.message).toMatch(/R26/);
    const pauses = f.sample.hosts
      .flatMap((h) => h.ports)
      .reduce((s, p) => s + Object.values(p.pauseTxPerSec).reduce((x, y) => x + y, 0), 0);
    expect(pauses).toBeGreaterThan(0);
  }, 60_000);
});
