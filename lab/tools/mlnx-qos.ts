/**
 * The two DCB tools of docs/STAGES.md §3.5, over the per-PF state of model/qos.ts:
 *
 * - `mlnx_qos` (MLNX_OFED/DOCA `mlnx-tools`): `-i IF` prints the status; setting options (`--trust`,
 *   `--pfc`, `-d`, `--dscp2prio`, `--cable_len`) apply in that order and print the full status
 *   afterwards. Layout of the MOFED 23.10 generation (corpus mlnx_qos__cx7-dscp-pfc5-…: an empty
 *   `default priority:` line, `max_buffer_size=` on the buffer line) with the mlx5 default ETS map of
 *   mlnx_qos__dscp-default-map-pfc3-vendor-tsa.txt (tc 0 ↔ prio 1, tc 1 ↔ prio 0, vendor TSA); with
 *   PCP trust the dscp2prio block is not printed (mlnx_qos__pcp-trust-pfc3-vendor-tsa.txt). A bond
 *   has no DCB operations: `--trust` prints `Priority trust state is not supported on your system`
 *   and exits 1; `--pfc` dies in mlnx_qos's own error path (netlink error, then a Python TypeError).
 * - `dcb` (iproute2 5.15 dcb/): `app`, `pfc` and `dcbx` objects with show/add/del/replace/flush/set,
 *   `-N` numeric DSCP, `-s` PFC counters. Formats and errors follow dcb.c, dcb_app.c, dcb_pfc.c and
 *   dcb_dcbx.c (source-derived; every printed key/value is followed by a space). Errors: a device
 *   without DCB ops → `Attribute read: Operation not supported`; a set without CAP_NET_ADMIN →
 *   `Attribute write: Operation not permitted`.
 */
import type { Machine, PortQos } from '../model/types.js';
import { PRIO_COUNT, addDscpApp, dcbNetdev, delDscpApp, portQos, setPfc, setTrust } from '../model/qos.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';
import { settleTraffic } from '../model/traffic.js';

// ---------------------------------------------------------------------------------------------
// mlnx_qos

/** mlx5's default priority → TC map as mlnx_qos prints it (TC blocks by TC number). */
const TC_PRIOS = [1, 0, 2, 3, 4, 5, 6, 7];

function dscpRows(q: PortQos): string[] {
  const rows: string[] = [];
  for (let prio = 0; prio < PRIO_COUNT; prio++) {
    const dscps = q.dscp2prio
      .map((p, d) => [d, p] as const)
      .filter(([, p]) => p === prio)
      .map(([d]) => d);
    // Re-mapped DSCPs first, then the ones still at the default, highest first (as the samples print).
    const moved = dscps.filter((d) => d >> 3 !== prio);
    const kept = dscps.filter((d) => d >> 3 === prio).sort((a, b) => b - a);
    const all = [...moved, ...kept];
    for (let i = 0; i < all.length; i += 8) {
      rows.push(
        `        prio:${prio} dscp:${all
          .slice(i, i + 8)
          .map((d) => `${String(d).padStart(2, '0')},`)
          .join('')}`,
      );
    }
  }
  return rows;
}

export function mlnxQosStatus(q: PortQos): string {
  const lossless = q.pfc.some(Boolean);
  const lines = [
    `DCBX mode: ${q.dcbx === 'os' ? 'OS controlled' : 'Firmware controlled'}`,
    `Priority trust state: ${q.trust}`,
    ...(q.trust === 'dscp' ? ['dscp2prio mapping:', ...dscpRows(q)] : []),
    'default priority:',
    // Buffer 0 carries every priority; a lossless priority makes the driver size buffer 1 for it.
    `Receive buffer size (bytes): ${lossless ? '130944,130944' : '262016,0'},0,0,0,0,0,0,max_buffer_size=262016`,
    'Cable len: 7',
    'PFC configuration:',
    `        priority    ${[0, 1, 2, 3, 4, 5, 6, 7].join('   ')}`,
    `        enabled     ${q.pfc.map((on) => `${on ? 1 : 0}   `).join('')}`,
    `        buffer      ${q.pfc.map((on) => `${on ? 1 : 0}   `).join('')}`,
  ];
  TC_PRIOS.forEach((prio, tc) =>
    lines.push(`tc: ${tc} ratelimit: unlimited, tsa: vendor`, `         priority:  ${prio}`),
  );
  return `${lines.join('\n')}\n`;
}

