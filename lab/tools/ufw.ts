/**
 * ufw 0.36.1 (jammy): `status [verbose|numbered]`, `[--force] enable|disable`, `allow|deny …`
 * (`allow in on IF [to any port P [proto tcp|udp]]`, `allow P[/proto]`), `delete allow …`.
 * Source-derived (ufw's frontend/backend): no captured jammy output is in the corpus.
 *
 * State lives where ufw keeps it — ENABLED= in /etc/ufw/ufw.conf and `### tuple ###` records in
 * /etc/ufw/user.rules and user6.rules — and, for what is loaded in the kernel, in
 * `machine.firewall` (the lab's SSH server consults it: an active firewall without an ALLOW IN
 * rule for the SSH port on the management interface refuses new connections; established ones
 * survive through ufw's RELATED,ESTABLISHED rule, as on a real host).
 */
import { decodeBytesToUtf8, type IFileSystem } from 'just-bash';
import type { FirewallState, Machine } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';
import { notifyManagement } from './mgmt-path.js';

export const UFW_CONF = '/etc/ufw/ufw.conf';
export const USER_RULES = '/etc/ufw/user.rules';
export const USER6_RULES = '/etc/ufw/user6.rules';

/** /etc/ufw/ufw.conf as the package ships it, with ENABLED= set. */
export function ufwConf(enabled: boolean): string {
  return `# /etc/ufw/ufw.conf
#

# Set to yes to start on boot. If setting this remotely, be sure to add a rule
# to allow your remote connection before starting ufw. Eg: 'ufw allow 22/tcp'
ENABLED=${enabled ? 'yes' : 'no'}

# Please use the 'ufw' command to set the loglevel. Eg: 'ufw logging medium'.
# See 'man ufw' for details.
LOGLEVEL=low
`;
}

export interface UfwRule {
  action: 'allow' | 'deny';
  iface?: string;
  port?: number;
  proto?: 'tcp' | 'udp';
}

const CHAINS = [
  'user-input',
  'user-output',
  'user-forward',
  'before-logging-input',
  'before-logging-output',
  'before-logging-forward',
  'user-logging-input',
  'user-logging-output',
  'user-logging-forward',
  'after-logging-input',
  'after-logging-output',
  'after-logging-forward',
  'logging-deny',
  'logging-allow',
  'user-limit',
  'user-limit-accept',
];

/** `### tuple ### allow tcp 22 0.0.0.0/0 any 0.0.0.0/0 in_eno1`, as ufw records a rule. */
function tuple(r: UfwRule, v6: boolean): string {
  const any = v6 ? '::/0' : '0.0.0.0/0';
  return `### tuple ### ${r.action} ${r.proto ?? 'any'} ${r.port ?? 'any'} ${any} any ${any} in${r.iface ? `_${r.iface}` : ''}`;
}

function iptablesLine(r: UfwRule, v6: boolean): string {
  const chain = v6 ? 'ufw6' : 'ufw';
  const parts = [`-A ${chain}-user-input`];
  if (r.iface) parts.push(`-i ${r.iface}`);
  if (r.proto) parts.push(`-p ${r.proto}`);
  if (r.port !== undefined) parts.push(r.proto ? `--dport ${r.port}` : `-p tcp --dport ${r.port}`);
  parts.push(`-j ${r.action === 'allow' ? 'ACCEPT' : 'DROP'}`);
  return parts.join(' ');
}

export function renderUserRules(rules: readonly UfwRule[], v6: boolean): string {
  const chain = v6 ? 'ufw6' : 'ufw';
  return [
    '*filter',
    ...CHAINS.map((c) => `:${chain}-${c} - [0:0]`),
    '### RULES ###',
    ...rules.map((r) => `\n${tuple(r, v6)}\n${iptablesLine(r, v6)}`),
    '',
    '### END RULES ###',
    '',
    '### LOGGING ###',
    `-A ${chain}-after-logging-input -j LOG --log-prefix "[UFW BLOCK] " -m limit --limit 3/min --limit-burst 10`,
    `-A ${chain}-after-logging-forward -j LOG --log-prefix "[UFW BLOCK] " -m limit --limit 3/min --limit-burst 10`,
    `-I ${chain}-logging-deny -m conntrack --ctstate INVALID -j RETURN -m limit --limit 3/min --limit-burst 10`,
    `-A ${chain}-logging-deny -j LOG --log-prefix "[UFW BLOCK] " -m limit --limit 3/min --limit-burst 10`,
    `-A ${chain}-logging-allow -j LOG --log-prefix "[UFW ALLOW] " -m limit --limit 3/min --limit-burst 10`,
    '### END LOGGING ###',
    '',
    '### RATE LIMITING ###',
    `-A ${chain}-user-limit -m limit --limit 3/minute -j LOG --log-prefix "[UFW LIMIT BLOCK] "`,
    `-A ${chain}-user-limit -j REJECT`,
    `-A ${chain}-user-limit-accept -j ACCEPT`,
    '### END RATE LIMITING ###',
    'COMMIT',
    '',
  ].join('\n');
}

