/**
 * The real `netplan generate` as the oracle for what the network stage writes. For every lab
 * scenario (from the scenario list, each alone and each base under every modifier scenario, one per
 * distinct starting netplan) and every design (A, B, and the tutorial's own file): the host's netplan
 * files as the stage's probe reads them from the lab, plus what network.write's own plan writes (or
 * network.mgmt-routes' rewrite), go into a temporary root, and the generated networkd/NetworkManager
 * files say what the tool means:
 *  - every non-fabric interface keeps its renderer and its generated configuration;
 *  - fabric interfaces are networkd, optional (RequiredForOnline=no), at the configured MTU, with
 *    the design's addresses and no gateway, default route or DNS; design B's bonds carry 802.3ad, fast
 *    LACP, 100 ms MII monitoring and layer3+4 hashing, over the two ports of one card;
 *  - the gateway4 → routes rewrite generates the same default route;
 *  - the management guard (netplanView, managementChange) agrees with what netplan generated, also
 *    on the old fabric file with a top-level renderer (which moves NetworkManager's management).
 * netplan generate --root-dir writes only under the root: /run is checked to be untouched.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseDocument } from 'yaml';
import { designPlan, type Design } from '../../checks/common/design.js';
import { networkCabling } from '../../checks/network/cabling.js';
import { fabricPorts, type NetworkFacts } from '../../checks/network/facts.js';
import { networkStage } from '../../checks/network/index.js';
import { osStage } from '../../checks/os/index.js';
import { parseGenerated, type GeneratedDevice } from '../../checks/network/netplan-generated.js';
import { managementChange, netplanView, renderedChange } from '../../checks/network/netplan-view.js';
import { FABRIC_FILE } from '../../checks/network/probes.js';
import { mgmtRouteChange, networkSteps } from '../../checks/network/steps.js';
import { Engine } from '../../src/engine/runner.js';
import type { HostFacts, StageDef, StepPlan } from '../../src/engine/types.js';
import { mgmtNetplan } from '../../lab/fs/rootfs.js';
import { createCluster } from '../../lab/model/cluster.js';
import { MODIFIER_SCENARIOS, SCENARIOS, resolveScenario } from '../../lab/scenarios/index.js';
import { loadNetplan } from '../../lab/tools/netplan-config.js';
import { renderBackends } from '../../lab/tools/netplan-generate.js';
import { labTarget } from '../helpers/lab-target.js';
import { applier } from '../lab/helpers.js';

type Files = Array<{ path: string; text: string }>;

const DESIGNS: readonly Design[] = ['A', 'B', 'tutorial'];
const B_BOND = { Mode: '802.3ad', LACPTransmitRate: 'fast', MIIMonitorSec: '100ms', TransmitHashPolicy: 'layer3+4' };

/** Each scenario alone, and each base scenario under each modifier (`ready+networkmanager`). */
const BASES = SCENARIOS.filter((s) => !MODIFIER_SCENARIOS.includes(s));
const SPECS = [...SCENARIOS, ...BASES.flatMap((s) => MODIFIER_SCENARIOS.map((m) => `${s}+${m}`))];

/** What decides the files the stage starts from and writes: the netplan files, the cables, the bonds. */
function startingPoint(spec: string): string {
  const cluster = createCluster(2, 1, 'max');
  for (const s of resolveScenario(spec)) s.apply(cluster);
  return JSON.stringify(
    cluster.machines
      .map((m) => {
        const files = new Map([['/etc/netplan/01-netcfg.yaml', mgmtNetplan(m)]]);
        for (const [path, f] of m.files ?? []) if (path.startsWith('/etc/netplan/')) files.set(path, f.content);
        const bonds = m.netdevs.filter((d) => d.bond).map((d) => d.name);
        return { files: [...files].sort(), bonds, nm: m.networkManager ?? false };
      })
      .concat([{ cables: cluster.cables.map((c) => c.plugged) } as never]),
  );
}

const distinctSpecs = (): string[] => {
  const seen = new Map<string, string>();
  for (const spec of SPECS) if (!seen.has(startingPoint(spec))) seen.set(startingPoint(spec), spec);
  return [...seen.values()];
};

// ---- real netplan ----

