/**
 * First-run setup: enter and edit hosts, test each connection, save. The draft is local to this
 * screen until saved; validation and saving happen in the controller (schema errors name the field).
 */
import React, { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import type { HostConfig } from '../../src/config/schema.js';
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

export function SetupView(props: { width: number; height: number; onDone: () => void }) {
  const controller = useController();
  const [hosts, setHosts] = useState<HostConfig[]>(() =>
    controller.initialHosts.length > 0 ? controller.initialHosts : [
      { name: 'l20-n1', address: '', role: 'head' },
      { name: 'l20-n2', address: '', role: 'worker' },
    ],
  );
  const [cursor, setCursor] = useState(0);
  const [editing, setEditing] = useState<string | null>(null);
  const [results, setResults] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('Enter each server: a name, its address (or ~/.ssh/config alias), SSH user and key.');
  const row = Math.floor(cursor / FIELDS.length);
  const field = FIELDS[cursor % FIELDS.length] as Field;

  useInput((input, key) => {
    if (editing !== null) {
      if (key.return) {
        setHosts((hs) => hs.map((h, i) => (i === row ? withField(h, field, editing) : h)));
        setEditing(null);
      } else if (key.escape) setEditing(null);
      else if (key.backspace || key.delete) setEditing((e) => (e ?? '').slice(0, -1));
      else if (input && !key.ctrl && !key.meta) setEditing((e) => `${e ?? ''}${input}`);
      return;
    }
    const b = setupBindings.find((x) => matches(x, input, key));
    if (!b) return;
    switch (b.command) {
      case 'up': setCursor((c) => Math.max(0, c - FIELDS.length)); break;
      case 'down': setCursor((c) => Math.min(hosts.length * FIELDS.length - 1, c + FIELDS.length)); break;
      case 'edit': {
        const h = hosts[row];
        if (h) setEditing(fieldValue(h, field));
        break;
      }
      case 'add':
        setHosts((hs) => [...hs, { name: `l20-n${hs.length + 1}`, address: '', role: 'worker' }]);
        break;
      case 'delete':
        if (hosts.length > 1) {
          setHosts((hs) => hs.filter((_, i) => i !== row));
          setCursor(0);
        }
        break;
      case 'test':
        setMessage('testing connections…');
        void Promise.all(
          hosts.map(async (h) => {
            const r = await controller.testConnection(h);
            setResults((prev) => ({ ...prev, [h.name]: `${r.ok ? '✔' : '✘'} ${r.message}` }));
          }),
        ).then(() => setMessage('connection tests finished'));
        break;
      case 'save':
        void controller.saveHosts(hosts).then((err) => {
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

  // ←/→ move between fields of a row (not in the binding table: they are navigation within the grid).
  useInput((_input, key) => {
    if (editing !== null) return;
    if (key.leftArrow) setCursor((c) => Math.max(0, c - 1));
    if (key.rightArrow) setCursor((c) => Math.min(hosts.length * FIELDS.length - 1, c + 1));
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
          <Text wrap="truncate" dimColor>{fit(`  ${results[h.name] ?? ''}`, props.width)}</Text>
        </Box>
      ))}
      <Text> </Text>
      <Text wrap="truncate" color="yellow">{fit(message, props.width)}</Text>
    </Box>
  );
}
