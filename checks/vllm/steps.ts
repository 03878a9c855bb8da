/**
 * vllm apply steps (docs/STAGES.md §3.11): model-sync (download on node 1, copy over the fabric with the
 * cluster key) and units (API key file, unit, ufw rule, start node 2 first, wait for /health).
 */
import type { StepDef, StepExecContext, StepResult } from '../../src/engine/types.js';
import { quoteArgv } from '../../src/transport/quote.js';
import { controlAddress } from '../common/design.js';
import { modelPath } from './catalog.js';
import type { VllmFacts } from './facts.js';
import { decideLayout, serveArgs, vllmUnit } from './plan.js';
import { VENV_BIN, VLLM_UNIT, VLLM_UNIT_PATH } from './probes.js';

/**
 * Puts the API key in /etc/l20/vllm.env as VLLM_API_KEY (root, 0600), the name vLLM reads. A present key is kept
 * (a new one would lock every client out); one under the old name L20_API_KEY is renamed with its value; other
 * lines stay. The key moves only through files and shell builtins, never a command's argv, and is never printed.
 */
export const API_KEY_SCRIPT = `set -e
f=/etc/l20/vllm.env
valid='[A-Za-z0-9_-]\\{32,\\}'
if grep -q "^VLLM_API_KEY=$valid\\$" "$f" 2>/dev/null; then
  echo "kept the existing VLLM_API_KEY in $f (value not shown)"
else
  install -d -m 0755 /etc/l20
  umask 077
  key=$(sed -n "s/^L20_API_KEY=\\($valid\\)\\$/\\1/p" "$f" 2>/dev/null | head -n 1)
  if [ -n "$key" ]; then what="renamed L20_API_KEY to VLLM_API_KEY in $f, keeping the key"
  else key=$(openssl rand -hex 32); what="generated VLLM_API_KEY in $f"; fi
  { grep -v -e '^L20_API_KEY=' -e '^VLLM_API_KEY=' "$f" 2>/dev/null || true
    printf 'VLLM_API_KEY=%s\\n' "$key"; } > "$f.new"
  mv -f "$f.new" "$f"
  echo "$what (value not shown)"
fi
chown root:root "$f"
chmod 600 "$f"
`;

/** After a rollback restored (or removed) the unit file: run what is there, or nothing. */
export const UNIT_ROLLBACK_SCRIPT = `systemctl daemon-reload
if [ -f /etc/systemd/system/l20-vllm.service ]; then systemctl restart l20-vllm.service; else systemctl disable --now l20-vllm.service 2>/dev/null || true; fi
`;

export const CLUSTER_KEY = '~/.ssh/l20_cluster';

/** On the source host, as the login user: the cluster key (§3.9), created when absent; prints the public half. */
export const CLUSTER_KEY_SCRIPT = `set -e
k="$HOME/.ssh/l20_cluster"
if [ ! -f "$k" ]; then
  install -d -m 700 "$HOME/.ssh"
  ssh-keygen -q -t ed25519 -N '' -C "l20-cluster@$(hostname)" -f "$k"
fi
cat "$k.pub"
`;

/** On a receiving host, as the login user: admit the key from the source's fabric address only. */
export const AUTHORIZE_SCRIPT = `set -e
install -d -m 700 "$HOME/.ssh"
line="from=\\"$2\\" $1"
touch "$HOME/.ssh/authorized_keys"
grep -qxF "$line" "$HOME/.ssh/authorized_keys" || echo "$line" >> "$HOME/.ssh/authorized_keys"
chmod 600 "$HOME/.ssh/authorized_keys"
`;

function result(
  ctx: StepExecContext<VllmFacts>,
  host: string,
  status: StepResult['status'],
  summary: string,
  commands: string[],
  changed: boolean,
  error?: string,
): StepResult {
  return {
    id: 'vllm.model-sync',
    stage: 'vllm',
    host,
    status,
    danger: 'safe',
    summary,
    commands,
    diff: '',
    changed,
    ...(error ? { error } : {}),
  };
}

const tail = (s: string): string => s.trim().split('\n').slice(-8).join('\n');

