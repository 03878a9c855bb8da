/**
 * Command-line entry: verbs and flags (docs/DESIGN.md "CLI contract"). The interactive TUI is loaded
 * lazily, verb by verb (src/commands/), so `--version` and light verbs start fast: no ssh2, React or parsers.
 */
import { parseArgs } from 'node:util';
import { packageVersion } from './util/version.js';
import { STAGE_IDS } from './engine/types.js';
import { SYMPTOM_IDS } from '../checks/troubleshoot/symptoms.js';
import { asciiSafe, ConfigError } from './config/errors.js';
import { HostKeyError } from './transport/types.js';
// Error messages can quote what was typed or what a host sent: no control sequence reaches the terminal.
import { escapeInvisible } from './util/sanitize.js';
import { checkScenario, intOption, UsageError, useColor, type CliValues } from './commands/common.js';

const VERSION = packageVersion();

const VERBS = [
  'check',
  'plan',
  'apply',
  'monitor',
  'troubleshoot',
  'lint',
  'doctor',
  'rules',
  'bundle',
  'report',
  'resolve',
  'lab',
] as const;

const HELP: Record<string, string> = {
  main: `l20-setup ${VERSION} — build and watch a two-node L20 RoCE v2 + GPUDirect + NCCL + Ray + vLLM cluster

Usage:
  l20-setup                       interactive TUI on the saved inventory (first run: setup screen)
  l20-setup --lab [--scenario S]  the same, on a built-in two-host simulated lab
  l20-setup check [--stage ID…] [TARGET] [--json]   read-only checks
  l20-setup plan  [--stage ID…] [TARGET] [--json]   the commands and file diffs apply would run
  l20-setup apply [--stage ID…] [TARGET] --yes [--allow-reboot] [--json]
  l20-setup apply [TARGET] --resume --yes [--allow-reboot] | --rollback   after an interrupted apply
  l20-setup monitor [TARGET] [--once] [--json] [--interval MS] [--record FILE | --replay FILE]
                                  live GPUs, fabric ports (RDMA, PFC pauses, discards) and vLLM per host
  l20-setup lab serve [--hosts N] [--scenario S] [--seed N] [--address ADDR] [--inventory-out FILE] [--load]
  l20-setup lint FILE… [--json]        expert review of nccl.conf, netplan, scripts, vLLM/Ray command lines
  l20-setup doctor FILE|- [--json]     read a pasted output (ibstat, mlnx_qos, NCCL logs, nvidia-smi, …)
  l20-setup rules [ID…] [--json]       what a rule id in a finding means: condition, why, fix (docs/RULES.md)
  l20-setup troubleshoot [SYMPTOM] [TARGET] [--json]   from a symptom to its cause on every host, and its fix
  l20-setup bundle [TARGET] [--out FILE]           evidence bundle for support (.tar.gz, secrets redacted)
  l20-setup report [TARGET] [--format md|html] [--out FILE]   stages, host diff, performance vs the tutorial
  l20-setup resolve HOST [--ssh-config FILE] [--json]   how HOST is reached: values, hops, transport

TARGET: --lab [--scenario S] [--seed N] [--speed F|max] | --inventory FILE   (default: the saved inventory)
sudo on the hosts: passwordless (sudo -n), or --ask-sudo-password (prompt, echo off) | --sudo-password-stdin
  (first line of standard input); the password stays in memory, goes to sudo -S on stdin, never to argv/files/logs
Stages: ${STAGE_IDS.join(', ')}

Options: --help, --version on every verb. NO_COLOR disables colour. Exit: 0 ok, 1 a check failed, 2 usage/config/connection error.`,
  check: `Usage: l20-setup check [--stage ID …] [--lab [--scenario S] [--seed N] | --inventory FILE] [--json] [--verbose]

Runs the read-only checks of the given stages (default: every implemented stage) on every host.
Prints one line per check (with --verbose also every command and its output); --json prints the
version-1 report. Exit 0 when nothing failed, 1 when a check failed, 2 on a usage, config or
connection error. Stages: ${STAGE_IDS.join(', ')}`,
  plan: `Usage: l20-setup plan [--stage ID …] [TARGET] [--json] [--verbose]

Runs the checks, then shows for every step whose guard checks do not pass the exact commands and a
unified diff of every file it would write, per host. Changes nothing. Later stages are planned against
the hosts' current state, so their plans change as earlier stages are applied.`,
  apply: `Usage: l20-setup apply [--stage ID …] [TARGET] --yes [--allow-reboot] [--json] [--verbose]

Runs each stage's steps where their guard checks do not pass (a converged cluster reports changed: 0),
then re-runs the stage's checks as verification; it stops at a stage that cannot fix a check its own
steps guard (stages failing only on checks a later stage fixes are checked again at the end).
Files are written atomically with the previous version under /var/lib/l20-setup/backup/<run-id>/; a
failing step is rolled back on its host. --yes confirms disruptive and network steps (network changes
run under a timed rollback armed on each host); steps that reboot need --allow-reboot as well.
Exit 0 when every check passes, 1 when a check or step failed, 2 on a usage or connection error.

Crash journal: while it runs, apply keeps what is in flight on which host (and what undoing it takes)
in $XDG_STATE_HOME/l20-setup/journal/ (default ~/.local/state); a normal end removes it. If the tool
was killed, the next apply on the same hosts refuses (exit 2) and says what was in flight; check,
plan and the TUI warn. Then:
  --resume     re-runs the interrupted stage and the stages after it (steps re-plan from the hosts'
               current state); with --yes [--allow-reboot] as usual
  --rollback   undoes the in-flight steps: files restored from the run's backup, files they created
               removed, temporary files removed, their rollback commands run; then stops (no --yes needed)
An apply still running in another terminal is reported as running and never rolled back.`,
  monitor: `Usage: l20-setup monitor [--lab [--scenario S] | --inventory FILE] [--once] [--json] [--interval MS] [--record FILE | --replay FILE]

Watches every host: per GPU utilisation, memory, temperature, power against its cap, SM clock and
processes; per fabric port tx/rx Gb/s (kernel plus RDMA counters), PFC pause frames per second per
priority, discards; vLLM's running/waiting requests, tokens/s, KV cache and time to first token.
Two long-lived commands per host (nvidia-smi -lms and one shell loop over sysfs), never one per sample.
On a terminal: the monitor screen (also \`m\` in the TUI). Otherwise a line per host per sample, or
JSONL with --json. --once prints one complete sample (docs/DESIGN.md shape with --json) after about one
interval; --record FILE appends every sample as JSONL; --replay FILE plays a recording.
--lab watches the built-in lab serving (scenario ready by default) with benchmark traffic on it.
Exit 0; 2 when no host could be sampled or on a usage error.`,
  doctor: `Usage: l20-setup doctor FILE|- [--json]

Reads a diagnostic output (ibstat, rdma link, mlnx_qos, ethtool, perftest, NCCL logs, nccl-tests,
nvidia-smi, ray status, vLLM logs, dcgmi, …): detects its kind by content, reports the key facts and
the findings (rule ids from docs/RULES.md) with evidence and fix. Exit 0 for any readable input (unknown
input is kind "unknown"); 2 only when the file cannot be read.`,
  troubleshoot: `Usage: l20-setup troubleshoot [SYMPTOM] [--lab [--scenario S] | --inventory FILE] [--json] [--verbose]

Probes a known bring-up failure on every host and names its cause, with rule ids, the hosts it shows
on, the evidence and the fix (the stages to apply). With a SYMPTOM its probes run with their
benchmarks (ib_write_bw, the NCCL all-reduce) where it needs them, and the outputs of both hosts
are printed side by side (≠ marks the differing lines); without one every symptom is probed with
the quick read-only checks only. --json prints { "version": 1, "diagnoses": [...] }.
Symptoms: ${SYMPTOM_IDS.join(', ')}
Exit 0 nothing found, 1 a cause was found (or a probe fails that no cause explains), 2 on an unknown
symptom, a usage or connection error.`,
  lint: `Usage: l20-setup lint FILE… [--json]

Reviews configuration: nccl.conf and env files, netplan YAML, shell scripts (mlnx_qos, ray, vllm,
ib_write_bw lines), vLLM and Ray command lines, Python launchers using vllm.LLM — detected by content.
Files are read together (cross-file facts). Exit 0 no blocker or high finding, 1 otherwise, 2 a file
cannot be read.`,
  rules: `Usage: l20-setup rules [ID…] [--json]

Explains the expert rules that findings cite (Rnn: configuration, host and pair rules; Dnn: diagnostic
outputs): each rule's id, severity, scope, title, the condition it detects, why it matters (with its
source) and the fix, wrapped for the terminal. Without an ID every rule is printed. IDs are
case-insensitive (r21 works) and may be comma-separated. --json prints an array of the rule records. The same
records generate docs/RULES.md. Exit 0; 2 for an unknown ID (the message names it and the valid range).`,
  lab: `Usage: l20-setup lab serve [--hosts N] [--scenario S] [--seed N] [--address ADDR] [--inventory-out FILE]
         [--load]

Runs simulated L20 servers (real SSH on 127.0.0.1, or on --address ADDR: loopback or an address of a
local interface, e.g. inside a network namespace) until interrupted. --load keeps work on them
(vllm bench serve against the head, ib_write_bw rail after rail) for the monitor to watch. With --inventory-out, writes an
inventory any other invocation can use (--inventory FILE), plus FILE.ssh_config for OpenSSH
(ssh -F FILE.ssh_config l20-n1) and FILE.ansible.ini for Ansible.`,
  bundle: `Usage: l20-setup bundle [--lab [--scenario S] | --inventory FILE] [--out FILE]

Collects from every host what NCCL and NVIDIA support ask for: versions (kernel, OS, driver, CUDA,
OFED/DOCA, rdma-core, vLLM, Ray, torch, NCCL), nvidia-smi -q and topo -m, rdma link, ibv_devinfo -v,
GID tables, mlnx_qos (or dcb) and ethtool -S of every fabric port (twice, a few seconds apart, with
the counters that moved), kernel messages about mlx5/NVRM/Xid/peermem/ACS/AER (root, through sudo),
nccl.conf and NCCL env, netplan, the l20 env files and units, saved results under /var/lib/l20-setup,
and every stage's read-only checks (benchmarks are not run). One .tar.gz with SUMMARY.md first
(hosts, versions side by side, failing checks with rule ids and fixes, what each file is), then
<host>/<command>.txt files that start with the exact command line and exit code. API keys, tokens,
passwords and private keys are redacted from every file; SUMMARY.md says how many.
Default FILE: ./l20-bundle-<run-id>.tar.gz, written atomically with mode 0600.
Exit 0 when written, 2 when a host could not be reached (the bundle is still written) or on a usage error.`,
  resolve: `Usage: l20-setup resolve HOST [--ssh-config FILE] [--json] [--inventory FILE]

Shows how l20-setup will reach HOST (an address or a ~/.ssh/config alias), resolved as OpenSSH 9.2 does:
hostname, port, user, identity files, known-hosts files, StrictHostKeyChecking, IdentitiesOnly,
ServerAliveInterval/CountMax and ProxyJump, each with the config line (file:line) that decided it or
"default", then warnings, then the path: each jump host (name, user@address:port, the ProxyJump line it
came from), the ProxyCommand if that is the way, and the transport (ssh2 or openssh) with why. Where
OpenSSH is installed \`ssh -G\` has the last word: a value it resolves differently is taken from it, with a
warning naming the field and both values. Reads ~/.ssh/config then /etc/ssh/ssh_config, or only FILE with
--ssh-config (like ssh -F). Match exec commands run, as ssh runs them. A HOST that names a host of the
inventory (--inventory FILE, else the saved one; by name, else by address) resolves its address, and its
jump: and transport: decide the path as they do when connecting (a forced ssh2 says what will not work).
--json prints { "version": 1, "host", "resolved", "sources", "warnings", "filesRead", "resolver": { "by",
"note" }, "path": { "hops": [{ "name", "user", "address", "port", "source" }], "proxyCommand",
"proxyCommandSource", "transport", "why", "reasons": [{ "what", "source" }] }, "inventoryHost" }.
Exit 0 resolved, 2 when OpenSSH would refuse the config (the message names the file, line and reason).`,
  report: `Usage: l20-setup report [--lab [--scenario S] | --inventory FILE] [--format md|html] [--out FILE]

Runs every stage's checks with their benchmarks (ib_write_bw per cable, the NCCL all-reduce, vllm
bench serve) and reports each stage's state with its evidence, a side-by-side diff of the hosts'
configurations (nccl.conf, netplan, QoS per port, driver/OFED versions: lines that differ are marked)
and the measured performance next to the tutorial's claims. Markdown on stdout by default; --format
html writes one self-contained HTML file (no external resources); --out FILE writes to FILE instead.
Exit 0 when nothing failed, 1 when a check failed, 2 on a usage or connection error.`,
};

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'V' },
      lab: { type: 'boolean' },
      scenario: { type: 'string' },
      seed: { type: 'string' },
      hosts: { type: 'string' },
      inventory: { type: 'string' },
      'inventory-out': { type: 'string' },
      stage: { type: 'string', multiple: true },
      json: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
      yes: { type: 'boolean', short: 'y' },
      'allow-reboot': { type: 'boolean' },
      resume: { type: 'boolean' },
      rollback: { type: 'boolean' },
      speed: { type: 'string' },
      once: { type: 'boolean' },
      interval: { type: 'string' },
      record: { type: 'string' },
      replay: { type: 'string' },
      load: { type: 'boolean' },
      'ask-sudo-password': { type: 'boolean' },
      'sudo-password-stdin': { type: 'boolean' },
      out: { type: 'string', short: 'o' },
      format: { type: 'string' },
      'ssh-config': { type: 'string' },
      address: { type: 'string' },
    },
  });
}