const MLNX_USAGE = 'Usage: mlnx_qos -i <interface> [options]\n';
const MLNX_LONG: Record<string, boolean> = {
  interface: true,
  pfc: true,
  trust: true,
  dcbx: true,
  dscp2prio: true,
  cable_len: true,
  help: false,
};

interface MlnxArgs {
  iface?: string;
  pfc?: string;
  trust?: string;
  dcbx?: string;
  dscp2prio: string[];
  cableLen?: string;
  help?: boolean;
}

/** Python optparse: `-i X`, `-iX`, `--interface X`, `--interface=X`; unknown → `no such option`. */
function parseMlnxArgs(args: readonly string[]): MlnxArgs | string {
  const out: MlnxArgs = { dscp2prio: [] };
  const short: Record<string, string> = { i: 'interface', f: 'pfc', d: 'dcbx', h: 'help' };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    let name: string | undefined;
    let val: string | undefined;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (eq >= 0) val = a.slice(eq + 1);
      if (!(name in MLNX_LONG)) return `no such option: --${name}`;
    } else if (a.startsWith('-') && a.length > 1) {
      name = short[a[1] as string];
      if (!name) return `no such option: -${a[1]}`;
      if (a.length > 2) val = a.slice(2);
    } else continue;
    if (MLNX_LONG[name]) {
      val ??= args[++i];
      if (val === undefined) return `${a} option requires 1 argument`;
    }
    switch (name) {
      case 'interface':
        out.iface = val;
        break;
      case 'pfc':
        out.pfc = val;
        break;
      case 'trust':
        out.trust = val;
        break;
      case 'dcbx':
        out.dcbx = val;
        break;
      case 'dscp2prio':
        out.dscp2prio.push(val as string);
        break;
      case 'cable_len':
        out.cableLen = val;
        break;
      case 'help':
        out.help = true;
        break;
    }
  }
  return out;
}

/**
 * mlnx_qos's PFC error path on a device the kernel refuses: it prints the netlink error, then its
 * own handler raises a TypeError (Python's traceback on stderr, exit 1).
 */
function pfcFailure(errno: string): ReturnType<typeof fail> {
  const traceback = [
    'Traceback (most recent call last):',
    '  File "/usr/bin/mlnx_qos", line 1097, in <module>',
    '    main()',
    '  File "/usr/bin/mlnx_qos", line 1052, in main',
    '    set_pfc(ctrl, options.pfc, options.delay)',
    '  File "/usr/bin/mlnx_qos", line 402, in set_pfc',
    '    print("Failed to set PFC: " + err)',
    'TypeError: can only concatenate str (not "NetlinkError") to str',
    '',
  ].join('\n');
  return fail(1, traceback, `Netlink error: ${errno}\n`);
}

