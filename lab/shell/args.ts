/**
 * Small helpers shared by the modelled commands: POSIX getopt-style option parsing (bundled
 * short flags, attached or separate values, `--` ends options), shell quoting for re-running an
 * argv through the interpreter, and result constructors.
 */
import type { ExecResult } from 'just-bash';

export interface ParsedArgs {
  /** Options in order, with their values (undefined for flags). */
  opts: Array<{ name: string; value?: string }>;
  operands: string[];
  /** Set when an option is not in the spec (the tool prints its own usage error). */
  error?: { option: string; kind: 'unknown' | 'missing-value' };
}

/**
 * `short` is a getopt string ("Dnvs:d:"), `long` maps long option names to whether they take a
 * value. Options after the first operand are still parsed (GNU permutation) unless `posix`.
 */
export function getopt(
  args: readonly string[],
  short: string,
  long: Record<string, boolean> = {},
  posix = false,
): ParsedArgs {
  const takes = new Map<string, boolean>();
  for (let i = 0; i < short.length; i++) {
    const c = short[i] as string;
    if (c === ':') continue;
    takes.set(c, short[i + 1] === ':');
  }
  const out: ParsedArgs = { opts: [], operands: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const needs = long[name];
      if (needs === undefined) return { ...out, error: { option: name, kind: 'unknown' } };
      if (needs) {
        const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
        if (value === undefined) return { ...out, error: { option: name, kind: 'missing-value' } };
        out.opts.push({ name, value });
      } else out.opts.push({ name });
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j] as string;
        const needs = takes.get(c);
        if (needs === undefined) return { ...out, error: { option: c, kind: 'unknown' } };
        if (needs) {
          const rest = a.slice(j + 1);
          const value = rest !== '' ? rest : args[++i];
          if (value === undefined) return { ...out, error: { option: c, kind: 'missing-value' } };
          out.opts.push({ name: c, value });
          break;
        }
        out.opts.push({ name: c });
      }
      continue;
    }
    if (posix) {
      out.operands.push(...args.slice(i));
      break;
    }
    out.operands.push(a);
  }
  return out;
}

export const count = (p: ParsedArgs, name: string): number => p.opts.filter((o) => o.name === name).length;
export const has = (p: ParsedArgs, ...names: string[]): boolean => p.opts.some((o) => names.includes(o.name));
export const value = (p: ParsedArgs, ...names: string[]): string | undefined =>
  [...p.opts].reverse().find((o) => names.includes(o.name))?.value;

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function shellQuote(word: string): string {
  if (word !== '' && SAFE.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

export const quoteArgv = (argv: readonly string[]): string => argv.map(shellQuote).join(' ');

export function ok(stdout: string, stderr = ''): ExecResult {
  return { stdout, stderr, exitCode: 0 };
}

export function fail(exitCode: number, stderr: string, stdout = ''): ExecResult {
  return { stdout, stderr, exitCode };
}
