/**
 * First-run setup: enter and edit hosts, test each connection, save. The draft lives in the store
 * (state/setup-draft.ts) until saved, and the one key handler edits it (input/bindings.ts: the setup
 * screen's keys, and a field's while one is edited); validation and saving happen in the session.
 */
import React, { useMemo } from 'react';
import { Box, Text } from 'ink';
import type { Controller } from '../../src/engine/controller.js';
import { useController, useSelector } from '../store-context.js';
import { DESIGNS, FIELDS, fieldValue, type Design, type Field } from '../state/setup-draft.js';
import { fit } from '../format.js';

const WIDTHS: Record<Field, number> = { name: 12, address: 22, port: 7, user: 10, role: 8, identityFile: 30 };

/** docs/STAGES.md §2 in the operator's words: what each design builds and what it costs. */
export const DESIGN_CONSEQUENCES: Record<Design, string[]> = {
  A: [
    'A — one subnet per cable (default): 192.168.101–104.0/24, MTU 9000, one RDMA device per port.',
    'NCCL drives the four ports as rails (≈ 4 × 25 Gb/s); control traffic uses cable 1.',
    'A failed cable costs one rail, nothing else.',
  ],
  B: [
    'B — one 802.3ad RoCE-LAG bond per NIC: bond0/bond1, 192.168.110/111.0/24, one mlx5_bond each.',
    'Per-NIC failover; both ports of each NIC must be cabled to one peer NIC.',
    'A QP still uses one port: NCCL needs NCCL_IB_QPS_PER_CONNECTION=2.',
  ],
  tutorial: [
    "tutorial — the recipe's 4-port balance-xor bond0, 192.168.100.0/24: allowed, findings stand.",
    "No RoCE LAG; bond0's GIDs on all four devices (retry errors across cables) (R16, R18, R22, R23).",
    'One TCP flow gets 25G, not 100G; DCB cannot be set on the bond (R25).',
  ],
};

/** Where an alias address leads (from the ssh config), the lines that decided it, or why ssh would refuse it. */
/** Where an ssh config alias leads, as the controller tells it (a view names no transport module). */
type AliasView = NonNullable<ReturnType<Controller['describeAddress']>>;

function AliasLine(props: { view: AliasView | undefined; width: number }) {
  const v = props.view;
  if (v === undefined) return null;
  if (!v.ok)
    return (
      <Text wrap="truncate" color="yellow">
        {fit(`  ✘ ssh config: ${v.error}`, props.width)}
      </Text>
    );
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" dimColor>
        {fit(`  ↳ ${v.summary}`, props.width)}
      </Text>
      <Text wrap="truncate" dimColor>
        {fit(`    from ${v.details}`, props.width)}
      </Text>
      {v.warnings.map((w, i) => (
        <Text key={i} wrap="truncate" color="yellow">
          {fit(`    ${w}`, props.width)}
        </Text>
      ))}
    </Box>
  );
}

export function SetupView(props: { width: number; height: number }) {
  const controller = useController();
  const hosts = useSelector((s) => s.ui.setup.hosts);
  const cursor = useSelector((s) => s.ui.setup.cursor);
  const editing = useSelector((s) => s.ui.setup.editing);
  const design = useSelector((s) => s.ui.setup.design);
  const results = useSelector((s) => s.ui.setup.results);
  const message = useSelector((s) => s.ui.setup.message);
  // Resolving reads the ssh config (and may run its Match exec lines): once per change of what it depends on.
  const reachKey = JSON.stringify(hosts.map((h) => [h.address, h.port, h.user, h.auth, h.jump, h.transport]));
  const reach = useMemo(() => hosts.map((h) => controller.describeAddress(h)), [reachKey, controller]);
  const paths = useMemo(() => hosts.map((h) => controller.describePath(h)), [reachKey, controller]);

  const header = FIELDS.map((f) => fit(f === 'identityFile' ? 'key (empty: agent)' : f, WIDTHS[f])).join(' ');
  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold wrap="truncate">
        {fit('Setup — hosts of the cluster (← → ↑ ↓ move, ⏎ edit, t test, w save)', props.width)}
      </Text>
      <Text wrap="truncate" dimColor>
        {fit(header, props.width)}
      </Text>
      {hosts.map((h, i) => (
        <Box key={i} flexDirection="column">
          <Box>
            {FIELDS.map((f, j) => {
              const selected = cursor === i * FIELDS.length + j;
              const value = selected && editing !== null ? `${editing}▏` : fieldValue(h, f);
              return (
                <Text key={f} inverse={selected} wrap="truncate">
                  {fit(value || '·', WIDTHS[f])}{' '}
                </Text>
              );
            })}
          </Box>
          <AliasLine view={reach[i]} width={props.width} />
          {paths[i] === undefined ? null : (
            <Text wrap="truncate" dimColor>
              {fit(`  ⇢ ${paths[i]}`, props.width)}
            </Text>
          )}
          <Text wrap="truncate" dimColor>
            {fit(`  ${results[h.name] ?? ''}`, props.width)}
          </Text>
        </Box>
      ))}
      <Text> </Text>
      <Text wrap="truncate" bold>
        {fit(
          `Network design: ${DESIGNS.map((x) => (x === design ? `[${x}]` : x)).join('  ')}   (n changes it)`,
          props.width,
        )}
      </Text>
      {DESIGN_CONSEQUENCES[design].map((l, i) => (
        <Text key={i} wrap="truncate" dimColor>
          {fit(`  ${l}`, props.width)}
        </Text>
      ))}
      <Text> </Text>
      <Text wrap="truncate" color="yellow">
        {fit(message, props.width)}
      </Text>
    </Box>
  );
}
