/**
 * network.firewall (docs/STAGES.md §3.4; R48, R46): ufw on, with ALLOW IN for each fabric interface and
 * the SSH port on management, under an armed rollback. Inter-node traffic (NCCL, Ray, vLLM, torch,
 * MPI) arrives on the fabric and needs no port rules; hardware RoCE bypasses netfilter anyway.
 *
 *  1. Arm on every host: `systemd-run --unit=l20-ufw-rollback-<run> --on-active=120 ufw --force disable`.
 *  2. `ufw allow in on <mgmt> to any port <ssh> proto tcp`; `ufw allow in on <if>` per fabric interface.
 *  3. `ufw --force enable`.
 *  4. Prove: a NEW SSH connection (ufw keeps established sessions, so only a new one shows a
 *     lock-out) and the stage's reachability and firewall checks.
 *  5. Confirm (stop the timers), or disable at once where reachable and let the timer do it elsewhere.
 */
import type { StepDef, StepExecContext, StepResult } from '../../src/engine/types.js';
import { quoteArgv } from '../../src/transport/quote.js';
import type { RunResult } from '../../src/transport/types.js';
import { isLostResult, runAcrossLoss, type AfterLoss } from './across-loss.js';
import { fabricL3Names } from './checks-host.js';
import { sshPort, type NetworkFacts } from './facts.js';

export const UFW_WINDOW_S = 120;
const RECONNECT_PAUSE_MS = 500;

