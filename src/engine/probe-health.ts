/**
 * Whether a probe's output can be read at all, before any check judges it. A probe whose tool is not installed,
 * that sudo refused, or that needed a unit manager the host does not run says nothing about the hardware or the
 * configuration; the checks resting on it say "cannot tell" (status error) and name what is missing and how to
 * get it, instead of reading its silence as "0 GPUs" or "no such service".
 */
import type { RunResult } from '../transport/types.js';
import type { ProbeDef, Verdict } from './types.js';

export type ProbeProblem =
  | { kind: 'missing-tool'; probe: string; tool: string; evidence: string }
  | { kind: 'sudo'; probe: string; evidence: string }
  | { kind: 'unit-manager'; probe: string; evidence: string };

/** Debian/Ubuntu packages that provide the tools our probes run (what `apt-get install` needs). */
const TOOL_PACKAGES: Readonly<Record<string, string>> = {
  lspci: 'pciutils',
  setpci: 'pciutils',
  ip: 'iproute2',
  rdma: 'iproute2',
  ss: 'iproute2',
  tc: 'iproute2',
  dcb: 'iproute2',
  bridge: 'iproute2',
  ethtool: 'ethtool',
  systemctl: 'systemd',
  journalctl: 'systemd',
  timedatectl: 'systemd',
  'systemd-analyze': 'systemd',
  lscpu: 'util-linux',
  dmesg: 'util-linux',
  lsblk: 'util-linux',
  lsmod: 'kmod',
  modinfo: 'kmod',
  modprobe: 'kmod',
  'dpkg-query': 'dpkg',
  dpkg: 'dpkg',
  ibv_devinfo: 'ibverbs-utils',
  ibv_devices: 'ibverbs-utils',
  ibstat: 'infiniband-diags',
  ibstatus: 'infiniband-diags',
  ib_write_bw: 'perftest',
  ib_read_bw: 'perftest',
  ib_send_bw: 'perftest',
  rdma_server: 'rdmacm-utils',
  rdma_client: 'rdmacm-utils',
  sudo: 'sudo',
  lldpcli: 'lldpd',
  ufw: 'ufw',
  chronyc: 'chrony',
  netplan: 'netplan.io',
  mokutil: 'mokutil',
  ping: 'iputils-ping',
  curl: 'curl',
  jq: 'jq',
  python3: 'python3',
  sysctl: 'procps',
  ps: 'procps',
  pgrep: 'procps',
  mlnx_qos: 'mlnx-tools',
  ibdev2netdev: 'mlnx-tools',
  show_gids: 'mlnx-tools',
  'update-grub': 'grub2-common',
  dkms: 'dkms',
  nvcc: 'nvidia-cuda-toolkit',
  'apt-mark': 'apt',
  hostname: 'hostname',
  hostnamectl: 'systemd',
  loginctl: 'systemd',
};

/** systemd's clients: each prints "System has not been booted with systemd" where no unit manager runs. */
const UNIT_MANAGER_CLIENTS = new Set(['systemctl', 'journalctl', 'timedatectl', 'hostnamectl', 'loginctl']);

/** Tools that come with the NVIDIA driver rather than a package of their own name. */
const DRIVER_TOOLS = new Set(['nvidia-smi']);

/** How to get a tool onto the host: its package and, for a Debian package, the apt-get line. */
export function toolRemedy(tool: string): { package: string; install: string; apt?: string } {
  if (DRIVER_TOOLS.has(tool)) {
    return {
      package: 'nvidia-utils-<branch>-server (with the NVIDIA driver)',
      install: 'apply gpu-driver.install (the NVIDIA driver brings nvidia-smi)',
    };
  }
  const pkg = TOOL_PACKAGES[tool] ?? tool;
  return { package: pkg, install: `sudo apt-get install -y ${pkg}`, apt: pkg };
}

/** One line that installs every missing tool: a single apt-get for the Debian packages, then the rest. */
export function installLine(tools: readonly string[]): string {
  const remedies = tools.map(toolRemedy);
  const apt = [...new Set(remedies.flatMap((r) => (r.apt ? [r.apt] : [])))];
  const other = [...new Set(remedies.filter((r) => !r.apt).map((r) => r.install))];
  return [...(apt.length ? [`sudo apt-get install -y ${apt.join(' ')}`] : []), ...other].join('; ');
}

// The ways a shell, sudo, env or Ubuntu's command-not-found handler say a program does not exist.
const NOT_FOUND_FORMS: readonly RegExp[] = [
  /(?:^|: )([\w.+-]+): command not found/gm, // bash, sudo, our own scripts' guards
  /^Command '([\w.+-]+)' not found/gm, // /usr/lib/command-not-found
  /^(?:\/bin\/)?(?:sh|dash): \d+: ([\w.+-]+): not found/gm, // dash
  /^env: '?‘?([\w.+-]+)'?’?: No such file or directory/gm,
];

/** The program names the output says do not exist, in order of first mention. */
export function notFoundTools(text: string): string[] {
  const found: { at: number; tool: string }[] = [];
  for (const re of NOT_FOUND_FORMS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) found.push({ at: m.index, tool: m[1]! });
  }
  found.sort((a, b) => a.at - b.at);
  return [...new Set(found.map((f) => f.tool))];
}

const SUDO_REFUSED =
  /^sudo: (?:a password is required|a terminal is required|\S+ is not in the sudoers file|sorry, you must have a tty)/m;