/** The rules recorded in a user.rules file. */
export function parseUserRules(text: string): UfwRule[] {
  const out: UfwRule[] = [];
  for (const line of text.split('\n')) {
    const m = /^### tuple ### (allow|deny) (\S+) (\S+) \S+ \S+ \S+ in(?:_(\S+))?\s*$/.exec(line);
    if (!m) continue;
    out.push({
      action: m[1] as UfwRule['action'],
      ...(m[4] ? { iface: m[4] } : {}),
      ...(m[3] !== 'any' ? { port: Number(m[3]) } : {}),
      ...(m[2] === 'tcp' || m[2] === 'udp' ? { proto: m[2] } : {}),
    });
  }
  return out;
}

async function read(fs: IFileSystem, path: string): Promise<string> {
  try {
    return await fs.readFile(path);
  } catch {
    return '';
  }
}

export async function ufwConfig(fs: IFileSystem): Promise<{ enabled: boolean; rules: UfwRule[] }> {
  return ufwConfigOf(await read(fs, UFW_CONF), await read(fs, USER_RULES));
}

/** ufw.conf's ENABLED= and the rules of user.rules, from the two files' text. */
export function ufwConfigOf(conf: string, userRules: string): { enabled: boolean; rules: UfwRule[] } {
  return { enabled: /^ENABLED=yes\s*$/m.test(conf), rules: parseUserRules(userRules) };
}

function loaded(rules: readonly UfwRule[]): FirewallState['allowIn'] {
  return rules
    .filter((r) => r.action === 'allow')
    .map((r) => ({
      ...(r.iface ? { iface: r.iface } : {}),
      ...(r.port !== undefined ? { port: r.port } : {}),
      ...(r.proto ? { proto: r.proto } : {}),
    }));
}

/** Boot: ufw.service loads the saved rules when ENABLED=yes. */
export async function loadFirewall(m: Machine, fs: IFileSystem): Promise<void> {
  m.firewall = firewallState(await ufwConfig(fs));
  m.revision++;
}

/** What ufw.service loads from a configuration. */
export function firewallState(c: { enabled: boolean; rules: readonly UfwRule[] }): FirewallState {
  return { active: c.enabled, allowIn: loaded(c.rules) };
}

async function setEnabled(fs: IFileSystem, enabled: boolean): Promise<void> {
  const conf = await read(fs, UFW_CONF);
  const next = /^ENABLED=/m.test(conf)
    ? conf.replace(/^ENABLED=.*$/m, `ENABLED=${enabled ? 'yes' : 'no'}`)
    : ufwConf(enabled);
  await fs.mkdir('/etc/ufw', { recursive: true });
  await fs.writeFile(UFW_CONF, next);
}

async function saveRules(fs: IFileSystem, rules: readonly UfwRule[]): Promise<void> {
  await fs.mkdir('/etc/ufw', { recursive: true });
  await fs.writeFile(USER_RULES, renderUserRules(rules, false));
  await fs.writeFile(USER6_RULES, renderUserRules(rules, true));
}

function columns(to: string, action: string, from: string): string {
  return `${to.padEnd(26)} ${action.padEnd(12)}${from}`.trimEnd();
}

function ruleRows(rules: readonly UfwRule[], verbose: boolean): string[] {
  const rows: string[] = [];
  for (const v6 of [false, true]) {
    for (const r of rules) {
      const what = r.port !== undefined ? `${r.port}${r.proto ? `/${r.proto}` : ''}` : 'Anywhere';
      const to = `${what}${v6 ? ' (v6)' : ''}${r.iface ? ` on ${r.iface}` : ''}`;
      const action = `${r.action.toUpperCase()}${verbose ? ' IN' : ''}`;
      rows.push(columns(to, action, v6 ? 'Anywhere (v6)' : 'Anywhere'));
    }
  }
  return rows;
}

/** `ufw status [verbose]`. */
export function renderStatus(active: boolean, rules: readonly UfwRule[], verbose: boolean): string {
  if (!active) return 'Status: inactive\n';
  let s = 'Status: active\n';
  if (verbose)
    s += 'Logging: on (low)\nDefault: deny (incoming), allow (outgoing), disabled (routed)\nNew profiles: skip\n';
  if (rules.length > 0) {
    s += `\n${columns('To', 'Action', 'From')}\n${columns('--', '------', '----')}\n`;
    s += ruleRows(rules, verbose)
      .map((r) => `${r}\n`)
      .join('');
  }
  return `${s}\n`;
}

