/**
 * The stages' own apply from `fresh` to `ready` on a lab, and what it leaves: the files it wrote and the
 * model state the checks read. test/lab/ready-from-apply.test.ts compares this with the `ready` scenario;
 * `node scripts/record-ready.mjs` records the files into the scenario's data (lab/scenarios/ready/).
 */
import { Engine } from '../../src/engine/runner.js';
import { StepExecutor } from '../../src/engine/steps.js';
import type { EngineEvent } from '../../src/engine/events.js';
import { packageFiles } from '../../lab/apt/dpkg-db.js';
import { BASE_LINKS } from '../../lab/fs/rootfs.js';
import { portQos } from '../../lab/model/qos.js';
import type { Machine } from '../../lab/model/types.js';
import { READY_API_KEY_MARK, type ReadyHostFiles } from '../../lab/scenarios/ready/types.js';
import { STAGES } from '../../checks/stages.js';
import type { LabTarget } from '../helpers/lab-target.js';

export interface ApplyOutcome {
  /** Per host: the paths the steps declared they write (their undo records). */
  declared: Map<string, Set<string>>;
  failed: string[];
  changed: number;
}

/** Applies every stage on the target, as `l20-setup apply --yes --allow-reboot` does. */
export async function applyFreshToReady(t: LabTarget): Promise<ApplyOutcome> {
  const engine = new Engine(t.hosts, { config: t.config });
  const declared = new Map<string, Set<string>>(t.hosts.map((h) => [h.name, new Set<string>()]));
  engine.subscribe((e: EngineEvent) => {
    if (e.type === 'step.start') for (const f of e.undo?.files ?? []) declared.get(e.host)!.add(f.path);
  });
  const run = await new StepExecutor(engine, { dryRun: false, yes: true, allowReboot: true }).applyStages(STAGES);
  const steps = run.outcomes.flatMap((o) => o.steps ?? []);
  return {
    declared,
    failed: steps.filter((s) => s.status === 'failed').map((s) => `${s.host} ${s.id}: ${s.error}`),
    changed: steps.filter((s) => s.changed).length,
  };
}

export type TreeEntry =
  | { kind: 'file'; content: string; mode: number; owner: string }
  | { kind: 'dir'; mode: number; owner: string }
  | { kind: 'link'; target: string };

/** Every regular file and symlink of the machine's writable root (not /proc, /sys, /dev), as root sees it. */
export async function labTree(m: Machine): Promise<Map<string, TreeEntry>> {
  const fs = m.system.shell.fsAs(0);
  const out = new Map<string, TreeEntry>();
  for (const path of fs.getAllPaths().sort()) {
    if (/^\/(proc|sys|dev)(\/|$)/.test(path)) continue;
    const st = await fs.lstat(path).catch(() => undefined);
    if (st?.isSymbolicLink) out.set(path, { kind: 'link', target: await fs.readlink(path) });
    else if (st) {
      const o = m.system.files.get(path);
      const meta = { mode: st.mode & 0o7777, owner: `${o.uid}:${o.gid}` };
      if (st.isFile) out.set(path, { kind: 'file', content: await fs.readFile(path), ...meta });
      else if (st.isDirectory) out.set(path, { kind: 'dir', ...meta });
    }
  }
  return out;
}

/**
 * What the apply leaves that is a record of that one run, not the host's state — so `ready` need not
 * hold it and the comparison leaves it out (each pattern with its reason).
 */
export const RUN_RECORDS: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /^\/var\/lib\/l20-setup\/backup(\/|$)/, why: 'backups of the files this run replaced, under its run id' },
  { pattern: /^\/var\/lib\/l20-setup\/netplan(\/|$)/, why: "network.apply's rollback snapshot of this run" },
  { pattern: /^\/var\/log\/l20-setup(\/|$)/, why: "this run's step logs" },
  { pattern: /^\/var\/lib\/l20-setup\/nccl(\/|$)/, why: "this run's NCCL benchmark logs" },
  { pattern: /^\/var\/lib\/l20-setup\/bench(\/|$)/, why: "this run's vllm bench results" },
  { pattern: /^\/(tmp|run)\//, why: 'emptied by the reboot the apply ends with; ready models the state after a boot' },
  { pattern: /^\/var\/log\/(syslog|journal)/, why: 'the journal of this run' },
];

