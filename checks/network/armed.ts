/**
 * Applying netplan over SSH under a timed remote rollback (docs/STAGES.md §3.4 network.apply), used by
 * network.apply (the fabric) and network.mgmt-routes (the management file). `netplan try` is never
 * used: it refuses bond parameters (R22), needs a keypress on a terminal and guards one host.
 *
 *  1. Preflight: the management netdev is known, carries the SSH server address and is not a
 *     fabric port; netplan still describes management as it is live; management is rendered as
 *     before (renderer, addresses, DHCP, routes) — by netplanView over the files before and after,
 *     and by the real `netplan generate --root-dir` on the host over copies of both (which must
 *     succeed), so the check itself never touches /run.
 *  2. Snapshot: the configuration to return to (network.write's pre-write copy when one waits,
 *     else /etc/netplan now), plus the virtual devices the new config creates and the fabric
 *     interfaces it configures.
 *  3. Arm, on every host before any change: /usr/local/sbin/l20-netplan-rollback and a transient
 *     timer `systemd-run --on-active=<window>` that runs it; checked with `systemctl list-timers`.
 *  4. Apply: stale bonds deleted (`ip link delete`: netplan never does it), then
 *     `netplan generate && netplan apply` in a transient service, so an SSH drop cannot cut it short.
 *  5. Prove: a NEW SSH connection to every host (an old one can outlive a broken path), then the
 *     stage's checks again — for the fabric: addresses, MTU, reachability on every subnet both ways
 *     with jumbo frames (and LACP/LAG in design B).
 *  6. Confirm only when every proof passes on every host: stop the timers.
 *  7. Else: roll back at once where reachable (start the rollback service), let the timer do it
 *     where not, reconnect, and verify that the old addresses are back.
 */
import type { CheckResult, StepExecContext, StepResult } from '../../src/engine/types.js';
import { quoteArgv } from '../../src/transport/quote.js';
import { ConnectionLostError, type RunResult } from '../../src/transport/types.js';
import { sections } from '../inventory/collect.js';
import { isLostResult, lostResult, runAcrossLoss, type AfterLoss } from './across-loss.js';
import type { NetworkFacts } from './facts.js';
import { parseGenerated } from './netplan-generated.js';
import { managementChange, netplanView, renderedChange } from './netplan-view.js';
import { NETPLAN_STATE, PENDING_DIR, PENDING_FILES, ROLLBACK_SCRIPT } from './probes.js';

/** Default rollback window: longer than apply plus proof on two hosts. */
export const ROLLBACK_WINDOW_S = 180;
/** Pause between reconnection attempts while waiting for a timer to restore a host. */
const RECONNECT_PAUSE_MS = 500;

export const ROLLBACK_SCRIPT_TEXT = `#!/bin/sh
# restore the netplan snapshot of run $1 and re-apply it (installed by l20-setup network.apply)
set -u; d=${NETPLAN_STATE}/$1
[ -f "$d/netplan.tar" ] || exit 1
find /etc/netplan -maxdepth 1 -name '*.yaml' -delete
tar -C /etc/netplan -xpf "$d/netplan.tar"
for dev in $(cat "$d/created-devices" 2>/dev/null); do ip link delete dev "$dev" 2>/dev/null; done
for dev in $(cat "$d/fabric-ports" 2>/dev/null); do ip addr flush dev "$dev"; done  # never the mgmt netdev
netplan generate && netplan apply
mkdir -p /var/log/l20-setup
echo "$(date -Is) rolled back run $1" >> /var/log/l20-setup/rollback.log
`;

/** Snapshot of run $1 (from network.write's pending copy when $2 is `pending`); `created:<dev>` / `port:<dev>` words fill the two lists. */
const SNAPSHOT_SCRIPT = `set -eu
run=$1; from=$2; shift 2
d=${NETPLAN_STATE}/$run
mkdir -p "$d" "/var/log/l20-setup/$run"
if [ "$from" = pending ] && [ -f ${PENDING_DIR}/netplan.tar ]; then
  cp ${PENDING_DIR}/netplan.tar "$d/netplan.tar"
else
  tar -C /etc/netplan -cpf "$d/netplan.tar" .
fi
: > "$d/created-devices"
: > "$d/fabric-ports"
for w in "$@"; do
  case $w in
    created:*) echo "\${w#created:}" >> "$d/created-devices" ;;
    port:*) echo "\${w#port:}" >> "$d/fabric-ports" ;;
  esac
done
`;

