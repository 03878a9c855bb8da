/**
 * curl 7.81 (jammy) over the lab's network, for the HTTP endpoints the stages read: vLLM's /health,
 * /v1/models (Bearer API key), /version and /metrics (Prometheus, model/vllm-load.ts: moving while a
 * bench runs), and Ray's dashboard. Connections
 * follow the network model (routes, cables, ufw) and the listening sockets; a vLLM still loading
 * has its port bound but answers nothing (the request times out), as a real one does.
 *
 * Options: -f -s -S -m -o -w (%{http_code}, %{time_total}, %{size_download}) -H (also `-H @file` and `-H @-`:
 * one header per line of a file or stdin, curl ≥ 7.55, which keeps a secret header off the argv) -X, --retry N,
 * --retry-delay S, --retry-connrefused, --retry-all-errors. Error texts from curl's lib/strerror.c
 * and lib/connect.c of 7.81 (source-derived).
 */
import { decodeBytesToUtf8, type ExecResult } from 'just-bash';
import { tcpPath } from '../model/rdma-path.js';
import { listensOn } from '../model/sockets.js';
import { vllmServer, waitServingChange, type VllmServer } from '../model/vllm-runtime.js';
import { vllmMetrics } from '../model/vllm-load.js';
import { toolIo } from '../system/live.js';
import type { Tool, ToolEnv } from './types.js';
import { VLLM_VERSION } from './vllm-serve.js';

interface Response {
  code: number;
  body: string;
  type: string;
}

type Attempt =
  { ok: true; res: Response } | { ok: false; code: number; msg: string; transient: boolean; refused?: boolean };

function vllmRoute(s: VllmServer, method: string, path: string, headers: string[]): Response {
  const json = (code: number, v: unknown): Response => ({ code, body: JSON.stringify(v), type: 'application/json' });
  const p = path.split('?')[0] ?? '/';
  if (p === '/health') return { code: 200, body: '', type: 'text/plain' };
  if (p === '/version') return json(200, { version: VLLM_VERSION });
  if (p === '/metrics')
    return { code: 200, body: vllmMetrics(s, s.machine.clock.now()), type: 'text/plain; version=0.0.4; charset=utf-8' };
  if (p.startsWith('/v1/')) {
    const auth = headers.find((h) => /^authorization:/i.test(h))?.replace(/^authorization:\s*/i, '');
    if (s.args.apiKey && auth !== `Bearer ${s.args.apiKey}`) return json(401, { error: 'Unauthorized' });
    if (p === '/v1/models' && method === 'GET') {
      const created = Math.floor((s.readyAt ?? s.startedAt) / 1000);
      return json(200, {
        object: 'list',
        data: [
          {
            id: s.args.servedName,
            object: 'model',
            created,
            owned_by: 'vllm',
            root: s.args.model,
            parent: null,
            max_model_len: s.shape.maxPos,
            permission: [
              {
                id: `modelperm-${created.toString(16)}`,
                object: 'model_permission',
                created,
                allow_create_engine: false,
                allow_sampling: true,
                allow_logprobs: true,
                allow_search_indices: false,
                allow_view: true,
                allow_fine_tuning: false,
                organization: '*',
                group: null,
                is_blocking: false,
              },
            ],
          },
        ],
      });
    }
  }
  return json(404, { detail: 'Not Found' });
}

