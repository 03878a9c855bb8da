/**
 * A modelled tool: a command name, where the real binary lives, which packages provide it, and
 * its renderer over the model. When none of its packages is installed the shell answers with
 * bash's not-found text instead of running it, so installing a package later (apt-get in a later
 * stage) is all it takes to make the command appear.
 */
import type { ExecResult, ResolvedCommandContext } from 'just-bash';
import type { Cluster } from '../model/cluster.js';
import type { Machine } from '../model/types.js';

export interface ToolEnv {
  machine: Machine;
  cluster: Cluster;
  ctx: ResolvedCommandContext;
  /** Effective uid 0 (run through sudo). */
  root: boolean;
  /** Re-registers commands after the machine's packages changed (apt-get, dpkg). */
  syncCommands?: () => Promise<void>;
}

export interface Tool {
  name: string;
  /** Absolute path of the real binary (for `which`, sudo's SUDO_COMMAND). */
  path: string;
  /** Any of these installed makes the command available; undefined = part of the base model. */
  packages?: readonly string[];
  run(args: string[], env: ToolEnv): Promise<ExecResult> | ExecResult;
}

/** Effective user of a command: `sudo` switches USER to root, as real sudo does. */
export function isRoot(ctx: ResolvedCommandContext): boolean {
  return ctx.env.get('USER') === 'root';
}
