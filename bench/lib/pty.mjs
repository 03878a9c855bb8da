// node-pty for the benches that drive the TUI in a real pseudo-terminal. It has no prebuilt binary for
// Linux: npm compiles it at install (python3, make, g++). Say how to get it instead of a bare stack trace.
let pty;
try {
  pty = (await import('node-pty')).default;
} catch (err) {
  process.stderr.write(
    `this bench needs node-pty's native module, which did not load (${err instanceof Error ? err.message.split('\n')[0] : err}).\n` +
      'Build it: `npm rebuild node-pty` (needs python3, make and g++; with npm 11 first `npm install-scripts approve node-pty`).\n',
  );
  process.exit(2);
}
export default pty;
