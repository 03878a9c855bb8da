import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { collapseCarriageReturns, LineSplitter, sanitize } from '../../src/util/sanitize.js';
import { buildCommand, quoteArgv, quoteWord } from '../../src/transport/quote.js';

describe('sanitize', () => {
  it('removes OSC (title, clipboard), CSI (clear, cursor moves), C1 controls and bidi overrides', () => {
    const evil = 'a\u001b]0;pwned\u0007b\u001b]52;c;ZXZpbA==\u001b\\c\u001b[2J\u001b[3J\u001b[10;5Hd\u009b31me\u202ef\u0000g\u0007h';
    expect(sanitize(evil)).toBe('abcdefgh');
  });
  it('keeps tabs and text, collapses carriage-return progress', () => {
    expect(sanitize('x\ty')).toBe('x\ty');
    expect(collapseCarriageReturns('10%\r50%\r100%')).toBe('100%');
    expect(collapseCarriageReturns('abcdef\rXY')).toBe('XYcdef');
  });
  it('splits lines across chunks, holding the partial line', () => {
    const s = new LineSplitter();
    expect(s.push('one\ntw')).toEqual(['one']);
    expect(s.push('o\nthr')).toEqual(['two']);
    expect(s.flush()).toEqual(['thr']);
  });
});

describe('quoting', () => {
  const hostile = ["'; touch /tmp/x; '", '$(id)', '`id`', 'a b', 'new\nline', '"q"', '\\', '*', '~', '-n', '', 'ünï'];
  it('round-trips every word through a real POSIX shell unchanged', () => {
    for (const w of hostile) {
      const out = execFileSync('/bin/sh', ['-c', `printf '%s' ${quoteWord(w)}`], { encoding: 'utf8' });
      expect(out).toBe(w);
    }
  });
  it('leaves safe words bare and refuses NUL', () => {
    expect(quoteArgv(['ip', '-j', 'addr', 'show'])).toBe('ip -j addr show');
    expect(() => quoteWord('a\0b')).toThrow(/NUL/);
  });
  it('builds sudo and script lines with quoted env values', () => {
    expect(buildCommand({ argv: ['uname', '-r'] }).line).toBe('LC_ALL=C uname -r');
    const s = buildCommand({ script: 'echo hi' }, { sudo: true, env: { NCCL_DEBUG: 'INFO x' } });
    expect(s.line).toBe("sudo -n -- env LC_ALL=C NCCL_DEBUG='INFO x' bash -s --");
    expect(s.stdin).toBe('echo hi');
    expect(() => buildCommand({ argv: ['x'] }, { env: { 'A;B': '1' } })).toThrow(/invalid environment variable name/);
    const pw = buildCommand({ argv: ['id'] }, { sudo: true }, 'secret');
    expect(pw.line).not.toContain('secret');
    expect(String(pw.stdin)).toBe('secret\n');
  });
});