async function runLabServe(values: CliValues): Promise<number> {
  await checkScenario(values.scenario);
  const { serveLab } = await import('./commands/lab-serve.js');
  const { labSpeed } = await import('./commands/target-from-cli.js');
  return serveLab({
    hosts: intOption('hosts', values.hosts, 1, 256) ?? 2,
    scenario: values.scenario ?? 'fresh',
    seed: intOption('seed', values.seed, 0, 2 ** 31) ?? 1,
    ...(values.speed !== undefined ? { speed: labSpeed(values.speed)! } : {}),
    ...(values['inventory-out'] ? { inventoryOut: values['inventory-out'] } : {}),
    ...(values.load ? { load: true } : {}),
    ...(values.address !== undefined ? { address: values.address } : {}),
  });
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    // Node's message quotes the option as typed: escaped, so it is named exactly and drives no terminal.
    process.stderr.write(`l20-setup: ${asciiSafe((err as Error).message)}\nRun \`l20-setup --help\` for usage.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const verb = positionals[0];
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (verb !== undefined && !(VERBS as readonly string[]).includes(verb)) {
    process.stderr.write(`l20-setup: unknown command "${asciiSafe(verb)}"; commands: ${VERBS.join(', ')}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(
      `${HELP[verb ?? 'main'] ?? `l20-setup ${verb}: not available in this release yet.\n\n${HELP.main}`}\n`,
    );
    return 0;
  }
  try {
    if (verb === undefined) {
      const { runInteractive } = await import('./commands/interactive.js');
      return await runInteractive(values);
    }
    if (verb === 'check' || verb === 'plan' || verb === 'apply') {
      const { runCheck } = await import('./commands/check.js');
      return await runCheck(values, verb);
    }
    if (verb === 'monitor') {
      if (positionals.length > 1)
        throw new UsageError(
          `monitor takes no arguments (got ${JSON.stringify(positionals[1])}); TARGET is --lab or --inventory FILE`,
        );
      const { runMonitor } = await import('./commands/monitor.js');
      return await runMonitor(values);
    }
    if (verb === 'doctor') {
      const file = positionals[1];
      if (file === undefined || positionals.length > 2)
        throw new UsageError('usage: l20-setup doctor FILE|- [--json]  (one file; - reads standard input)');
      const { runDoctor } = await import('./doctor/cli.js');
      return await runDoctor({
        file,
        json: values.json ?? false,
        color: useColor(),
        write: (s) => process.stdout.write(s),
        error: (s) => process.stderr.write(s),
      });
    }
    if (verb === 'lint') {
      const files = positionals.slice(1);
      if (files.length === 0) throw new UsageError('usage: l20-setup lint FILE… [--json]');
      const { runLint } = await import('./lint/index.js');
      return await runLint({
        files,
        json: values.json ?? false,
        color: useColor(),
        write: (s) => process.stdout.write(s),
      });
    }
    if (verb === 'rules') {
      const { runRules } = await import('./commands/rules.js');
      return runRules(values, positionals.slice(1));
    }
    if (verb === 'troubleshoot') {
      const { runTroubleshoot } = await import('./commands/troubleshoot.js');
      return await runTroubleshoot(values, positionals.slice(1));
    }
    if (verb === 'lab') {
      if (positionals[1] !== 'serve') {
        throw new UsageError(
          'usage: l20-setup lab serve [--hosts N] [--scenario S] [--seed N] [--address ADDR]' +
            ' [--inventory-out FILE] [--load]',
        );
      }
      return await runLabServe(values);
    }
    if (verb === 'bundle') {
      if (positionals.length > 1)
        throw new UsageError(
          `bundle takes no arguments (got ${JSON.stringify(positionals[1])}); TARGET is --lab or --inventory FILE, the archive --out FILE`,
        );
      const { runBundle } = await import('./commands/bundle.js');
      return await runBundle(values);
    }
    if (verb === 'resolve') {
      const { runResolve } = await import('./commands/resolve.js');
      return runResolve(values, positionals.slice(1));
    }
    if (verb === 'report') {
      if (positionals.length > 1)
        throw new UsageError(
          `report takes no arguments (got ${JSON.stringify(positionals[1])}); TARGET is --lab or --inventory FILE`,
        );
      const { runReport } = await import('./commands/report.js');
      return await runReport(values);
    }
    process.stderr.write(
      `l20-setup ${verb}: not available in this release yet (see the issues); implemented: check, plan, apply, monitor, troubleshoot, lint, doctor, rules, bundle, report, resolve, lab serve, and the TUI.\n`,
    );
    return 2;
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      process.stderr.write(`l20-setup: ${escapeInvisible(err.message)}\n`);
      return 2;
    }
    if (err instanceof Error && err.name === 'RecordingError') {
      process.stderr.write(`l20-setup: ${escapeInvisible(err.message)}\n`);
      return 2;
    }
    if (err instanceof HostKeyError) {
      process.stderr.write(`l20-setup: ${escapeInvisible(err.message)}\n`);
      return 2;
    }
    throw err;
  }
}
