/**
 * The network stage's apply steps (docs/STAGES.md §3.4): discover-cabling (safe), write (safe: the file
 * only), apply (network: armed rollback, armed.ts), mgmt-routes (network: gateway4 → a default
 * route, alone, same procedure with a management-only proof); network.firewall is in firewall.ts.
 */
import { parse as parseYaml } from 'yaml';
import type { StepDef, StepPlan, StepPlanContext } from '../../src/engine/types.js';
import { designPlan } from '../common/design.js';
import { DEFAULT_BACKUP_ROOT } from '../../src/transport/files.js';
import { armedApply, ROLLBACK_WINDOW_S, type ArmedTarget } from './armed.js';
import { networkCabling } from './cabling.js';
import { fabricBonds } from './checks-host.js';
import { fabricPorts, type NetworkFacts } from './facts.js';
import { fabricBody, renderFabricFile, withDefaultRoute } from './netplan-file.js';
import { managementChange, netplanView } from './netplan-view.js';
import { FABRIC_FILE, PENDING_DIR, PENDING_FILES } from './probes.js';

/** A plan that does nothing but fail with the reason (the step is refused on this host). */
function refuse(summary: string): StepPlan {
  return {
    summary: `refused: ${summary}`,
    commands: [{ command: { script: 'echo "$1" >&2\nexit 1\n', args: [`refused: ${summary}`] }, sudo: false }],
  };
}

/** Waits (≤ 35 s) until every port named has a neighbour (LLDP, else IPv6 all-nodes); never fails. */
const WAIT_NEIGHBOURS = `for i in $(seq 1 35); do
  missing=
  for p in "$@"; do
    if command -v lldpcli >/dev/null 2>&1 && lldpcli -f json show neighbors 2>/dev/null | grep -q "\\"$p\\""; then continue; fi
    ping -6 -c 1 -W 1 -I "$p" ff02::1 >/dev/null 2>&1
    [ -n "$(ip -6 neigh show dev "$p" 2>/dev/null)" ] && continue
    missing="$missing $p"
  done
  [ -z "$missing" ] && exit 0
  sleep 1
done
echo "no neighbour after 35 s on:$missing" >&2
`;

const discoverCabling: StepDef<NetworkFacts> = {
  id: 'network.discover-cabling',
  title: 'bring unconfigured fabric ports up and let LLDP map the cables',
  danger: 'safe',
  guards: ['network.cabling'],
  plan(ctx) {
    const f = ctx.facts;
    const down = f.fabric.ports
      .filter((p) => !p.adminUp && p.addresses.length === 0 && !p.master && p.netdev !== f.fabric.mgmt.netdev)
      .map((p) => p.netdev);
    const lldp = !f.lldpMissing;
    // Ports that are up already and still unmapped have no carrier or no peer: nothing to discover here.
    if (down.length === 0) return null;
    return {
      summary: `ip link set up ${down.join(', ')}; ${lldp ? 'lldpcli update; ' : ''}wait ≤ 35 s for neighbours`,
      commands: [
        ...down.map((p) => ({ command: { argv: ['ip', 'link', 'set', 'dev', p, 'up'] } })),
        ...(lldp ? [{ command: { argv: ['lldpcli', 'update'] } }] : []),
        { command: { script: WAIT_NEIGHBOURS, args: down }, timeoutMs: 60_000 },
      ],
      rollback: down.map((p) => ({ command: { argv: ['ip', 'link', 'set', 'dev', p, 'down'] } })),
    };
  },
};

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Netplan files (other than ours) that define fabric ports or bonds over them: what migration moves away. */
function conflictingFiles(f: NetworkFacts): Array<{ path: string; mgmt: boolean }> {
  const ports = new Set(fabricPorts(f));
  const bonds = new Set(f.bonds.map((b) => b.name));
  const out: Array<{ path: string; mgmt: boolean }> = [];
  for (const file of f.netplanFiles) {
    if (file.path === FABRIC_FILE) continue;
    let doc: unknown;
    try {
      doc = parseYaml(file.text);
    } catch {
      continue;
    }
    const net = isObj(doc) && isObj(doc.network) ? doc.network : {};
    const eths = isObj(net.ethernets) ? Object.keys(net.ethernets) : [];
    const bondDefs = isObj(net.bonds) ? net.bonds : {};
    const fabricBond = Object.entries(bondDefs).some(
      ([name, b]) =>
        bonds.has(name) || (isObj(b) && Array.isArray(b.interfaces) && b.interfaces.some((i) => ports.has(String(i)))),
    );
    if (eths.some((e) => ports.has(e)) || fabricBond)
      out.push({ path: file.path, mgmt: f.fabric.mgmt.netdev !== undefined && eths.includes(f.fabric.mgmt.netdev) });
  }
  return out;
}

