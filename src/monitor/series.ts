/**
 * History for the sparklines: per series, three ring buffers of 60 buckets each — 1 s buckets
 * (the last minute), 10 s buckets (ten minutes) and 60 s buckets (an hour). A bucket holds the mean
 * of the samples that fell into it; a bucket no sample reached is a gap (null), so a stale host shows
 * a hole instead of a made-up line. Memory is fixed: 180 numbers per series however long it runs.
 */

export type Timebase = '1m' | '10m' | '1h';

export const TIMEBASES: readonly Timebase[] = ['1m', '10m', '1h'];
export const BUCKET_MS: Record<Timebase, number> = { '1m': 1_000, '10m': 10_000, '1h': 60_000 };
export const POINTS = 60;

class Ring {
  private readonly values: (number | null)[] = [];
  /** Start time of the newest bucket (open, still averaging). */
  private openAt = -Infinity;
  private sum = 0;
  private count = 0;

  constructor(private readonly bucketMs: number) {}

  push(timeMs: number, value: number | null): void {
    const at = Math.floor(timeMs / this.bucketMs) * this.bucketMs;
    if (at < this.openAt) return; // a late sample for a closed bucket: history does not rewrite itself
    if (at > this.openAt) {
      if (this.openAt !== -Infinity) {
        this.close();
        // Buckets nothing arrived in are gaps, at most a full ring of them.
        const missing = Math.min(POINTS, Math.round((at - this.openAt) / this.bucketMs) - 1);
        for (let i = 0; i < missing; i++) this.append(null);
      }
      this.openAt = at;
      this.sum = 0;
      this.count = 0;
    }
    if (value !== null && Number.isFinite(value)) {
      this.sum += value;
      this.count++;
    }
  }

  /** The last `n` buckets, oldest first, the open one included. */
  points(n = POINTS): (number | null)[] {
    const open = this.openAt === -Infinity ? [] : [this.count > 0 ? this.sum / this.count : null];
    const all = [...this.values, ...open];
    return all.slice(Math.max(0, all.length - n));
  }

  private close(): void {
    this.append(this.count > 0 ? this.sum / this.count : null);
  }

  private append(v: number | null): void {
    this.values.push(v);
    if (this.values.length > POINTS - 1) this.values.shift();
  }
}

/** One measured quantity over time at the three resolutions. */
export class Series {
  private readonly rings = {
    '1m': new Ring(BUCKET_MS['1m']),
    '10m': new Ring(BUCKET_MS['10m']),
    '1h': new Ring(BUCKET_MS['1h']),
  };

  push(timeMs: number, value: number | null): void {
    for (const tb of TIMEBASES) this.rings[tb].push(timeMs, value);
  }

  points(timebase: Timebase, n = POINTS): (number | null)[] {
    return this.rings[timebase].points(n);
  }
}

/** Series keyed by name ("gpu3.util", "ens1f0.tx"), created on first use. */
export class SeriesBook {
  private readonly series = new Map<string, Series>();

  push(key: string, timeMs: number, value: number | null): void {
    let s = this.series.get(key);
    if (!s) this.series.set(key, (s = new Series()));
    s.push(timeMs, value);
  }

  points(key: string, timebase: Timebase, n = POINTS): (number | null)[] {
    return this.series.get(key)?.points(timebase, n) ?? [];
  }

  keys(): string[] {
    return [...this.series.keys()];
  }
}
