/**
 * R45 Ray node IP, R46 exposed control planes (and a vLLM API key on the command line), R47 version parity,
 * R48 firewall, R49 monitoring, R50 claims.
 */
import type { ShellCommand } from '../../parse/shell-commands.js';
import type { Finding } from '../types.js';
import { pipInstallOf, rayStartOf, ufwOf, type Flag } from './commands.js';
import { allCommands, allSettings, cmdText, commandsOf, ipv4Net, isSetAnywhere, lineText, mk } from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { designOf } from './design.js';
import { allLaunches, launchesOf } from './launch.js';
import { ev, modelInfo } from './serving.js';

/** The head's cluster IP from a worker's --address, else this host's control address. */
function clusterIps(ctx: CfgContext): { head?: string; worker?: string } {
  let head: string | undefined;
  for (const { c } of allCommands(ctx)) {
    const a = rayStartOf(c)?.get('--address')?.value;
    if (a && ipv4Net(a.split(':')[0] as string)) head = a.split(':')[0];
  }
  if (!head) {
    const d = designOf(ctx);
    const dev = [...d.bonds.map(({ d: b }) => b)].find((b) => b.addresses.length > 0);
    head = dev?.addresses[0]?.split('/')[0];
  }
  const worker = head && /\.1$/.test(head) ? head.replace(/\.1$/, '.2') : undefined;
  return { ...(head ? { head } : {}), ...(worker ? { worker } : {}) };
}

export const R45: CfgRule = {
  id: 'R45',
  title: 'Ray / vLLM node IP left to the default route',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    const ips = clusterIps(ctx);
    for (const c of commandsOf(f)) {
      const r = rayStartOf(c);
      if (!r || r.get('--node-ip-address')) continue;
      const ip = (r.head ? ips.head : ips.worker) ?? `<this node's cluster IP>`;
      out.push(
        mk(
          this,
          'high',
          f,
          c.line,
          `${cmdText(f, c)} → no --node-ip-address on a multi-homed host (management + 4 fabric ports): Ray registers the default-route (management) IP, so workers and placement use the wrong NIC ("No available node types can fulfill resource request"). Registered addresses (ray list nodes): not checked (needs host)`,
          `\`${c.argv.map((w) => w.text).join(' ')} --node-ip-address=${ip}\``,
        ),
      );
    }
    if (!isSetAnywhere(ctx, 'VLLM_HOST_IP')) {
      for (const l of launchesOf(f).filter((x) => x.usesRay)) {
        out.push(
          mk(
            this,
            'high',
            f,
            l.line,
            `${ev(f, l, l.line)} → vLLM with Ray on a multi-homed host without VLLM_HOST_IP: it advertises the default-route address`,
            `Start it with \`VLLM_HOST_IP=${ips.head ?? '<cluster IP>'}\` (each node its own fabric IP).`,
          ),
        );
      }
    }
    return out;
  },
};

const ANY = /^(?:0\.0\.0\.0|::|\[::\]|\*)$/;

const KEY_FIX =
  "the key as `VLLM_API_KEY=<key>` in /etc/l20/vllm.env (root, mode 0600), loaded by the unit's " +
  '`EnvironmentFile=/etc/l20/vllm.env` (vLLM reads VLLM_API_KEY when --api-key is absent)';

/**
 * R46's other half: a key given as `--api-key` is in the process's argv, which every local user reads (`ps`,
 * /proc/<pid>/cmdline), so it authenticates nobody on the host. A literal also sits in the file (units are
 * world-readable): high. A `${VAR}` is no better at run time — systemd and the shell expand it into argv — but
 * keeps the file clean: medium.
 */
function keyOnCommandLine(rule: CfgRule, f: CfgFile, text: string, key: Flag): Finding {
  const ref = /^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$/.test(key.value ?? '');
  const why = ref
    ? `--api-key ${key.value} is expanded into vLLM's command line`
    : "--api-key carries the key itself, in this file and on vLLM's command line";
  const evidence = `${text} → ${why}: every local user reads it with \`ps\` or /proc/<pid>/cmdline`;
  const title = 'vLLM API key on the command line, where every local user reads it';
  return mk(rule, ref ? 'medium' : 'high', f, key.line, evidence, `Drop --api-key; put ${KEY_FIX}.`, title);
}

