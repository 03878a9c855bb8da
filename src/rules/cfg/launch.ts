/**
 * vLLM launches of a file, whatever their form — `vllm serve`, `python -m vllm.entrypoints…api_server`, or a
 * Python `LLM(...)` — in one shape for R13 and R40–R46.
 */
import type { PyCall, PyValue } from '../../parse/python-launch.js';
import type { ShellCommand } from '../../parse/shell-commands.js';
import { vllmLaunchOf } from './commands.js';
import type { Flag, VllmLaunch } from './commands.js';
import { commandsOf, G } from './context.js';
import type { CfgContext, CfgFile } from './context.js';

export interface Launch {
  form: 'serve' | 'api_server' | 'python';
  line: number;
  cmd?: ShellCommand;
  cli?: VllmLaunch;
  call?: PyCall & { model?: PyValue };
  model?: { value: string; line: number };
  tp: number;
  pp: number;
  dp: number;
  /** Line of the TP setting (flag or keyword), else the launch line. */
  tpLine: number;
  quantization?: { value: string; line: number };
  gpuMemoryUtilization: number;
  /** The launch starts or joins Ray: explicit backend, Ray flags, `ray.init`, or TP×PP beyond one node. */
  usesRay: boolean;
}

function intOf(v: string | undefined): number | undefined {
  return v !== undefined && /^\d+$/.test(v.trim()) ? Number(v.trim()) : undefined;
}

function fromCli(c: ShellCommand, cli: VllmLaunch): Launch {
  const f = (n: string): Flag | undefined => cli.get(n);
  const tp = intOf(f('--tensor-parallel-size')?.value) ?? 1;
  const pp = intOf(f('--pipeline-parallel-size')?.value) ?? 1;
  const backend = f('--distributed-executor-backend')?.value;
  const q = f('--quantization');
  const usesRay =
    backend === 'ray' ||
    !!f('--engine-use-ray') ||
    !!f('--worker-use-ray') ||
    !!f('--ray-address') ||
    (backend !== 'mp' && tp * pp > G);
  return {
    form: cli.via,
    line: c.line,
    cmd: c,
    cli,
    ...(cli.model ? { model: cli.model } : {}),
    tp,
    pp,
    dp: intOf(f('--data-parallel-size')?.value) ?? 1,
    tpLine: f('--tensor-parallel-size')?.line ?? c.line,
    ...(q?.value ? { quantization: { value: q.value, line: q.line } } : {}),
    gpuMemoryUtilization: Number(f('--gpu-memory-utilization')?.value ?? '0.9') || 0.9,
    usesRay,
  };
}

function fromPython(call: PyCall & { model?: PyValue }, rayInit: boolean): Launch {
  const num = (k: string, d: number): number => {
    const v = call.kwargs[k]?.literal;
    return typeof v === 'number' ? v : d;
  };
  const tp = num('tensor_parallel_size', 1);
  const pp = num('pipeline_parallel_size', 1);
  const backend = call.kwargs.distributed_executor_backend?.literal;
  const q = call.kwargs.quantization;
  const model =
    call.model && typeof call.model.literal === 'string'
      ? { value: call.model.literal, line: call.model.line }
      : undefined;
  return {
    form: 'python',
    line: call.line,
    call,
    ...(model ? { model } : {}),
    tp,
    pp,
    dp: num('data_parallel_size', 1),
    tpLine: call.kwLines.tensor_parallel_size ?? call.line,
    ...(q && typeof q.literal === 'string' ? { quantization: { value: q.literal, line: q.line } } : {}),
    gpuMemoryUtilization: num('gpu_memory_utilization', 0.9),
    usesRay: backend === 'ray' || rayInit || tp * pp > G,
  };
}

export function launchesOf(f: CfgFile): Launch[] {
  const out: Launch[] = [];
  for (const c of commandsOf(f)) {
    const cli = vllmLaunchOf(c);
    if (cli) out.push(fromCli(c, cli));
  }
  for (const py of f.python)
    for (const call of py.calls)
      if (call.callee.endsWith('LLM') || call.callee.endsWith('EngineArgs')) out.push(fromPython(call, !!py.rayInit));
  return out;
}

export function allLaunches(ctx: CfgContext): Array<{ file: CfgFile; l: Launch }> {
  return ctx.files.flatMap((file) => launchesOf(file).map((l) => ({ file, l })));
}