async function firewall(ctx: StepExecContext<NetworkFacts>): Promise<StepResult[]> {
  const u = `l20-ufw-rollback-${ctx.runId}`;
  const plans = ctx.targets.map((host) => {
    const f = ctx.all.find((a) => a.host === host)!.facts;
    const mgmt = f.fabric.mgmt.netdev;
    const rules = [
      ...(mgmt ? [['allow', 'in', 'on', mgmt, 'to', 'any', 'port', String(sshPort(f)), 'proto', 'tcp']] : []),
      ...fabricL3Names(f).map((n) => ['allow', 'in', 'on', n]),
    ];
    return { host, mgmt, rules };
  });
  const log = new Map(plans.map((p) => [p.host, [] as string[]]));
  const result = (host: string, status: StepResult['status'], changed: boolean, error?: string): StepResult => {
    const p = plans.find((x) => x.host === host)!;
    return {
      id: 'network.firewall',
      stage: 'network',
      host,
      status,
      danger: 'network',
      commands: log.get(host) ?? [],
      diff: '',
      changed,
      summary: `ufw: allow ${p.rules.map((r) => r.slice(1).join(' ')).join('; ')}; enable — under a ${UFW_WINDOW_S} s rollback timer`,
      ...(error ? { error } : {}),
    };
  };
  const cmd = (argv: string[]): string[] => argv;
  const steps = (p: (typeof plans)[number]): string[][] => [
    // systemd-run resolves `ufw` through PATH into the unit's ExecStart (/usr/sbin/ufw on Ubuntu).
    cmd(['systemd-run', `--unit=${u}`, `--on-active=${UFW_WINDOW_S}`, 'ufw', '--force', 'disable']),
    ...p.rules.map((r) => ['ufw', ...r]),
    ['ufw', '--force', 'enable'],
  ];
  if (ctx.dryRun) {
    for (const p of plans)
      log
        .get(p.host)!
        .push(
          ...steps(p).map((a) => `sudo ${quoteArgv(a)}`),
          `(prove: new SSH connection, network.reachability) then sudo systemctl stop ${u}.timer`,
        );
    return plans.map((p) => result(p.host, 'planned', false));
  }
  const refused = plans.filter((p) => !p.mgmt);
  if (refused.length > 0)
    return plans.map((p) =>
      result(
        p.host,
        'failed',
        false,
        `refused: the management interface of ${refused.map((r) => r.host).join(', ')} is unknown, so its SSH rule cannot be written`,
      ),
    );
  // A lost connection is waited out (across-loss.ts): ufw and systemctl commands are safe to repeat; the
  // timer is armed once (systemd-run refuses a unit that exists, so a listed timer counts as armed).
  const run = async (host: string, argv: string[]): Promise<RunResult> => {
    log.get(host)!.push(`sudo ${quoteArgv(argv)}`);
    const after: AfterLoss =
      argv[0] === 'systemd-run'
        ? {
            tookEffect: async () =>
              (
                await ctx.run(
                  host,
                  'network.firewall',
                  { argv: ['systemctl', 'list-timers', '--all', `${u}.timer`] },
                  { sudo: true, timeoutMs: 60_000 },
                )
              ).stdout.includes(`${u}.timer`),
          }
        : 'repeat';
    return runAcrossLoss(ctx, host, 'network.firewall', { argv }, 60_000, after);
  };
  const armed: string[] = [];
  const armedAtByHost = new Map<string, number>();
  // Said per host as it happened: a host lost mid-sequence is left to its own timer, never claimed undone.
  const undoArmed = async (host: string, at: number): Promise<string> => {
    const off = await run(host, ['ufw', '--force', 'disable']);
    if (off.exitCode === 0) {
      await run(host, ['systemctl', 'stop', `${u}.timer`]);
      return `${host}: firewall disabled again`;
    }
    const by = `${new Date(at + UFW_WINDOW_S * 1000).toISOString().slice(11, 19)} UTC`;
    const why = isLostResult(off) ? 'lost' : `ufw --force disable exited ${off.exitCode}`;
    return `${host}: ${why}; its rollback timer ${u}.timer disables the firewall by ${by}`;
  };
  for (const p of plans) {
    const all = steps(p);
    for (const [i, argv] of all.entries()) {
      // Journaled before it is armed: a kill after this leaves the timer known to --resume and --rollback.
      if (i === 0) {
        const undo = ['ufw', '--force', 'disable'];
        const undoes = 'ufw --force disable (the firewall off)';
        ctx.journalArmed(p.host, { unit: u, undoes, command: undo, windowS: UFW_WINDOW_S });
      }
      const r = await run(p.host, argv);
      if (i === 0 && r.exitCode === 0) {
        armed.push(p.host);
        armedAtByHost.set(p.host, Date.now());
      }
      if (r.exitCode !== 0) {
        const undone = await Promise.all(armed.map((h) => undoArmed(h, armedAtByHost.get(h)!)));
        const failed = `\`${argv.join(' ')}\` on ${p.host} exited ${r.exitCode}: ${(r.stderr || r.stdout).trim()}`;
        return plans.map((x) => result(x.host, 'failed', armed.includes(x.host), `${failed}; ${undone.join('; ')}`));
      }
    }
  }
  const armedAt = Date.now();
  const problems: string[] = [];
  const fresh = new Map<string, boolean>();
  for (const h of ctx.hosts) {
    const p = await ctx.probeFreshConnection(h);
    fresh.set(h, p.ok);
    if (!p.ok) problems.push(`${h}: no new SSH connection: ${p.detail}`);
  }
  if (problems.length === 0) {
    const re = await ctx.recheck();
    for (const r of re.results.filter(
      (x) => ['network.reachability', 'network.firewall'].includes(x.id) && x.status !== 'pass',
    ))
      problems.push(`${r.host ?? 'cluster'} ${r.id}: ${r.summary}`);
  }
  if (problems.length === 0) {
    for (const p of plans) await run(p.host, ['systemctl', 'stop', `${u}.timer`]);
    ctx.note(null, 'firewall enabled and proved on every host; rollback timers stopped');
    return plans.map((p) => result(p.host, 'applied', true));
  }
  const how = new Map<string, string>();
  for (const p of plans) {
    if (fresh.get(p.host) === false) continue;
    const off = await run(p.host, ['ufw', '--force', 'disable']);
    await run(p.host, ['systemctl', 'stop', `${u}.timer`]);
    how.set(
      p.host,
      off.exitCode === 0
        ? 'disabled again at once'
        : `ufw --force disable failed (exit ${off.exitCode}); the timer stays armed`,
    );
  }
  // A locked-out host is given what is left of its keepalive bound (its timer may have fired), all at once,
  // then reported lost with the time its own timer disables the firewall: never waited for in series.
  const deadline = armedAt + (UFW_WINDOW_S + 120) * 1000;
  await Promise.all(
    plans
      .filter((x) => !how.has(x.host))
      .map(async (p) => {
        const until = Math.min(deadline, Date.now() + ctx.graceLeftMs(p.host));
        const left = `${((until - Date.now()) / 1000).toFixed(1)} s`;
        ctx.note(p.host, `locked out: waiting ≤ ${left} for ${u}.timer to disable the firewall`);
        let back = false;
        while (!back && Date.now() < until && !ctx.signal.aborted) {
          back = (await ctx.probeFreshConnection(p.host)).ok;
          if (!back) await ctx.sleep(RECONNECT_PAUSE_MS);
        }
        const by = `${new Date(armedAt + UFW_WINDOW_S * 1000).toISOString().slice(11, 19)} UTC`;
        const bound = `${(ctx.lostBoundMs(p.host) / 1000).toFixed(1)} s`;
        const lost =
          `lost: no new SSH connection within ${bound} (its keepalive bound); ` +
          `its rollback timer ${u}.timer disables the firewall by ${by}; if it stays unreachable, use the console`;
        if (!back) ctx.note(p.host, lost);
        how.set(p.host, back ? 'locked out; the rollback timer disabled the firewall and SSH works again' : lost);
      }),
  );
  return plans.map((p) =>
    result(p.host, 'failed', true, `not confirmed — ${problems.join('; ')}\n${p.host}: ${how.get(p.host)}`),
  );
}

export const firewallStep: StepDef<NetworkFacts> = {
  id: 'network.firewall',
  title: 'ufw on: fabric and SSH admitted (armed rollback)',
  danger: 'network',
  guards: ['network.firewall'],
  execute: firewall,
};