export const mlnxQos: Tool = {
  name: 'mlnx_qos',
  path: '/usr/bin/mlnx_qos',
  packages: ['mlnx-tools'],
  run(args, { machine: m, root }) {
    const p = parseMlnxArgs(args);
    if (typeof p === 'string') return fail(2, `${MLNX_USAGE}\nmlnx_qos: error: ${p}\n`);
    if (p.help)
      return ok(
        `${MLNX_USAGE}\nOptions:\n  -h, --help            show this help message and exit\n  -i INTF, --interface=INTF\n                        Interface name\n  -f LIST, --pfc=LIST   Set priority flow control for each priority. LIST is\n                        comma separated value for each priority starting from 0\n                        to 7. Example: 0,0,0,0,1,1,1,1 enable PFC on TC4-7\n  -d DCBX, --dcbx=DCBX  set dcbx mode to firmware controlled(fw) or OS\n                        controlled(os).\n  --trust=TRUST         set priority trust state to pcp or dscp\n  --dscp2prio=DSCP2PRIO\n                        set/del a (dscp,prio) mapping. Example 'set,30,2' maps\n                        dscp 30 to priority 2. 'del,30,2' deletes the mapping\n  --cable_len=CABLE_LEN\n                        set cable_len for buffer's xoff and xon thresholds\n`,
      );
    if (p.iface === undefined) return fail(1, `${MLNX_USAGE}\nmlnx_qos: error: Interface name is required\n`);
    const exists = m.netdevs.some((d) => d.name === p.iface);
    if (!exists) return fail(1, '', 'Netlink error: No such device (19)\n');
    const q = portQos(m, p.iface);
    const setting =
      p.trust !== undefined ||
      p.pfc !== undefined ||
      p.dcbx !== undefined ||
      p.dscp2prio.length > 0 ||
      p.cableLen !== undefined;
    if (p.trust !== undefined) {
      if (p.trust !== 'pcp' && p.trust !== 'dscp')
        return fail(1, `${MLNX_USAGE}\nmlnx_qos: error: Invalid trust state: ${p.trust}\n`);
      if (!q || !root) return fail(1, '', 'Priority trust state is not supported on your system\n');
    }
    let pfc: boolean[] | undefined;
    if (p.pfc !== undefined) {
      const v = p.pfc.split(',').map((x) => x.trim());
      if (v.length !== PRIO_COUNT || !v.every((x) => x === '0' || x === '1'))
        return fail(1, `${MLNX_USAGE}\nmlnx_qos: error: Invalid PFC configuration: ${p.pfc}\n`);
      if (!q) return pfcFailure('Operation not supported (95)');
      if (!root) return pfcFailure('Operation not permitted (1)');
      pfc = v.map((x) => x === '1');
    }
    if (!q) return fail(1, '', 'Netlink error: Operation not supported (95)\n');
    if (setting && !root) return fail(1, '', 'Netlink error: Operation not permitted (1)\n');
    if (p.dcbx !== undefined && p.dcbx !== 'os' && p.dcbx !== 'fw')
      return fail(1, `${MLNX_USAGE}\nmlnx_qos: error: Invalid dcbx mode: ${p.dcbx}\n`);
    for (const spec of p.dscp2prio) {
      const mm = /^(set|del),(\d+),(\d+)$/.exec(spec);
      const d = Number(mm?.[2]);
      const pr = Number(mm?.[3]);
      if (!mm || d > 63 || pr > 7)
        return fail(1, `${MLNX_USAGE}\nmlnx_qos: error: Invalid dscp2prio mapping: ${spec}\n`);
    }
    if (p.trust === 'pcp' || p.trust === 'dscp') setTrust(q, p.trust);
    if (pfc) setPfc(q, pfc);
    if (p.dcbx) q.dcbx = p.dcbx === 'os' ? 'os' : 'firmware';
    for (const spec of p.dscp2prio) {
      const [op, d, pr] = spec.split(',') as [string, string, string];
      if (op === 'set') {
        for (const [dd, pp] of q.dscpApp.filter(([x]) => x === Number(d))) delDscpApp(q, dd, pp);
        addDscpApp(q, Number(d), Number(pr));
      } else delDscpApp(q, Number(d), Number(pr));
    }
    if (setting) m.revision++;
    return ok(mlnxQosStatus(q));
  },
};

// ---------------------------------------------------------------------------------------------
// dcb (iproute2)

/** /etc/iproute2/rt_dsfield names dcb prints instead of numbers (DSCP = dsfield >> 2). */
const DSCP_NAMES: Record<number, string> = {
  8: 'CS1',
  16: 'CS2',
  24: 'CS3',
  32: 'CS4',
  40: 'CS5',
  48: 'CS6',
  56: 'CS7',
  10: 'AF11',
  12: 'AF12',
  14: 'AF13',
  18: 'AF21',
  20: 'AF22',
  22: 'AF23',
  26: 'AF31',
  28: 'AF32',
  30: 'AF33',
  34: 'AF41',
  36: 'AF42',
  38: 'AF43',
  46: 'EF',
};
const DSCP_BY_NAME = new Map(Object.entries(DSCP_NAMES).map(([n, name]) => [name.toLowerCase(), Number(n)]));