const NO_UNIT_MANAGER =
  /System has not been booted with systemd as init system|Failed to connect to (?:system scope )?bus/;

/** The tools a probe depends on: its declared tools, or the program an argv probe runs. */
export function probeTools(probe: ProbeDef): readonly string[] {
  // A root probe runs through sudo: without it nothing of the probe ran.
  if (probe.sudo) return ['sudo', ...probeToolsOwn(probe)];
  return probeToolsOwn(probe);
}

function probeToolsOwn(probe: ProbeDef): readonly string[] {
  if (probe.tools) return probe.tools;
  if ('argv' in probe.command) {
    const bin = probe.command.argv[0] ?? '';
    return bin === 'cat' || bin === 'test' || bin === 'true' ? [] : [bin.replace(/^.*\//, '')];
  }
  return [];
}

function evidenceLines(text: string, match: RegExp | string): string {
  const lines = text.split('\n').filter((l) => (typeof match === 'string' ? l.includes(match) : match.test(l)));
  return lines.slice(0, 3).join('\n');
}

/** What stops this probe's output from being read, if anything (a declared tool missing, sudo, no systemd). */
export function probeProblems(probe: ProbeDef, result: RunResult): ProbeProblem[] {
  const text = `${result.stderr}\n${result.stdout}`;
  const problems: ProbeProblem[] = [];
  const wanted = new Set(probeTools(probe));
  const line = `\`${result.commandLine.split('\n')[0]!.slice(0, 160)}\` → exit ${result.exitCode ?? 'none'}`;
  for (const tool of notFoundTools(text)) {
    if (!wanted.has(tool)) continue;
    problems.push({ kind: 'missing-tool', probe: probe.id, tool, evidence: `${line}\n${evidenceLines(text, tool)}` });
  }
  // Exit 127 with no message we know: blame the program the probe runs (never sudo, which says so when missing),
  // and only when no message named another program whose absence the probe accepts.
  const own = probeToolsOwn(probe);
  const unnamed = notFoundTools(text).length === 0;
  if (problems.length === 0 && unnamed && result.exitCode === 127 && 'argv' in probe.command && own.length === 1) {
    const tool = own[0]!;
    const said = text.trim().split('\n').slice(0, 2).join('\n');
    problems.push({ kind: 'missing-tool', probe: probe.id, tool, evidence: `${line}\n${said}` });
  }
  if (probe.sudo && SUDO_REFUSED.test(text)) {
    problems.push({ kind: 'sudo', probe: probe.id, evidence: `${line}\n${evidenceLines(text, SUDO_REFUSED)}` });
  }
  if ([...wanted].some((t) => UNIT_MANAGER_CLIENTS.has(t)) && NO_UNIT_MANAGER.test(text)) {
    const said = evidenceLines(text, NO_UNIT_MANAGER);
    problems.push({ kind: 'unit-manager', probe: probe.id, evidence: `${line}\n${said}` });
  }
  return problems;
}

/** The "cannot tell" verdict for a check whose probes could not be read on `host`. */
export function cannotTellVerdict(problems: readonly ProbeProblem[], host: string): Verdict {
  const first = problems[0]!;
  const evidence = problems.map((p) => `${host} probe ${p.probe}: ${p.evidence}`).join('\n');
  if (first.kind === 'missing-tool') {
    const tools = [...new Set(problems.flatMap((p) => (p.kind === 'missing-tool' ? [p.tool] : [])))];
    return {
      status: 'error',
      summary: `cannot tell: ${tools
        .map((t) => `${t} is not installed on ${host} (package ${toolRemedy(t).package})`)
        .join('; ')}`,
      evidence,
      fix: `${installLine(tools)}, then check again`,
    };
  }
  if (first.kind === 'sudo') {
    return {
      status: 'error',
      summary: `cannot tell: the probe needs root and sudo refused on ${host}`,
      evidence,
      fix:
        'give the SSH user sudo (passwordless, or its password with --ask-sudo-password or --sudo-password-stdin), ' +
        'then check again (os.sudo)',
    };
  }
  return {
    status: 'error',
    summary: `cannot tell: ${host} runs no systemd unit manager (systemctl cannot reach it)`,
    evidence,
    fix:
      'run l20-setup against a host booted with systemd (Ubuntu 22.04 server); ' +
      'containers without systemd cannot hold the units',
  };
}

/** The problems of the probes a check needs, from one host's probe results. */
export function unreadableNeeds(
  probes: readonly ProbeDef[],
  needs: readonly string[] | undefined,
  outputs: Readonly<Record<string, RunResult>>,
): ProbeProblem[] {
  if (!needs || needs.length === 0) return [];
  return needs.flatMap((id) => {
    const probe = probes.find((p) => p.id === id);
    const result = outputs[id];
    return probe && result ? probeProblems(probe, result) : [];
  });
}

/**
 * For a check whose probe's tool is optional until an earlier fact makes it required (nvidia-smi once a driver is
 * loaded): "cannot tell" when the probe's output says the tool is not installed, else undefined.
 */
export function toolMissingVerdict(output: string, tool: string, probe: string, host: string): Verdict | undefined {
  if (!notFoundTools(output).includes(tool)) return undefined;
  const lines = output
    .split('\n')
    .filter((l) => l.includes(tool))
    .slice(0, 2)
    .join('\n');
  return cannotTellVerdict([{ kind: 'missing-tool', probe, tool, evidence: lines }], host);
}
