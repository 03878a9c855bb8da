/**
 * The Ray units of docs/STAGES.md §3.10: the head on node 1 and workers elsewhere, each bound to its
 * control-subnet address, every port pinned, the dashboard on 127.0.0.1, unlimited memlock, and the
 * worker waiting for the head's GCS port before it starts.
 */
import type { ClusterConfig } from '../../src/config/schema.js';
import { controlAddress, controlSubnet } from '../common/design.js';
import { describeLayout } from '../vllm/advisor.js';
import { decideLayout } from '../vllm/plan.js';
import type { SharedFacts } from '../vllm/shared-facts.js';

export const RAY_BIN = '/opt/l20/venv/bin/ray';
/** Ports every node pins (firewall rules and R48 name them). */
export const RAY_NODE_PORTS = [
  '--node-manager-port=6380',
  '--object-manager-port=6381',
  '--min-worker-port=10002',
  '--max-worker-port=19999',
  '--dashboard-agent-listen-port=52365',
  '--metrics-export-port=8080',
];

export function rayArgv(config: ClusterConfig, hostIndex: number): string[] {
  const ip = controlAddress(config.network.design, hostIndex);
  if (hostIndex === 0) {
    return [
      RAY_BIN,
      'start',
      '--head',
      '--block',
      `--node-ip-address=${ip}`,
      `--port=${config.ray.port}`,
      '--dashboard-host=127.0.0.1',
      `--dashboard-port=${config.ray.dashboardPort}`,
      '--ray-client-server-port=10001',
      ...RAY_NODE_PORTS,
    ];
  }
  return [
    RAY_BIN,
    'start',
    '--block',
    `--address=${controlAddress(config.network.design, 0)}:${config.ray.port}`,
    `--node-ip-address=${ip}`,
    ...RAY_NODE_PORTS,
  ];
}

function fold(key: string, argv: readonly string[]): string {
  const lines: string[] = [];
  let line = `${key}=${argv.slice(0, 2).join(' ')}`;
  for (const w of argv.slice(2)) {
    if (line.length + w.length + 1 > 100) {
      lines.push(`${line} \\`);
      line = `  ${w}`;
    } else line += ` ${w}`;
  }
  lines.push(line);
  return lines.join('\n');
}

export function rayUnit(config: ClusterConfig, hostIndex: number, user: string): string {
  const head = hostIndex === 0;
  const ip1 = controlAddress(config.network.design, 0);
  return [
    `# Written by l20-setup (stage ray, STAGES.md §3.10): Ray ${head ? 'head' : 'worker'} on the control subnet ${controlSubnet(config.network.design)}.`,
    '# Re-running the stage rewrites this file; nothing here sources /etc/nccl.conf.',
    '[Unit]',
    `Description=Ray ${head ? 'head' : 'worker'} (l20-setup)`,
    'After=network-online.target l20-roce-qos.service',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${user}`,
    'LimitMEMLOCK=infinity',
    'LimitNOFILE=65536',
    'Environment=RAY_USAGE_STATS_ENABLED=0',
    // systemd unquotes the double-quoted word (\" → "), so sh receives the Python text with plain quotes.
    ...(head
      ? []
      : [
          `ExecStartPre=/bin/sh -c "until /opt/l20/venv/bin/python -c 'import socket; socket.create_connection((\\"${ip1}\\", ${config.ray.port}), 2)'; do sleep 2; done"`,
        ]),
    fold('ExecStart', rayArgv(config, hostIndex)),
    `ExecStop=${RAY_BIN} stop`,
    'Restart=on-failure',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

/** Whether the layout needs Ray: `true`/`false` with the reason, or undefined when it cannot be told yet. */
export function rayNeeded(
  config: ClusterConfig,
  facts: SharedFacts,
  nodes: number,
): { needed: boolean | undefined; why: string; lines: string[] } {
  const d = decideLayout(config, facts, nodes);
  if (!d.layout) return { needed: undefined, why: `the layout is not decided: ${d.problem ?? '?'}`, lines: d.lines };
  const l = describeLayout(d.layout);
  return d.usesRay
    ? { needed: true, why: `${l} runs its pipeline stages over Ray`, lines: d.lines }
    : {
        needed: false,
        why: `Ray unused: the layout is ${l} (vLLM's own data-parallel launcher, no Ray)`,
        lines: d.lines,
      };
}