const DCB_HELP =
  'Usage: dcb [ OPTIONS ] OBJECT { COMMAND | help }\n       dcb [ -f | --force ] { -b | --batch } filename [ -n | --netns ] netnsname\nwhere  OBJECT := { app | buffer | dcbx | ets | maxrate | pfc }\n       OPTIONS := [ -V | --Version | -i | --iec | -j | --json\n                  | -N | --Numeric | -p | --pretty\n                  | -s | --statistics | -v | --verbose]\n';

interface DcbOpts {
  numeric: boolean;
  stats: boolean;
  json: boolean;
}

/** iproute2's `matches()`: a non-empty prefix of the keyword. */
const matches = (arg: string | undefined, word: string): boolean =>
  arg !== undefined && arg.length > 0 && word.startsWith(arg);

/** `KEY:VALUE` words until the next keyword; `all` as a key expands to every index. */
function mapping(
  words: string[],
  key: (k: string) => number | undefined,
  max: number,
): Array<[number, string]> | string {
  const out: Array<[number, string]> = [];
  while (words.length > 0 && (words[0] as string).includes(':')) {
    const w = words.shift() as string;
    const i = w.lastIndexOf(':');
    const k = w.slice(0, i);
    const v = w.slice(i + 1);
    if (k === 'all') for (let n = 0; n <= max; n++) out.push([n, v]);
    else {
      const n = key(k);
      if (n === undefined || n > max) return w;
      out.push([n, v]);
    }
  }
  return out;
}

const num = (k: string): number | undefined => (/^\d+$/.test(k) ? Number(k) : undefined);
const dscpKey = (k: string): number | undefined => num(k) ?? DSCP_BY_NAME.get(k.toLowerCase());

/** What a dcb object command returns (the Tool's result, before it is renamed to stdout/stderr/exitCode). */
interface DcbResult {
  out: string;
  err: string;
  code: number;
}

const DONE: DcbResult = { out: '', err: '', code: 0 };
/** A setting command run without root: the kernel refuses the netlink write. */
const NOT_PERMITTED: DcbResult = { out: '', err: 'Attribute write: Operation not permitted\n', code: 1 };

/** The device a dcb command targets, or the error dcb prints (`perror("Attribute read")`). */
function dcbTarget(m: Machine, dev: string): PortQos | string {
  if (!m.netdevs.some((d) => d.name === dev)) return 'Attribute read: No such device\n';
  const q = dcbNetdev(m, dev) ? portQos(m, dev) : undefined;
  return q ?? 'Attribute read: Operation not supported\n';
}

/**
 * `dcb OBJECT VERB dev DEV …` up to the device, as every object parses it: the verb (one of `verbs`,
 * by prefix), the device and its QoS state, or what dcb prints instead. `dcb app` repeats its usage
 * after an unknown verb (`usageOnUnknown`); pfc and dcbx do not.
 */
function dcbCommand(
  m: Machine,
  object: string,
  verbs: readonly string[],
  words: string[],
  usageOnUnknown = false,
): { verb: string; dev: string; q: PortQos } | DcbResult {
  const cmd = words.shift();
  const usage = `Usage: dcb ${object} help\n`;
  if (cmd === undefined || matches(cmd, 'help')) return { out: '', err: usage, code: 0 };
  const verb = verbs.find((v) => matches(cmd, v));
  if (!verb) return { out: '', err: `What is "${cmd}"?\n${usageOnUnknown ? usage : ''}`, code: 1 };
  if (!matches(words[0], 'dev')) return { out: '', err: `Expected \`dev DEV', not \`${words[0] ?? ''}'`, code: 1 };
  words.shift();
  const dev = words.shift() ?? '';
  const q = dcbTarget(m, dev);
  if (typeof q === 'string') return { out: '', err: q, code: 1 };
  return { verb, dev, q };
}

function appShow(q: PortQos, o: DcbOpts): string {
  const entries = [...q.dscpApp].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (entries.length === 0) return '';
  if (o.json) return `${JSON.stringify({ dscp_prio: entries.map(([d, p]) => [d, p]) })}\n`;
  const key = (d: number): string => (o.numeric ? String(d) : (DSCP_NAMES[d] ?? String(d)));
  return `dscp-prio ${entries.map(([d, p]) => `${key(d)}:${p} `).join('')}\n`;
}