export const R46: CfgRule = {
  id: 'R46',
  title: 'Control plane exposed on every interface without authentication',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    const token =
      allSettings(ctx, 'RAY_AUTH_MODE').some(({ s }) => s.value === 'token') ||
      allCommands(ctx).some(({ c }) => c.env.some((e) => e.name === 'RAY_AUTH_MODE' && e.value === 'token'));
    const firewall =
      allCommands(ctx).some(({ c }) => (ufwOf(c) ?? []).join(' ').match(/enable|default deny/)) &&
      !allCommands(ctx).some(({ c }) => ufwOf(c)?.[0] === 'disable');
    for (const c of commandsOf(f)) {
      const d = rayStartOf(c)?.get('--dashboard-host');
      if (!d?.value || !ANY.test(d.value) || token || firewall) continue;
      out.push(
        mk(
          this,
          'high',
          f,
          d.line,
          `${cmdText(f, c, d.line)} → the Ray dashboard and Jobs API listen on all interfaces with no token auth (RAY_AUTH_MODE=token, Ray ≥ 2.52) and no firewall limit: anyone who reaches port 8265 runs code (CVE-2023-48022, CVE-2025-62593)`,
          '`--dashboard-host=127.0.0.1`, reached through `ssh -L 8265:127.0.0.1:8265 <head>`.',
        ),
      );
    }
    const apiKey = isSetAnywhere(ctx, 'VLLM_API_KEY');
    for (const l of launchesOf(f)) {
      const key = l.cli?.get('--api-key');
      if (key) out.push(keyOnCommandLine(this, f, l.cmd ? cmdText(f, l.cmd, key.line) : lineText(f, key.line), key));
      if (!l.cli || l.cli.get('--headless') || key || apiKey) continue;
      const h = l.cli.get('--host');
      if (h?.value && !ANY.test(h.value)) continue;
      const line = h?.line ?? l.line;
      const where = h ? `--host ${h.value}` : 'no --host (vLLM binds all interfaces)';
      const text = l.cmd ? cmdText(f, l.cmd, line) : lineText(f, line);
      out.push(
        mk(
          this,
          'high',
          f,
          line,
          `${text} → ${where} and no API key: the OpenAI API is open to every network the host is on`,
          `\`--host <service IP>\` and ${KEY_FIX}, and allow port 8000 only on the management interface.`,
        ),
      );
    }
    return out;
  },
};

const CORE = /^(?:vllm|ray|torch)(?:\[.*\])?$/i;

function venvActive(f: CfgFile, line: number): boolean {
  return commandsOf(f).some(
    (c) =>
      c.line <= line &&
      (((c.program === 'source' || c.program === '.') && /\/bin\/activate$/.test(c.argv[1]?.text ?? '')) ||
        (/^python/.test(c.program) && c.argv.some((w) => w.text === 'venv')) ||
        (c.program === 'conda' && c.argv[1]?.text === 'activate') ||
        (c.program === 'uv' && c.argv[1]?.text === 'venv')),
  );
}

export const R47: CfgRule = {
  id: 'R47',
  title: 'vLLM / Ray installed unpinned or into the system Python',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const c of commandsOf(f)) {
      const p = pipInstallOf(c);
      if (!p || !p.packages.some((w) => CORE.test(w.text.split(/[=<>~!]/)[0] as string))) continue;
      const unpinned = p.packages.filter((w) => !/==|@|\.whl$|^\.|^\//.test(w.text)).map((w) => w.text);
      const system =
        c.sudo ||
        (!/(?:^|\/)\.?venv\/|\/envs?\/|conda/.test(p.interpreter) &&
          !venvActive(f, c.line) &&
          !p.flags.some((x) => x.name === '--prefix' || x.name === '--target'));
      if (unpinned.length === 0 && !system) continue;
      const why = [
        unpinned.length > 0 ? `unpinned (${unpinned.join(', ')}): each node resolves whatever is newest that day` : '',
        system ? `${c.sudo ? 'sudo pip' : p.interpreter} installs into the system Python (no venv)` : '',
      ].filter(Boolean);
      const pins = p.packages.map((w) => (CORE.test(w.text) ? `"${w.text}==<pinned>"` : w.text)).join(' ');
      out.push(
        mk(
          this,
          'medium',
          f,
          c.line,
          `${cmdText(f, c)} → ${why.join('; ')}. Version parity between nodes: not checked (needs hosts)`,
          `\`python3 -m venv /opt/l20/venv && /opt/l20/venv/bin/pip install ${pins}\` on both nodes, or one container image.`,
        ),
      );
    }
    return out;
  },
};

