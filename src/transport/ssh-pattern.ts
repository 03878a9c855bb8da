/** OpenSSH's wildcard matching (match.c), shared by ssh_config `Host` and `Match` patterns and known_hosts. */

/** OpenSSH's match_pattern: `*` any run, `?` one character, everything else literal. */
export function matchPattern(text: string, pattern: string): boolean {
  // Iterative wildcard match with backtracking on the last `*`.
  let t = 0;
  let p = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const pc = pattern[p];
    if (pc === '*') {
      starP = p++;
      starT = t;
    } else if (pc !== undefined && (pc === '?' || pc === text[t])) {
      p++;
      t++;
    } else if (starP !== -1) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * OpenSSH's match_pattern_list: comma-separated patterns, `!` negates; a negated match is -1 (a veto), a
 * positive one 1, none 0. `lower` lower-cases the patterns (the caller lower-cases the text).
 */
export function matchPatternList(text: string, list: string, lower: boolean): -1 | 0 | 1 {
  let positive = false;
  for (const raw of list.split(',')) {
    const negated = raw.startsWith('!');
    let pattern = negated ? raw.slice(1) : raw;
    if (lower) pattern = pattern.toLowerCase();
    if (matchPattern(text, pattern)) {
      if (negated) return -1;
      positive = true;
    }
  }
  return positive ? 1 : 0;
}
