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
import { ncclStage } from '../../checks/nccl/index.js';
import { Engine } from '../../src/engine/runner.js';
import { ethtoolCounter } from '../../lab/model/rdma.js';
import { FABRIC_PORTS } from '../../lab/model/cluster.js';
import { BENCH_SCRIPT } from '../../checks/vllm/pair-checks.js';
import { parseVllmBench } from '../../src/parse/vllm-bench.js';
import { parsePerftest } from '../../src/parse/perftest.js';
import type { Host } from '../../src/transport/types.js';
import type { LabTarget } from '../helpers/lab-target.js';
import { waitFor, withLabTarget } from './helpers.js';
import { ensureDesignA, startServer } from './rdma-link-helpers.js';

const GPU_FIELDS =
  'timestamp,index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,pstate,clocks_event_reasons.active';

/** Runs `argv` on `h` until `enough(stdout so far)`, then cancels it; resolves with everything it printed. */
async function streamUntil(
  h: Host,
  argv: string[],
  enough: (out: string) => boolean,
): Promise<{ out: string; cancelled: boolean; later: () => string }> {
  const ac = new AbortController();
  let out = '';
  const done = h.run(
    { argv },
    {
      signal: ac.signal,
      onStdout: (c) => {
        out += c;
      },
    },
  );
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
    await withLabTarget({ scenario: 'ready', speed: 10 }, async (t) => {
      const blocksOf = (out: string) => out.split('\n').filter((l) => /^\d{4}\/\d\d\/\d\d /.test(l));
      const r = await streamUntil(
        t.hosts[0]!,
        ['nvidia-smi', `--query-gpu=${GPU_FIELDS}`, '--format=csv', '-lms', '1000'],
        (o) => blocksOf(o).length >= 8 * 6,
      );
      expect(r.cancelled).toBe(true);
      const lines = r.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(
        /^timestamp, index, uuid, name, utilization\.gpu \[%\], memory\.used \[MiB\], .*clocks\.current\.sm \[MHz\], clocks\.max\.sm \[MHz\], pstate, clocks_event_reasons\.active$/,
      );
      expect(lines.filter((l) => l.startsWith('timestamp')).length).toBe(1);
      const rows = blocksOf(r.out).map((l) => l.split(', '));
      const stamps = [...new Set(rows.map((x) => x[0]!))].map((s) =>
        Date.parse(`${s.replace(/\//g, '-').replace(' ', 'T')}Z`),
      );
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
      const r = await streamUntil(
        t.hosts[0]!,
        [
          'nvidia-smi',
          '--query-compute-apps=gpu_uuid,pid,process_name,used_memory',
          '--format=csv,noheader,nounits',
          '-l',
          '5',
        ],
        (o) => rowsOf(o).length >= 16,
      );
      const rows = rowsOf(r.out).map((l) => l.split(', '));
      expect(rows[0]![0]).toMatch(/^GPU-[0-9a-f-]+$/);
      expect(rows[0]![1]).toMatch(/^\d+$/);
      expect(Number(rows[0]![3])).toBeGreaterThan(1000);
      const bad = await t.hosts[0]!.run({
        argv: ['nvidia-smi', '--query-gpu=index,bogus', '--format=csv,noheader,nounits', '-l', '1'],
      });
      expect(bad.exitCode).toBe(2);
      expect(bad.stdout + bad.stderr).toContain('Field "bogus" is not a valid field to query.');
    });
  });
});

/**
 * The monitor's fabric loop, cut to what the test reads: every RDMA port's counters, `N` samples `GAP`
 * real seconds apart, each bracketed by a /proc/uptime read before and after. The lab runs at speed 10
 * on a shared, loaded CI machine: a few real milliseconds lost between a stamp and the counter it stamps
 * (preemption, other tests) are tens of lab milliseconds, a skew of a percent or two on a 3 s rate (CI
 * saw 24.5 and 24.6 Gb/s where 24.1 flowed). So the test does not trust one stamp: it knows only that
 * each counter was read between its two stamps (each /proc/uptime read rounded down to 10 ms), and holds
 * the rate to the range those stamps allow.
 */
