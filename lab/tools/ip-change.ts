/**
 * The changing half of iproute2 5.15 `ip` (ip.ts renders the `show` half): `ip link set|add|delete`
 * and `ip addr add|del|flush`, with the kernel's answers as iproute2 prints them — `RTNETLINK
 * answers: Operation not permitted` without root (exit 2), `Cannot find device "X"` (exit 1),
 * `RTNETLINK answers: File exists` for a duplicate address, `Operation not supported` when deleting
 * a physical port. Source-derived (ip/iplink.c, ip/ipaddress.c); no corpus sample prints these.
 */
import type { ExecResult } from 'just-bash';
import { fail, ok } from '../shell/args.js';
import {
  BOND_MODES,
  bondModeName,
  createBond,
  deleteBond,
  enslave,
  isBond,
  registerCluster,
  release,
  setBondMtu,
  updateBondParams,
} from './bonding.js';
import {
  addAddress,
  flushAddresses,
  netdev,
  parseCidr,
  removeAddress,
  setLinkDown,
  setLinkUp,
  setMtu,
} from './netdev-ops.js';
import type { ToolEnv } from './types.js';
import { notifyManagement } from './mgmt-path.js';

const EPERM = (): ExecResult => fail(2, 'RTNETLINK answers: Operation not permitted\n');
const noDevice = (name: string): ExecResult => fail(1, `Cannot find device "${name}"\n`);

/** Words that start a changing subcommand of `ip link` / `ip addr`. */
export function isIpChange(obj: string, sub: readonly string[]): boolean {
  const verb = sub[0] ?? '';
  if ('link'.startsWith(obj) && obj !== '') return ['set', 'add', 'del', 'delete', 'change'].includes(verb);
  if (('address'.startsWith(obj) && obj !== '') || obj === 'a')
    return ['add', 'del', 'delete', 'flush', 'change', 'replace'].includes(verb);
  return false;
}

/** Runs a changing `ip` subcommand; `obj` is `link` or `addr…`, `sub` starts with the verb. */
export function ipChange(obj: string, sub: readonly string[], env: ToolEnv): ExecResult {
  registerCluster(env.cluster);
  if (!env.root) return EPERM();
  const r = 'link'.startsWith(obj) ? linkChange(sub, env) : addrChange(sub, env);
  notifyManagement(env.machine);
  return r;
}

function linkChange(sub: readonly string[], { machine: m }: ToolEnv): ExecResult {
  const verb = sub[0] as string;
  const words = sub.slice(1);
  if (verb === 'add') return linkAdd(words, m);
  let name: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === 'dev') name = words[++i];
    else if (name === undefined && !['up', 'down', 'mtu', 'master', 'nomaster', 'type'].includes(w)) name = w;
    else rest.push(w);
  }
  if (!name) return fail(255, 'Not enough information: "dev" argument is required.\n');
  const dev = netdev(m, name);
  if (!dev) return noDevice(name);
  if (verb === 'del' || verb === 'delete') {
    if (!isBond(dev)) return fail(2, 'RTNETLINK answers: Operation not supported\n');
    deleteBond(m, dev);
    return ok('');
  }
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w === 'up') setLinkUp(m, dev);
    else if (w === 'down') setLinkDown(m, dev);
    else if (w === 'mtu') {
      const mtu = Number(rest[++i]);
      if (!Number.isInteger(mtu))
        return fail(1, `Error: argument "${rest[i] ?? ''}" is wrong: Invalid "mtu" value\n\n`);
      if (isBond(dev)) setBondMtu(m, dev, mtu);
      else {
        const err = setMtu(m, dev, mtu);
        if (err) return fail(2, `${err}\n`);
      }
    } else if (w === 'master') {
      const b = netdev(m, rest[++i] ?? '');
      if (!b) return noDevice(rest[i] ?? '');
      if (!isBond(b)) return fail(2, 'RTNETLINK answers: Operation not supported\n');
      if (dev.adminUp && !dev.master) return fail(2, 'Error: Device can not be enslaved while up.\n');
      enslave(m, b, dev);
    } else if (w === 'nomaster') {
      if (dev.master) release(m, dev.master, dev);
    } else return fail(255, `Error: either "dev" is duplicate, or "${w}" is a garbage.\n`);
  }
  return ok('');
}

/** `ip link add [name] NAME type bond [mode M] [miimon N] [xmit_hash_policy P] [lacp_rate R]`. */
function linkAdd(words: readonly string[], m: ToolEnv['machine']): ExecResult {
  let name: string | undefined;
  let type: string | undefined;
  const opts = new Map<string, string>();
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === 'name') name = words[++i];
    else if (w === 'type') type = words[++i];
    else if (type) opts.set(w, words[++i] ?? '');
    else name ??= w;
  }
  if (!name) return fail(255, 'Not enough information: "dev" argument is required.\n');
  if (type !== 'bond') return fail(2, `Error: Unknown device type.\n`);
  if (netdev(m, name)) return fail(2, 'RTNETLINK answers: File exists\n');
  const mode = bondModeName(opts.get('mode') ?? 'balance-rr');
  if (!mode) return fail(255, `Error: argument "${opts.get('mode')}" is wrong: invalid mode\n`);
  const lacp = opts.get('lacp_rate');
  const bond = createBond(m, name, {
    mode,
    ...(opts.has('miimon') ? { miimon: Number(opts.get('miimon')) } : {}),
    ...(opts.has('xmit_hash_policy') ? { xmitHashPolicy: opts.get('xmit_hash_policy') as string } : {}),
  });
  if (lacp === 'fast' || lacp === '1') {
    // The kernel only takes lacp_rate in 802.3ad mode (bond_option_lacp_rate_set's mode dependency).
    if (mode !== '802.3ad') {
      m.netdevs = m.netdevs.filter((d) => d !== bond);
      return fail(
        2,
        'Error: option lacp_rate: mode dependency failed, not supported in mode ' +
          mode +
          '(' +
          BOND_MODES[mode]!.num +
          ').\n',
      );
    }
    updateBondParams(m, bond, { mode, lacpRate: 'fast' });
  }
  return ok('');
}

function addrChange(sub: readonly string[], { machine: m }: ToolEnv): ExecResult {
  const verb = sub[0] as string;
  const words = sub.slice(1);
  let name: string | undefined;
  let cidr: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === 'dev') name = words[++i];
    else if (w === 'local') cidr = words[++i];
    else if (['scope', 'label', 'broadcast', 'brd', 'valid_lft', 'preferred_lft'].includes(w)) i++;
    else if (verb === 'flush' && name === undefined) name = w;
    else cidr ??= w;
  }
  if (!name) return fail(1, 'Not enough information: "dev" argument is required.\n');
  const dev = netdev(m, name);
  if (!dev) return noDevice(name);
  if (verb === 'flush') {
    flushAddresses(m, dev);
    return ok('');
  }
  const c = cidr ? parseCidr(cidr.includes('/') ? cidr : `${cidr}/${cidr.includes(':') ? 128 : 32}`) : undefined;
  if (!c) return fail(1, `Error: any valid prefix is expected rather than "${cidr ?? ''}".\n`);
  if (verb === 'add' || verb === 'replace' || verb === 'change') {
    if (!addAddress(m, dev, c) && verb === 'add') return fail(2, 'RTNETLINK answers: File exists\n');
    return ok('');
  }
  if (!removeAddress(m, dev, c.local)) return fail(2, 'RTNETLINK answers: Cannot assign requested address\n');
  return ok('');
}