export const isRunRecord = (path: string): boolean => RUN_RECORDS.some((r) => r.pattern.test(path));

/**
 * Fields that differ from one run to the next, replaced by a marker on both sides before comparing —
 * only inside the files named, so nothing else is loosened.
 */
export const RUN_SPECIFIC: ReadonlyArray<{ path: RegExp; field: RegExp; why: string }> = [
  {
    path: /^\/etc\/(nccl\.conf|netplan\/60-l20-fabric\.yaml)$/,
    field: /(?<= run )\d{8}T\d{6}Z\b/g,
    why: 'the run id in the header',
  },
  { path: /^\/etc\/l20\/vllm\.env$/, field: /(?<=^VLLM_API_KEY=)[0-9a-f]{64}$/gm, why: 'the vLLM API key' },
  {
    path: /\/\.ssh\/l20_cluster$/,
    field: /(?<=-----BEGIN OPENSSH PRIVATE KEY-----\n)[^-]+/g,
    why: 'the cluster key pair (ssh-keygen)',
  },
  {
    path: /\/\.ssh\/(l20_cluster\.pub|authorized_keys)$/,
    field: /(?<=ssh-ed25519 )\S+(?= l20-cluster@)/g,
    why: 'the cluster public key',
  },
  {
    path: /\/\.cache\/huggingface\/download\/[^/]+\.metadata$/,
    field: /^\d+\.\d+$/gm,
    why: "hf download's time stamp of each file",
  },
];

export function normaliseRunSpecific(path: string, content: string): string {
  let out = content;
  for (const r of RUN_SPECIFIC) if (r.path.test(path)) out = out.replace(r.field, '«run-specific»');
  return out;
}

export function describeEntry(path: string, e: TreeEntry | undefined): string {
  if (!e) return '(absent)';
  if (e.kind === 'link') return `symlink → ${e.target}`;
  if (e.kind === 'dir') return `directory, mode ${e.mode.toString(8)} owner ${e.owner}`;
  return `mode ${e.mode.toString(8)} owner ${e.owner}\n${normaliseRunSpecific(path, e.content)}`;
}

/**
 * What the apply wrote beyond `fresh`, minus the run's own records and the files of the packages it
 * installed (the lab's apt layer writes those for `ready` as well): the data the `ready` scenario holds.
 */
export function appliedFiles(
  applied: Machine,
  before: Map<string, TreeEntry>,
  after: Map<string, TreeEntry>,
): ReadyHostFiles {
  const fromPackages = packageFiles(applied);
  const files: ReadyHostFiles['files'] = {};
  const links: ReadyHostFiles['links'] = {};
  const dirs: ReadyHostFiles['dirs'] = {};
  const shellLinks = new Set(BASE_LINKS.map(([, path]) => path));
  for (const [path, e] of after) {
    if (isRunRecord(path)) continue;
    // Every symlink, also those fresh had: the scenario's packages differ from fresh's (timesyncd's
    // links stay when chrony's install removes it), and the cold boot adds only missing enable links.
    if (e.kind === 'link') {
      if (!shellLinks.has(path)) links[path] = e.target;
      continue;
    }
    if (sameEntry(before.get(path), e)) continue;
    const [uid, gid] = e.owner.split(':').map(Number) as [number, number];
    if (e.kind === 'dir') {
      dirs[path] = { mode: e.mode, uid, gid };
      continue;
    }
    if (isCommandStub(e) || fromPackages[path]?.content === e.content) continue;
    const content = path === '/etc/l20/vllm.env' ? withApiKeyMark(e.content) : e.content;
    files[path] = { lines: content.split('\n'), mode: e.mode, uid, gid };
  }
  const packages = [...applied.packages.values()].map((p) => `${p.status}|${p.name}|${p.version}|${p.arch}`);
  packages.sort(byName);
  return { packages, autoInstalled: [...(applied.apt?.auto ?? [])].sort(), files, links, dirs };
}

