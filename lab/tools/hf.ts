/**
 * `hf download REPO --local-dir DIR` (huggingface_hub 0.35's `hf` console script, run by path from
 * the cluster venv) against the lab's model catalogue (model/hf-models.ts): the files land in DIR over
 * modelled time (the weights at ≈ 150 MB/s), gated repositories need a token (HF_TOKEN or the token
 * file `hf auth login` writes), unknown ids fail as the Hub answers. Error texts from
 * huggingface_hub/utils/_http.py (source-derived); the progress line as tqdm prints it.
 */
import { posix } from 'node:path';
import type { ExecResult } from 'just-bash';
import { hfModel, modelFiles } from '../model/hf-models.js';
import { entryModule } from '../model/python.js';
import { registerProgram, type ProgramInvocation } from '../shell/programs.js';
import { toolIo } from '../system/live.js';
import { rng } from '../util/prng.js';

const ENTRY = 'huggingface_hub.cli.hf';
const DOWNLOAD_BPS = 150e6;

function requestId(inv: ProgramInvocation, repo: string): string {
  const r = rng(inv.machine.seed, inv.machine.hostname, 'hf-request', repo, inv.machine.clock.now());
  return `Root=1-${r.hex(8)}-${r.hex(24)}`;
}

async function token(inv: ProgramInvocation, explicit?: string): Promise<string | undefined> {
  if (explicit) return explicit;
  const env = inv.ctx.env.get('HF_TOKEN');
  if (env) return env;
  const home = inv.ctx.env.get('HOME') ?? inv.machine.user.home;
  try {
    return (await inv.ctx.fs.readFile(posix.join(home, '.cache/huggingface/token'))).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function download(inv: ProgramInvocation, args: readonly string[]): Promise<ExecResult> {
  const io = toolIo(inv.ctx, inv.machine.clock);
  const positional: string[] = [];
  let localDir: string | undefined;
  let tok: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--local-dir') localDir = args[++i];
    else if (a.startsWith('--local-dir=')) localDir = a.slice(12);
    else if (a === '--token') tok = args[++i];
    else if (a === '--revision' || a === '--repo-type' || a === '--cache-dir') i++;
    else if (a === '--quiet') continue;
    else if (a.startsWith('-'))
      return {
        stdout: '',
        stderr: `usage: hf <command> [<args>] download [-h] ...\nhf: error: unrecognized arguments: ${a}\n`,
        exitCode: 2,
      };
    else positional.push(a);
  }
  const repo = positional[0];
  if (!repo)
    return {
      stdout: '',
      stderr:
        'usage: hf <command> [<args>] download [-h] repo_id [filenames ...]\nhf: error: the following arguments are required: repo_id\n',
      exitCode: 2,
    };
  const m = inv.machine;
  if (!m.routes.some((r) => r.dst === 'default')) {
    await io.err(
      `huggingface_hub.errors.LocalEntryNotFoundError: An error happened while trying to locate the files on the Hub and we cannot find the appropriate snapshot folder for the specified revision on the local disk. Please check your internet connection and try again.\n`,
    );
    return io.result(1);
  }
  const model = hfModel(repo);
  const url = `https://huggingface.co/api/models/${repo}/revision/main`;
  if (!model) {
    await io.err(
      `huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. (Request ID: ${requestId(inv, repo)})\n\nRepository Not Found for url: ${url}.\nPlease make sure you specified the correct \`repo_id\` and \`repo_type\`.\nIf you are trying to access a private or gated repo, make sure you are authenticated. For more details, see https://huggingface.co/docs/huggingface_hub/authentication\nInvalid username or password.\n`,
    );
    return io.result(1);
  }
  if (model.gated && !(await token(inv, tok))) {
    await io.err(
      `huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: ${requestId(inv, repo)})\n\nCannot access gated repo for url ${url}.\nAccess to model ${model.id} is restricted. You must have access to it and be authenticated to access it. Please log in.\n`,
    );
    return io.result(1);
  }
  const dir = inv.ctx.fs.resolvePath(
    inv.ctx.cwd,
    localDir ??
      posix.join(
        inv.ctx.env.get('HOME') ?? m.user.home,
        '.cache/huggingface/hub',
        `models--${model.id.replace('/', '--')}`,
        'snapshots',
        model.revision,
      ),
  );
  const files = modelFiles(model);
  try {
    await inv.ctx.fs.mkdir(posix.join(dir, '.cache/huggingface/download'), { recursive: true });
    await inv.ctx.fs.writeFile(posix.join(dir, '.cache/huggingface/.gitignore'), '*\n');
  } catch {
    await io.err(`PermissionError: [Errno 13] Permission denied: '${dir}'\n`);
    return io.result(1);
  }
  const totalS = model.totalSize / DOWNLOAD_BPS;
  let done = 0;
  for (const f of files) {
    if (!(await io.sleep((f.size / model.totalSize) * totalS * 1000))) return io.result(130);
    await inv.ctx.fs.writeFile(posix.join(dir, f.path), f.content);
    await inv.ctx.fs.writeFile(
      posix.join(dir, '.cache/huggingface/download', `${f.path}.metadata`),
      `${model.revision}\n${rng(m.seed, 'etag', model.id, f.path).hex(40)}\n${(m.clock.now() / 1000).toFixed(6)}\n`,
    );
    done++;
    const el = Math.round((done / files.length) * totalS);
    await io.err(
      `\rFetching ${files.length} files: ${String(Math.floor((100 * done) / files.length)).padStart(3)}%|${'█'.repeat(Math.floor((10 * done) / files.length)).padEnd(10)}| ${done}/${files.length} [${Math.floor(
        el / 60,
      )
        .toString()
        .padStart(
          2,
          '0',
        )}:${String(el % 60).padStart(2, '0')}<00:00, ${(totalS / files.length).toFixed(2)}s/it]${done === files.length ? '\n' : ''}`,
    );
  }
  await io.out(`${dir}\n`);
  return io.result(0);
}

registerProgram({
  name: 'hf',
  basenames: ['hf'],
  accepts: (_path, content) => entryModule(content) === ENTRY,
  run: async (inv) => {
    const [cmd, ...rest] = inv.args;
    if (cmd === 'download') return download(inv, rest);
    if (cmd === 'version') return { stdout: 'huggingface_hub version: 0.35.3\n', stderr: '', exitCode: 0 };
    return {
      stdout: '',
      stderr: `usage: hf <command> [<args>]\nhf: error: argument {auth,cache,download,jobs,repo,repo-files,upload,upload-large-folder,env,version}: invalid choice: '${cmd ?? ''}'\n`,
      exitCode: 2,
    };
  },
});
