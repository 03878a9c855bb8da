/**
 * The command-line handling that the coreutils commands here (install, rm, stat, chown, chmod)
 * share: their option loop up to a lone `--`, and coreutils' wording for a bad option or a
 * missing operand. Each command keeps its own option table (they differ in which bundles and
 * `--opt=value` forms they take), so this is a loop, not a getopt.
 */
import type { ExecResult } from 'just-bash';
import { fail } from '../shell/args.js';

/**
 * Calls `word(a, value)` for each argument before a lone `--` (`value()` takes the next argument:
 * an option's separate value, which may itself be `--`) and adds the arguments after it to
 * `operands` as they stand. A result from `word` (an invalid option) stops the loop and is
 * returned.
 */
export function scanArgs(args: readonly string[], operands: string[], word: (a: string, value: () => string | undefined) => ExecResult | undefined): ExecResult | undefined {
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
export const invalidOption = (cmd: string, letter: string): ExecResult => fail(1, `${cmd}: invalid option -- '${letter}'\nTry '${cmd} --help' for more information.\n`);

/** `CMD: missing operand`, `after` the last operand given when there was one (already quoted), and the pointer to --help. */
export const missingOperand = (cmd: string, after?: string): ExecResult => fail(1, `${cmd}: missing operand${after ? ` after ${after}` : ''}\nTry '${cmd} --help' for more information.\n`);