const byName = (a: string, b: string): number => (a.slice(4) < b.slice(4) ? -1 : a.slice(4) > b.slice(4) ? 1 : 0);

/** The /usr/bin entry the lab's shell writes for each installed tool it models (lab/shell/shell.ts). */
export function isCommandStub(e: TreeEntry): boolean {
  return e.kind === 'file' && /^#!\/bin\/bash\n# Built-in command: [^\n]+\n$/.test(e.content);
}

/**
 * Files of `fresh` the apply removed that no package owned (the scenario cannot remove files: the
 * recorder refuses such an apply). Packages' files go with their packages in the lab's apt layer.
 */
export function removedFiles(
  before: Map<string, TreeEntry>,
  after: Map<string, TreeEntry>,
  packaged: Set<string>,
): string[] {
  return [...before.keys()].filter((p) => !after.has(p) && !isRunRecord(p) && !packaged.has(p));
}

/** The API key is the one field the scenario derives per seed (lab/scenarios/ready/index.ts). */
function withApiKeyMark(content: string): string {
  return content.replace(/^(VLLM_API_KEY=)[0-9a-f]{64}$/m, `$1${READY_API_KEY_MARK}`);
}

export function sameEntry(a: TreeEntry | undefined, b: TreeEntry | undefined): boolean {
  if (!a || !b || a.kind !== b.kind) return false;
  if (a.kind === 'link') return b.kind === 'link' && a.target === b.target;
  if (a.kind === 'dir') return b.kind === 'dir' && a.mode === b.mode && a.owner === b.owner;
  return b.kind === 'file' && a.content === b.content && a.mode === b.mode && a.owner === b.owner;
}

/** The model state the checks read, one line per fact, for a line-by-line comparison. */
export function modelState(m: Machine): string[] {
  const units = [...m.system.systemd.units.values()];
  return [
    ...[...m.packages.values()].map((p) => `package ${p.name} ${p.version} ${p.status}`).sort(),
    ...units
      .filter((u) => u.active === 'active')
      .map((u) => `unit ${u.name} active`)
      .sort(),
    ...[...m.modules].sort().map((x) => `module ${x}`),
    ...m.netdevs.flatMap((d) => [
      `netdev ${d.name} ${d.adminUp ? 'up' : 'down'} mtu ${d.mtu}${d.master ? ` master ${d.master}` : ''}`,
      ...d.addresses.map((a) => `netdev ${d.name} ${a.family} ${a.local}/${a.prefixlen}`),
    ]),
    ...m.routes.map((r) => `route ${JSON.stringify(r)}`).sort(),
    ...m.rdma.map((r) => `rdma ${r.name} ${r.netdev ?? ''}`),
    ...m.netdevs.flatMap((d) => {
      const q = portQos(m, d.name);
      if (!q) return [];
      return [`qos ${d.name} trust ${q.trust} app ${JSON.stringify(q.dscpApp)} pfc ${q.pfc.map(Number).join('')}`];
    }),
    ...[...(m.apt?.auto ?? [])].sort().map((name) => `package ${name} marked auto`),
    `apt lists ${[...(m.apt?.lists ?? [])].sort().join(' ')}; next system id ${m.apt?.nextSystemId ?? '-'}`,
    `firewall ${JSON.stringify(m.firewall ?? null)}`,
    `cmdline ${m.os.cmdline}`,
    `next boot cmdline ${m.firmware?.grubCmdline ?? ''}`,
    `nvidia ${m.nvidia?.loaded ? `${m.nvidia.loaded.version} open ${m.nvidia.loaded.open}` : 'none'}`,
    `nvidia persistence ${m.nvidia?.persistence ?? false}`,
    `ofed ${JSON.stringify(m.ofed ?? null)}`,
  ];
}
