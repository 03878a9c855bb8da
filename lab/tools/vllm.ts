/**
 * The `vllm` CLI (console script `vllm.entrypoints.cli.main`, run by path: /opt/l20/venv/bin/vllm):
 * `--version`, `serve` (in the foreground until interrupted; `--help=all`), `bench serve`; and
 * `vllm serve` as a systemd service program, so l20-vllm.service runs the same model. Behaviour is in
 * vllm-serve.ts and vllm-bench.ts.
 */
import type { ExecResult } from 'just-bash';
import { entryModule, pythonEnvOf, shebangInterpreter, SYSTEM_PYTHON } from '../model/python.js';
import { registerProgram, type ProgramInvocation } from '../shell/programs.js';
import { toolIo } from '../system/live.js';
import { registerServiceProgram } from '../system/systemd/programs.js';
import { benchServe } from './vllm-bench.js';
import { serveHelp } from './vllm-args.js';
import { runServe } from './vllm-serve.js';

const ENTRY = 'vllm.entrypoints.cli.main';
const MAIN_USAGE = 'usage: vllm [-h] [-v] {chat,complete,serve,bench,collect-env,run-batch} ...\n';

async function vllmCli(inv: ProgramInvocation): Promise<ExecResult> {
  const m = inv.machine;
  const py = await pythonEnvOf(
    inv.ctx.fs,
    shebangInterpreter(inv.content) ?? SYSTEM_PYTHON,
    inv.ctx.env.get('HOME') ?? m.user.home,
    inv.root,
  );
  const version = py.dists.get('vllm');
  if (!version)
    return {
      stdout: '',
      stderr: `Traceback (most recent call last):\n  File "${inv.path}", line 5, in <module>\n    from vllm.entrypoints.cli.main import main\nModuleNotFoundError: No module named 'vllm'\n`,
      exitCode: 1,
    };
  const [cmd, ...rest] = inv.args;
  if (cmd === '--version' || cmd === '-v') return { stdout: `${version}\n`, stderr: '', exitCode: 0 };
  if (cmd === 'bench' && rest[0] === 'serve') return benchServe(inv, rest.slice(1));
  if (cmd === 'serve') {
    if (rest.some((a) => a === '-h' || a === '--help' || a.startsWith('--help=')))
      return { stdout: serveHelp(), stderr: '', exitCode: 0 };
    const io = toolIo(inv.ctx, m.clock);
    const uid = inv.root ? 0 : m.user.uid;
    const main = m.system.processes.spawn({ argv: [inv.path, ...inv.args], uid, comm: 'vllm' });
    const ac = new AbortController();
    io.signal?.addEventListener('abort', () => ac.abort(), { once: true });
    const spawned: number[] = [];
    try {
      const code = await runServe(
        {
          machine: m,
          cluster: inv.cluster,
          uid,
          env: Object.fromEntries(inv.ctx.env),
          main,
          out: io.out,
          err: io.err,
          sleep: io.sleep,
          signal: ac.signal,
          spawn: (argv, comm) => {
            const p = m.system.processes.spawn({ argv, uid, ppid: main.pid, comm });
            spawned.push(p.pid);
            return p;
          },
          readFile: (path) => inv.ctx.fs.readFile(path).catch(() => undefined),
        },
        rest,
      );
      return io.result(code);
    } finally {
      for (const pid of spawned) m.system.processes.exit(pid, { code: 0, signal: null });
      m.system.processes.exit(main.pid, { code: 0, signal: null });
    }
  }
  if (cmd === undefined || cmd === '-h' || cmd === '--help')
    return { stdout: `${MAIN_USAGE}\nvLLM CLI\n`, stderr: '', exitCode: 0 };
  return {
    stdout: '',
    stderr: `${MAIN_USAGE}vllm: error: argument subparser: invalid choice: '${cmd}' (choose from 'chat', 'complete', 'serve', 'bench', 'collect-env', 'run-batch')\n`,
    exitCode: 2,
  };
}

registerProgram({
  name: 'vllm',
  basenames: ['vllm'],
  accepts: (_path, content) => entryModule(content) === ENTRY,
  run: vllmCli,
});

registerServiceProgram({
  name: 'vllm-serve',
  matches: (argv) => /\/vllm$/.test(argv[0] ?? '') && argv[1] === 'serve',
  async run(ctx) {
    const m = ctx.machine;
    const path = ctx.argv[0] as string;
    let content: string | undefined;
    try {
      content = await m.system.readFile(path);
    } catch {
      content = undefined;
    }
    if (content === undefined || !ctx.cluster) {
      m.system.journal.add({
        at: m.clock.now(),
        boot: m.system.boot.count,
        ident: 'systemd',
        pid: 1,
        unit: ctx.unit,
        message: `${ctx.unit}: Failed to locate executable ${path}: No such file or directory`,
      });
      m.system.journal.add({
        at: m.clock.now(),
        boot: m.system.boot.count,
        ident: 'systemd',
        pid: 1,
        unit: ctx.unit,
        message: `${ctx.unit}: Failed at step EXEC spawning ${path}: No such file or directory`,
      });
      return 203;
    }
    // systemd (root) resolves the unit's program and its environment.
    const py = await pythonEnvOf(
      m.system.shell.fsAs(0),
      shebangInterpreter(content) ?? SYSTEM_PYTHON,
      ctx.env.HOME ?? m.user.home,
      ctx.uid === 0,
    );
    if (!py.dists.get('vllm')) {
      await ctx.err(
        `Traceback (most recent call last):\n  File "${path}", line 5, in <module>\n    from vllm.entrypoints.cli.main import main\nModuleNotFoundError: No module named 'vllm'\n`,
      );
      return 1;
    }
    const uid = ctx.uid;
    ctx.ready();
    return runServe(
      {
        machine: m,
        cluster: ctx.cluster,
        uid,
        env: ctx.env,
        main: ctx.main,
        out: ctx.out,
        err: ctx.err,
        sleep: ctx.sleep,
        signal: ctx.signal,
        spawn: (argv, comm) => ctx.spawn(argv, { comm }),
        readFile: (p) =>
          m.system.shell
            .fsAs(uid)
            .readFile(p)
            .catch(() => undefined),
      },
      ctx.argv.slice(2),
    );
  },
});
