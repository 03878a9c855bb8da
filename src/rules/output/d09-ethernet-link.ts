/**
 * D09 Ethernet link down or slower than the port supports — high (docs/RULES.md §3). Reads `ethtool <if>`:
 * `Link detected: no` (with or without a reason), `Speed: Unknown!` on a down link or a port with link modes
 * (not a virtual NIC that is up), or a `Speed:` below the best `Supported link modes` entry.
 */
import type { EthtoolFacts } from '../../parse/ethtool.js';
import type { Finding } from '../types.js';

/** The highest speed (Mb/s) among link modes like `25000baseCR/Full`. */
export function bestLinkModeMbps(modes: readonly string[] | undefined): number | undefined {
  let best: number | undefined;
  for (const m of modes ?? []) {
    const r = /^(\d+)base/i.exec(m);
    if (!r) continue;
    const n = Number(r[1]);
    if (Number.isFinite(n) && (best === undefined || n > best)) best = n;
  }
  return best;
}

function lineOf(lines: readonly string[], re: RegExp): { text: string; line: number } | undefined {
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i] ?? '';
    if (re.test(l)) return { text: l.trim(), line: i + 1 };
  }
  return undefined;
}

export function d09EthernetLink(f: EthtoolFacts, lines: readonly string[]): Finding | undefined {
  const ev: string[] = [];
  let line: number | undefined;
  const problems: string[] = [];
  const dev = f.netdev ?? '<if>';
  if (f.linkDetected === false) {
    const l = lineOf(lines, /^\s*Link detected:\s*no\b/);
    ev.push(l?.text ?? `Link detected: no${f.linkReason ? ` (${f.linkReason})` : ''}`);
    line ??= l?.line;
    problems.push(f.linkReason ? `link down (${f.linkReason})` : 'link down');
  }
  // `Speed: Unknown!` is the kernel's SPEED_UNKNOWN: a physical port reports it when its link is down, a
  // virtual NIC (virtio_net: no link modes, `Port: Other`) always, with `Link detected: yes` — not a down link.
  const speedRaw = f.fields['Speed'];
  const physical = (f.supportedLinkModes ?? []).length > 0;
  if (speedRaw !== undefined && /^Unknown/i.test(speedRaw) && (f.linkDetected === false || physical)) {
    const l = lineOf(lines, /^\s*Speed:\s*Unknown/i);
    ev.push(l?.text ?? `Speed: ${speedRaw}`);
    line ??= l?.line;
    problems.push('speed unknown');
  }
  const best = bestLinkModeMbps(f.supportedLinkModes);
  if (f.speedMbps !== undefined && best !== undefined && f.speedMbps < best && f.linkDetected !== false) {
    const l = lineOf(lines, /^\s*Speed:\s*\d/);
    const mode = (f.supportedLinkModes ?? []).find((m) => m.startsWith(`${best}base`));
    ev.push(`${l?.text ?? `Speed: ${f.speedMbps}Mb/s`} < ${best}Mb/s supported (${mode ?? `${best}base…`})`);
    line = l?.line ?? line;
    problems.push(`running at ${f.speedMbps / 1000} Gb/s of ${best / 1000} Gb/s`);
  }
  if (ev.length === 0) return undefined;
  return {
    rule: 'D09',
    severity: 'high',
    title: 'Ethernet link down or slower than the port supports',
    evidence: `${f.netdev ? `${f.netdev}: ` : ''}${ev.join('; ')}`,
    fix:
      `${dev}: ${problems.join(', ')}. Run \`ethtool ${dev}\`, \`ethtool -m ${dev}\` and \`ethtool --show-fec ${dev}\` on both ends and make them match: ` +
      `a 25G DAC/optic (not a 10G SFP+ cable), the same speed/autoneg setting on both ends (or autoneg on both), the same FEC; ` +
      `then check that the peer port is up.`,
    ...(line !== undefined ? { line } : {}),
    source: 'ethtool',
  };
}