/**
 * Real netplan over copies: $1 run id, $2 the directory of the files live before (falls back to
 * /etc/netplan), then `path content` pairs written over /etc/netplan's copy. Prints what
 * `netplan generate --root-dir` writes for networkd and NetworkManager as `### before|after <file>`;
 * exits 1 when the new files do not generate (`### failed after` with netplan's words).
 */
const MGMT_GENERATE = `set -u
run=$1; before=$2; shift 2
[ -d "$before" ] || before=/etc/netplan
t=${NETPLAN_STATE}/$run/generate
rm -rf "$t"; mkdir -p "$t/before/etc/netplan" "$t/after/etc/netplan"
for f in "$before"/*.yaml; do if [ -e "$f" ]; then cp -p "$f" "$t/before/etc/netplan/"; fi; done
for f in /etc/netplan/*.yaml; do if [ -e "$f" ]; then cp -p "$f" "$t/after/etc/netplan/"; fi; done
while [ $# -ge 2 ]; do
  printf '%s' "$2" > "$t/after/etc/netplan/\${1##*/}"; chmod 600 "$t/after/etc/netplan/\${1##*/}"
  shift 2
done
rc=0
for side in before after; do
  if ! err=$(netplan generate --root-dir "$t/$side" 2>&1); then
    echo "### failed $side"; echo "$err"
    if [ "$side" = after ]; then rc=1; fi
  fi
  for f in "$t/$side"/run/systemd/network/*.network "$t/$side"/run/systemd/network/*.netdev \\
    "$t/$side"/run/NetworkManager/system-connections/*.nmconnection; do
    if [ -e "$f" ]; then echo "### $side \${f##*/}"; cat "$f"; echo; fi
  done
done
rm -rf "$t"
exit $rc
`;

type NetplanText = { path: string; text: string };

/** What one host's part of the procedure needs. */
export interface ArmedTarget {
  host: string;
  /** Fabric interfaces the new configuration configures (flushed by a rollback). */
  ports: string[];
  /** Virtual devices the new configuration creates (deleted by a rollback). */
  created: string[];
  /** Bonds to delete before applying (R23: netplan never deletes them). */
  deleteFirst: string[];
  /** Files to write after the snapshot and before arming (mgmt-routes). */
  files?: Array<{ path: string; content: string; mode: number }>;
  /** The netplan files management is rendered from now and after the apply (the management guard). */
  netplan: { before: ReadonlyArray<NetplanText>; after: ReadonlyArray<NetplanText> };
}

export interface ArmedOptions {
  stepId: string;
  danger: StepResult['danger'];
  summary: (host: string) => string;
  targets: ArmedTarget[];
  /** Check ids whose verdicts must pass (or skip) on the re-check for the change to stand. */
  proofs: readonly string[];
  /** Extra proof on the re-checked facts (mgmt-routes: the default route). */
  extraProof?: (host: string, facts: NetworkFacts | undefined) => string | undefined;
  windowS?: number;
  /** Return to network.write's pre-write copy when one waits (network.apply), else to /etc/netplan as it is. */
  fromPending: boolean;
}

interface HostLog {
  commands: string[];
  diff: string;
  notes: string[];
}

function unit(runId: string): string {
  return `l20-netplan-rollback-${runId}`;
}

function failed(r: CheckResult): boolean {
  return r.status !== 'pass' && r.status !== 'skip';
}