const modelSync: StepDef<VllmFacts> = {
  id: 'vllm.model-sync',
  title: 'download the model on node 1 and copy it over the fabric',
  danger: 'safe',
  guards: ['vllm.model'],
  async execute(ctx) {
    const id = ctx.config.vllm.model;
    const path = modelPath(id);
    const src = ctx.hosts[0]!;
    const srcFacts = ctx.all.find((h) => h.host === src)?.facts;
    const user = srcFacts?.user ?? 'root';
    const present = (h: string): VllmFacts['models'][number] | undefined =>
      ctx.all.find((x) => x.host === h)?.facts.models.find((m) => m.path === path);
    const ref = present(src);
    const needs = ctx.targets.filter(
      (h) =>
        h !== src &&
        !(
          ref?.configSha &&
          present(h)?.configSha === ref.configSha &&
          present(h)?.indexSha === ref.indexSha &&
          present(h)?.du === ref.du
        ),
    );
    const mkdir = (h: string): string[] => [
      'install',
      '-d',
      '-m',
      '0755',
      '-o',
      ctx.all.find((x) => x.host === h)?.facts.user ?? user,
      '-g',
      ctx.all.find((x) => x.host === h)?.facts.user ?? user,
      path,
    ];
    const download = [`${VENV_BIN}/hf`, 'download', id, '--local-dir', path];
    const rsync = (ip: string): string[] => [
      'rsync',
      '-a',
      '--delete',
      '--info=progress2',
      '-e',
      `ssh -i ${CLUSTER_KEY} -o BatchMode=yes -o StrictHostKeyChecking=accept-new`,
      `${path}/`,
      `${ip}:${path}/`,
    ];
    const out: StepResult[] = [];
    const srcCmds = ref?.configSha ? [] : [`sudo ${quoteArgv(mkdir(src))}`, quoteArgv(download)];
    if (ctx.dryRun) {
      if (ctx.targets.includes(src))
        out.push(
          result(
            ctx,
            src,
            srcCmds.length ? 'planned' : 'skipped',
            srcCmds.length ? `download ${id} to ${path}` : `${path} already on ${src}`,
            srcCmds,
            false,
          ),
        );
      for (const h of needs)
        out.push(
          result(
            ctx,
            h,
            'planned',
            `copy ${path} from ${src} over the fabric`,
            [`${src}: ${quoteArgv(rsync(controlAddress(ctx.config.network.design, ctx.hosts.indexOf(h))))}`],
            false,
          ),
        );
      return out;
    }
    let srcChanged = false;
    if (!ref?.configSha) {
      ctx.note(src, `${id} is not on ${src}: downloading it to ${path}`);
      const m = await ctx.run(src, 'vllm.model-sync', { argv: mkdir(src) }, { sudo: true });
      const r =
        m.exitCode === 0 ? await ctx.run(src, 'vllm.model-sync', { argv: download }, { timeoutMs: 6 * 3600_000 }) : m;
      srcChanged = true;
      if (r.exitCode !== 0) {
        return [
          result(
            ctx,
            src,
            'failed',
            `download ${id}`,
            srcCmds,
            true,
            `\`${download.join(' ')}\` exited ${r.exitCode}\n${tail(`${r.stdout}\n${r.stderr}`)}`,
          ),
          ...needs.map((h) => result(ctx, h, 'skipped', `not copied: the download on ${src} failed`, [], false)),
        ];
      }
    }
    if (ctx.targets.includes(src))
      out.push(
        result(
          ctx,
          src,
          'applied',
          srcChanged ? `downloaded ${id} to ${path}` : `${path} already on ${src}`,
          srcCmds,
          srcChanged,
        ),
      );
    if (needs.length === 0) return out;
    const key = await ctx.run(src, 'vllm.model-sync', { script: CLUSTER_KEY_SCRIPT });
    const pub = key.stdout.trim().split('\n').pop() ?? '';
    if (key.exitCode !== 0 || !/^ssh-ed25519 /.test(pub)) {
      return [
        ...out,
        ...needs.map((h) =>
          result(
            ctx,
            h,
            'failed',
            'copy over the fabric',
            [],
            false,
            `the cluster key on ${src} could not be created (exit ${key.exitCode})\n${tail(`${key.stdout}\n${key.stderr}`)}`,
          ),
        ),
      ];
    }
    const srcIp = controlAddress(ctx.config.network.design, 0);
    for (const h of needs) {
      const ip = controlAddress(ctx.config.network.design, ctx.hosts.indexOf(h));
      const cmds = [
        `${h}: authorize ${CLUSTER_KEY}.pub from="${srcIp}"`,
        `${h}: sudo ${quoteArgv(mkdir(h))}`,
        `${src}: ${quoteArgv(rsync(ip))}`,
      ];
      const a = await ctx.run(h, 'vllm.model-sync', { script: AUTHORIZE_SCRIPT, args: [pub, srcIp] });
      const d = a.exitCode === 0 ? await ctx.run(h, 'vllm.model-sync', { argv: mkdir(h) }, { sudo: true }) : a;
      const c =
        d.exitCode === 0 ? await ctx.run(src, 'vllm.model-sync', { argv: rsync(ip) }, { timeoutMs: 6 * 3600_000 }) : d;
      out.push(
        c.exitCode === 0
          ? result(ctx, h, 'applied', `copied ${path} from ${src} (${ip})`, cmds, true)
          : result(
              ctx,
              h,
              'failed',
              `copy ${path} from ${src}`,
              cmds,
              true,
              `exit ${c.exitCode}\n${tail(`${c.stdout}\n${c.stderr}`)}`,
            ),
      );
    }
    return out;
  },
};

