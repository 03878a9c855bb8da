/** The line human reports end with when they show findings, so a rule id leads somewhere (`l20-setup rules`). */
export function ruleHint(exampleRule: string): string {
  return `explain a rule: l20-setup rules ID  (e.g. l20-setup rules ${exampleRule})`;
}
