/**
 * What the live monitor samples, through the real SSH transport, while the lab carries load: the
 * `nvidia-smi … -lms 1000` stream (a block per simulated second, moving values, cancel ends it), a
 * sysfs/ethtool loop seeing an ib_write_bw's rate and a PFC mismatch's pauses while they happen, and
 * vLLM's /metrics during `vllm bench serve`.
 *
 * Speeds: a numeric speed (the clock flows), so a reader sampling at real intervals sees counters
 * move while a modelled test runs; rates are computed against /proc/uptime as the monitor does.
 */
import { describe, expect, it } from 'vitest';
import type { Host } from '../../src/transport/types.js';
import { waitFor, withLabTarget } from './helpers.js';

const GPU_FIELDS = 'timestamp,index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,pstate,clocks_event_reasons.active';

/** Runs `argv` on `h` until `enough(stdout so far)`, then cancels it; resolves with everything it printed. */
async function streamUntil(h: Host, argv: string[], enough: (out: string) => boolean): Promise<{ out: string; cancelled: boolean; later: () => string }> {
  const ac = new AbortController();
  let out = '';
  const done = h.run({ argv }, { signal: ac.signal, onStdout: (c) => { out += c; } });
  let settled = false;
  void done.then(() => (settled = true));
  await waitFor(() => settled || enough(out), 'the stream', 20_000);
  ac.abort();
  const r = await done;
  // `later()`: everything that arrived by then, to show nothing more came after the run settled.
  return { out, cancelled: r.cancelled, later: () => out };
}

describe('nvidia-smi loop mode', () => {
  it('-lms 1000 prints one block per simulated second (header once), values move, and cancel ends it', async () => {
    await withLabTarget({ scenario: 'ready', speed: 20 }, async (t) => {
      const blocksOf = (out: string) => out.split('\n').filter((l) => /^\d{4}\/\d\d\/\d\d /.test(l));
      const r = await streamUntil(t.hosts[0]!, ['nvidia-smi', `--query-gpu=${GPU_FIELDS}`, '--format=csv', '-lms', '1000'], (o) => blocksOf(o).length >= 8 * 6);
      expect(r.cancelled).toBe(true);
      const lines = r.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^timestamp, index, uuid, name, utilization\.gpu \[%\], memory\.used \[MiB\], .*clocks\.current\.sm \[MHz\], clocks\.max\.sm \[MHz\], pstate, clocks_event_reasons\.active$/);
      expect(lines.filter((l) => l.startsWith('timestamp')).length).toBe(1);
      const rows = blocksOf(r.out).map((l) => l.split(', '));
      const stamps = [...new Set(rows.map((x) => x[0]!))].map((s) => Date.parse(`${s.replace(/\//g, '-').replace(' ', 'T')}Z`));
      expect(stamps.length).toBeGreaterThanOrEqual(6);
      for (let i = 1; i < stamps.length; i++) expect(stamps[i]! - stamps[i - 1]!).toBeCloseTo(1000, -2);
      // Every block lists the eight GPUs; idle boards' power and temperature wander between blocks.
      expect(rows.slice(0, 8).map((x) => x[1])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
      const gpu0Power = rows.filter((x) => x[1] === '0').map((x) => x[8]);
      expect(new Set(gpu0Power).size).toBeGreaterThan(1);
      // Cancelled: the stream stops — three more simulated seconds bring nothing.
      await t.lab.hosts[0]!.machine.clock.sleep(3000);
      expect(r.later()).toBe(r.out);
    });
  });

  it('--query-compute-apps -l 5 (noheader,nounits) lists the engines every 5 s; a bad field fails before any loop', async () => {
    await withLabTarget({ scenario: 'ready', speed: 50 }, async (t) => {
      const rowsOf = (out: string) => out.split('\n').filter(Boolean);
      const r = await streamUntil(t.hosts[0]!, ['nvidia-smi', '--query-compute-apps=gpu_uuid,pid,process_name,used_memory', '--format=csv,noheader,nounits', '-l', '5'], (o) => rowsOf(o).length >= 16);
      const rows = rowsOf(r.out).map((l) => l.split(', '));
      expect(rows[0]![0]).toMatch(/^GPU-[0-9a-f-]+$/);
      expect(rows[0]![1]).toMatch(/^\d+$/);
      expect(Number(rows[0]![3])).toBeGreaterThan(1000);
      const bad = await t.hosts[0]!.run({ argv: ['nvidia-smi', '--query-gpu=index,bogus', '--format=csv,noheader,nounits', '-l', '1'] });
      expect(bad.exitCode).toBe(2);
      expect(bad.stdout + bad.stderr).toContain('Field "bogus" is not a valid field to query.');
    });
  });
});