async function attempt(
  env: ToolEnv,
  host: string,
  port: number,
  method: string,
  path: string,
  headers: string[],
  maxS: number | undefined,
): Promise<Attempt> {
  const m = env.machine;
  const ip = host === 'localhost' ? '127.0.0.1' : host;
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip))
    return { ok: false, code: 6, msg: `Could not resolve host: ${host}`, transient: true };
  const path0 = ip.startsWith('127.')
    ? { ok: true as const, machine: m, ingress: 'lo' }
    : tcpPath(env.cluster, m, ip, port);
  if (!path0.ok) {
    if (path0.reason === 'noroute')
      return {
        ok: false,
        code: 7,
        msg: `Failed to connect to ${host} port ${port} after 0 ms: Network is unreachable`,
        transient: true,
      };
    const ms = Math.min((maxS ?? 130) * 1000, path0.reason === 'unreachable' ? 3071 : 130_000);
    await m.clock.sleep(ms);
    if (path0.reason === 'unreachable' && (maxS ?? 130) * 1000 > 3071)
      return {
        ok: false,
        code: 7,
        msg: `Failed to connect to ${host} port ${port} after 3071 ms: No route to host`,
        transient: true,
      };
    return {
      ok: false,
      code: 28,
      msg:
        maxS !== undefined
          ? `Connection timed out after ${Math.round(maxS * 1000) + 1} milliseconds`
          : `Failed to connect to ${host} port ${port} after ${ms} ms: Connection timed out`,
      transient: true,
    };
  }
  const target = path0.machine;
  const s = vllmServer(target);
  if (s?.api && s.api.port === port && (s.api.host === ip || s.api.host === '0.0.0.0' || s.api.host === '::')) {
    if (s.state !== 'ready') {
      // Bound but still loading: the connection is accepted, nothing answers.
      await m.clock.sleep((maxS ?? 300) * 1000);
      return {
        ok: false,
        code: 28,
        msg: `Operation timed out after ${Math.round((maxS ?? 300) * 1000) + 1} milliseconds with 0 bytes received`,
        transient: true,
      };
    }
    return { ok: true, res: vllmRoute(s, method, path, headers) };
  }
  const sock = listensOn(target, ip, port);
  if (!sock)
    return {
      ok: false,
      code: 7,
      msg: `Failed to connect to ${host} port ${port} after 0 ms: Connection refused`,
      transient: true,
      refused: true,
    };
  if (sock.process === 'ray::dashboard')
    return {
      ok: true,
      res: {
        code: 200,
        body: '<!doctype html><html lang="en"><head><meta charset="utf-8"/><title>Ray Dashboard</title></head><body><div id="root"></div></body></html>',
        type: 'text/html',
      },
    };
  return { ok: false, code: 52, msg: 'Empty reply from server', transient: false };
}

function writeOut(fmt: string, code: number, size: number, timeS: number): string {
  return fmt
    .replace(/%\{http_code\}|%\{response_code\}/g, String(code).padStart(3, '0'))
    .replace(/%\{size_download\}/g, String(size))
    .replace(/%\{time_total\}/g, timeS.toFixed(6))
    .replace(/\\n/g, '\n')
    .replace(/\\t/g, '\t');
}

/** `-H @file`: each non-empty line of the file (`-`: stdin) is a header; undefined when it cannot be read. */
async function headerLines(env: ToolEnv, file: string): Promise<string[] | undefined> {
  let text: string;
  try {
    text =
      file === '-'
        ? decodeBytesToUtf8(env.ctx.stdin)
        : await env.ctx.fs.readFile(env.ctx.fs.resolvePath(env.ctx.cwd, file));
  } catch {
    return undefined;
  }
  return text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
}