const stats = { sets: 0, files: 0, cases: 0, nmMoves: 0, routeRewrites: 0, designB: 0, nmCases: 0, refusedB: 0 };

const tmpRoot = mkdtempSync(join(tmpdir(), 'l20-netplan-oracle-'));
const generated = new Map<string, { devices: Map<string, GeneratedDevice>; texts: Map<string, string> }>();

/** `netplan generate --root-dir` over the files (memoized by content): the generated devices and file texts. */
function generate(files: Files): { devices: Map<string, GeneratedDevice>; texts: Map<string, string> } {
  const key = JSON.stringify([...files].sort((a, b) => a.path.localeCompare(b.path)));
  const hit = generated.get(key);
  if (hit) return hit;
  const root = join(tmpRoot, String(generated.size));
  mkdirSync(join(root, 'etc/netplan'), { recursive: true });
  for (const f of files) {
    writeFileSync(join(root, 'etc/netplan', f.path.slice(f.path.lastIndexOf('/') + 1)), f.text, { mode: 0o600 });
  }
  try {
    execFileSync('netplan', ['generate', '--root-dir', root], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === 'ENOENT') {
      throw new Error('netplan not found: install the Debian package netplan.io (the oracle for netplan files)', {
        cause: e,
      });
    }
    throw new Error(`netplan generate --root-dir ${root} failed: ${err.stderr?.toString() ?? err.message}`, {
      cause: e,
    });
  }
  const texts = new Map<string, string>();
  for (const dir of ['run/systemd/network', 'run/NetworkManager/system-connections']) {
    const abs = join(root, dir);
    if (!existsSync(abs)) continue;
    for (const name of readdirSync(abs).filter((n) => /\.(network|netdev|link|nmconnection)$/.test(n))) {
      texts.set(`${dir}/${name}`, readFileSync(join(abs, name), 'utf8'));
    }
  }
  // The lab's netplan generate writes the same files, byte for byte.
  const lab = renderBackends(loadNetplan(files.map((f) => ({ path: f.path, mode: 0o600, text: f.text }))));
  expect(Object.fromEntries([...lab].sort()), `the lab's netplan generate over ${root}`).toEqual(
    Object.fromEntries([...texts].sort()),
  );
  stats.files += texts.size;
  const out = { devices: parseGenerated([...texts].map(([name, text]) => ({ name, text }))), texts };
  generated.set(key, out);
  return out;
}

/** The host's /run as netplan's backends read it: untouched by --root-dir. */
function runState(): string {
  const paths = [
    '/run/systemd/network',
    '/run/NetworkManager/system-connections',
    '/run/udev/rules.d/90-netplan.rules',
  ];
  return paths
    .map((p) => {
      if (!existsSync(p)) return `${p}: absent`;
      const st = statSync(p);
      return `${p}: ${st.mtimeMs} ${st.isDirectory() ? readdirSync(p).join(',') : st.size}`;
    })
    .join('\n');
}

// ---- the stage ----

const only = (...ids: string[]): StageDef<NetworkFacts> => ({
  ...networkStage,
  steps: (networkStage.steps ?? []).filter((s) => ids.includes(s.id)),
});
const writeStep = networkSteps.find((s) => s.id === 'network.write')!;

/** The stage's facts on a lab scenario after network.discover-cabling (which maps the cables of a fresh host). */
type Config = Parameters<typeof designPlan>[0];

async function factsOf(spec: string): Promise<{ all: HostFacts<NetworkFacts>[]; config: Config }> {
  const t = await labTarget({ scenario: spec });
  try {
    const engine = new Engine(t.hosts, { config: t.config });
    const facts = async (): Promise<HostFacts<NetworkFacts>[]> => {
      await applier(engine).applyStage(only('network.discover-cabling'));
      const o = await engine.runStage(networkStage);
      return t.hosts.map((h) => ({ host: h.name, facts: o.facts.get(h.name) as NetworkFacts }));
    };
    let all = await facts();
    if (networkCabling(all).cables.length === 0) {
      // Ports enslaved to a bond (the tutorial) are mapped by LLDP only: the os stage installs lldpd.
      await applier(engine).applyStage(osStage);
      all = await facts();
    }
    return { all, config: t.config };
  } finally {
    await t.close();
  }
}