const FABRIC_LOOP = `
i=0
while [ $i -lt "$1" ]; do
  for n in /sys/class/net/*; do
    for ib in "$n"/device/infiniband/*; do
      [ -d "$ib" ] || continue
      read -r up0 idle < /proc/uptime
      read -r xmit < "$ib/ports/1/counters/port_xmit_data"
      read -r tb < "$n/statistics/tx_bytes"
      read -r up1 idle < /proc/uptime
      read -r op < "$n/operstate"
      st=$(ethtool -S "\${n##*/}" | grep -E 'tx_prio[0-7]_pause:|rx_discards_phy:|tx_vport_rdma_unicast_bytes:' | tr -d ' ' | tr '\\n' ' ')
      echo "S $up0 $up1 \${n##*/} \${ib##*/} $op $xmit $tb $st"
    done
  done
  i=$((i+1))
  sleep "$2"
done
`;

/** `readFrom`..`readBy`: the uptime seconds the port's counters were read between. */
interface Sample {
  readFrom: number;
  readBy: number;
  port: string;
  device: string;
  oper: string;
  xmitWords: number;
  txBytes: number;
  stats: Record<string, number>;
}

function samples(out: string, port: string): Sample[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('S '))
    .map((l) => {
      const [, up0, up1, p, device, oper, xmit, tb, ...rest] = l.trim().split(' ');
      const stats = Object.fromEntries(rest.map((kv) => kv.split(':')).map(([k, v]) => [k!, Number(v)]));
      // /proc/uptime shows hundredths, rounded down: the second read may be up to 10 ms short.
      return {
        readFrom: Number(up0),
        readBy: Number(up1) + 0.01,
        port: p!,
        device: device!,
        oper: oper!,
        xmitWords: Number(xmit),
        txBytes: Number(tb),
        stats,
      };
    })
    .filter((x) => x.port === port);
}

/**
 * Gb/s between consecutive samples of one port, from `value` (bytes): the least (`low`) and most
 * (`high`) the stamps allow — the longest and the shortest time the two reads can have been apart.
 */
function rates(s: Sample[], value: (x: Sample) => number): Array<{ low: number; high: number }> {
  return s.slice(1).map((x, i) => {
    const prev = s[i]!;
    const bits = (value(x) - value(prev)) * 8;
    return { low: bits / (x.readBy - prev.readFrom) / 1e9, high: bits / (x.readFrom - prev.readBy) / 1e9 };
  });
}

/** ib_write_bw from node 1's ens1f0 to node 2's for `seconds`, while node 1 runs the fabric loop. */
async function sampleDuringBw(t: LabTarget, seconds: number): Promise<{ port: Sample[]; client: string }> {
  ensureDesignA(t.lab);
  const dev = (h: number) => t.lab.hosts[h]!.machine.rdma.find((r) => r.netdev === 'ens1f0')!.name;
  const args = ['-x', '3', '-F', '--report_gbits', '-q', '1', '-D', String(seconds), '--tclass=106', '-p', '18700'];
  const server = await startServer(t.lab, t.hosts[1]!, 1, ['ib_write_bw', '-d', dev(1), ...args], 18700);
  // Speed 10: 0.3 s of real time between samples is 3 s of lab time.
  const loop = t.hosts[0]!.run({ script: FABRIC_LOOP, args: [String(Math.ceil(seconds / 3) + 4), '0.3'] });
  const client = await t.hosts[0]!.run({ argv: ['ib_write_bw', '-d', dev(0), ...args, '192.168.101.2'] });
  await server.done;
  const r = await loop;
  expect(r.exitCode, r.stderr).toBe(0);
  expect(client.exitCode, client.stderr).toBe(0);
  return { port: samples(r.stdout, 'ens1f0'), client: client.stdout };
}

