/**
 * Rows whose text changes on every update (a pane's live output, its line count), formatted for LiveRows:
 * each exactly `width` terminal columns, styled with SGR codes of their own. Pure, no React.
 */

/** Characters two columns wide (East Asian wide and fullwidth, emoji), as Ink's grid counts them. */
const WIDE =
  /[\u1100-\u115f\u231a\u231b\u2329\u232a\u23e9-\u23ec\u23f0\u23f3\u25fd\u25fe\u2614\u2615\u2648-\u2653\u267f\u2693\u26a1\u26aa\u26ab\u26bd\u26be\u26c4\u26c5\u26ce\u26d4\u26ea\u26f2\u26f3\u26f5\u26fa\u26fd\u2705\u270a\u270b\u2728\u274c\u274e\u2753-\u2755\u2757\u2795-\u2797\u27b0\u27bf\u2b1b\u2b1c\u2b50\u2b55\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{16fe4}\u{17000}-\u{18cff}\u{1b000}-\u{1b2ff}\u{1f004}\u{1f0cf}\u{1f18e}\u{1f191}-\u{1f19a}\u{1f200}-\u{1f251}\u{1f300}-\u{1f64f}\u{1f680}-\u{1f6ff}\u{1f7e0}-\u{1f7eb}\u{1f90c}-\u{1f9ff}\u{1fa70}-\u{1faff}\u{20000}-\u{3fffd}]/u;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * `text` cut or padded to exactly `width` columns (an ellipsis marks a cut). Counts as Ink's output grid does:
 * one column per character, two for wide ones, so the pane's border stays where the layout put it.
 */
export function fitColumns(text: string, width: number): string {
  if (width <= 0) return '';
  if (PRINTABLE_ASCII.test(text)) {
    return text.length <= width ? text + ' '.repeat(width - text.length) : `${text.slice(0, width - 1)}…`;
  }
  const chars = Array.from(text);
  const widths = chars.map((c) => (WIDE.test(c) ? 2 : 1));
  const total = widths.reduce((a, b) => a + b, 0);
  if (total <= width) return text + ' '.repeat(width - total);
  let out = '';
  let used = 0;
  for (let i = 0; i < chars.length; i++) {
    if (used + (widths[i] as number) > width - 1) break;
    out += chars[i];
    used += widths[i] as number;
  }
  return `${out}…${' '.repeat(width - 1 - used)}`;
}

export interface Style {
  dim?: boolean;
  yellow?: boolean;
}

/** SGR codes around `text` (none when the terminal gets no colour). */
export function styled(text: string, style: Style, color: boolean): string {
  if (!color) return text;
  let s = text;
  if (style.yellow) s = `\u001b[33m${s}\u001b[39m`;
  if (style.dim) s = `\u001b[2m${s}\u001b[22m`;
  return s;
}

/** One output line of a pane: the probe's tag (dim), a bar, the line (yellow for stderr); `width` columns in all. */
export function outputRow(
  line: { text: string; stderr: boolean; probe: string },
  width: number,
  tagWidth: number,
  color: boolean,
): string {
  const tag = styled(`${fitColumns(line.probe, tagWidth)}│`, { dim: true }, color);
  return (
    tag +
    styled(
      fitColumns(line.text.replace(/\t/g, '  '), Math.max(0, width - tagWidth - 1)),
      { yellow: line.stderr },
      color,
    )
  );
}

/**
 * Whether rows carry colour: as Ink's own colours decide (chalk: FORCE_COLOR first, then a terminal that is
 * not dumb), and never with NO_COLOR, which the CLI documents.
 */
export function colorWanted(
  env: NodeJS.ProcessEnv = process.env,
  isTTY: boolean = process.stdout.isTTY === true,
): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== 'false' && env.FORCE_COLOR !== '0';
  return isTTY && env.TERM !== 'dumb';
}