/**
 * Builds network.write's pre-write snapshot (the configuration network.apply returns to), once per pending
 * write; the unpacked files stay beside the tar for the probe (management's renderer before the write).
 */
const PENDING_SNAPSHOT = `set -eu
run=$1; shift
p=${PENDING_DIR}
if [ -f "$p/netplan.tar" ]; then exit 0; fi
t=${PENDING_FILES}
rm -rf "$t"; mkdir -p "$t"
for f in /etc/netplan/*.yaml; do if [ -e "$f" ]; then cp -p "$f" "$t/"; fi; done
for f in "$@"; do
  b="${DEFAULT_BACKUP_ROOT}/$run$f"
  if [ -f "$b" ]; then cp -p "$b" "$t/\${f##*/}"; else rm -f "$t/\${f##*/}"; fi
done
tar -C "$t" -cpf "$p/netplan.tar" .
`;

/** netplan's merged view of management after the write must be what it was before ($2). */
const MGMT_UNCHANGED = `now=$(netplan get "ethernets.$1")
if [ "$now" != "$2" ]; then
  printf 'the new configuration changes %s\\nbefore:\\n%s\\nafter:\\n%s\\n' "$1" "$2" "$now" >&2
  exit 1
fi
`;

/**
 * What `netplan get ethernets.<netdev>` prints, cut from the full `netplan get` output (the same
 * emitter: the device's lines under `ethernets:`, six spaces less indented); `null` when absent.
 */
export function mergedSubtree(full: string, netdev: string): string {
  const lines = full.split('\n');
  const start = lines.findIndex(
    (l, i) =>
      l === `    ${netdev}:` &&
      lines
        .slice(0, i)
        .reverse()
        .find((x) => /^ {2}\S/.test(x)) === '  ethernets:',
  );
  if (start < 0) return 'null';
  const body: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.trim() !== '' && !l.startsWith('      ')) break;
    body.push(l.slice(6));
  }
  return body.join('\n').replace(/\n+$/, '');
}

/** Design B needs both ports of each card cabled to one card of one peer (docs/STAGES.md §2); why not, if not. */
function b2bSplit(
  all: StepPlanContext<NetworkFacts>['all'],
  cabling: ReturnType<typeof networkCabling>,
  host: string,
): string | undefined {
  const cardOf = (h: string, n: string): string | undefined =>
    all.find((a) => a.host === h)?.facts.fabric.ports.find((p) => p.netdev === n)?.card;
  const mine = all.find((a) => a.host === host)?.facts.fabric.ports ?? [];
  for (const c of new Set(mine.map((p) => p.card))) {
    const peers = new Set(
      mine
        .filter((p) => p.card === c)
        .map((p) => {
          const cable = cabling.cables.find((k) => k.ends.some((e) => e.host === host && e.netdev === p.netdev));
          const far = cable?.ends.find((e) => !(e.host === host && e.netdev === p.netdev));
          return far ? `${far.host}:${cardOf(far.host, far.netdev) ?? '?'}` : 'uncabled';
        }),
    );
    if (peers.size !== 1 || peers.has('uncabled'))
      return `design B needs both ports of card ${c} cabled to one card of one peer; they reach ${[...peers].join(', ')}`;
  }
  return undefined;
}