describe('fabric counters move while traffic runs', () => {
  it('a sysfs/ethtool loop sees ≈ 24 Gb/s of RDMA leaving the sending port during ib_write_bw; netdev statistics stay near idle', async () => {
    await withLabTarget({ scenario: 'ready', speed: 10 }, async (t) => {
      const { port, client } = await sampleDuringBw(t, 30);
      expect(port.length).toBeGreaterThan(5);
      expect(port[0]).toMatchObject({ oper: 'up' });
      const reported = parsePerftest(client).results[0]?.bwAvgGbps ?? NaN;
      expect(reported).toBeGreaterThan(23);
      expect(reported).toBeLessThan(24.5);
      const rdma = rates(port, (x) => x.xmitWords * 4);
      // The counter agrees with what ib_write_bw reported (two decimals): no sample can have seen more,
      // and samples wholly inside the test saw that rate.
      const busy = rdma.filter((g) => g.low > 1);
      expect(busy.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...rdma.map((g) => g.low))).toBeLessThan(reported + 0.005);
      expect(busy.filter((g) => g.low < reported + 0.005 && g.high > reported - 0.005).length).toBeGreaterThanOrEqual(
        2,
      );
      // port_xmit_data is octets / 4 of the same bytes ethtool's vport RDMA counter shows.
      const last = port[port.length - 1]!;
      expect(last.xmitWords).toBe(Math.floor(last.stats.tx_vport_rdma_unicast_bytes! / 4));
      expect(Math.max(...rates(port, (x) => x.txBytes).map((g) => g.high))).toBeLessThan(0.01);
    });
  });

  it("under pfc-mismatch the PFC end's tx_prio3_pause rises during the test, not in one lump at its end", async () => {
    await withLabTarget({ scenario: 'pfc-mismatch', speed: 10 }, async (t) => {
      const { port } = await sampleDuringBw(t, 30);
      const pauses = port.map((x) => x.stats.tx_prio3_pause ?? 0);
      const steps = pauses.slice(1).map((p, i) => p - pauses[i]!);
      expect(steps.filter((d) => d > 0).length).toBeGreaterThanOrEqual(3);
      expect(pauses[pauses.length - 1]).toBeGreaterThan(pauses[0]!);
      const rdma = rates(port, (x) => x.xmitWords * 4).filter((g) => g.low > 1);
      expect(Math.max(...rdma.map((g) => g.low))).toBeLessThan(20.5);
      // The receiver drops what it cannot hold: its discards grew too.
      const n2 = await t.hosts[1]!.run({ argv: ['ethtool', '-S', 'ens1f0'] });
      expect(Number(/rx_discards_phy: (\d+)/.exec(n2.stdout)?.[1])).toBeGreaterThan(0);
    });
  });
});

describe('the NCCL all-reduce benchmark carries its bytes over the rails', () => {
  it('nccl validation on ready moves the RDMA counters of all four ports on both hosts, both directions', async () => {
    await withLabTarget({ scenario: 'ready' }, async (t) => {
      const ms = t.lab.hosts.map((h) => h.machine);
      const sent = () => ms.map((m) => FABRIC_PORTS.map((p) => ethtoolCounter(m, p, 'tx_vport_rdma_unicast_bytes')));
      const before = sent();
      const o = await new Engine(t.hosts, { config: t.config }).runStage(ncclStage);
      expect(o.results.find((r) => r.id === 'nccl.validation')?.status).toBe('pass');
      const after = sent();
      // Up to 1 GiB buffers: gigabytes per rail and direction.
      after.forEach((ports, h) => ports.forEach((v, i) => expect(v - before[h]![i]!).toBeGreaterThan(1e9)));
    });
  });
});

/** The monitor's vLLM and GPU sampling: uptime, /metrics (engine 0's moving series), GPU 0's utilisation. */
const SERVING_LOOP = `
i=0
while [ $i -lt "$1" ]; do
  read -r up idle < /proc/uptime
  echo "T $up"
  curl -s -m 1 http://10.0.0.1:8000/metrics | grep -E '^vllm:(num_requests_running|kv_cache_usage_perc|generation_tokens_total|prompt_tokens_total|time_to_first_token_seconds_(sum|count))[{]engine="0"'
  echo "U $(nvidia-smi -i 0 --query-gpu=utilization.gpu --format=csv,noheader,nounits)"
  i=$((i+1))
  sleep "$2"
done
`;

interface MetricsSample {
  up: number;
  util: number;
  m: Record<string, number>;
}

