/**
 * The monitor against the lab over real SSH: whole samples, no process per sample (channel opens
 * counted on the lab's SSH servers), and a host that stops answering goes stale within seconds while
 * the other keeps updating, then comes back by itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { MonitorSession } from '../../src/monitor/session.js';
import { frameWhere } from '../helpers/monitor.js';
import type { MonitorSample } from '../../src/monitor/types.js';
import { notifyManagement } from '../../lab/tools/mgmt-path.js';

describe('monitor on the lab', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ speed: 1, scenario: 'ready' });
  });
  afterAll(async () => t?.close());

  it('delivers complete samples from both hosts and opens no channel per sample over 30 samples', async () => {
    const session = new MonitorSession(t.hosts, { intervalMs: 200, config: t.config });
    const opensBefore = t.lab.hosts.map((h) => h.stats().channelOpens);
    session.start();
    try {
      const first = await session.once(15_000);
      check(first);
      const afterStart = t.lab.hosts.map((h) => h.stats().channelOpens);
      // Two long-lived commands per host: nvidia-smi -lms and the counter loop.
      expect(afterStart.map((n, i) => n - (opensBefore[i] as number))).toEqual([2, 2]);
      let samples = 0;
      await frameWhere(session, () => ++samples >= 30, '30 samples');
      expect(t.lab.hosts.map((h) => h.stats().channelOpens)).toEqual(afterStart);
      const last = session.sample();
      check(last);
      expect(last.hosts.every((h) => !h.stale)).toBe(true);
      expect(session.samplers.map((s) => s.starts)).toEqual([
        { gpu: 1, loop: 1 },
        { gpu: 1, loop: 1 },
      ]);
    } finally {
      await session.stop();
    }
  }, 60_000);

  it('raises an Xid from the kernel log as an alert on that host, and keeps it', async () => {
    const session = new MonitorSession(t.hosts, { intervalMs: 200, config: t.config });
    session.start();
    try {
      await session.once(15_000);
      const xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
      t.lab.hosts[0]!.machine.system.kernel.log(xid, 3);
      // The kernel log is read every XID_EVERY frames: a few seconds at most at this interval.
      const f = await frameWhere(
        session,
        (x) => x.sample.hosts[0]?.alerts.some((a) => a.kind === 'xid') ?? false,
        'the Xid alert',
        15_000,
      );
      const h = f.sample.hosts[0]!;
      expect(h.xids).toHaveLength(1);
      expect(h.xids[0]).toContain('Xid (PCI:0000:3b:00): 79');
      expect(h.alerts.find((a) => a.kind === 'xid')).toMatchObject({
        severity: 'fail',
        subject: 'l20-n1',
        message: xid,
      });
      expect(f.sample.hosts[1]?.alerts.some((a) => a.kind === 'xid')).toBe(false);
      // Past the next kernel-log reading it is still there: an Xid does not scroll away.
      const later = await frameWhere(
        session,
        (x) => Date.parse(x.sample.time) > Date.parse(f.sample.time) + 2_500,
        'a later frame',
        15_000,
      );
      expect(later.sample.hosts[0]?.alerts.filter((a) => a.kind === 'xid')).toHaveLength(1);
    } finally {
      await session.stop();
    }
  }, 60_000);

  it('marks a host stale within seconds when its management path is cut, keeps the other live, and reconnects', async () => {
    const session = new MonitorSession(t.hosts, { intervalMs: 300, config: t.config, staleMs: 1_500 });
    session.start();
    try {
      await session.once(15_000);
      const m = t.lab.hosts[1]!.machine;
      const mgmt = m.netdevs.find((d) => d.name === m.mgmt.ifname)!;
      const cutAt = Date.now();
      mgmt.adminUp = false;
      m.revision++;
      notifyManagement(m);
      const stale = await frameWhere(session, (f) => f.sample.hosts[1]?.stale === true, 'l20-n2 stale');
      expect(Date.now() - cutAt).toBeLessThan(5_000);
      expect(stale.sample.hosts[1]?.alerts[0]).toMatchObject({ kind: 'stale', severity: 'fail' });
      // The other host keeps updating while n2 is gone.
      const before = Date.parse(stale.sample.hosts[0]?.updated ?? '');
      // A frame two 1 s history buckets on: its open bucket holds only samples taken while n2 was stale
      // (the stale frame's own bucket may still average in n2's last live sample).
      const gapFrom = Math.floor(Date.parse(stale.sample.time) / 1_000) * 1_000 + 2_000;
      const later = await frameWhere(
        session,
        (f) => Date.parse(f.sample.hosts[0]?.updated ?? '') > before + 500 && Date.parse(f.sample.time) >= gapFrom,
        'l20-n1 updates',
      );
      expect(later.sample.hosts[0]?.stale).toBe(false);
      expect(later.sample.hosts[1]?.stale).toBe(true);
      expect(later.history['l20-n2']?.['gpu0.util']?.at(-1)).toBeNull(); // the gap shows in the history
      mgmt.adminUp = true;
      m.revision++;
      notifyManagement(m);
      const back = await frameWhere(
        session,
        (f) => f.sample.hosts[1]?.stale === false && (f.sample.hosts[1]?.gpus.length ?? 0) === 8,
        'l20-n2 back',
        45_000,
      );
      expect(back.sample.hosts[1]?.ports).toHaveLength(4);
      expect(session.samplers[1]!.starts.loop).toBeGreaterThan(1);
    } finally {
      await session.stop();
    }
  }, 90_000);
});

describe('monitor on a fresh lab (nothing installed yet)', () => {
  let t: LabTarget;
  beforeAll(async () => {
    t = await labTarget({ speed: 1, scenario: 'fresh' });
  });
  afterAll(async () => t?.close());

  it('says the driver is missing and that the ports are not brought up yet, rather than broken', async () => {
    const session = new MonitorSession(t.hosts, { intervalMs: 300, config: t.config });
    session.start();
    try {
      const s = await session.once(15_000);
      for (const h of s.hosts) {
        expect(h.stale).toBe(false);
        expect(h.gpus).toEqual([]);
        expect(h.error).toBe('nvidia-smi is not installed (no NVIDIA driver yet: stage gpu-driver)');
        expect(h.gpuError).toBe(h.error);
        expect(h.ports).toHaveLength(4);
        expect(h.alerts.map((a) => [a.kind, a.severity])).toEqual(h.ports.map(() => ['port-down', 'warn']));
        expect(h.vllm).toBeNull();
      }
    } finally {
      await session.stop();
    }
  }, 60_000);
});

function check(sample: MonitorSample): void {
  expect(sample.version).toBe(1);
  expect(sample.hosts.map((h) => h.name)).toEqual(['l20-n1', 'l20-n2']);
  for (const h of sample.hosts) {
    expect(h.gpus).toHaveLength(8);
    for (const g of h.gpus) {
      expect(g.name).toBe('NVIDIA L20');
      expect(g.utilPct).toBeGreaterThanOrEqual(0);
      expect(g.memTotalMiB).toBe(46068);
      expect(g.powerW).toBeGreaterThan(10);
      expect(g.powerCapW).toBe(350);
      expect(g.tempC).toBeGreaterThan(15);
      expect(g.smClockMHz).toBeGreaterThan(0);
    }
    expect(h.ports.map((p) => p.netdev)).toEqual(['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']);
    for (const p of h.ports) {
      expect(p).toMatchObject({ up: true, speedGbps: 25 });
      expect(p.rdmaDevice).toMatch(/^rocep/);
      expect(p.txGbps).not.toBeNull();
      expect(p.pauseRxPerSec).toHaveProperty('3');
    }
  }
}