/** `allow in on IF to any port P proto tcp`, `allow in on IF`, `allow 22/tcp`, `allow 22`. */
function parseRule(action: UfwRule['action'], words: readonly string[]): UfwRule | string {
  const r: UfwRule = { action };
  let i = 0;
  if (words[i] === 'in') {
    i++;
    if (words[i] === 'on') {
      r.iface = words[i + 1];
      i += 2;
      if (!r.iface) return 'ERROR: Invalid interface clause';
    }
  }
  if (i === words.length) return r;
  if (words[i] === 'to' || words[i] === 'from') {
    for (; i < words.length; i++) {
      const w = words[i] as string;
      if (w === 'to' || w === 'from') {
        if (words[i + 1] !== 'any') return 'ERROR: Wrong number of arguments';
        i++;
      } else if (w === 'port') r.port = Number(words[++i]);
      else if (w === 'proto') {
        const p = words[++i];
        if (p !== 'tcp' && p !== 'udp') return `ERROR: Unsupported protocol '${p ?? ''}'`;
        r.proto = p;
      } else return 'ERROR: Wrong number of arguments';
    }
    if (r.port !== undefined && !(Number.isInteger(r.port) && r.port > 0 && r.port < 65536)) return 'ERROR: Bad port';
    return r;
  }
  if (i === words.length - 1) {
    const m = /^(\d{1,5})(?:\/(tcp|udp))?$/.exec(words[i] as string);
    if (!m) return `ERROR: Could not find a profile matching '${words[i]}'`;
    r.port = Number(m[1]);
    if (m[2]) r.proto = m[2] as 'tcp' | 'udp';
    return r;
  }
  return 'ERROR: Wrong number of arguments';
}

const same = (a: UfwRule, b: UfwRule): boolean =>
  a.action === b.action && a.iface === b.iface && a.port === b.port && a.proto === b.proto;

export const ufw: Tool = {
  name: 'ufw',
  path: '/usr/sbin/ufw',
  packages: ['ufw'],
  async run(args, env) {
    const m = env.machine;
    const fs = env.ctx.fs;
    const force = args.includes('--force') || args.includes('-f');
    const words = args.filter((a) => a !== '--force' && a !== '-f' && a !== '--dry-run');
    const verb = words[0];
    if (!verb) return fail(1, 'ERROR: not enough args\n');
    if (!env.root) return fail(1, 'ERROR: You need to be root to run this script\n');
    const cfg = await ufwConfig(fs);
    const active = m.firewall?.active ?? false;
    switch (verb) {
      case 'status': {
        const mode = words[1];
        if (mode !== undefined && mode !== 'verbose' && mode !== 'numbered') return fail(1, `ERROR: Invalid syntax\n`);
        return ok(renderStatus(active, cfg.rules, mode === 'verbose'));
      }
      case 'enable': {
        if (!force) {
          const answer = decodeBytesToUtf8(env.ctx.stdin).trim().toLowerCase();
          const prompt = 'Command may disrupt existing ssh connections. Proceed with operation (y|n)? ';
          if (answer !== 'y' && answer !== 'yes') return ok(`${prompt}Aborted\n`);
          await setEnabled(fs, true);
          m.firewall = { active: true, allowIn: loaded(cfg.rules) };
          m.revision++;
          notifyManagement(m);
          return ok(`${prompt}Firewall is active and enabled on system startup\n`);
        }
        await setEnabled(fs, true);
        m.firewall = { active: true, allowIn: loaded(cfg.rules) };
        m.revision++;
        notifyManagement(m);
        return ok('Firewall is active and enabled on system startup\n');
      }
      case 'disable':
        await setEnabled(fs, false);
        m.firewall = { active: false, allowIn: loaded(cfg.rules) };
        m.revision++;
        notifyManagement(m);
        return ok('Firewall stopped and disabled on system startup\n');
      case 'allow':
      case 'deny':
      case 'delete': {
        const del = verb === 'delete';
        const action = (del ? words[1] : verb) as UfwRule['action'];
        if (action !== 'allow' && action !== 'deny') return fail(1, 'ERROR: Wrong number of arguments\n');
        const rule = parseRule(action, words.slice(del ? 2 : 1));
        if (typeof rule === 'string') return fail(1, `${rule}\n`);
        let rules = cfg.rules;
        let out: string;
        if (del) {
          if (!rules.some((r) => same(r, rule)))
            return ok('Could not delete non-existent rule\nCould not delete non-existent rule (v6)\n');
          rules = rules.filter((r) => !same(r, rule));
          out = 'Rule deleted\nRule deleted (v6)\n';
        } else if (rules.some((r) => same(r, rule))) {
          return ok('Skipping adding existing rule\nSkipping adding existing rule (v6)\n');
        } else {
          rules = [...rules, rule];
          out = active ? 'Rule added\nRule added (v6)\n' : 'Rules updated\nRules updated (v6)\n';
        }
        await saveRules(fs, rules);
        if (active) m.firewall = { active: true, allowIn: loaded(rules) };
        m.revision++;
        return ok(out);
      }
      default:
        return fail(1, `ERROR: Invalid syntax\n\nUsage: ufw COMMAND\n`);
    }
  },
};