export const curl: Tool = {
  name: 'curl',
  path: '/usr/bin/curl',
  packages: ['curl'],
  async run(args, env): Promise<ExecResult> {
    const io = toolIo(env.ctx, env.machine.clock);
    let fail = false,
      silent = false,
      showError = false,
      retryConnRefused = false,
      retryAll = false;
    let maxS: number | undefined;
    let output: string | undefined;
    let wfmt: string | undefined;
    let method = 'GET';
    let retries = 0;
    let retryDelay = 0;
    const headers: string[] = [];
    let url: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const a = args[i] as string;
      const next = (): string => args[++i] ?? '';
      if (a === '--fail' || a === '-f') fail = true;
      else if (a === '--silent' || a === '-s') silent = true;
      else if (a === '--show-error' || a === '-S') showError = true;
      else if (a === '--max-time' || a === '-m') maxS = Number(next());
      else if (a === '--output' || a === '-o') output = next();
      else if (a === '--write-out' || a === '-w') wfmt = next();
      else if (a === '--header' || a === '-H') {
        const h = next();
        if (!h.startsWith('@')) headers.push(h);
        else {
          const lines = await headerLines(env, h.slice(1));
          if (lines === undefined)
            return { stdout: '', stderr: `curl: (26) Failed to open ${h.slice(1)}\n`, exitCode: 26 };
          headers.push(...lines);
        }
      } else if (a === '--request' || a === '-X') method = next();
      else if (a === '--retry') retries = Number(next());
      else if (a === '--retry-delay') retryDelay = Number(next());
      else if (a === '--retry-connrefused') retryConnRefused = true;
      else if (a === '--retry-all-errors') retryAll = true;
      else if (/^-[fsS]+$/.test(a)) {
        fail ||= a.includes('f');
        silent ||= a.includes('s');
        showError ||= a.includes('S');
      } else if (a.startsWith('-'))
        return {
          stdout: '',
          stderr: `curl: option ${a}: is unknown\ncurl: try 'curl --help' or 'curl --manual' for more information\n`,
          exitCode: 2,
        };
      else url = a;
    }
    if (!url)
      return {
        stdout: '',
        stderr: "curl: no URL specified!\ncurl: try 'curl --help' or 'curl --manual' for more information\n",
        exitCode: 2,
      };
    const u = /^(https?):\/\/([^/:]+)(?::(\d+))?(\/.*)?$/.exec(url);
    if (!u) return { stdout: '', stderr: `curl: (3) URL using bad/illegal format or missing URL\n`, exitCode: 3 };
    const port = Number(u[3] ?? (u[1] === 'https' ? 443 : 80));
    const started = env.machine.clock.now();
    let result: Attempt | undefined;
    for (let left = retries; ; left--) {
      result = await attempt(env, u[2]!, port, method, u[4] ?? '/', headers, maxS);
      const httpFail = result.ok && fail && result.res.code >= 400;
      const retryable = !result.ok
        ? result.refused
          ? retryConnRefused || retryAll
          : result.transient || retryAll
        : httpFail && (retryAll || result.res.code >= 500);
      if (!retryable || left <= 0) break;
      if (!silent)
        await io.err(
          `Warning: Problem : ${result.ok ? `HTTP error` : result.refused ? 'connection refused' : 'timeout'}. Will retry in ${retryDelay || 1} seconds. ${left} retries left.\n`,
        );
      if (!(await io.sleep((retryDelay || 1) * 1000))) break;
      // Lets a server that is starting make progress even when modelled time does not flow (speed max).
      await waitServingChange(io.signal, 20);
    }
    const elapsed = (env.machine.clock.now() - started) / 1000;
    if (!result!.ok) {
      const r = result as Extract<Attempt, { ok: false }>;
      if (wfmt) await io.out(writeOut(wfmt, 0, 0, elapsed));
      if (!silent || showError) await io.err(`curl: (${r.code}) ${r.msg}\n`);
      return io.result(r.code);
    }
    const res = result!.res;
    if (fail && res.code >= 400) {
      if (wfmt) await io.out(writeOut(wfmt, res.code, 0, elapsed));
      if (!silent || showError) await io.err(`curl: (22) The requested URL returned error: ${res.code}\n`);
      return io.result(22);
    }
    if (output && output !== '/dev/null') {
      try {
        await env.ctx.fs.writeFile(env.ctx.fs.resolvePath(env.ctx.cwd, output), res.body);
      } catch {
        await io.err(`curl: (23) Failure writing output to destination\n`);
        return io.result(23);
      }
    } else if (!output) await io.out(res.body);
    if (!silent && output) {
      const n = res.body.length;
      await io.err(
        `  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n${'100'.padStart(3)} ${String(n).padStart(5)}  100 ${String(n).padStart(5)}    0     0  ${String(n * 100).padStart(5)}      0 --:--:-- --:--:-- --:--:-- ${String(n * 100).padStart(5)}\n`,
      );
    }
    if (wfmt) await io.out(writeOut(wfmt, res.code, res.body.length, elapsed));
    return io.result(0);
  },
};
