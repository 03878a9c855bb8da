/**
 * Output and timing for apt and dpkg runs. Every line goes through here, so how output reaches
 * the client (streamed while the command runs: system/live.ts toolIo) is decided in one place.
 * Durations are modelled (docs/STAGES.md §4.5: a few seconds per package, DKMS builds minutes) and
 * scaled by the lab's speed; each package's jitter is seeded by (seed, host, package).
 */
import type { ExecResult } from 'just-bash';
import { toolIo } from '../system/live.js';
import type { ToolEnv } from '../tools/types.js';
import { rng } from '../util/prng.js';
import type { ArchivePackage } from './archive-types.js';
import { groupsThousands } from './format.js';

export interface AptIo {
  out(text: string): Promise<void>;
  err(text: string): Promise<void>;
  /** Modelled time passes; false once the command was cancelled (channel closed, signal). */
  sleep(ms: number): Promise<boolean>;
  cancelled(): boolean;
  result(exitCode: number): ExecResult;
  /** Thousands grouping of the caller's locale (apt's `%'` formats). */
  grouping: boolean;
  env: ToolEnv;
}

export function aptIo(env: ToolEnv): AptIo {
  const io = toolIo(env.ctx, env.machine.clock);
  let cancelled = false;
  return {
    out: (t) => io.out(t),
    err: (t) => io.err(t),
    async sleep(ms) {
      if (cancelled) return false;
      const ok = await io.sleep(ms);
      if (!ok) cancelled = true;
      return ok;
    },
    cancelled: () => cancelled || io.signal?.aborted === true,
    result: (code) => io.result(code),
    grouping: groupsThousands(env.ctx.env),
    env,
  };
}

/** Download speed of the modelled mirror (bytes per modelled second). */
export const MIRROR_BYTES_PER_S = 40_000_000;

/**
 * Modelled unpack and configure time of one package, in ms: 2–6 s for what was asked for, about a
 * second for what it pulls in (libraries, dependencies), DKMS builds as long as their `ms` says.
 * The NVIDIA driver with its ~30 dependencies comes to about a minute, DOCA-OFED to about four.
 */
export function packageTiming(
  p: ArchivePackage,
  seed: number,
  host: string,
  requested = true,
): { unpack: number; setup: number } {
  const r = rng(seed, host, 'apt', p.name, p.version);
  const small =
    !requested || p.multiArch === 'same' || p.section === 'libs' || p.section === 'libdevel' || p.installedKb < 64;
  const base = small ? r.int(500, 1500) : r.int(2000, 6000);
  return { unpack: Math.round(base * 0.4), setup: p.ms ?? Math.round(base * 0.6) };
}

/** PIDs apt-get runs with (lock messages name them). */
export function aptPid(seed: number, host: string, n: number): number {
  return 2000 + rng(seed, host, 'apt-pid', n).int(0, 60000);
}
