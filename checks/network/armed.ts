/**
 * Applying netplan over SSH under a timed remote rollback (STAGES.md §3.4 network.apply), used by
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
import type { RunResult } from '../../src/transport/types.js';
import { sections } from '../inventory/collect.js';
import { runAcrossLoss, type AfterLoss } from './across-loss.js';
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
async function serviceOutcome(ctx: StepExecContext<NetworkFacts>, run: (h: string, l: string, c: { argv: string[] }) => Promise<RunResult>, host: string, unitName: string): Promise<string> {
  const until = Date.now() + 60_000;
  for (;;) {
    const r = await run(host, 'rollback-wait', { argv: ['systemctl', 'show', '-p', 'ActiveState', '-p', 'Result', unitName] });
    const state = /^ActiveState=(\S+)/m.exec(r.stdout)?.[1];
    const res = /^Result=(\S+)/m.exec(r.stdout)?.[1];
    if (r.exitCode !== 0) return `systemctl show exited ${r.exitCode}`;
    if (state !== 'active' && state !== 'activating') return res === 'success' ? 'success' : `ActiveState=${state ?? '?'} Result=${res ?? '?'}`;
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
      id: o.stepId, stage: 'network', host, status, danger: o.danger, summary: o.summary(host), commands: l.commands, diff: l.diff, changed,
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
        ...(t.files ?? []).map((f) => `sudo install -D -m ${f.mode.toString(8).padStart(4, '0')} -o root -g root /dev/stdin ${f.path}`),
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
  /**
   * A root command on one host; a lost connection is waited out and the command repeated where that is
   * safe (across-loss.ts) — the timer is armed once; a loss during the apply itself is left to the proof —
   * and a connection that stays lost is a result (exit null), never an exception.
   */
  const run = async (host: string, label: string, argvOrScript: { argv: string[] } | { script: string; args?: string[] }, timeoutMs = 60_000): Promise<RunResult> => {
    const l = logs.get(host)!;
    // A file's content passed as an argument (the preflight's copies) is logged as its size, not its text.
    const shown = (a: string): string => (a.includes('\n') ? `<${a.split('\n').length - 1} lines>` : a);
    l.commands.push('argv' in argvOrScript
      ? `sudo ${quoteArgv(argvOrScript.argv)}`
      : `sudo bash -s ${quoteArgv((argvOrScript.args ?? []).map(shown))} <<'EOF' … EOF (${label})`);
    const after: AfterLoss = label === 'arm'
      ? { tookEffect: async () => (await ctx.run(host, `${o.stepId}:timers`, { argv: ['systemctl', 'list-timers', '--all', `${u}.timer`] }, { sudo: true, timeoutMs: 60_000 })).stdout.includes(`${u}.timer`) }
      : label === 'apply' ? 'report' : 'repeat';
    return runAcrossLoss(ctx, host, `${o.stepId}:${label}`, argvOrScript, timeoutMs, after);
  };
  const tail = (r: { stdout: string; stderr: string }): string => `${r.stdout}\n${r.stderr}`.split('\n').filter((x) => x.trim()).slice(-4).join('\n');

  // 1. Preflight on every host before anything changes.
  const refusals: string[] = [];
  for (const t of o.targets) {
    const f = factsOf(t.host);
    const mgmt = f?.fabric.mgmt;
    if (!f || !mgmt?.netdev || !mgmt.serverAddress) refusals.push(`${t.host}: the management interface is unknown (SSH_CONNECTION not on any netdev)`);
    else if (f.fabric.ports.some((p) => p.netdev === mgmt.netdev) || t.ports.includes(mgmt.netdev)) refusals.push(`${t.host}: management (${mgmt.netdev}) is a fabric port; refusing to touch it`);
    else if (f.merged.ok && f.merged.ethernets[mgmt.netdev] !== undefined) {
      const def = f.merged.ethernets[mgmt.netdev] as { addresses?: unknown; dhcp4?: unknown };
      const addrs = Array.isArray(def.addresses) ? def.addresses.map(String) : [];
      if (!def.dhcp4 && !addrs.some((a) => a.split('/')[0] === mgmt.serverAddress)) {
        refusals.push(`${t.host}: netplan would give ${mgmt.netdev} ${addrs.join(', ') || 'no address'}, but SSH runs over ${mgmt.serverAddress}`);
      }
    }
    if (!mgmt?.netdev) continue;
    const change = managementChange(netplanView(t.netplan.before), netplanView(t.netplan.after), mgmt.netdev);
    if (change) refusals.push(`${t.host}: ${change}`);
    const overrides = (t.files ?? []).flatMap((x) => [x.path, x.content]);
    const before = o.fromPending ? PENDING_FILES : '/etc/netplan';
    const gen = await run(t.host, 'preflight', { script: MGMT_GENERATE, args: [ctx.runId, before, ...overrides] });
    if (gen.exitCode !== 0) {
      refusals.push(`${t.host}: \`netplan generate\` failed (exit ${gen.exitCode}): ${tail(gen)}`);
      continue;
    }
    const generated = sections(gen.stdout);
    const side = (s: string) =>
      parseGenerated(generated.filter((x) => x.tag === s).map((x) => ({ name: x.name, text: x.body })));
    const real = renderedChange(mgmt.netdev, side('before').get(mgmt.netdev), side('after').get(mgmt.netdev));
    if (real && !change) refusals.push(`${t.host}: real \`netplan generate --root-dir\`: ${real}`);
  }
  if (refusals.length > 0) return o.targets.map((t) => result(t.host, 'failed', false, `preflight refused, nothing changed:\n${refusals.join('\n')}`));

  // 2–3. Snapshot and arm on every host.
  const armed: string[] = [];
  const abort = async (why: string): Promise<StepResult[]> => {
    for (const h of armed) await run(h, 'disarm', { argv: ['systemctl', 'stop', `${u}.timer`] });
    return o.targets.map((t) => result(t.host, 'failed', armed.includes(t.host), `${why}; timers stopped, configuration unchanged`));
  };
  for (const t of o.targets) {
    const words = [...t.created.map((d) => `created:${d}`), ...t.ports.map((p) => `port:${p}`)];
    const snap = await run(t.host, 'snapshot', { script: SNAPSHOT_SCRIPT, args: [ctx.runId, o.fromPending ? 'pending' : 'current', ...words] });
    if (snap.exitCode !== 0) return abort(`${t.host}: snapshot failed (exit ${snap.exitCode}): ${tail(snap)}`);
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
      return abort(`${t.host}: writing files failed: ${(err as Error).message}`);
    }
    // Journaled first: a kill after this line leaves the timer known to --resume and --rollback.
    ctx.journalArmed(t.host, {
      unit: u, undoes: `restores /etc/netplan from the snapshot of run ${ctx.runId} and re-applies it`,
      command: [ROLLBACK_SCRIPT, ctx.runId], windowS: window,
    });
    const arm = await run(t.host, 'arm', { argv: ['systemd-run', `--unit=${u}`, `--on-active=${window}`, '--timer-property=AccuracySec=1s', ROLLBACK_SCRIPT, ctx.runId] });
    if (arm.exitCode !== 0) return abort(`${t.host}: arming the rollback timer failed (exit ${arm.exitCode}): ${tail(arm)}`);
    armed.push(t.host);
    const list = await run(t.host, 'timers', { argv: ['systemctl', 'list-timers', '--all', `${u}.timer`] });
    if (list.exitCode !== 0 || !list.stdout.includes(`${u}.timer`)) return abort(`${t.host}: the rollback timer is not listed by systemctl list-timers`);
    l.notes.push(`rollback armed: ${u}.timer fires in ${window} s unless confirmed`);
  }
  const armedAt = Date.now();
  ctx.note(null, `rollback timers armed on ${armed.join(', ')} (${window} s); applying`);

  // 4. Apply everywhere (lockstep), detached from the SSH session.
  await Promise.all(o.targets.map(async (t) => {
    for (const b of t.deleteFirst) await run(t.host, 'delete-bond', { argv: ['ip', 'link', 'delete', 'dev', b] });
    const r = await run(t.host, 'apply', {
      argv: ['systemd-run', `--unit=${applyUnit}`, '--collect', '--wait', '-p', `StandardOutput=append:/var/log/l20-setup/${ctx.runId}/${o.stepId}.log`,
        '-p', 'StandardError=inherit', '/bin/sh', '-c', 'netplan generate && netplan apply'],
    }, 120_000);
    if (r.exitCode !== 0) logs.get(t.host)!.notes.push(`netplan apply: exit ${r.exitCode ?? 'none (connection lost)'} ${tail(r)}`);
  }));

  // 5. Prove.
  const problems: string[] = [];
  const fresh = new Map<string, boolean>();
  for (const h of ctx.hosts) {
    const p = await ctx.probeFreshConnection(h);
    fresh.set(h, p.ok);
    if (!p.ok) problems.push(`${h}: no new SSH connection over management: ${p.detail}`);
  }
  let recheck: Awaited<ReturnType<typeof ctx.recheck>> | undefined;
  if (problems.length === 0) {
    recheck = await ctx.recheck();
    for (const r of recheck.results.filter((x) => o.proofs.includes(x.id) && failed(x))) problems.push(`${r.host ?? 'cluster'} ${r.id}: ${r.summary}`);
    for (const h of ctx.hosts) {
      const extra = o.extraProof?.(h, recheck.facts.find((x) => x.host === h)?.facts);
      if (extra) problems.push(`${h}: ${extra}`);
    }
  }

  // 6. Confirm.
  if (problems.length === 0) {
    const unconfirmed: string[] = [];
    for (const t of o.targets) {
      const stop = await run(t.host, 'confirm', { argv: ['systemctl', 'stop', `${u}.timer`] });
      if (stop.exitCode !== 0) unconfirmed.push(t.host);
      if (o.fromPending) {
        await run(t.host, 'forget-snapshot', { argv: ['rm', '-rf', `${PENDING_DIR}/netplan.tar`, PENDING_FILES] });
      }
    }
    if (unconfirmed.length === 0) {
      ctx.note(null, `proved on every host (${o.proofs.join(', ')}); rollback timers stopped`);
      return o.targets.map((t) => result(t.host, 'applied', true));
    }
    return o.targets.map((t) => result(t.host, 'failed', true, unconfirmed.includes(t.host)
      ? `proved, but stopping ${u}.timer failed: it will roll this host back when it fires`
      : 'proved; another host could not be confirmed'));
  }

  // 7. Roll back: at once where reachable, by the timer elsewhere; then verify the old state.
  ctx.note(null, `proof failed: ${problems.join('; ')}`);
  const how = new Map<string, string>();
  for (const t of o.targets) {
    const reachable = fresh.get(t.host) !== false && (await ctx.probeFreshConnection(t.host)).ok;
    if (!reachable) continue;
    const r = await run(t.host, 'rollback-now', { argv: ['systemctl', 'start', `${u}.service`] }, 120_000);
    const done = r.exitCode === 0 ? await serviceOutcome(ctx, run, t.host, `${u}.service`) : `systemctl start exited ${r.exitCode}`;
    if (done === 'success') {
      await run(t.host, 'disarm', { argv: ['systemctl', 'stop', `${u}.timer`] });
      how.set(t.host, 'rolled back at once (the rollback service ran, Result=success)');
    } else how.set(t.host, `immediate rollback failed (${done}); the timer stays armed`);
  }
  const deadline = armedAt + (window + 120) * 1000;
  for (const t of o.targets.filter((x) => !how.has(x.host))) {
    ctx.note(t.host, `unreachable: waiting for ${u}.timer to restore the old configuration`);
    let back = false;
    while (!back && Date.now() < deadline && !ctx.signal.aborted) {
      back = (await ctx.probeFreshConnection(t.host)).ok;
      if (!back) await ctx.sleep(RECONNECT_PAUSE_MS);
    }
    if (!back) {
      how.set(t.host, `still unreachable ${window + 120} s after arming: use the console (l20-setup lab console, or the BMC)`);
      continue;
    }
    const log = await run(t.host, 'rollback-log', { argv: ['tail', '-n', '20', '/var/log/l20-setup/rollback.log'] });
    const fired = log.stdout.includes(`rolled back run ${ctx.runId}`);
    how.set(t.host, fired ? `unreachable after the change; the rollback timer restored it (rollback.log: ${log.stdout.trim().split('\n').filter((x) => x.includes(ctx.runId)).pop()})` : 'reachable again, but rollback.log does not show the rollback');
  }
  const after = await ctx.recheck();
  for (const t of o.targets) {
    const before = factsOf(t.host);
    const now = after.facts.find((x) => x.host === t.host)?.facts;
    const addrs = (f: NetworkFacts | undefined): string => (f?.fabric.netdevs ?? []).filter((d) => t.ports.includes(d.name) || f?.fabric.ports.some((p) => p.netdev === d.name))
      .map((d) => `${d.name}=${d.addresses.filter((a) => !a.includes(':')).join(',') || '-'}`).sort().join(' ');
    const same = now !== undefined && addrs(before) === addrs(now);
    logs.get(t.host)!.notes.push(`verify: ${same ? 'the old addresses are back' : `addresses now ${addrs(now) || 'unknown'}, before ${addrs(before)}`}`);
  }
  return o.targets.map((t) => result(t.host, 'failed', true, `not confirmed — ${problems.join('; ')}\n${t.host}: ${how.get(t.host) ?? 'not rolled back'}`));
}
