/**
 * First-run setup: enter and edit hosts, test each connection, save. The draft is local to this
 * screen until saved; validation and saving happen in the controller (schema errors name the field).
 */
import React, { useMemo, useReducer, useRef, useState } from 'react';
import { Box, Text, useInput, type Key } from 'ink';
import type { ClusterConfig, HostConfig } from '../../src/config/schema.js';
import type { AliasView } from '../../src/transport/ssh-config-report.js';
import { useController } from '../store-context.js';
import { matches, setupBindings } from '../keys.js';
import { fit } from '../format.js';

type Field = 'name' | 'address' | 'port' | 'user' | 'role' | 'identityFile';
const FIELDS: Field[] = ['name', 'address', 'port', 'user', 'role', 'identityFile'];
const WIDTHS: Record<Field, number> = { name: 12, address: 22, port: 7, user: 10, role: 8, identityFile: 30 };

function fieldValue(h: HostConfig, f: Field): string {
  switch (f) {
    case 'port': return h.port === undefined ? '' : String(h.port);
    case 'identityFile': return h.auth?.method === 'identityFile' ? h.auth.path : h.auth?.method === 'agent' ? '(ssh-agent)' : '';
    case 'user': return h.user ?? '';
    default: return String(h[f]);
  }
}

function withField(h: HostConfig, f: Field, value: string): HostConfig {
  const v = value.trim();
  switch (f) {
    case 'port': return v === '' ? { ...h, port: undefined } : { ...h, port: Number(v) };
    case 'role': return { ...h, role: v === 'head' ? 'head' : 'worker' };
    case 'user': return v === '' ? { ...h, user: undefined } : { ...h, user: v };
    case 'identityFile':
      return v === '' || v === '(ssh-agent)' ? { ...h, auth: { method: 'agent' } } : { ...h, auth: { method: 'identityFile', path: v } };
    default: return { ...h, [f]: v };
  }
}

type Design = ClusterConfig['network']['design'];
const DESIGNS: readonly Design[] = ['A', 'B', 'tutorial'];

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
    'tutorial — the recipe\'s 4-port balance-xor bond0, 192.168.100.0/24: allowed, findings stand.',
    'No RoCE LAG; bond0\'s GIDs on all four devices (retry errors across cables) (R16, R18, R22, R23).',
    'One TCP flow gets 25G, not 100G; DCB cannot be set on the bond (R25).',
  ],
};

interface Draft {
  hosts: HostConfig[];
  cursor: number;
  editing: string | null;
  design: Design;
}

type DraftAction =
  | { type: 'move'; delta: number }
  | { type: 'key'; input: string; key: Key }
  | { type: 'startEdit' }
  | { type: 'add' }
  | { type: 'delete' }
  | { type: 'design' };

/**
 * Keystrokes are reduced against the current draft, never a render's stale copy: keys typed or
 * pasted faster than React renders must all land.
 */
function draftReducer(d: Draft, a: DraftAction): Draft {
  const last = d.hosts.length * FIELDS.length - 1;
  const row = Math.floor(d.cursor / FIELDS.length);
  const field = FIELDS[d.cursor % FIELDS.length] as Field;
  switch (a.type) {
    case 'move':
      return d.editing !== null ? d : { ...d, cursor: Math.max(0, Math.min(last, d.cursor + a.delta)) };
    case 'startEdit': {
      const h = d.hosts[row];
      return h && d.editing === null ? { ...d, editing: fieldValue(h, field) } : d;
    }
    case 'key': {
      if (d.editing === null) return d;
      if (a.key.return) return { ...d, editing: null, hosts: d.hosts.map((h, i) => (i === row ? withField(h, field, d.editing ?? '') : h)) };
      if (a.key.escape) return { ...d, editing: null };
      if (a.key.backspace || a.key.delete) return { ...d, editing: d.editing.slice(0, -1) };
      if (a.input && !a.key.ctrl && !a.key.meta) return { ...d, editing: d.editing + a.input.replace(/[\r\n]/g, '') };
      return d;
    }
    case 'add':
      return { ...d, hosts: [...d.hosts, { name: `l20-n${d.hosts.length + 1}`, address: '', role: 'worker' }] };
    case 'delete':
      return d.hosts.length > 1 ? { ...d, hosts: d.hosts.filter((_, i) => i !== row), cursor: 0 } : d;
    case 'design':
      return d.editing !== null ? d : { ...d, design: DESIGNS[(DESIGNS.indexOf(d.design) + 1) % DESIGNS.length]! };
  }
}

/** Where an alias address leads (from the ssh config), the lines that decided it, or why ssh would refuse it. */
function AliasLine(props: { view: AliasView | undefined; width: number }) {
  const v = props.view;
  if (v === undefined) return null;
  if (!v.ok) return <Text wrap="truncate" color="yellow">{fit(`  ✘ ssh config: ${v.error}`, props.width)}</Text>;
  return (
    <Box flexDirection="column">
      <Text wrap="truncate" dimColor>{fit(`  ↳ ${v.summary}`, props.width)}</Text>
      <Text wrap="truncate" dimColor>{fit(`    from ${v.details}`, props.width)}</Text>
      {v.warnings.map((w, i) => (
        <Text key={i} wrap="truncate" color="yellow">{fit(`    ${w}`, props.width)}</Text>
      ))}
    </Box>
  );
}

