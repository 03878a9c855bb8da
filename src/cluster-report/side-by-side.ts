/**
 * Two hosts' versions of one configuration as aligned rows: equal lines side by side, a changed line
 * opposite its counterpart, a line only one host has opposite a gap. Both the Markdown and the HTML
 * report render these rows; `same: false` is what they mark.
 */
import { diffArrays } from 'diff';

export interface SideRow {
  left?: string;
  right?: string;
  same: boolean;
}

export interface ConfigSection {
  /** `nccl.conf`, `netplan`, `QoS port 1`, `versions`. */
  title: string;
  /** What each side is (`l20-n1: mlnx_qos -i ens1f0`). */
  leftLabel: string;
  rightLabel: string;
  rows: SideRow[];
  differs: boolean;
}

function lines(text: string): string[] {
  const t = text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  return t === '' ? [] : t.split('\n');
}

export function sideBySide(left: string, right: string): SideRow[] {
  const rows: SideRow[] = [];
  const parts = diffArrays(lines(left), lines(right));
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (!p.added && !p.removed) {
      for (const l of p.value) rows.push({ left: l, right: l, same: true });
      continue;
    }
    // A removal followed by an addition is one change: pair its lines up opposite each other.
    const next = parts[i + 1];
    if (p.removed && next?.added) {
      const n = Math.max(p.value.length, next.value.length);
      for (let k = 0; k < n; k++) {
        rows.push({
          ...(k < p.value.length ? { left: p.value[k]! } : {}),
          ...(k < next.value.length ? { right: next.value[k]! } : {}),
          same: false,
        });
      }
      i++;
      continue;
    }
    for (const l of p.value) rows.push(p.removed ? { left: l, same: false } : { right: l, same: false });
  }
  return rows;
}

export function section(
  title: string,
  leftLabel: string,
  rightLabel: string,
  left: string,
  right: string,
): ConfigSection {
  const rows = sideBySide(left, right);
  return { title, leftLabel, rightLabel, rows, differs: rows.some((r) => !r.same) };
}