function writePlan(ctx: StepPlanContext<NetworkFacts>): StepPlan | null {
  const f = ctx.facts;
  const design = ctx.config.network.design;
  if (design === 'tutorial') return null; // "keep": the operator's files stand
  const cabling = networkCabling(ctx.all);
  const plan = designPlan(ctx.config, ctx.hostIndex, f.fabric, cabling, ctx.all.length);
  if (typeof plan === 'string') return refuse(plan);
  if (plan.design === 'B') {
    const split = b2bSplit(ctx.all, cabling, ctx.host);
    if (split) return refuse(split);
  }
  const mgmt = f.fabric.mgmt.netdev;
  if (!mgmt) return refuse('the management interface is unknown (SSH_CONNECTION matches no netdev)');
  if (plan.interfaces.some((i) => i.name === mgmt || i.slaves?.includes(mgmt)))
    return refuse(`the design would configure the management interface ${mgmt}`);
  const conflicts = conflictingFiles(f);
  const mixed = conflicts.find((c) => c.mgmt);
  if (mixed)
    return refuse(`${mixed.path} defines both management (${mgmt}) and fabric interfaces: split it by hand first`);
  const current = f.netplanFiles.find((x) => x.path === FABRIC_FILE);
  let content = renderFabricFile(plan, ctx.runId);
  // Same body as the file in place: keep it, header and all (its run id says when it was written).
  if (current && fabricBody(current.text) === fabricBody(content)) content = current.text;
  const addrs = plan.interfaces
    .filter((i) => i.addresses.length > 0)
    .map((i) => `${i.name} ${i.addresses.join(', ')}`)
    .join('; ');
  const moved = conflicts.map((c) => c.path);
  const kept = f.netplanFiles.filter((x) => x.path !== FABRIC_FILE && !moved.includes(x.path));
  const after = [...kept, { path: FABRIC_FILE, text: content }];
  const mgmtChange = managementChange(netplanView(f.netplanFiles), netplanView(after), mgmt);
  if (mgmtChange) return refuse(mgmtChange);
  return {
    summary: `write ${FABRIC_FILE} (design ${plan.design}: ${addrs}, MTU ${ctx.config.network.mtu})${moved.length ? `; move ${moved.join(', ')} to the backup directory` : ''}`,
    files: [{ path: FABRIC_FILE, content, mode: 0o600 }],
    removeFiles: moved,
    commands: [
      { command: { argv: ['netplan', 'generate'] } },
      ...(f.merged.ok
        ? [{ command: { script: MGMT_UNCHANGED, args: [mgmt, mergedSubtree(f.merged.text, mgmt)] } }]
        : []),
      { command: { script: PENDING_SNAPSHOT, args: [ctx.runId, FABRIC_FILE, ...moved] } },
    ],
  };
}

const write: StepDef<NetworkFacts> = {
  id: 'network.write',
  title: `write ${FABRIC_FILE}`,
  danger: 'safe',
  guards: ['network.design', 'network.addresses', 'network.mtu'],
  plan: writePlan,
};

/** What network.apply does on one host, from the (already written) merged configuration. */
function applyTarget(f: NetworkFacts, host: string): ArmedTarget {
  const ports = fabricPorts(f);
  const describedBonds = Object.entries(f.merged.bonds)
    .filter(([, b]) => (b.interfaces ?? []).some((i) => ports.includes(String(i))))
    .map(([n]) => n);
  return {
    host,
    ports: [...ports.filter((p) => f.merged.ethernets[p] !== undefined), ...describedBonds],
    created: describedBonds.filter((b) => !f.bonds.some((x) => x.name === b)),
    deleteFirst: fabricBonds(f)
      .filter((b) => !b.described)
      .map((b) => b.name),
    // What management was rendered from before network.write, if its snapshot waits: else nothing changes.
    netplan: {
      before: f.pendingSnapshot && f.pendingFiles.length > 0 ? f.pendingFiles : f.netplanFiles,
      after: f.netplanFiles,
    },
  };
}

