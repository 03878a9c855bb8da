/** R25 DCB only on physical PFs, R27 QoS persistence; and the QoS state the supplied scripts set (R09). */
import type { ShellCommand } from '../../parse/shell-commands.js';
import type { Finding } from '../types.js';
import { dcbOf, mlnxQosOf } from './commands.js';
import { allCommands, allDevices, cmdText, commandsOf, mk, ROCE_PRIO, short } from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { fabricPorts } from './design.js';

/** Trust mode and lossless priorities the run's QoS commands establish (resets to all-off ignored). */
export function qosState(ctx: CfgContext): { trust?: 'dscp' | 'pcp'; prios: number[] } {
  const trusts = new Set<string>();
  const prios = new Set<number>();
  for (const { c } of allCommands(ctx)) {
    const q = mlnxQosOf(c);
    if (q) {
      const v = q.pfc?.vector;
      if (v && v.every((x) => x === 0)) continue; // a `--reset` branch
      if (q.trust?.value) trusts.add(q.trust.value.toLowerCase());
      v?.forEach((x, i) => x === 1 && prios.add(i));
    }
    const d = dcbOf(c);
    if (d && d.object === 'app' && /replace|add|set/.test(d.action) && c.argv.some((w) => w.text === 'dscp-prio'))
      trusts.add('dscp');
    if (d && d.object === 'pfc' && /set/.test(d.action))
      for (const w of c.argv) for (const m of w.text.matchAll(/\b([0-7]):on\b/g)) prios.add(Number(m[1]));
  }
  const trust = trusts.has('dscp') ? 'dscp' : trusts.has('pcp') ? 'pcp' : undefined;
  return { ...(trust ? { trust } : {}), prios: [...prios].sort() };
}

/** Why `iface` is not a physical PF, statically; undefined when it may be one. */
function virtualReason(iface: string, ctx: CfgContext): string | undefined {
  for (const { file, d } of allDevices(ctx)) {
    if (d.name === iface && d.type !== 'ethernet' && d.type !== 'other')
      return `${iface} is a ${d.type} (${short(file.name)}:${d.lines.name} defines it under ${d.type}s)`;
  }
  if (/^bond/.test(iface)) return `${iface} is a bond (named bond*)`;
  if (/\.\d+$/.test(iface)) return `${iface} is a VLAN (named <if>.<vid>)`;
  if (/^br/.test(iface)) return `${iface} is a bridge (named br*)`;
  if (/^veth/.test(iface)) return `${iface} is a veth (named veth*)`;
  return undefined;
}

export const R25: CfgRule = {
  id: 'R25',
  title: 'DCB (trust/PFC) set on a bond or virtual device: the command fails',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    for (const c of commandsOf(f)) {
      const q = mlnxQosOf(c);
      const d = dcbOf(c);
      const target = q?.iface ?? (d?.dev ? { value: d.dev.text, line: d.dev.line } : undefined);
      if (!target?.value || target.value.includes('$')) continue;
      const why = virtualReason(target.value, ctx);
      if (!why) continue;
      const slaves =
        allDevices(ctx).find(({ d: dev }) => dev.name === target.value && dev.interfaces.length > 0)?.d.interfaces ??
        fabricPorts(ctx);
      const setting = q ? `--trust dscp --pfc 0,0,0,1,0,0,0,0` : '';
      out.push(
        mk(
          this,
          'blocker',
          f,
          target.line,
          `${cmdText(f, c, target.line)} → ${why}: it has no DCB operations, so ${q ? '`mlnx_qos` prints "Priority trust state is not supported on your system" and exits 1' : '`dcb` fails with "Operation not supported"'}, aborting a \`set -e\` script. Live sysfs/driver check: not checked (needs host)`,
          q
            ? `Delete the line; set DCB on the physical ports only: ${slaves.map((s) => `\`mlnx_qos -i ${s} ${setting}\``).join(', ')}.`
            : `Delete the line; run the \`dcb\` command on each physical port (${slaves.join(', ')}).`,
        ),
      );
    }
    return out;
  },
};

function appliesQos(c: ShellCommand): boolean {
  const q = mlnxQosOf(c);
  if (q && (q.trust || q.pfc)) return true;
  const d = dcbOf(c);
  return !!d && ['app', 'pfc', 'ets'].includes(d.object) && /^(?:set|replace|add)$/.test(d.action);
}

/** Something in the run re-applies QoS at boot: a unit running DCB commands or a QoS script, or an install of one. */
function persisted(f: CfgFile, ctx: CfgContext): boolean {
  const base = short(f.name).replace(/\.sh$/, '');
  for (const file of ctx.files) {
    for (const u of file.units) {
      const exec = u.entries.filter((e) => /^Exec/.test(e.key)).map((e) => e.value);
      if (exec.some((v) => /mlnx_qos|\bdcb\b|qos/i.test(v) || (base.length > 2 && v.includes(base)))) return true;
    }
  }
  return commandsOf(f).some(
    (c) =>
      (c.program === 'systemctl' && c.argv.some((w) => w.text === 'enable')) ||
      c.redirects.some((r) => /\/etc\/systemd\/system\/|\/etc\/rc\.local|\/etc\/cron/.test(r.target)) ||
      (c.program === 'tee' && c.argv.some((w) => /\/etc\/systemd\/system\//.test(w.text))) ||
      c.program === 'crontab' ||
      c.argv.some((w) => w.text === '@reboot'),
  );
}

export const R27: CfgRule = {
  id: 'R27',
  title: 'QoS applied by hand: lost at the next reboot or driver reload',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    if (f.kind === 'systemd-unit') return [];
    const first = f.commands.find(appliesQos);
    if (!first || persisted(f, ctx)) return [];
    const n = f.commands.filter(appliesQos).length;
    return [
      mk(
        this,
        'high',
        f,
        first.line,
        `${cmdText(f, first)} → ${n} QoS command${n === 1 ? '' : 's'} set runtime driver state (trust, PFC); nothing in the supplied files re-applies ${n === 1 ? 'it' : 'them'} (no unit, no enable). Read-back after a reboot: not checked (needs host)`,
        `Install the commands as /usr/local/sbin/l20-roce-qos and a unit /etc/systemd/system/l20-roce-qos.service (Type=oneshot, RemainAfterExit=yes, After=network-online.target openibd.service, ExecStart=/usr/local/sbin/l20-roce-qos, WantedBy=multi-user.target); then \`sudo systemctl daemon-reload && sudo systemctl enable --now l20-roce-qos.service\` on both hosts (lossless prio ${ROCE_PRIO}).`,
      ),
    ];
  },
};