const filesAfter = (before: Files, plan: StepPlan | null): Files => [
  ...before
    .filter((f) => !(plan?.removeFiles ?? []).includes(f.path))
    .filter((f) => !(plan?.files ?? []).some((w) => w.path === f.path)),
  ...(plan?.files ?? []).map((w) => ({ path: w.path, text: w.content })),
];

/** The guard's view agrees with what netplan generated, device by device. */
function expectViewAgrees(files: Files, gen: Map<string, GeneratedDevice>, label: string): void {
  const view = netplanView(files);
  expect(view.errors, label).toEqual([]);
  for (const [name, g] of gen) {
    const v = view.devices.get(name);
    const pick = (d: typeof g | typeof v) =>
      d && {
        renderer: d.renderer,
        addresses: d.addresses,
        dhcp4: d.dhcp4,
        dhcp6: d.dhcp6,
        routes: d.routes,
        optional: d.optional,
        mtu: d.mtu,
      };
    expect(pick(v), `${label}: ${name}`).toEqual(pick(g));
  }
}

describe('netplan oracle: what the network stage writes, through the real netplan generate', () => {
  const runBefore = runState();
  afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

  it.each(distinctSpecs())(
    '%s: every design means what it says to netplan',
    async (spec) => {
      const { all, config } = await factsOf(spec);
      for (const [h, { host, facts }] of all.entries()) {
        const mgmt = facts.fabric.mgmt.netdev!;
        expect(mgmt, `${spec} ${host}: management netdev`).toBeTruthy();
        const before: Files = facts.netplanFiles.map((f) => ({ path: f.path, text: f.text }));
        const genBefore = generate(before);
        expectViewAgrees(before, genBefore.devices, `${spec} ${host} before`);
        const ports = new Set(fabricPorts(facts));
        const defined = [...netplanView(before).devices.values()];
        const bonds = new Set(defined.filter((d) => d.section === 'bonds').map((d) => d.name));
        const kept = [...genBefore.devices.keys()].filter((n) => !ports.has(n) && !bonds.has(n));
        expect(kept, `${spec} ${host}: management is rendered before anything is written`).toContain(mgmt);

        for (const design of DESIGNS) {
          const label = `${spec} ${host} design ${design}`;
          const cfg = { ...config, network: { ...config.network, design } };
          const hosts = all.map((a) => a.host);
          const runId = '20261202T010000Z';
          const plan = writeStep.plan!({ config: cfg, hosts, runId, host, hostIndex: h, facts, all, results: [] });
          if (plan?.summary.startsWith('refused:')) {
            // Only design B on cabling that cannot carry it is refused (link-down: card 2 has one cable left).
            expect(plan.summary, label).toMatch(
              /^refused: design B needs both ports of card \S+ cabled to one card of one peer; .*uncabled/,
            );
            stats.refusedB++;
            continue;
          }
          const after = filesAfter(before, plan);
          const genAfter = generate(after);
          stats.cases++;
          if (facts.netplanFiles.some((f) => /renderer: NetworkManager/.test(f.text))) stats.nmCases++;
          // Every non-fabric interface: the same renderer and the same generated files.
          for (const n of kept) {
            const was = genBefore.devices.get(n)!;
            const now = genAfter.devices.get(n);
            expect(now?.renderer, `${label}: ${n} renderer`).toBe(was.renderer);
            const text = (g: typeof genAfter, f: string): string | undefined =>
              [...g.texts].find(([p]) => p.endsWith(`/${f}`))?.[1];
            expect(
              now?.files.map((f) => text(genAfter, f)),
              `${label}: ${n} generated`,
            ).toEqual(was.files.map((f) => text(genBefore, f)));
          }
          expectViewAgrees(after, genAfter.devices, label);
          expect(managementChange(netplanView(before), netplanView(after), mgmt), label).toBeUndefined();
          expect(renderedChange(mgmt, genBefore.devices.get(mgmt), genAfter.devices.get(mgmt)), label).toBeUndefined();

          if (design !== 'tutorial') {
            const intent = designPlan(cfg, h, facts.fabric, networkCabling(all), all.length);
            if (typeof intent === 'string') throw new Error(`${label}: ${intent}`);
            const ours = plan!.files!.find((f) => f.path === FABRIC_FILE)!.content;
            const net = (parseYaml(ours) as { network: Record<string, unknown> }).network;
            expect(net.renderer, `${label}: no top-level renderer`).toBeUndefined();
            for (const i of intent.interfaces) {
              const g = genAfter.devices.get(i.name);
              expect(g, `${label}: ${i.name} generated`).toBeDefined();
              const seen = { renderer: g!.renderer, optional: g!.optional, mtu: g!.mtu, addresses: g!.addresses };
              const addresses = [...i.addresses].sort();
              const meant = { renderer: 'networkd', optional: true, mtu: cfg.network.mtu, addresses };
              expect(seen, `${label}: ${i.name}`).toEqual(meant);
              const extras = { routes: g!.routes, dns: g!.dns, dhcp4: g!.dhcp4, dhcp6: g!.dhcp6 };
              expect(extras, `${label}: ${i.name} no gateway, route, DNS`).toEqual({
                routes: [],
                dns: [],
                dhcp4: false,
                dhcp6: false,
              });
              if (i.kind === 'bond') {
                stats.designB++;
                expect(g!.bondParameters, `${label}: ${i.name} parameters`).toEqual(B_BOND);
                for (const s of i.slaves ?? []) {
                  expect(genAfter.devices.get(s)?.master, `${label}: ${s} in ${i.name}`).toBe(i.name);
                }
              }
            }
            // The old format, a top-level renderer: real netplan moves management off NetworkManager;
            // the guard must say so (and stay silent where netplan renders management as before).
            const old = parseDocument(ours);
            old.setIn(['network', 'renderer'], 'networkd');
            const oldAfter = after.map((f) => (f.path === FABRIC_FILE ? { path: f.path, text: old.toString() } : f));
            const genOld = generate(oldAfter);
            const realMove = renderedChange(mgmt, genBefore.devices.get(mgmt), genOld.devices.get(mgmt));
            const guardMove = managementChange(netplanView(before), netplanView(oldAfter), mgmt);
            const why = `${label}: old format — guard ${guardMove ?? 'silent'}, netplan ${realMove ?? 'same'}`;
            expect(guardMove !== undefined, why).toBe(realMove !== undefined);
            if (realMove) stats.nmMoves++;
          }
        }

        // network.mgmt-routes: gateway4 → routes generates the same default route.
        const rewrite = mgmtRouteChange(facts);
        if (rewrite) {
          const after = before.map((f) => (f.path === rewrite.path ? { path: f.path, text: rewrite.content } : f));
          const genAfter = generate(after);
          const was = genBefore.devices.get(mgmt)!;
          const now = genAfter.devices.get(mgmt)!;
          expect(was.routes, `${spec} ${host}: gateway4 is a default route`).toContain(`default>${rewrite.gateway}`);
          expect({ renderer: now.renderer, addresses: now.addresses, routes: now.routes, dns: now.dns }).toEqual({
            renderer: was.renderer,
            addresses: was.addresses,
            routes: was.routes,
            dns: was.dns,
          });
          expect(managementChange(netplanView(before), netplanView(after), mgmt)).toBeUndefined();
          expectViewAgrees(after, genAfter.devices, `${spec} ${host} mgmt-routes`);
          stats.routeRewrites++;
        }
      }
    },
    120_000,
  );

  it('ran real netplan over every file set, touched nothing under /run, and saw the cases that matter', () => {
    stats.sets = generated.size;
    expect(runState()).toBe(runBefore);
    expect(stats.nmCases, 'cases with management on NetworkManager').toBeGreaterThan(0);
    expect(stats.nmMoves, 'old-format files that moved management (what per-device renderers fix)').toBeGreaterThan(0);
    expect(stats.designB, 'design B bonds checked').toBeGreaterThan(0);
    expect(stats.routeRewrites, 'gateway4 rewrites checked').toBeGreaterThan(0);
    expect(stats.files, 'generated files compared with the lab').toBeGreaterThan(stats.sets);
    console.log(
      `netplan oracle: ${stats.sets} file sets through real netplan generate, all as intended ` +
        `(${stats.cases} host×design cases, ${stats.routeRewrites} gateway4 rewrites, ` +
        `${stats.nmMoves} old-format management moves caught, ` +
        `${stats.files} generated files identical in the lab's netplan generate)`,
    );
  });
});