const apply: StepDef<NetworkFacts> = {
  id: 'network.apply',
  title: 'apply netplan under an armed rollback and prove every cable',
  danger: 'network',
  guards: ['network.addresses', 'network.mtu', 'network.stale-devices'],
  async execute(ctx) {
    const targets = ctx.targets.map((h) => applyTarget(ctx.all.find((a) => a.host === h)!.facts, h));
    const proofs = [
      'network.addresses',
      'network.mtu',
      'network.reachability',
      'network.stale-devices',
      ...(ctx.config.network.design === 'B' ? ['network.lacp', 'network.bond-lag'] : []),
    ];
    return armedApply(ctx, {
      stepId: 'network.apply',
      danger: 'network',
      targets,
      proofs,
      fromPending: true,
      summary: (h) => {
        const t = targets.find((x) => x.host === h)!;
        return `netplan apply under a ${ROLLBACK_WINDOW_S} s rollback timer${t.deleteFirst.length ? ` after deleting ${t.deleteFirst.join(', ')}` : ''}; prove with a new SSH connection and pings on every subnet`;
      },
    });
  },
};

export interface MgmtRouteChange {
  path: string;
  content: string;
  gateway: string;
  mode: number;
}

/** The file and its new text for a host whose management interface uses gateway4. */
export function mgmtRouteChange(f: NetworkFacts): MgmtRouteChange | undefined {
  const mgmt = f.fabric.mgmt.netdev;
  if (!mgmt) return undefined;
  for (const file of f.netplanFiles) {
    const w = withDefaultRoute(file.text, mgmt);
    if (w) return { path: file.path, content: w.text, gateway: w.gateway, mode: 0o600 };
  }
  return undefined;
}

const mgmtRoutes: StepDef<NetworkFacts> = {
  id: 'network.mgmt-routes',
  title: 'management gateway4 → default route (R21)',
  danger: 'network',
  guards: ['network.netplan-lint'],
  async execute(ctx) {
    const changes = new Map(ctx.targets.map((h) => [h, mgmtRouteChange(ctx.all.find((a) => a.host === h)!.facts)]));
    const hosts = ctx.targets.filter((h) => changes.get(h));
    const skipped = ctx.targets
      .filter((h) => !changes.get(h))
      .map((h) => ({
        id: 'network.mgmt-routes',
        stage: 'network' as const,
        host: h,
        status: 'skipped' as const,
        danger: 'network' as const,
        summary: 'nothing to do: no gateway4 on the management interface',
        commands: [],
        diff: '',
        changed: false,
      }));
    if (hosts.length === 0) return skipped;
    const results = await armedApply(ctx, {
      stepId: 'network.mgmt-routes',
      danger: 'network',
      proofs: [],
      fromPending: false,
      targets: hosts.map((h) => {
        const f = ctx.all.find((a) => a.host === h)!.facts;
        const c = changes.get(h)!;
        const after = f.netplanFiles.map((x) => (x.path === c.path ? { path: x.path, text: c.content } : x));
        const files = [{ path: c.path, content: c.content, mode: c.mode }];
        return { host: h, ports: [], created: [], deleteFirst: [], files, netplan: { before: f.netplanFiles, after } };
      }),
      summary: (h) =>
        `${changes.get(h)!.path}: gateway4 ${changes.get(h)!.gateway} → routes: [{to: default, via: ${changes.get(h)!.gateway}}], applied under a rollback timer`,
      extraProof: (h, f) => {
        if (!changes.get(h)) return undefined;
        const gw = changes.get(h)!.gateway;
        return f?.fabric.mgmt.gateway === gw
          ? undefined
          : `default route via ${gw} missing after the change (have ${f?.fabric.mgmt.gateway ?? 'none'})`;
      },
    });
    return [...results, ...skipped];
  },
};

export const networkSteps: readonly StepDef<NetworkFacts>[] = [discoverCabling, write, apply, mgmtRoutes];