/** Waits (≤ 60 s) for a started service to finish; `success` or what systemd reports instead. */
async function serviceOutcome(
  ctx: StepExecContext<NetworkFacts>,
  run: (h: string, l: string, c: { argv: string[] }) => Promise<RunResult>,
  host: string,
  unitName: string,
): Promise<string> {
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await run(host, 'rollback-wait', {
      argv: ['systemctl', 'show', '-p', 'ActiveState', '-p', 'Result', unitName],
    });
    const state = /^ActiveState=(\S+)/m.exec(r.stdout)?.[1];
    const res = /^Result=(\S+)/m.exec(r.stdout)?.[1];
    if (r.exitCode !== 0) return `systemctl show exited ${r.exitCode}`;
    if (state !== 'active' && state !== 'activating')
      return res === 'success' ? 'success' : `ActiveState=${state ?? '?'} Result=${res ?? '?'}`;
    if (Date.now() > until || !(await ctx.sleep(250))) return `still ${state} after 60 s`;
  }
}

/** Runs the procedure; one StepResult per target host. */
export async function armedApply(ctx: StepExecContext<NetworkFacts>, o: ArmedOptions): Promise<StepResult[]> {
  const window = o.windowS ?? ROLLBACK_WINDOW_S;
  const u = unit(ctx.runId);
  const logs = new Map<string, HostLog>(o.targets.map((t) => [t.host, { commands: [], diff: '', notes: [] }]));
  const result = (host: string, status: StepResult['status'], changed: boolean, error?: string): StepResult => {
    const l = logs.get(host)!;
    return {
      id: o.stepId,
      stage: 'network',
      host,
      status,
      danger: o.danger,
      summary: o.summary(host),
      commands: l.commands,
      diff: l.diff,
      changed,
      ...(error ? { error: [error, ...l.notes].join('\n') } : {}),
    };
  };
  const factsOf = (h: string): NetworkFacts | undefined => ctx.all.find((a) => a.host === h)?.facts;

  if (ctx.dryRun) {
    for (const t of o.targets) {
      const l = logs.get(t.host)!;
      l.commands.push(
        `sudo bash -s ${ctx.runId} … (netplan generate --root-dir over copies: management rendered as before)`,
        `sudo bash -s ${ctx.runId} … (snapshot /etc/netplan to ${NETPLAN_STATE}/${ctx.runId})`,
        ...(t.files ?? []).map(
          (f) => `sudo install -D -m ${f.mode.toString(8).padStart(4, '0')} -o root -g root /dev/stdin ${f.path}`,
        ),
        `sudo install -D -m 0755 -o root -g root /dev/stdin ${ROLLBACK_SCRIPT}`,
        `sudo systemd-run --unit=${u} --on-active=${window} --timer-property=AccuracySec=1s ${ROLLBACK_SCRIPT} ${ctx.runId}`,
        ...t.deleteFirst.map((b) => `sudo ip link delete dev ${b}`),
        `sudo systemd-run --unit=l20-${o.stepId.replace('.', '-')}-${ctx.runId} --collect --wait … /bin/sh -c 'netplan generate && netplan apply'`,
        `(prove: new SSH connection, ${o.proofs.join(', ')}) then sudo systemctl stop ${u}.timer`,
      );
    }
    return o.targets.map((t) => result(t.host, 'planned', false));
  }

  const applyUnit = `l20-${o.stepId.replace('.', '-')}-${ctx.runId}`;
  const armed: string[] = [];
  /** Hosts the arm command was sent to: an answer lost with it leaves the timer's state unknown. */
  const armSent = new Set<string>();
  const armedAt = new Map<string, number>();
  /**
   * Hosts declared lost: the connection dropped and the host did not answer again within its keepalive
   * bound (ctx.lostBoundMs). Nothing more is sent to them — each command would only wait that bound out
   * again — and the other hosts go on at once; a lost host's own rollback timer guards it.
   */
  const lost = new Map<string, string>();
  const clock = (ms: number): string => `${new Date(ms).toISOString().slice(11, 19)} UTC`;
  const timerFate = (host: string): string => {
    const at = armedAt.get(host);
    const restores = 'restores the configuration before this step';
    if (at !== undefined) return `its rollback timer ${u}.timer ${restores} at ${clock(at + window * 1000)}`;
    const by = clock(Date.now() + window * 1000);
    if (armSent.has(host)) return `whether ${u}.timer was armed is unknown; if it was, it ${restores} by ${by}`;
    return 'no rollback timer was armed there, and its network configuration was not changed';
  };
  const declareLost = (host: string, why: string): void => {
    if (lost.has(host)) return;
    const line = `lost: ${why}; ${timerFate(host)}`;
    lost.set(host, line);
    logs.get(host)!.notes.push(line);
    ctx.note(host, line);
  };
  const boundS = (host: string): string => `${(ctx.lostBoundMs(host) / 1000).toFixed(1)} s`;
  /**
   * A root command on one host; a lost connection is waited out (within the host's keepalive bound) and the
   * command repeated where that is safe (across-loss.ts) — the timer is armed once; a loss during the apply
   * itself is left to the proof — and a connection that stays lost is a result (exit null), never an exception.
   */
  const run = async (
    host: string,
    label: string,
    argvOrScript: { argv: string[] } | { script: string; args?: string[] },
    timeoutMs = 60_000,
  ): Promise<RunResult> => {
    const l = logs.get(host)!;
    const gone = lost.get(host);
    if (gone !== undefined) return lostResult(`${o.stepId}:${label}`, new Error(`not sent: ${host} ${gone}`));
    // A file's content passed as an argument (the preflight's copies) is logged as its size, not its text.
    const shown = (a: string): string => (a.includes('\n') ? `<${a.split('\n').length - 1} lines>` : a);
    l.commands.push(
      'argv' in argvOrScript
        ? `sudo ${quoteArgv(argvOrScript.argv)}`
        : `sudo bash -s ${quoteArgv((argvOrScript.args ?? []).map(shown))} <<'EOF' … EOF (${label})`,
    );
    const after: AfterLoss =
      label === 'arm'
        ? {
            tookEffect: async () =>
              (
                await ctx.run(
                  host,
                  `${o.stepId}:timers`,
                  { argv: ['systemctl', 'list-timers', '--all', `${u}.timer`] },
                  { sudo: true, timeoutMs: 60_000 },
                )
              ).stdout.includes(`${u}.timer`),
          }
        : label === 'apply'
          ? 'report'
          : 'repeat';
    const r = await runAcrossLoss(ctx, host, `${o.stepId}:${label}`, argvOrScript, timeoutMs, after);
    if (isLostResult(r) && after !== 'report') {
      const why = `the connection dropped during \`${label}\` and ${host} did not answer again within ${boundS(host)}`;
      declareLost(host, `${why} (its keepalive bound)`);
    }
    return r;
  };
  const tail = (r: { stdout: string; stderr: string }): string =>
    `${r.stdout}\n${r.stderr}`
      .split('\n')
      .filter((x) => x.trim())
      .slice(-4)
      .join('\n');

  // 1. Preflight on every host (in parallel: one host's silence must not hold up the others) before anything changes.
  const preflight = async (t: ArmedTarget): Promise<string[]> => {
    const refusals: string[] = [];
    const f = factsOf(t.host);
    const mgmt = f?.fabric.mgmt;
    if (!f || !mgmt?.netdev || !mgmt.serverAddress)
      refusals.push(`${t.host}: the management interface is unknown (SSH_CONNECTION not on any netdev)`);
    else if (f.fabric.ports.some((p) => p.netdev === mgmt.netdev) || t.ports.includes(mgmt.netdev))
      refusals.push(`${t.host}: management (${mgmt.netdev}) is a fabric port; refusing to touch it`);
    else if (f.merged.ok && f.merged.ethernets[mgmt.netdev] !== undefined) {
      const def = f.merged.ethernets[mgmt.netdev] as { addresses?: unknown; dhcp4?: unknown };
      const addrs = Array.isArray(def.addresses) ? def.addresses.map(String) : [];
      if (!def.dhcp4 && !addrs.some((a) => a.split('/')[0] === mgmt.serverAddress)) {
        refusals.push(
          `${t.host}: netplan would give ${mgmt.netdev} ${addrs.join(', ') || 'no address'}, but SSH runs over ${mgmt.serverAddress}`,
        );
      }
    }
    if (!mgmt?.netdev) return refusals;
    const change = managementChange(netplanView(t.netplan.before), netplanView(t.netplan.after), mgmt.netdev);
    if (change) refusals.push(`${t.host}: ${change}`);
    const overrides = (t.files ?? []).flatMap((x) => [x.path, x.content]);
    const before = o.fromPending ? PENDING_FILES : '/etc/netplan';
    const gen = await run(t.host, 'preflight', { script: MGMT_GENERATE, args: [ctx.runId, before, ...overrides] });
    if (isLostResult(gen)) {
      refusals.push(`${t.host}: ${lost.get(t.host) ?? 'lost'}`);
      return refusals;
    }
    if (gen.exitCode !== 0) {
      refusals.push(`${t.host}: \`netplan generate\` failed (exit ${gen.exitCode}): ${tail(gen)}`);
      return refusals;
    }
    const generated = sections(gen.stdout);
    const side = (s: string) =>
      parseGenerated(generated.filter((x) => x.tag === s).map((x) => ({ name: x.name, text: x.body })));
    const real = renderedChange(mgmt.netdev, side('before').get(mgmt.netdev), side('after').get(mgmt.netdev));
    if (real && !change) refusals.push(`${t.host}: real \`netplan generate --root-dir\`: ${real}`);
    return refusals;
  };
  const refusals = (await Promise.all(o.targets.map(preflight))).flat();
  if (refusals.length > 0)
    return o.targets.map((t) =>
      result(t.host, 'failed', false, `preflight refused, nothing changed:\n${refusals.join('\n')}`),
    );

  // 2–3. Snapshot and arm on every host (in parallel), before any host changes.
  const abort = async (why: string): Promise<StepResult[]> => {
    await Promise.all(armed.map((h) => run(h, 'disarm', { argv: ['systemctl', 'stop', `${u}.timer`] })));
    return o.targets.map((t) =>
      result(
        t.host,
        'failed',
        armed.includes(t.host),
        `${why}; ${lost.has(t.host) ? `${t.host} ${lost.get(t.host)}` : 'timers stopped, configuration unchanged'}`,
      ),
    );
  };
  const prepare = async (t: ArmedTarget): Promise<string | undefined> => {
    const words = [...t.created.map((d) => `created:${d}`), ...t.ports.map((p) => `port:${p}`)];
    const snap = await run(t.host, 'snapshot', {
      script: SNAPSHOT_SCRIPT,
      args: [ctx.runId, o.fromPending ? 'pending' : 'current', ...words],
    });
    if (snap.exitCode !== 0) return `${t.host}: snapshot failed (exit ${snap.exitCode}): ${tail(snap)}`;
    const l = logs.get(t.host)!;
    try {
      for (const f of t.files ?? []) {
        const w = await ctx.writeFile(t.host, f);
        l.commands.push(w.commandLine);
        l.diff += w.diff;
      }
      const w = await ctx.writeFile(t.host, { path: ROLLBACK_SCRIPT, content: ROLLBACK_SCRIPT_TEXT, mode: 0o755 });
      l.commands.push(w.commandLine);
      l.diff += w.diff;
    } catch (err) {
      if (err instanceof ConnectionLostError) {
        const within = boundS(t.host);
        declareLost(t.host, `the connection dropped while writing files and ${t.host} did not answer within ${within}`);
      }
      return `${t.host}: writing files failed: ${(err as Error).message}`;
    }
    // Journaled first: a kill after this line leaves the timer known to --resume and --rollback.
    ctx.journalArmed(t.host, {
      unit: u,
      undoes: `restores /etc/netplan from the snapshot of run ${ctx.runId} and re-applies it`,
      command: [ROLLBACK_SCRIPT, ctx.runId],
      windowS: window,
    });
    armSent.add(t.host);
    const arm = await run(t.host, 'arm', {
      argv: [
        'systemd-run',
        `--unit=${u}`,
        `--on-active=${window}`,
        '--timer-property=AccuracySec=1s',
        ROLLBACK_SCRIPT,
        ctx.runId,
      ],
    });
    if (arm.exitCode !== 0) return `${t.host}: arming the rollback timer failed (exit ${arm.exitCode}): ${tail(arm)}`;
    armed.push(t.host);
    armedAt.set(t.host, Date.now());
    const list = await run(t.host, 'timers', { argv: ['systemctl', 'list-timers', '--all', `${u}.timer`] });
    if (list.exitCode !== 0 || !list.stdout.includes(`${u}.timer`)) {
      return `${t.host}: the rollback timer is not listed by systemctl list-timers`;
    }
    l.notes.push(`rollback armed: ${u}.timer fires in ${window} s unless confirmed`);
    return undefined;
  };
  const unprepared = (await Promise.all(o.targets.map(prepare))).filter((x): x is string => x !== undefined);
  if (unprepared.length > 0) return abort(unprepared.join('; '));
  const armedAtAll = Date.now();
  ctx.note(null, `rollback timers armed on ${armed.join(', ')} (${window} s); applying`);

  // 4. Apply everywhere (lockstep), detached from the SSH session.
  await Promise.all(
    o.targets.map(async (t) => {
      for (const b of t.deleteFirst) await run(t.host, 'delete-bond', { argv: ['ip', 'link', 'delete', 'dev', b] });
      const r = await run(
        t.host,
        'apply',
        {
          argv: [
            'systemd-run',
            `--unit=${applyUnit}`,
            '--collect',
            '--wait',
            '-p',
            `StandardOutput=append:/var/log/l20-setup/${ctx.runId}/${o.stepId}.log`,
            '-p',
            'StandardError=inherit',
            '/bin/sh',
            '-c',
            'netplan generate && netplan apply',
          ],
        },
        120_000,
      );
      if (r.exitCode !== 0)
        logs.get(t.host)!.notes.push(`netplan apply: exit ${r.exitCode ?? 'none (connection lost)'} ${tail(r)}`);
    }),
  );

  // 5. Prove: a new connection to every host at once, then the checks.
  const problems: string[] = [];
  const fresh = new Map<string, boolean>();
  const probes = await Promise.all(ctx.hosts.map(async (h) => ({ h, p: await ctx.probeFreshConnection(h) })));
  for (const { h, p } of probes) {
    fresh.set(h, p.ok);
    if (!p.ok) problems.push(`${h}: no new SSH connection over management: ${p.detail}`);
  }
  let recheck: Awaited<ReturnType<typeof ctx.recheck>> | undefined;
  if (problems.length === 0) {
    recheck = await ctx.recheck();
    for (const r of recheck.results.filter((x) => o.proofs.includes(x.id) && failed(x)))
      problems.push(`${r.host ?? 'cluster'} ${r.id}: ${r.summary}`);
    for (const h of ctx.hosts) {
      const extra = o.extraProof?.(h, recheck.facts.find((x) => x.host === h)?.facts);
      if (extra) problems.push(`${h}: ${extra}`);
    }
  }

  // 6. Confirm.
  if (problems.length === 0) {
    const unconfirmed: string[] = [];
    await Promise.all(
      o.targets.map(async (t) => {
        const stop = await run(t.host, 'confirm', { argv: ['systemctl', 'stop', `${u}.timer`] });
        if (stop.exitCode !== 0) unconfirmed.push(t.host);
        if (o.fromPending) {
          await run(t.host, 'forget-snapshot', { argv: ['rm', '-rf', `${PENDING_DIR}/netplan.tar`, PENDING_FILES] });
        }
      }),
    );
    if (unconfirmed.length === 0) {
      ctx.note(null, `proved on every host (${o.proofs.join(', ')}); rollback timers stopped`);
      return o.targets.map((t) => result(t.host, 'applied', true));
    }
    return o.targets.map((t) =>
      result(
        t.host,
        'failed',
        true,
        unconfirmed.includes(t.host)
          ? `proved, but stopping ${u}.timer failed: it will roll this host back when it fires`
          : 'proved; another host could not be confirmed',
      ),
    );
  }

  // 7. Roll back, every host at once: a reachable one by its rollback service now; an unreachable one is
  //    given its keepalive bound to answer (its timer may have restored it), then reported lost with the
  //    time its timer fires — never waited for while the others wait.
  ctx.note(null, `proof failed: ${problems.join('; ')}`);
  const how = new Map<string, string>();
  const deadline = armedAtAll + (window + 120) * 1000;
  const rollBackNow = async (t: ArmedTarget): Promise<string> => {
    const r = await run(t.host, 'rollback-now', { argv: ['systemctl', 'start', `${u}.service`] }, 120_000);
    const done =
      r.exitCode === 0
        ? await serviceOutcome(ctx, run, t.host, `${u}.service`)
        : `systemctl start exited ${r.exitCode}`;
    if (done !== 'success') return lost.get(t.host) ?? `immediate rollback failed (${done}); the timer stays armed`;
    await run(t.host, 'disarm', { argv: ['systemctl', 'stop', `${u}.timer`] });
    return 'rolled back at once (the rollback service ran, Result=success)';
  };
  const awaitTimer = async (t: ArmedTarget): Promise<string> => {
    const until = Math.min(deadline, Date.now() + ctx.graceLeftMs(t.host));
    const left = `${(Math.max(0, until - Date.now()) / 1000).toFixed(1)} s`;
    ctx.note(t.host, `unreachable: waiting ≤ ${left} (the rest of its keepalive bound) for ${u}.timer to restore it`);
    let back = false;
    while (!back && Date.now() < until && !ctx.signal.aborted) {
      back = (await ctx.probeFreshConnection(t.host)).ok;
      if (!back) await ctx.sleep(RECONNECT_PAUSE_MS);
    }
    if (!back) {
      declareLost(t.host, `no new SSH connection for ${boundS(t.host)} after the change`);
      const console = 'use the console (l20-setup lab console, or the BMC)';
      return `${lost.get(t.host)}; if it stays unreachable after that, ${console}`;
    }
    const log = await run(t.host, 'rollback-log', { argv: ['tail', '-n', '20', '/var/log/l20-setup/rollback.log'] });
    const fired = log.stdout.includes(`rolled back run ${ctx.runId}`);
    const line = log.stdout
      .trim()
      .split('\n')
      .filter((x) => x.includes(ctx.runId))
      .pop();
    return fired
      ? `unreachable after the change; the rollback timer restored it (rollback.log: ${line})`
      : 'reachable again, but rollback.log does not show the rollback';
  };
  await Promise.all(
    o.targets.map(async (t) => {
      const reachable = !lost.has(t.host) && fresh.get(t.host) !== false && (await ctx.probeFreshConnection(t.host)).ok;
      how.set(t.host, reachable ? await rollBackNow(t) : await awaitTimer(t));
    }),
  );
  const after = await ctx.recheck();
  for (const t of o.targets) {
    if (lost.has(t.host)) continue;
    const before = factsOf(t.host);
    const now = after.facts.find((x) => x.host === t.host)?.facts;
    const addrs = (f: NetworkFacts | undefined): string =>
      (f?.fabric.netdevs ?? [])
        .filter((d) => t.ports.includes(d.name) || f?.fabric.ports.some((p) => p.netdev === d.name))
        .map((d) => `${d.name}=${d.addresses.filter((a) => !a.includes(':')).join(',') || '-'}`)
        .sort()
        .join(' ');
    const same = now !== undefined && addrs(before) === addrs(now);
    logs
      .get(t.host)!
      .notes.push(
        `verify: ${same ? 'the old addresses are back' : `addresses now ${addrs(now) || 'unknown'}, before ${addrs(before)}`}`,
      );
  }
  return o.targets.map((t) =>
    result(
      t.host,
      'failed',
      true,
      `not confirmed — ${problems.join('; ')}\n${t.host}: ${how.get(t.host) ?? 'not rolled back'}`,
    ),
  );
}
