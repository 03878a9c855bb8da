/** `netplan status` output: what netplan and its backend made of the configuration, per interface. */
import type { KindDef } from '../types.js';
import { parseNetplanStatus, type NetplanStatusFacts } from '../../parse/netplan-status.js';

const HEADER = /^\s*●\s*\d+:\s+\S+\s+\S+\s+\S+/m;

export const netplanStatusKind: KindDef<NetplanStatusFacts> = {
  kind: 'netplan-status',
  detect(text) {
    if (!text.includes('●') || !HEADER.test(text)) return 0;
    const global = /^\s*Online state:\s/m.test(text);
    const fields = /^\s*(MAC Address|Addresses|Routes):\s/m.test(text);
    return global && fields ? 0.95 : global || fields ? 0.75 : 0;
  },
  parse: parseNetplanStatus,
  findings: () => [],
  summary(f) {
    const down = f.interfaces.filter((i) => !i.up);
    return [
      ...(f.onlineState ? ([['online state', f.onlineState]] as Array<[string, string]>) : []),
      [
        'interfaces',
        `${f.interfaces.length}: ${f.interfaces.length - down.length} up${down.length ? `, down: ${down.map((i) => i.name).join(' ')}` : ''}`,
      ],
      ...f.interfaces
        .filter((i) => i.addresses.length > 0)
        .slice(0, 6)
        .map((i): [string, string] => [i.name, `${i.type} ${i.state} ${i.addresses.join(' ')}`]),
      ...(f.hiddenInactive
        ? ([['hidden', `${f.hiddenInactive} inactive (netplan status --all shows them)`]] as Array<[string, string]>)
        : []),
    ];
  },
};
