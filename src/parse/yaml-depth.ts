/**
 * A bound on YAML nesting, checked before a parser sees the text. The yaml library composes nested
 * collections recursively: 1000 levels already end in "Maximum call stack size exceeded", reported as if it
 * were a syntax error. Netplan files and inventories nest under ten levels, so past MAX_YAML_DEPTH the text is
 * refused with a message that says so. The scan is linear and never recurses: block nesting is the stack of
 * indentations (plus `- ` sequence markers on a line), flow nesting the open `[` and `{` outside quotes.
 */
export const MAX_YAML_DEPTH = 64;

/** The first line whose nesting passes `max` levels, or undefined when the text stays within it. */
export function yamlTooDeepAt(text: string, max = MAX_YAML_DEPTH): number | undefined {
  const indents: number[] = [];
  let flow = 0;
  let lineNo = 0;
  for (const raw of text.split('\n')) {
    lineNo++;
    const body = raw.trimStart();
    if (body === '' || body.startsWith('#')) continue;
    if (flow === 0) {
      const indent = raw.length - body.length;
      while (indents.length > 0 && (indents[indents.length - 1] ?? 0) >= indent) indents.pop();
      indents.push(indent);
      const dashes = /^(?:-[ \t]+)+/.exec(body)?.[0].replace(/\s/g, '').length ?? 0;
      if (indents.length + dashes > max) return lineNo;
    }
    let quote = '';
    for (let i = 0; i < body.length; i++) {
      const ch = body[i];
      if (quote !== '') {
        if (ch === quote) quote = '';
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (ch === '#' && (i === 0 || body[i - 1] === ' ' || body[i - 1] === '\t')) break;
      else if (ch === '[' || ch === '{') {
        flow++;
        if (indents.length + flow > max) return lineNo;
      } else if ((ch === ']' || ch === '}') && flow > 0) flow--;
    }
  }
  return undefined;
}

/** The message for text refused by yamlTooDeepAt. */
export function yamlTooDeepMessage(line: number, max = MAX_YAML_DEPTH): string {
  return `nested more than ${max} levels deep at line ${line}; refusing to parse (real files nest under ten)`;
}