function pfcShow(m: Machine, dev: string, q: PortQos, o: DcbOpts, what: string[]): string {
  settleTraffic(m); // pauses of flows still running count up to now
  const counters = m.rdmaRuntime?.ethtool[dev] ?? {};
  const row = (kind: 'tx' | 'rx'): string =>
    Array.from({ length: PRIO_COUNT }, (_, i) => `${i}:${counters[`${kind}_prio${i}_pause`] ?? 0} `).join('');
  const parts: Record<string, string> = {
    'pfc-cap': 'pfc-cap 8 ',
    'macsec-bypass': 'macsec-bypass off ',
    delay: 'delay 7 ',
    'prio-pfc': `prio-pfc ${q.pfc.map((on, i) => `${i}:${on ? 'on' : 'off'} `).join('')}`,
    requests: `requests ${row('tx')}`,
    indications: `indications ${row('rx')}`,
  };
  if (o.json) return `${JSON.stringify({ pfc_cap: 8, macsec_bypass: false, delay: 7, prio_pfc: q.pfc })}\n`;
  if (what.length === 0) {
    const lines = [`${parts['pfc-cap']}${parts['macsec-bypass']}${parts.delay}`, parts['prio-pfc'] as string];
    if (o.stats) lines.push(parts.requests as string, parts.indications as string);
    return lines.map((l) => `${l}\n`).join('');
  }
  return what.map((w) => `${parts[Object.keys(parts).find((k) => matches(w, k)) ?? ''] ?? ''}\n`).join('');
}

function dcbApp(m: Machine, root: boolean, o: DcbOpts, words: string[]): DcbResult {
  const c = dcbCommand(m, 'app', ['show', 'flush', 'add', 'del', 'replace'], words, true);
  if ('code' in c) return c;
  const { verb, q } = c;
  if (verb === 'show') {
    if (
      words.some(
        (w) =>
          !['dscp-prio', 'ethtype-prio', 'default-prio', 'stream-port-prio', 'dgram-port-prio', 'port-prio'].some((k) =>
            matches(w, k),
          ),
      )
    ) {
      return { out: '', err: `What is "${words.find((w) => !matches(w, 'dscp-prio'))}"?\n`, code: 1 };
    }
    return {
      out: words.length === 0 || words.some((w) => matches(w, 'dscp-prio')) ? appShow(q, o) : '',
      err: '',
      code: 0,
    };
  }
  if (verb === 'flush') {
    if (!root) return NOT_PERMITTED;
    for (const [d, p] of [...q.dscpApp]) delDscpApp(q, d, p);
    m.revision++;
    return DONE;
  }
  const want: Array<[number, number]> = [];
  while (words.length > 0) {
    const kw = words.shift() as string;
    if (!matches(kw, 'dscp-prio')) return { out: '', err: `What is "${kw}"?\n`, code: 1 };
    const mp = mapping(words, dscpKey, 63);
    if (typeof mp === 'string') return { out: '', err: `Invalid mapping ${mp}\n`, code: 1 };
    for (const [d, v] of mp) {
      if (!/^\d+$/.test(v) || Number(v) > 7)
        return { out: '', err: 'In DSCP:PRIO mapping, PRIO is expected to be 0..7\nInvalid mapping\n', code: 1 };
      want.push([d, Number(v)]);
    }
  }
  if (!root) return NOT_PERMITTED;
  if (verb === 'add') for (const [d, p] of want) addDscpApp(q, d, p);
  else if (verb === 'del') for (const [d, p] of want) delDscpApp(q, d, p);
  else {
    // replace: add what is new first, then drop the entries of the named DSCPs that were replaced.
    for (const [d, p] of want) addDscpApp(q, d, p);
    for (const [d, p] of [...q.dscpApp])
      if (want.some(([wd]) => wd === d) && !want.some(([wd, wp]) => wd === d && wp === p)) delDscpApp(q, d, p);
  }
  m.revision++;
  return DONE;
}

