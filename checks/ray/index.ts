/**
 * Stage 10, `ray` (docs/STAGES.md §3.10): Ray as systemd units bound to the control subnet with pinned
 * ports, the dashboard on 127.0.0.1 and unlimited memlock — only when the layout needs Ray (TP × PP
 * across nodes). With data parallelism Ray is unused: the stage is `skip`, and a Ray someone started
 * by hand (the tutorial's, on 0.0.0.0 with the management address) is stopped.
 */
import type { StageDef, StepDef } from '../../src/engine/types.js';
import { rayChecks, rayClusterRun, type RayCluster } from './checks.js';
import { collectRay, type RayFacts } from './facts.js';
import { RAY_BIN, rayNeeded, rayUnit } from './plan.js';
import { RAY_UNIT, RAY_UNIT_PATH, rayProbes } from './probes.js';

const ROLLBACK_SCRIPT = `systemctl daemon-reload
if [ -f /etc/systemd/system/l20-ray.service ]; then systemctl restart l20-ray.service; else systemctl disable --now l20-ray.service 2>/dev/null || true; fi
`;

const units: StepDef<RayFacts> = {
  id: 'ray.units',
  title: 'Ray units, head first (or stop an unused Ray)',
  danger: 'disruptive',
  guards: ['ray.units', 'ray.node-ips', 'ray.exposure'],
  order: 'sequential',
  plan(ctx) {
    const f = ctx.facts;
    const n = rayNeeded(ctx.config, f, ctx.hosts.length);
    if (n.needed === undefined) return null;
    const stray = f.procs.some((p) => p.kind === 'raylet' || p.kind === 'gcs_server') && f.unit.active !== 'active';
    // `ray stop` finds Ray's processes by name, whichever installation started them; as root, any user's.
    const stop = { command: { argv: [RAY_BIN, 'stop', '--force'] }, okExit: [0, 1] };
    if (!n.needed) {
      if (!f.unit.file && !stray) return null;
      return {
        summary: `stop the Ray on ${ctx.host}: ${n.why}`,
        ...(f.unit.file ? { removeFiles: [RAY_UNIT_PATH] } : {}),
        commands: [
          ...(f.unit.file
            ? [
                { command: { argv: ['systemctl', 'disable', '--now', RAY_UNIT] }, okExit: [0, 1, 5] },
                { command: { argv: ['systemctl', 'daemon-reload'] } },
              ]
            : []),
          ...(stray || f.unit.file ? [stop] : []),
        ],
      };
    }
    return {
      summary: `Ray ${ctx.hostIndex === 0 ? 'head' : 'worker'} as l20-ray.service on the control subnet (${n.why})`,
      files: [{ path: RAY_UNIT_PATH, content: rayUnit(ctx.config, ctx.hostIndex, f.user ?? 'root'), mode: 0o644 }],
      commands: [
        ...(stray ? [stop] : []),
        { command: { argv: ['systemctl', 'daemon-reload'] } },
        { command: { argv: ['systemctl', 'enable', RAY_UNIT] } },
        { command: { argv: ['systemctl', 'restart', RAY_UNIT] } },
      ],
      rollback: [{ command: { script: ROLLBACK_SCRIPT } }],
    };
  },
};

export const rayStage: StageDef<RayFacts, RayCluster> = {
  id: 'ray',
  title: 'units with pinned ports and fabric addresses',
  purpose:
    "Only when the layout needs Ray (a model that must span both nodes as TP × PP): head and worker as systemd units bound to their control-subnet address with pinned ports, the dashboard on 127.0.0.1 and unlimited memlock. With data parallelism (an 8B model) Ray is unused; a Ray started by hand, like the tutorial's on 0.0.0.0 with the management address, is stopped.",
  probes: rayProbes,
  collect: collectRay,
  cluster: rayClusterRun,
  checks: rayChecks,
  steps: [units],
};
