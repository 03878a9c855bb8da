// The TUI as `l20-setup check`'s interactive form runs it (runInteractiveOn: the same session, store, App, Ink
// settings, SSH transport and session log), over an inventory, offering one stage whose only probe prints N lines
// on every host. bench/stream.mjs starts this in a pseudo-terminal and drives it with keys (r runs the stage, q quits).
// Usage: node bench/lib/stream-tui.mjs INVENTORY LINES [--keep-default]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const [inventory, linesArg, keep] = process.argv.slice(2);
const keepDefault = keep === '--keep-default';
const lines = Number(linesArg);
if (!inventory || !Number.isInteger(lines) || lines < 1) {
  process.stderr.write('usage: node bench/lib/stream-tui.mjs INVENTORY LINES\n');
  process.exit(2);
}

const { openTarget } = await import(join(root, 'dist/src/target.js'));
const { runInteractiveOn } = await import(join(root, 'dist/src/commands/interactive.js'));

/** The stream as a read-only probe of the first stage slot; one host check says whether it ran to the end. */
function streamStage(n) {
  return {
    id: 'inventory',
    title: `stream: seq 1 ${n} on every host`,
    purpose: `bench/stream.mjs: one probe prints ${n.toLocaleString('en-US')} lines on every host, shown live in the panes`,
    // collect reads only the last line: a 64 KiB tail is all it keeps (ProbeDef.keepOutputBytes), unless the
    // bench asks for the transport's default to show what that costs.
    probes: [
      {
        id: 'stream',
        command: { argv: ['seq', '1', String(n)] },
        timeoutMs: 600_000,
        ...(keepDefault ? {} : { keepOutputBytes: 64 * 1024 }),
      },
    ],
    collect: ({ results }) => {
      const r = results.stream;
      const out = (r?.stdout ?? '').trimEnd();
      const tail = out.slice(out.lastIndexOf('\n') + 1);
      return { exitCode: r?.exitCode ?? null, last: tail };
    },
    checks: [
      {
        id: 'inventory.stream',
        title: 'the stream ran to its last line',
        scope: 'host',
        evaluate: (f) => ({
          status: f.exitCode === 0 && f.last === String(n) ? 'pass' : 'fail',
          summary: `exit ${f.exitCode}, last line ${f.last}`,
          evidence: `seq 1 ${n}: exit ${f.exitCode}, last line "${f.last}"`,
        }),
      },
    ],
  };
}

const target = await openTarget({ inventory });
const code = await runInteractiveOn(target, { screen: 'pipeline', stages: [streamStage(lines)] });
process.exit(code);