function dcbPfc(m: Machine, root: boolean, o: DcbOpts, words: string[]): DcbResult {
  const c = dcbCommand(m, 'pfc', ['show', 'set'], words);
  if ('code' in c) return c;
  const { verb, dev, q } = c;
  if (verb === 'show') return { out: pfcShow(m, dev, q, o, words), err: '', code: 0 };
  const pfc = [...q.pfc];
  while (words.length > 0) {
    const kw = words.shift() as string;
    if (matches(kw, 'prio-pfc')) {
      const mp = mapping(words, num, 7);
      if (typeof mp === 'string') return { out: '', err: `Invalid pfc mapping ${mp}\n`, code: 1 };
      for (const [i, v] of mp) {
        if (v !== 'on' && v !== 'off')
          return { out: '', err: `PFC: expected "on" or "off", not "${v}"\nInvalid pfc mapping ${i}:${v}\n`, code: 1 };
        pfc[i] = v === 'on';
      }
    } else if (matches(kw, 'delay') || matches(kw, 'macsec-bypass')) words.shift();
    else return { out: '', err: `What is "${kw}"?\n`, code: 1 };
  }
  if (!root) return NOT_PERMITTED;
  setPfc(q, pfc);
  m.revision++;
  return DONE;
}

function dcbDcbx(m: Machine, root: boolean, o: DcbOpts, words: string[]): DcbResult {
  const c = dcbCommand(m, 'dcbx', ['show', 'set'], words);
  if ('code' in c) return c;
  const { verb, q } = c;
  if (verb === 'show') {
    // mlx5 reports CEE and IEEE capability, plus HOST while the OS owns DCBX.
    if (o.json)
      return {
        out: `${JSON.stringify({ ...(q.dcbx === 'os' ? { host: true } : {}), cee: true, ieee: true })}\n`,
        err: '',
        code: 0,
      };
    return { out: `${q.dcbx === 'os' ? 'host ' : ''}cee ieee \n`, err: '', code: 0 };
  }
  const flags = words.map((w) => ['host', 'lld-managed', 'cee', 'ieee', 'static'].find((f) => matches(w, f)));
  if (flags.some((f) => f === undefined))
    return { out: '', err: `What is "${words[flags.indexOf(undefined)]}"?\n`, code: 1 };
  if (!root) return NOT_PERMITTED;
  // mlx5 refuses LLD-managed mode (the kernel answers with a non-zero DCB status).
  if (flags.includes('lld-managed'))
    return {
      out: '',
      err: 'Error when attempting to set attribute: Operation not permitted\nAttribute write: Operation not permitted\n',
      code: 1,
    };
  q.dcbx = flags.includes('host') ? 'os' : 'firmware';
  m.revision++;
  return DONE;
}

export const dcb: Tool = {
  name: 'dcb',
  path: '/usr/sbin/dcb',
  packages: ['iproute2'],
  run(args, { machine: m, root }) {
    const o: DcbOpts = { numeric: false, stats: false, json: false };
    const words = [...args];
    while (words.length > 0 && (words[0] as string).startsWith('-')) {
      const a = words.shift() as string;
      if (a === '-N' || a === '--Numeric') o.numeric = true;
      else if (a === '-s' || a === '--statistics') o.stats = true;
      else if (a === '-j' || a === '--json') o.json = true;
      else if (a === '-p' || a === '--pretty' || a === '-i' || a === '--iec' || a === '-v' || a === '--verbose')
        continue;
      else if (a === '-V' || a === '--Version') return ok('dcb utility, iproute2-5.15.0, libbpf 0.5.0\n');
      else if (a === '-h' || a === '--help') return ok('', DCB_HELP);
      else return fail(1, `Unknown option.\n${DCB_HELP}`);
    }
    const obj = words.shift();
    if (obj === undefined || matches(obj, 'help')) return ok('', DCB_HELP);
    let r: DcbResult;
    if (matches(obj, 'app')) r = dcbApp(m, root, o, words);
    else if (matches(obj, 'pfc')) r = dcbPfc(m, root, o, words);
    else if (matches(obj, 'dcbx')) r = dcbDcbx(m, root, o, words);
    else if (['buffer', 'ets', 'maxrate'].some((x) => matches(obj, x)))
      r = { out: '', err: `dcb ${obj}: not modelled by the l20-setup lab\n`, code: 1 };
    else r = { out: '', err: `Object "${obj}" is unknown\n`, code: 1 };
    return { stdout: r.out, stderr: r.err, exitCode: r.code };
  },
};

export const QOS_TOOLS: readonly Tool[] = [mlnxQos, dcb];
