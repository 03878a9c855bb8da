/**
 * What a file is, from its content only (never its name): nccl.conf / env file, netplan YAML, systemd unit,
 * shell script, a single vLLM/Ray command line, a Python launcher, Markdown/prose, or unknown. Binary and
 * empty input are recognised first. Linear-time; never throws.
 */
import { parseNetplanYaml } from '../parse/netplan-yaml.js';
import { parseShell } from '../parse/shell-commands.js';
import type { LintKind } from '../rules/cfg/context.js';

/** Programs a cluster script runs; a line starting with one of these is a command, not prose. */
export const KNOWN_PROGRAMS = new Set(
  (
    'apt apt-get aptitude dpkg pip pip3 uv python python3 ray vllm torchrun mpirun mlnx_qos dcb wget curl tar cd echo printf cat tee ' +
    'modprobe systemctl netplan ip ethtool ufw iptables nvidia-smi nvcc ibstat ibstatus ibv_devices ibv_devinfo ib_write_bw ib_read_bw ' +
    'ib_send_bw ib_write_lat ib_read_lat ib_send_lat mlnxofedinstall export source . set chmod chown mkdir cp mv rm ln sed grep awk ls git ' +
    'make docker podman ssh scp rsync sleep exit hf huggingface-cli sh bash lspci rdma show_gids ibdev2netdev numactl sysctl iftop nload ' +
    'tcpdump update-grub reboot useradd test [ for done do if then fi while else sudo env nohup exec ofed_info mst mlxconfig lldpctl lldpcli ' +
    'timedatectl hostnamectl journalctl dcgmi nvidia-persistenced setpci mokutil dkms all_reduce_perf unset cmake conda read trap wait'
  ).split(' '),
);

/** Printable-text check: NUL bytes or a high share of replacement/control characters mean binary. */
export function looksBinary(text: string): boolean {
  const sample = text.slice(0, 8192);
  if (sample.includes('\u0000')) return true;
  let bad = 0;
  for (const ch of sample) if (ch === '\ufffd' || /[\u0001-\u0008\u000e-\u001a\u001c-\u001f]/.test(ch)) bad++;
  return sample.length > 0 && bad / sample.length > 0.1;
}

/** A program a script runs: a known name, a `*.sh`/`*.run` file, or an executable path (not a sysfs/proc line). */
export function isKnownCommand(program: string, argv0: string): boolean {
  if (KNOWN_PROGRAMS.has(program) || /\.(?:sh|run)$/.test(program)) return true;
  return /^(?:\.{1,2})?\/[\w.+/-]+$/.test(argv0) && !/^\/(?:sys|proc|dev)\//.test(argv0);
}

function isCommandish(line: string): boolean {
  const first = line.replace(/^(?:sudo\s+(?:-\S+\s+)*)?(?:[A-Za-z_]\w*=\S*\s+)*/, '').split(/[\s;|&]/)[0] ?? '';
  if (/^[A-Za-z_]\w*=/.test(first)) return false; // only assignments on the line
  const prog = first.slice(first.lastIndexOf('/') + 1);
  return (
    KNOWN_PROGRAMS.has(prog) || /^\.{0,2}\//.test(first) || /\.(?:sh|run|py)$/.test(first) || line.startsWith('#!')
  );
}

const ASSIGN_LINE = /^(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=/;
const PROSE_LINE = (l: string): boolean =>
  /[\u3000-\u9fff\uff00-\uffef]/.test(l) ||
  (l.split(/\s+/).length >= 6 && /[a-z]{3,}\s+[a-z]{2,}\s+[a-z]{2,}/i.test(l) && !isCommandish(l));

export function detectKind(input: string): LintKind {
  if (typeof input !== 'string' || input.trim() === '') return 'empty';
  if (looksBinary(input)) return 'binary';
  const text = input.replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  const body = lines.map((l) => l.trim()).filter((l) => l !== '');
  const code = body.filter((l) => !l.startsWith('#'));
  if (code.length === 0) return 'unknown';

  // fenced code blocks: Markdown, whatever the blocks hold (a netplan file has no ``` lines)
  const fences = lines.filter((l) => /^\s*(?:```|~~~)/.test(l)).length;
  if (fences >= 2) return 'markdown';

  // systemd unit: section headers and Key=Value lines
  if (
    body.some((l) => /^\[(?:Unit|Service|Install|Timer|Socket|Path|Mount)\]$/.test(l)) &&
    code.filter((l) => /^\[[\w ]+\]$/.test(l) || /^[A-Za-z][\w]*\s*=/.test(l)).length >= code.length * 0.8
  )
    return 'systemd-unit';

  // netplan: a top-level `network:` mapping
  if (/^network:\s*(?:#.*)?$/m.test(text) || /^network:\s*\{/m.test(text)) {
    const n = parseNetplanYaml(text.slice(0, 1_000_000));
    if (n.isNetplan || /^\s+(?:version|ethernets|bonds|bridges|vlans|renderer):/m.test(text)) return 'netplan-yaml';
  }

  // Markdown / prose: fences, tables, or headings among prose lines
  const tableSep = lines.some((l) => /^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$/.test(l));
  const prose = code.filter(PROSE_LINE).length;
  const commands = code.filter(isCommandish).length;
  if (fences === 1 || tableSep || (lines.some((l) => /^#{1,6}\s+\S/.test(l)) && prose > commands && prose >= 2))
    return 'markdown';

  // Python
  if (
    code.some((l) => /^(?:import\s+[\w.]+|from\s+[\w.]+\s+import\s+)/.test(l)) ||
    code.some((l) => /^(?:def|class)\s+\w+.*:$/.test(l))
  )
    return 'python-launcher';

  // KEY=VALUE files (a bare `NCCL_X` line is a malformed conf line, not a command)
  const shebang = /^#!\s*\/\S*(?:sh|bash|env\s+(?:ba)?sh)\b/.test(body[0] ?? '');
  const assigns = code.filter((l) => ASSIGN_LINE.test(l) && !isCommandish(l.replace(/^export\s+/, '')));
  // `NCCL_DEBUG=INFO torchrun …` is a command with an environment prefix, not a conf line
  const confish = code.filter(
    (l) => (ASSIGN_LINE.test(l) || /^NCCL_[A-Z0-9_]*\b/.test(l)) && !isCommandish(l.replace(/^export\s+/, '')),
  );
  if (
    !shebang &&
    assigns.length > 0 &&
    confish.length >= code.length * 0.6 &&
    code.every((l) => confish.includes(l) || !isCommandish(l))
  ) {
    const keys = assigns.map(
      (l) =>
        l
          .replace(/^export\s+/, '')
          .split('=')[0]
          ?.trim() ?? '',
    );
    const nccl = keys.filter((k) => /^NCCL_/.test(k)).length;
    return nccl > 0 && nccl >= keys.length / 2 ? 'nccl-conf' : 'env';
  }

  // Shell
  const cmds = parseShell(text.length > 2_000_000 ? text.slice(0, 2_000_000) : text).filter((c) => c.program !== '');
  const known = cmds.filter((c) => isKnownCommand(c.program, c.argv[0]?.text ?? ''));
  if (shebang || (known.length > 0 && known.length >= cmds.length * 0.5 && prose <= commands)) {
    const main = cmds.filter((c) => !['set', 'source', '.', 'cd', 'export'].includes(c.program));
    return !shebang && main.length === 1 ? 'command-line' : 'shell-script';
  }
  if (prose >= 1 && prose >= code.length / 2) return 'markdown';
  return 'unknown';
}