function firewallOff(c: ShellCommand): string | undefined {
  const u = ufwOf(c);
  if (u && u[0] === 'disable')
    return 'disables the firewall: Ray (6379, 8265, 10001, worker ports) and the vLLM API become reachable from every network';
  if (u && u.join(' ').includes('4791'))
    return 'opens UDP 4791 for RoCE: hardware RoCE bypasses netfilter, the rule does nothing';
  if (c.program === 'iptables' && c.argv.some((w) => w.text === '-F' || w.text === '--flush'))
    return 'flushes every firewall rule';
  if (
    c.program === 'systemctl' &&
    /^(?:stop|disable|mask)$/.test(c.argv[1]?.text ?? '') &&
    c.argv.some((w) => /^(?:ufw|firewalld|iptables|nftables)(?:\.service)?$/.test(w.text))
  )
    return 'turns the firewall off';
  return undefined;
}

const FW_FIX =
  'Keep the firewall on: `sudo ufw allow in on <mgmt-if> to any port 22 proto tcp`, `sudo ufw allow in on <fabric-if>` for each fabric port (all cluster TCP stays between the cluster addresses), `sudo ufw --force enable`; RoCE (UDP 4791) needs no rule.';

export const R48: CfgRule = {
  id: 'R48',
  title: 'Firewall advice that exposes the cluster',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const c of commandsOf(f)) {
      const why = firewallOff(c);
      if (why) out.push(mk(this, 'medium', f, c.line, `${cmdText(f, c)} → ${why}`, FW_FIX));
    }
    for (const u of f.prose?.udp4791 ?? [])
      out.push(
        mk(
          this,
          'medium',
          f,
          u.line,
          `${u.text} → presents UDP 4791 as a port to open: hardware RoCE bypasses netfilter, so the rule does nothing`,
          FW_FIX,
        ),
      );
    return out;
  },
};

const MONITORS = new Set(['iftop', 'nload', 'iptraf-ng', 'bmon', 'nethogs']);
const RDMA_FIX =
  'Read RDMA traffic from the NIC: `ethtool -S <pf> | grep -E "vport_rdma_unicast_bytes|prio3_pause"` and `/sys/class/infiniband/<dev>/ports/1/counters/port_{xmit,rcv}_data` (4-byte units).';

export const R49: CfgRule = {
  id: 'R49',
  title: 'Monitoring tool that cannot see RoCE traffic',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const c of commandsOf(f))
      if (MONITORS.has(c.program))
        out.push(
          mk(
            this,
            'low',
            f,
            c.line,
            `${cmdText(f, c)} → ${c.program} counts kernel-stack packets; RDMA bypasses the kernel, so NCCL traffic shows as ~0`,
            RDMA_FIX,
          ),
        );
    for (const m of f.prose?.monitors ?? [])
      out.push(
        mk(
          this,
          'low',
          f,
          m.line,
          `${m.text} → ${m.tool} is offered for network monitoring; RDMA bypasses the kernel, so NCCL traffic shows as ~0`,
          RDMA_FIX,
        ),
      );
    return out;
  },
};

export const R50: CfgRule = {
  id: 'R50',
  title: 'Performance claim without a workload',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const p = f.prose;
    if (!p || p.claims.length === 0) return [];
    const models = allLaunches(ctx)
      .filter(({ file }) => file === f)
      .flatMap(({ l }) => (l.model ? [l.model.value] : []));
    const missing: string[] = [];
    const bad = models.filter((m) => modelInfo(m).missing);
    if (models.length === 0 || bad.length === models.length)
      missing.push(
        bad.length > 0 ? `an existing model (${[...new Set(bad)].join(', ')} does not exist, R41)` : 'the model',
      );
    if (!p.workload.lengths) missing.push('input and output lengths');
    if (!p.workload.concurrency) missing.push('concurrency');
    if (!p.workload.prompts) missing.push('prompt count');
    if (!p.workload.layout) missing.push('layout (TP/PP/DP)');
    if (!p.workload.tool) missing.push('tool (`vllm bench serve`)');
    if (missing.length === 0) return [];
    return p.claims.map((block) =>
      mk(
        this,
        'medium',
        f,
        block[0]?.line,
        `${block.map((r) => r.text).join(' ⏎ ')} → unverifiable: the text states none of: ${missing.join('; ')}. "Max concurrency" is set by --max-num-seqs and the KV cache, not by the hardware`,
        'Measure and report with the workload: `vllm bench serve --model <real model> --dataset-name random --random-input-len 512 --random-output-len 1024 --max-concurrency 64 --num-prompts 640 --seed 0`, stating model, quantization, TP/PP/DP, lengths, concurrency and prompt count.',
      ),
    );
  },
};
