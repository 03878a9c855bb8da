/** OpenSSH's wildcard matching (match.c), shared by ssh_config `Host` patterns and known_hosts. */

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
