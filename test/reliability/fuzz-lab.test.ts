/**
 * Bad input on the lab (issue 7): an inventory carrying the fuzz's accepted values — and hand-made
 * borderline-but-valid ones — drives real read-only work on the built-in lab over SSH: the network and
 * vllm stages' checks, the bundle's per-port commands (where fabricPorts reach a command line) and
 * every hostile string echoed through the lab's shell in each command form. Afterwards the canary is
 * on neither lab machine (read through the machine's file system model) nor here.
 *
 * The schema admits no shell metacharacter in interface names or model ids (only letters, digits,
 * "_", "." and "-"), so those values are borderline rather than hostile. Local paths (knownHostsFile,
 * auth.path) do admit `$`, quotes, spaces, backticks and look-alikes: the lab is reached through an
 * identity file and known_hosts whose paths hold live injection payloads.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkStage } from '../../checks/network/index.js';
import { vllmStage } from '../../checks/vllm/index.js';
import { collectHost } from '../../src/bundle/collect.js';
import { clusterSchema, type ClusterConfig } from '../../src/config/schema.js';
import { validateCluster } from '../../src/config/store.js';
import { Engine } from '../../src/engine/runner.js';
import { hostsFromConfig } from '../../src/target.js';
import { buildCommand } from '../../src/transport/quote.js';
import type { Host } from '../../src/transport/types.js';
import { caseRng, fuzzCases, hostileAtoms, hostileString, pathText, shellSpecial, show } from '../helpers/fuzz.js';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';

const SEED = 0x1_20_7;
const canary = `/tmp/l20-fuzz-canary-${process.pid}-${randomBytes(4).toString('hex')}`;
const opts = { canary };
const base = mkdtempSync(join(tmpdir(), 'l20-fuzz-lab-'));

/** Values the schema accepted in the first 4,000 fuzz cases, by the field they were set on. */
function acceptedValues(): Record<'iface' | 'model' | 'path', string[]> {
  const out = { iface: new Set<string>(), model: new Set<string>(), path: new Set<string>() };
  for (const c of fuzzCases(SEED, 4000, opts)) {
    if (c.kind !== 'field' || typeof c.value !== 'string' || !clusterSchema.safeParse(c.input).success) continue;
    const p = pathText(c.path);
    if (/mgmtInterface|fabricPorts\[/.test(p)) out.iface.add(c.value);
    else if (p === 'vllm.model') out.model.add(c.value);
    else if (/knownHostsFile|auth\.path/.test(p)) out.path.add(c.value);
  }
  return { iface: [...out.iface], model: [...out.model], path: [...out.path] };
}

const accepted = acceptedValues();
/** Borderline but valid: the extremes of each field's grammar. */
const IFACES = ['_', '.x', 'a-', 'x..', 'eno1.100', '123456789012345', 'ens1f0np0-', 'A_b.C-d'];
const MODELS = ['a', 'A/B', 'org.name/model-v1.0_b', `${'x'.repeat(99)}/${'y'.repeat(100)}`];

/** A directory (under `base`) whose path holds `value` verbatim where it can: its "/" make subdirectories. */
function dirHolding(value: string, i: number): string {
  const d = normalize(join(base, `p${i}`, value));
  return d.startsWith(`${base}/p${i}`) ? d : join(base, `p${i}`);
}

// Hand-made directory names with live payloads, plus the fuzz's accepted paths.
const PATH_VALUES = [
  `$(touch ${canary})`,
  `\`touch ${canary}\``,
  `'; touch ${canary}; '`,
  `"; touch ${canary}; "`,
  `a b;touch ${canary}|c&d`,
  `*?[x]{a,b}~!#\\`,
  `\u202Egnp.\u200Dx\u{1F642}\u0430`,
  ...accepted.path.slice(0, 6),
];

describe('fuzzed inventory values on the lab', () => {
  let t: LabTarget;
  let config: ClusterConfig;
  let hosts: Host[];
  let ifaces: string[];
  let model: string;
  let real: string[];

  beforeAll(async () => {
    t = await labTarget({ scenario: 'ready' });
    // The lab's own ConnectX ports go first, so some per-port commands find their device.
    const ls = await t.hosts[1]!.run({
      script: 'for p in /sys/class/net/*/device/infiniband; do p=${p%/device/*}; echo ${p##*/}; done\n',
    });
    real = ls.stdout.split('\n').filter(Boolean).slice(0, 2);
    expect(real.length).toBe(2);
    console.log(
      `fuzz lab: the schema accepted ${accepted.iface.length} interface names, ${accepted.model.length} model ids and ${accepted.path.length} local paths in 4,000 cases; e.g. ${show(accepted.iface.slice(0, 4))}, ${show(accepted.model.slice(0, 2))}, ${show(accepted.path.slice(0, 3))}`,
    );
    // Accepted interface names and model ids hold no shell metacharacter; accepted paths do.
    expect(
      [...accepted.iface, ...accepted.model].filter((v) => /[^A-Za-z0-9_./-]/.test(v) || v.startsWith('-')),
    ).toEqual([]);
    expect(accepted.path.filter((v) => /[$`'";&|]/.test(v)).length).toBeGreaterThan(0);
    ifaces = [...accepted.iface.slice(0, 8), ...IFACES];
    model = accepted.model[0] ?? MODELS[2]!;
    // The lab's client key and known_hosts, copied to paths that carry the payloads.
    const dirs = PATH_VALUES.map(dirHolding);
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const identity = join(dirs[0]!, `id ${PATH_VALUES[1]!.replace(/\//g, '_')}`);
    const known = join(dirs[dirs.length - 1]!, `known_hosts'"$(touch ${canary.replace(/\//g, '_')})`);
    copyFileSync(t.identityFile, identity);
    copyFileSync(t.knownHostsFile, known);
    config = validateCluster(
      {
        ...t.config,
        hosts: t.config.hosts.map((h, i) => ({
          ...h,
          auth: { method: 'identityFile', path: identity },
          knownHostsFile: known,
          mgmtInterface: ifaces[i % ifaces.length],
          fabricPorts: [...real, ...ifaces].slice(0, 16),
        })),
        vllm: { ...t.config.vllm, model },
      },
      'fuzzed lab inventory',
    );
    hosts = hostsFromConfig(config);
  }, 60_000);

  afterAll(async () => {
    await Promise.all((hosts ?? []).map((h) => h.close()));
    await t?.close();
    rmSync(base, { recursive: true, force: true });
  });

  const canaryOnLab = (): Promise<boolean[]> =>
    Promise.all(t.lab.hosts.map((h) => h.machine.system.shell.fs.exists(canary)));

  it('the lab would show an injection: an unquoted `touch CANARY` on a lab host creates the file its model holds', async () => {
    const control = `${canary}-control`;
    const r = await hosts[0]!.run({ script: `touch ${control}\n` });
    expect(r.exitCode).toBe(0);
    expect(await t.lab.hosts[0]!.machine.system.shell.fs.exists(control)).toBe(true);
    expect((await hosts[0]!.run({ argv: ['rm', control] })).exitCode).toBe(0);
  });

  it('connects through identity and known_hosts paths holding payloads; the network and vllm checks run on the hostile-but-valid values', async () => {
    expect(config.hosts[0]!.auth).toMatchObject({ path: expect.stringContaining(`$(touch ${canary})`) });
    expect(config.hosts[0]!.knownHostsFile).toContain(`known_hosts'"$(touch`);
    const engine = new Engine(hosts, { config });
    const net = await engine.runStage(networkStage);
    // The network stage reads the fabric from the hosts, not the inventory: ready passes as it does untouched.
    expect(
      net.results
        .filter((r) => r.status === 'error' || r.status === 'fail')
        .map((r) => `${r.host}:${r.id} ${r.summary}`),
    ).toEqual([]);
    // No benchmark (a model the lab lacks cannot be served); vllm.model reads only the hosts' facts.
    const v = await engine.runStage(vllmStage, { skipCluster: true, pairChecksWithoutCluster: ['vllm.model'] });
    const m = v.results.find((r) => r.id === 'vllm.model');
    // The configured id went through verbatim: the lab has no such model, and says so by name.
    expect(m?.status).toBe('fail');
    expect(m?.summary).toContain(model);
    expect(v.results.filter((r) => r.status === 'error').map((r) => `${r.host}:${r.id} ${r.summary}`)).toEqual([]);
    expect(await canaryOnLab()).toEqual([false, false]);
  }, 60_000);

  it("the bundle's per-port commands (mlnx_qos -i, ethtool -i/-S) take the inventory's fabric ports as one word each", async () => {
    const c = await collectHost(hosts[1]!, { deltaSeconds: 0, fabricPorts: config.hosts[1]!.fabricPorts! });
    expect(c.error).toBeUndefined();
    expect(c.ports).toEqual(config.hosts[1]!.fabricPorts);
    expect(c.ports.filter((p) => real.includes(p))).toHaveLength(real.length);
    for (const p of c.ports) {
      const f = c.files.find((x) => x.file === `ethtool-i-${p}.txt`);
      // The header is the line as sent; ethtool looked the device up by exactly that name: the lab's
      // real ports answer with their driver, the borderline names with "No such device" — never a shell error.
      expect(f?.text.split('\n')[0], p).toBe(`$ ${buildCommand({ argv: ['ethtool', '-i', p] }).line}`);
      expect(f?.output.trim(), p).toEqual(
        real.includes(p)
          ? expect.stringMatching(/^driver: mlx5_core\n/)
          : 'Cannot get driver information: No such device',
      );
    }
    expect(await canaryOnLab()).toEqual([false, false]);
  }, 60_000);

  it('every hostile string comes back byte-identical through the lab shell: argv, sudo, env and bash -s forms', async () => {
    const rng = caseRng(SEED, -3);
    const words = [
      ...hostileAtoms(canary),
      ...Array.from({ length: 300 }, () => hostileString(rng, opts)),
      ...ifaces,
      model,
      ...PATH_VALUES,
    ]
      // just-bash answers any argument "--help" with the command's help (real printf prints it): a lab gap, not quoting.
      .filter((w) => !w.includes('\0') && w !== '--help');
    const echoed = (r: { stdout: string; exitCode: number | null; stderr: string }, form: string) => {
      const got = r.stdout.split('\0');
      const bad = words
        .map((w, i) => (got[i] === w ? '' : `${form} word ${i}: sent ${show(w)}, got ${show(got[i])}`))
        .filter(Boolean);
      return [
        ...bad.slice(0, 5),
        ...(r.exitCode === 0 ? [] : [`${form}: exit ${r.exitCode} ${r.stderr.slice(0, 200)}`]),
      ];
    };
    const h = hosts[0]!;
    const names = words.map((_, i) => `FUZZ_W${i}`);
    const problems = [
      ...echoed(await h.run({ argv: ['printf', '%s\\0', ...words] }), 'argv'),
      ...echoed(await h.run({ argv: ['printf', '%s\\0', ...words] }, { sudo: true }), 'sudo'),
      ...echoed(await h.run({ script: 'printf "%s\\0" "$@"\n', args: words }), 'bash -s'),
      ...echoed(
        await h.run(
          { script: `for n in ${names.join(' ')}; do printf '%s\\0' "\${!n}"; done\n` },
          { env: Object.fromEntries(names.map((n, i) => [n, words[i]!])) },
        ),
        'env',
      ),
    ];
    // Words a shell treats specially were really exercised, not just plain ones.
    expect(words.filter(shellSpecial).length).toBeGreaterThan(300);
    expect(problems).toEqual([]);
    expect(await canaryOnLab()).toEqual([false, false]);
    expect(existsSync(canary)).toBe(false);
  }, 60_000);
});