function metricSamples(out: string): MetricsSample[] {
  const res: MetricsSample[] = [];
  for (const l of out.split('\n')) {
    if (l.startsWith('T ')) res.push({ up: Number(l.slice(2)), util: NaN, m: {} });
    else if (l.startsWith('U ')) res[res.length - 1]!.util = Number(l.slice(2));
    else if (l.startsWith('vllm:'))
      res[res.length - 1]!.m[l.slice(5, l.indexOf('{'))] = Number(l.slice(l.lastIndexOf(' ') + 1));
  }
  return res;
}

describe('vLLM under vllm bench serve', () => {
  it("/metrics moves at the bench's rates while it runs (running, KV cache, tokens, TTFT histogram) and the GPUs are busy; the totals match the printed result", async () => {
    await withLabTarget({ scenario: 'ready', speed: 100 }, async (t) => {
      const bench = t.hosts[0]!.run(
        {
          script: BENCH_SCRIPT,
          args: ['10.0.0.1', '8000', 'Qwen2.5-7B-Instruct', '/opt/l20/models/Qwen2.5-7B-Instruct', 'DP16'],
        },
        { sudo: true },
      );
      // Speed 100: 0.1 s between samples is 10 s of lab time; the bench runs a few minutes of it.
      const loop = await t.hosts[0]!.run({ script: SERVING_LOOP, args: ['30', '0.1'] });
      const b = await bench;
      expect(b.exitCode, b.stdout.slice(-2000)).toBe(0);
      const result = parseVllmBench(b.stdout.slice(b.stdout.indexOf('============ Serving Benchmark Result')));
      const s = metricSamples(loop.stdout);
      const busy = s.filter((x) => (x.m.num_requests_running ?? 0) > 0);
      expect(busy.length).toBeGreaterThanOrEqual(3);
      // 64 concurrent requests over 16 engines: 4 each on engine 0, its KV cache partly used.
      for (const x of busy) {
        expect(x.m.num_requests_running).toBe(4);
        expect(x.m.kv_cache_usage_perc).toBeGreaterThan(0);
        expect(x.m.kv_cache_usage_perc).toBeLessThan(1);
        expect(x.util).toBeGreaterThan(90);
      }
      // Generation counters climb between samples at about the bench's per-engine rate.
      const rate = [] as number[];
      for (let i = 1; i < busy.length; i++) {
        const a = busy[i - 1]!;
        const c = busy[i]!;
        rate.push(((c.m.generation_tokens_total ?? 0) - (a.m.generation_tokens_total ?? 0)) / (c.up - a.up));
      }
      const perEngine = result.outputTokThroughput! / 16;
      expect(rate.some((r) => r > perEngine * 0.7 && r < perEngine * 1.3)).toBe(true);
      expect(busy[busy.length - 1]!.m.time_to_first_token_seconds_count).toBeGreaterThan(0);
      // Idle again after the bench: nothing running, GPUs back at the loaded-engine level.
      const after = metricSamples((await t.hosts[0]!.run({ script: SERVING_LOOP, args: ['1', '0'] })).stdout)[0]!;
      expect(after.m.num_requests_running).toBe(0);
      expect(after.util).toBe(0);
      // All engines together: the bench's totals and its mean TTFT.
      const all = await t.hosts[0]!.run({ argv: ['curl', '-s', 'http://10.0.0.1:8000/metrics'] });
      const sum = (name: string) =>
        all.stdout
          .split('\n')
          .filter((l) => l.startsWith(`${name}{`))
          .reduce((x, l) => x + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
      expect(sum('vllm:generation_tokens_total')).toBe(result.totalGeneratedTokens);
      expect(sum('vllm:prompt_tokens_total')).toBe(result.totalInputTokens);
      expect(sum('vllm:request_success_total')).toBe(640);
      expect(
        (sum('vllm:time_to_first_token_seconds_sum') / sum('vllm:time_to_first_token_seconds_count')) * 1000,
      ).toBeCloseTo(result.meanTtftMs!, 1);
      expect(all.stdout).toContain(
        'vllm:time_to_first_token_seconds_bucket{engine="0",model_name="Qwen2.5-7B-Instruct",le="+Inf"} 40.0',
      );
    });
  }, 60_000);
});