export function SetupView(props: { width: number; height: number; onDone: () => void }) {
  const controller = useController();
  const [draft, dispatch] = useReducer(draftReducer, undefined, () => ({
    hosts: controller.initialHosts.length > 0 ? controller.initialHosts : [
      { name: 'l20-n1', address: '', role: 'head' as const },
      { name: 'l20-n2', address: '', role: 'worker' as const },
    ],
    cursor: 0,
    editing: null,
    design: controller.initialDesign ?? 'A',
  }));
  // Side effects (test, save) read the latest draft through a ref.
  const latest = useRef(draft);
  latest.current = draft;
  const [results, setResults] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('Enter each server: a name, its address (or ~/.ssh/config alias), SSH user and key.');
  const { hosts, cursor, editing, design } = draft;
  // Resolving reads the ssh config (and may run its Match exec lines): once per change of what it depends on.
  const reachKey = JSON.stringify(hosts.map((h) => [h.address, h.port, h.user, h.auth, h.jump, h.transport]));
  const reach = useMemo(() => hosts.map((h) => controller.describeAddress(h)), [reachKey, controller]);
  const paths = useMemo(() => hosts.map((h) => controller.describePath(h)), [reachKey, controller]);

  useInput((input, key) => {
    if (latest.current.editing !== null) {
      dispatch({ type: 'key', input, key });
      // Enter/escape leave edit mode inside the reducer; mirror it for the next keystroke.
      if (key.return || key.escape) latest.current = { ...latest.current, editing: null };
      return;
    }
    if (key.leftArrow) return dispatch({ type: 'move', delta: -1 });
    if (key.rightArrow) return dispatch({ type: 'move', delta: 1 });
    const b = setupBindings.find((x) => matches(x, input, key));
    if (!b) return;
    switch (b.command) {
      case 'up': dispatch({ type: 'move', delta: -FIELDS.length }); break;
      case 'down': dispatch({ type: 'move', delta: FIELDS.length }); break;
      case 'edit':
        dispatch({ type: 'startEdit' });
        latest.current = { ...latest.current, editing: '' };
        break;
      case 'add': dispatch({ type: 'add' }); break;
      case 'delete': dispatch({ type: 'delete' }); break;
      case 'design': dispatch({ type: 'design' }); break;
      case 'monitor': controller.openMonitor(); break;
      case 'test': {
        setMessage('testing connections…');
        const current = latest.current.hosts;
        void Promise.all(
          current.map(async (h) => {
            const r = await controller.testConnection(h);
            setResults((prev) => ({ ...prev, [h.name]: `${r.ok ? '✔' : '✘'} ${r.message}` }));
          }),
        ).then(() => setMessage('connection tests finished'));
        break;
      }
      case 'save':
        void controller.saveHosts(latest.current.hosts, { design: latest.current.design }).then((err) => {
          if (err) setMessage(err);
          else {
            setMessage('saved');
            props.onDone();
          }
        });
        break;
      case 'back':
        props.onDone();
        break;
    }
  });

  const header = FIELDS.map((f) => fit(f === 'identityFile' ? 'key (empty: agent)' : f, WIDTHS[f])).join(' ');
  return (
    <Box flexDirection="column" height={props.height}>
      <Text bold wrap="truncate">{fit('Setup — hosts of the cluster (← → ↑ ↓ move, ⏎ edit, t test, w save)', props.width)}</Text>
      <Text wrap="truncate" dimColor>{fit(header, props.width)}</Text>
      {hosts.map((h, i) => (
        <Box key={i} flexDirection="column">
          <Box>
            {FIELDS.map((f, j) => {
              const selected = cursor === i * FIELDS.length + j;
              const value = selected && editing !== null ? `${editing}▏` : fieldValue(h, f);
              return (
                <Text key={f} inverse={selected} wrap="truncate">{fit(value || '·', WIDTHS[f])} </Text>
              );
            })}
          </Box>
          <AliasLine view={reach[i]} width={props.width} />
          {paths[i] === undefined ? null : (
            <Text wrap="truncate" dimColor>{fit(`  ⇢ ${paths[i]}`, props.width)}</Text>
          )}
          <Text wrap="truncate" dimColor>{fit(`  ${results[h.name] ?? ''}`, props.width)}</Text>
        </Box>
      ))}
      <Text> </Text>
      <Text wrap="truncate" bold>{fit(`Network design: ${DESIGNS.map((x) => (x === design ? `[${x}]` : x)).join('  ')}   (n changes it)`, props.width)}</Text>
      {DESIGN_CONSEQUENCES[design].map((l, i) => (
        <Text key={i} wrap="truncate" dimColor>{fit(`  ${l}`, props.width)}</Text>
      ))}
      <Text> </Text>
      <Text wrap="truncate" color="yellow">{fit(message, props.width)}</Text>
    </Box>
  );
}
