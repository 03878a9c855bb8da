/**
 * The TARGET every verb takes — `--lab [--scenario S] [--seed N] [--speed F|max]`, `--inventory FILE`,
 * or the saved inventory — opened once, the same way for every verb.
 */
import { openTarget, type Target, type TargetOptions } from '../target.js';
import { checkScenario, intOption, UsageError, type CliValues } from './common.js';
import { sudoPasswordFromCli } from './sudo-password.js';

export function labSpeed(value: string | undefined): number | 'max' | undefined {
  if (value === undefined) return undefined;
  if (value === 'max') return 'max';
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > 10_000)
    throw new UsageError(
      `--speed ${JSON.stringify(value)}: expected a number above 0 (1 = real time, 50 for demos) or max`,
    );
  return n;
}

/** The target, or undefined after telling the operator that there is no inventory yet (exit 2). */
export async function targetFromCli(
  values: CliValues,
  extra: Partial<TargetOptions> = {},
): Promise<Target | undefined> {
  const speed = labSpeed(values.speed);
  if (values.lab) await checkScenario(values.scenario);
  const sudoPassword = await sudoPasswordFromCli(values, false);
  const target = await openTarget({
    ...(sudoPassword !== undefined ? { sudoPassword } : {}),
    lab: values.lab ?? false,
    ...(values.scenario ? { scenario: values.scenario } : {}),
    ...(values.seed ? { seed: intOption('seed', values.seed, 0, 2 ** 31)! } : {}),
    ...(speed !== undefined ? { speed } : {}),
    ...(values.inventory ? { inventory: values.inventory } : {}),
    ...extra,
  });
  if (!target)
    process.stderr.write(
      'l20-setup: no saved inventory yet. Run `l20-setup` to enter your hosts, or pass --inventory FILE or --lab.\n',
    );
  return target;
}
