/**
 * The setup screen's draft: the hosts being entered, the field under the cursor, the text of the field
 * being edited, the network design, and what testing and saving said. It lives in the one store (not in
 * the view) so that the one key handler edits it: keys typed or pasted faster than a render all land.
 * Validation and saving happen in the session (schema errors name the field).
 */
import type { ClusterConfig, HostConfig } from '../../src/config/schema.js';

export type Field = 'name' | 'address' | 'port' | 'user' | 'role' | 'identityFile';
export const FIELDS: readonly Field[] = ['name', 'address', 'port', 'user', 'role', 'identityFile'];

export type Design = ClusterConfig['network']['design'];
export const DESIGNS: readonly Design[] = ['A', 'B', 'tutorial'];

export interface SetupDraft {
  hosts: HostConfig[];
  /** The selected field: host row × FIELDS.length + field column. */
  cursor: number;
  /** The text of the field being edited; null while none is. */
  editing: string | null;
  design: Design;
  /** The latest connection test's line per host name. */
  results: Record<string, string>;
  message: string;
}

export type SetupAction =
  | { type: 'setup.move'; delta: number }
  | { type: 'setup.startEdit' }
  | { type: 'setup.insert'; text: string }
  | { type: 'setup.deleteBack' }
  | { type: 'setup.commit' }
  | { type: 'setup.undo' }
  | { type: 'setup.add' }
  | { type: 'setup.remove' }
  | { type: 'setup.design' }
  | { type: 'setup.result'; host: string; text: string }
  | { type: 'setup.message'; text: string };

const PLACEHOLDERS: HostConfig[] = [
  { name: 'l20-n1', address: '', role: 'head' },
  { name: 'l20-n2', address: '', role: 'worker' },
];

export function initialDraft(hosts: readonly HostConfig[] = [], design: Design = 'A'): SetupDraft {
  return {
    hosts: hosts.length > 0 ? [...hosts] : PLACEHOLDERS,
    cursor: 0,
    editing: null,
    design,
    results: {},
    message: 'Enter each server: a name, its address (or ~/.ssh/config alias), SSH user and key.',
  };
}

export function fieldValue(h: HostConfig, f: Field): string {
  switch (f) {
    case 'port':
      return h.port === undefined ? '' : String(h.port);
    case 'identityFile':
      return h.auth?.method === 'identityFile' ? h.auth.path : h.auth?.method === 'agent' ? '(ssh-agent)' : '';
    case 'user':
      return h.user ?? '';
    default:
      return String(h[f]);
  }
}

function withField(h: HostConfig, f: Field, value: string): HostConfig {
  const v = value.trim();
  switch (f) {
    case 'port':
      return v === '' ? { ...h, port: undefined } : { ...h, port: Number(v) };
    case 'role':
      return { ...h, role: v === 'head' ? 'head' : 'worker' };
    case 'user':
      return v === '' ? { ...h, user: undefined } : { ...h, user: v };
    case 'identityFile':
      return v === '' || v === '(ssh-agent)'
        ? { ...h, auth: { method: 'agent' } }
        : { ...h, auth: { method: 'identityFile', path: v } };
    default:
      return { ...h, [f]: v };
  }
}

/** Text a field takes from the keyboard or a paste: printable characters only (a line break or a tab is none). */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, '');
}

export function reduceSetup(d: SetupDraft, a: SetupAction): SetupDraft {
  const last = d.hosts.length * FIELDS.length - 1;
  const row = Math.floor(d.cursor / FIELDS.length);
  const field = FIELDS[d.cursor % FIELDS.length] as Field;
  switch (a.type) {
    case 'setup.move':
      return d.editing !== null ? d : { ...d, cursor: Math.max(0, Math.min(last, d.cursor + a.delta)) };
    case 'setup.startEdit': {
      const h = d.hosts[row];
      return h && d.editing === null ? { ...d, editing: fieldValue(h, field) } : d;
    }
    case 'setup.insert': {
      const text = printable(a.text);
      return d.editing === null || text === '' ? d : { ...d, editing: d.editing + text };
    }
    case 'setup.deleteBack':
      return d.editing === null || d.editing === '' ? d : { ...d, editing: [...d.editing].slice(0, -1).join('') };
    case 'setup.commit': {
      const text = d.editing;
      if (text === null) return d;
      return { ...d, editing: null, hosts: d.hosts.map((h, i) => (i === row ? withField(h, field, text) : h)) };
    }
    case 'setup.undo':
      return d.editing === null ? d : { ...d, editing: null };
    case 'setup.add':
      return { ...d, hosts: [...d.hosts, { name: `l20-n${d.hosts.length + 1}`, address: '', role: 'worker' }] };
    case 'setup.remove':
      return d.hosts.length > 1 ? { ...d, hosts: d.hosts.filter((_, i) => i !== row), cursor: 0 } : d;
    case 'setup.design':
      return d.editing !== null ? d : { ...d, design: DESIGNS[(DESIGNS.indexOf(d.design) + 1) % DESIGNS.length]! };
    case 'setup.result':
      return { ...d, results: { ...d.results, [a.host]: a.text } };
    case 'setup.message':
      return { ...d, message: a.text };
    default: {
      const unreachable: never = a;
      throw new Error(`unknown setup action ${JSON.stringify(unreachable)}`);
    }
  }
}
