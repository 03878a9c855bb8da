/**
 * Word wrapping for prose meant to be read in a terminal or as Markdown source. Widths count UTF-16 code units:
 * close enough for the rule texts, which are Latin with a few symbols (→, ≥, ×).
 */

/**
 * A line that starts with one of these would turn into a list item, heading or quote when the text is Markdown,
 * so a word that would open a continuation line this way stays on the line before.
 */
const MARKDOWN_BLOCK_START = /^(?:[-+*>#]|\d+[.)])$/;

export interface WrapOptions {
  /** Total line width, indents included. */
  width: number;
  /** Put before the first line. */
  firstIndent?: string;
  /** Put before every later line. */
  restIndent?: string;
  /** Keep continuation lines from starting with a Markdown block marker (`- `, `1. `, `# `). */
  markdown?: boolean;
}

/** Wraps one paragraph at spaces; a word longer than the width gets a line of its own, unbroken. */
export function wrapText(text: string, options: WrapOptions): string[] {
  const first = options.firstIndent ?? '';
  const rest = options.restIndent ?? '';
  const words = text.split(/\s+/).filter((w) => w !== '');
  const lines: string[] = [];
  let current = first;
  let empty = true;
  for (const word of words) {
    const fits = current.length + 1 + word.length <= options.width;
    const unsafeStart = options.markdown === true && MARKDOWN_BLOCK_START.test(word);
    if (empty || fits || unsafeStart) {
      current = empty ? current + word : `${current} ${word}`;
      empty = false;
      continue;
    }
    lines.push(current);
    current = rest + word;
  }
  lines.push(empty ? current.trimEnd() : current);
  return lines;
}