const UNIT_GUARDS = ['vllm.units', 'vllm.layout', 'vllm.exposure', 'vllm.flags'];

const units: StepDef<VllmFacts> = {
  id: 'vllm.units',
  title: 'API key, vLLM units (node 2 first), wait for /health',
  danger: 'disruptive',
  guards: UNIT_GUARDS,
  order: 'reverse',
  plan(ctx) {
    // vllm.flags warns about the operator's superseded start scripts only; re-deploying the unit would not change them.
    const failing = ctx.results.filter(
      (r) => r.host === ctx.host && UNIT_GUARDS.includes(r.id) && r.status !== 'pass' && r.status !== 'skip',
    );
    if (failing.length > 0 && failing.every((r) => r.id === 'vllm.flags' && r.status === 'warn')) return null;
    const d = decideLayout(ctx.config, ctx.facts, ctx.hosts.length);
    if (!d.layout) return null;
    const argv = serveArgs(ctx.config, ctx.hostIndex, d.layout, ctx.facts.mgmtAddress ?? '');
    if (argv === null) {
      if (!ctx.facts.unit.file) return null;
      return {
        summary: `remove ${VLLM_UNIT}: in TP × PP only node 1 runs vLLM`,
        removeFiles: [VLLM_UNIT_PATH],
        commands: [
          { command: { argv: ['systemctl', 'disable', '--now', VLLM_UNIT] }, okExit: [0, 1, 5] },
          { command: { argv: ['systemctl', 'daemon-reload'] } },
        ],
      };
    }
    const head = ctx.hostIndex === 0;
    if (head && !ctx.facts.mgmtAddress) return null;
    const api = `http://${ctx.facts.mgmtAddress}:${ctx.config.vllm.port}`;
    return {
      summary: head
        ? `serve ${ctx.config.vllm.model} on ${api} with an API key; wait for /health`
        : `start ${d.layout.dpLocal} headless engine(s) joining ${controlAddress(ctx.config.network.design, 0)}`,
      files: [
        {
          path: VLLM_UNIT_PATH,
          content: vllmUnit(ctx.config, ctx.hostIndex, d.layout, argv, ctx.facts.user ?? 'root'),
          mode: 0o644,
        },
      ],
      commands: [
        { command: { script: API_KEY_SCRIPT } },
        { command: { argv: ['systemctl', 'daemon-reload'] } },
        { command: { argv: ['systemctl', 'enable', VLLM_UNIT] } },
        { command: { argv: ['systemctl', 'restart', VLLM_UNIT] } },
        ...(head && ctx.facts.mgmtIf
          ? [
              {
                command: {
                  argv: [
                    'ufw',
                    'allow',
                    'in',
                    'on',
                    ctx.facts.mgmtIf,
                    'to',
                    'any',
                    'port',
                    String(ctx.config.vllm.port),
                    'proto',
                    'tcp',
                  ],
                },
              },
            ]
          : []),
        // The API answers only once every engine (both nodes) has loaded: ≈ 2 min for an 8B model, ≤ 20 min allowed.
        ...(head
          ? [
              {
                command: {
                  argv: [
                    'curl',
                    '-fsS',
                    '-m',
                    '5',
                    '--retry',
                    '240',
                    '--retry-delay',
                    '5',
                    '--retry-connrefused',
                    '--retry-all-errors',
                    '-o',
                    '/dev/null',
                    `${api}/health`,
                  ],
                },
                sudo: false,
                timeoutMs: 21 * 60_000,
              },
            ]
          : []),
      ],
      rollback: [{ command: { script: UNIT_ROLLBACK_SCRIPT } }],
    };
  },
};

export const vllmSteps: readonly StepDef<VllmFacts>[] = [modelSync, units];
