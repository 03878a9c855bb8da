import { describe, expect, it } from 'vitest';
import { readsStdin } from '../../lab/server.js';
import { buildCommand } from '../../src/transport/quote.js';

describe('lab: which commands wait for stdin to end', () => {
  it('scripts, sudo passwords and file content on stdin wait for EOF', () => {
    expect(readsStdin('LC_ALL=C bash -s --')).toBe(true);
    expect(readsStdin('sudo -n -- env LC_ALL=C bash -s -- a b')).toBe(true);
    expect(readsStdin("sudo -k -S -p '' -- env LC_ALL=C id")).toBe(true);
    expect(readsStdin('sudo -n -- install -m 644 -- /dev/stdin /etc/x')).toBe(true);
    expect(readsStdin('dd of=/etc/x.tmp conv=fsync status=none')).toBe(true);
  });
  it("sees the same through the transport's sudo wrapper (src/transport/quote.ts)", () => {
    expect(readsStdin(buildCommand({ script: 'true' }, { sudo: true }).line)).toBe(true);
    expect(readsStdin(buildCommand({ argv: ['id'] }, { sudo: true }, 'pw').line)).toBe(true);
    expect(readsStdin(buildCommand({ argv: ['dd', 'of=/etc/x.tmp', 'status=none'] }, { sudo: true }).line)).toBe(true);
    expect(readsStdin(buildCommand({ argv: ['uname', '-r'] }, { sudo: true }).line)).toBe(false);
  });
  it('ordinary commands run without waiting', () => {
    expect(readsStdin('LC_ALL=C uname -r')).toBe(false);
    expect(readsStdin('LC_ALL=C lspci -D -nn -d 15b3:')).toBe(false);
    expect(readsStdin('echo bash-s')).toBe(false);
  });
});
