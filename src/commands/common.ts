/** Pieces every verb shares: usage errors, colour policy, numeric options, the parsed flag values. */
export interface CliValues {
  help?: boolean;
  version?: boolean;
  lab?: boolean;
  scenario?: string;
  seed?: string;
  hosts?: string;
  inventory?: string;
  'inventory-out'?: string;
  stage?: string[];
  json?: boolean;
  verbose?: boolean;
  yes?: boolean;
  'allow-reboot'?: boolean;
  /** apply after an interrupted apply: re-run from the interrupted stage, or undo its in-flight steps. */
  resume?: boolean;
  rollback?: boolean;
  speed?: string;
  once?: boolean;
  interval?: string;
  record?: string;
  replay?: string;
  load?: boolean;
  'ask-sudo-password'?: boolean;
  'sudo-password-stdin'?: boolean;
  /** resolve: read only this OpenSSH config file (like ssh -F). */
  'ssh-config'?: string;
  /** lab serve: the local address the simulated hosts listen on. */
  address?: string;
}

export class UsageError extends Error {}

/** Colour on a terminal unless NO_COLOR is set (https://no-color.org: any non-empty value). */
export function useColor(): boolean {
  return !process.env.NO_COLOR && process.stdout.isTTY === true;
}

export function intOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new UsageError(`--${name} ${JSON.stringify(value)}: expected a whole number from ${min} to ${max}`);
  return Number(value);
}

/** A lab scenario spec (`a+b`) checked before anything starts: an unknown name is a usage error naming the known ones. */
export async function checkScenario(spec: string | undefined): Promise<void> {
  if (spec === undefined) return;
  const { SCENARIOS } = await import('../../lab/scenarios/index.js');
  const { asciiSafe } = await import('../config/errors.js');
  for (const name of spec.split('+')) {
    if (!SCENARIOS.includes(name.trim()))
      throw new UsageError(
        `--scenario: unknown lab scenario "${asciiSafe(name.slice(0, 80))}"; known: ${SCENARIOS.join(', ')}`,
      );
  }
}
