/**
 * The option loops that the lab's commands share. The coreutils ones (install, rm, stat, chown,
 * chmod) take options and operands up to a lone `--`, and word a bad option or a missing operand
 * alike; the ones that run a command line (env, sudo, systemd-run) take options until the first
 * word of that command. Each command keeps its own option table (they differ in which bundles and
 * `--opt=value` forms they take), so these are loops, not a getopt.
 */
import type { ExecResult } from 'just-bash';
import { fail } from '../shell/args.js';

/**
 * Calls `word(a, value)` for each argument before a lone `--` (`value()` takes the next argument:
 * an option's separate value, which may itself be `--`) and adds the arguments after it to
 * `operands` as they stand. A result from `word` (an invalid option) stops the loop and is
 * returned.
 */
export function scanArgs(
  args: readonly string[],
  operands: string[],
  word: (a: string, value: () => string | undefined) => ExecResult | undefined,
): ExecResult | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    const r = word(a, () => args[++i]);
    if (r) return r;
  }
  return undefined;
}

/** `CMD: invalid option -- 'X'` and coreutils' pointer to --help. */
export const invalidOption = (cmd: string, letter: string): ExecResult =>
  fail(1, `${cmd}: invalid option -- '${letter}'\nTry '${cmd} --help' for more information.\n`);

/** `CMD: missing operand`, `after` the last operand given when there was one (already quoted), and the pointer to --help. */
export const missingOperand = (cmd: string, after?: string): ExecResult =>
  fail(1, `${cmd}: missing operand${after ? ` after ${after}` : ''}\nTry '${cmd} --help' for more information.\n`);

/**
 * The loop of a command that takes options and then a command line to run (env, sudo,
 * systemd-run): `word(a, value)` sees each argument (`value()` takes the next one) until a lone
 * `--` (skipped) or until it answers 'command' (that argument starts the command line). A result
 * from `word` (an invalid option) stops the loop and is returned; otherwise the index where the
 * command line starts (args.length when there is none).
 */
export function leadingOptions(
  args: readonly string[],
  word: (a: string, value: () => string | undefined) => 'command' | ExecResult | undefined,
): number | ExecResult {
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') return i + 1;
    const r = word(a, () => args[++i]);
    if (r === 'command') return i;
    if (r) return r;
  }
  return i;
}
