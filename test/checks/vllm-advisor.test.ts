import { describe, expect, it } from 'vitest';
import { adviseLayout, describeLayout, type AdvisorInput } from '../../checks/vllm/advisor.js';
import { knownModel, modelShapeFromFiles, type ModelShape } from '../../checks/vllm/catalog.js';

const L20: Omit<AdvisorInput, 'model'> = { gpusPerNode: 8, nodes: 2, memoryMiB: 46068, p2pOk: true };
const model = (id: string): ModelShape => knownModel(id)!;

describe('layout advisor (docs/STAGES.md §3.11)', () => {
  it('serves an 8B model with data parallelism over all 16 GPUs, without Ray', () => {
    const a = adviseLayout({ ...L20, model: model('Qwen/Qwen2.5-7B-Instruct') });
    expect(a.ok && a.kind).toBe('dp');
    if (!a.ok) return;
    expect(a.layout).toEqual({ tp: 1, pp: 1, dp: 16, dpLocal: 8, backend: 'mp' });
    expect(a.usesRay).toBe(false);
    expect(describeLayout(a.layout)).toBe('DP 16 (TP 1, 8 engines per node)');
    // The arithmetic is shown: U = 0.9 × 46068 MiB, W from the weights, the 0.75 U threshold.
    expect(a.lines.join('\n')).toContain('U = 0.9 × 46,068 MiB = 41,461 MiB (40.49 GiB)');
    expect(a.lines.join('\n')).toContain('W = 15,231,233,024 B = 14.19 GiB');
    expect(a.lines.join('\n')).toMatch(/1\. W 14\.19 GiB ≤ 0\.75 U 30\.37 GiB/);
  });

  it('Llama 3.1 8B is DP 16 too; one node gives DP 8', () => {
    const a = adviseLayout({ ...L20, model: model('meta-llama/Llama-3.1-8B-Instruct') });
    expect(a.ok && a.layout).toEqual({ tp: 1, pp: 1, dp: 16, dpLocal: 8, backend: 'mp' });
    const one = adviseLayout({ ...L20, nodes: 1, model: model('meta-llama/Llama-3.1-8B-Instruct') });
    expect(one.ok && one.layout).toEqual({ tp: 1, pp: 1, dp: 8, dpLocal: 8, backend: 'mp' });
  });

  it('70B BF16 needs TP 8 inside a node (TP 4 leaves under 25 % for the KV cache), one replica per node', () => {
    const a = adviseLayout({ ...L20, model: model('meta-llama/Llama-3.1-70B-Instruct') });
    expect(a.ok && a.kind).toBe('tp');
    if (!a.ok) return;
    expect(a.layout).toEqual({ tp: 8, pp: 1, dp: 2, dpLocal: 1, backend: 'mp' });
    const text = a.lines.join('\n');
    expect(text).toContain('TP 2: W/2 = 65.71 GiB > 30.37 GiB ✗');
    expect(text).toContain('TP 4: W/4 = 32.85 GiB > 30.37 GiB ✗');
    expect(text).toContain('TP 8: W/8 = 16.43 GiB ≤ 30.37 GiB ✓ (64 heads / 8 = 8)');
    expect(a.notes.join('\n')).toContain('custom all-reduce');
  });

  it('70B on GPUs with more memory takes TP 4', () => {
    const a = adviseLayout({ ...L20, memoryMiB: 81559, model: model('meta-llama/Llama-3.1-70B-Instruct') });
    expect(a.ok && a.layout).toMatchObject({ tp: 4, dp: 4, dpLocal: 2 });
  });

  it('refuses DeepSeek-V3 on 16 × 48 GB (R43), with the numbers', () => {
    const a = adviseLayout({ ...L20, model: model('deepseek-ai/DeepSeek-V3') });
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.rule).toBe('R43');
    expect(a.reason).toMatch(/needs 641\.30 GiB of weights; 16 L20s hold 647\.83 GiB at U/);
    expect(a.lines.join('\n')).toContain('3. TP 8 × PP 2: W/16 = 40.08 GiB > 30.37 GiB ✗');
  });

  it('TP must divide the attention heads: 28 heads skip TP 8', () => {
    const shape: ModelShape = {
      id: 'x/odd-heads',
      layers: 28,
      heads: 28,
      kvHeads: 4,
      dtype: 'bfloat16',
      weightBytes: 200 * 2 ** 30,
      source: 'test',
    };
    const a = adviseLayout({ ...L20, model: shape });
    const text = a.lines.join('\n');
    expect(text).toContain('TP 8: 28 heads are not divisible by 8 ✗');
    expect(text).toContain('3. TP 8 × PP 2: 28 heads are not divisible by 8 ✗');
    expect(a.ok).toBe(false);
    // 28 heads and a size that TP 4 holds: TP 4 is chosen.
    const b = adviseLayout({ ...L20, model: { ...shape, weightBytes: 100 * 2 ** 30 } });
    expect(b.ok && b.layout).toMatchObject({ tp: 4, dp: 4 });
  });

  it('a model that needs both nodes gets TP 8 × PP 2 over Ray', () => {
    const shape: ModelShape = {
      id: 'x/big',
      layers: 80,
      heads: 64,
      kvHeads: 8,
      dtype: 'bfloat16',
      weightBytes: 400 * 2 ** 30,
      source: 'test',
    };
    const a = adviseLayout({ ...L20, model: shape });
    expect(a.ok && a.kind).toBe('tp-pp');
    expect(a.ok && a.layout).toEqual({ tp: 8, pp: 2, dp: 1, dpLocal: 1, backend: 'ray' });
    expect(a.ok && a.usesRay).toBe(true);
    expect(describeLayout(a.ok ? a.layout : ({} as never))).toBe('TP 8 × PP 2 (ray)');
  });

  it('FP8 halves a BF16 checkpoint (L20: CC 8.9) and is refused on an already quantized one (R44)', () => {
    const a = adviseLayout({ ...L20, quantization: 'fp8', model: model('meta-llama/Llama-3.1-70B-Instruct') });
    expect(a.ok && a.layout.tp).toBe(4);
    const b = adviseLayout({ ...L20, quantization: 'fp8', model: model('deepseek-ai/DeepSeek-V3') });
    expect(b.ok === false && b.rule).toBe('R44');
  });

  it('notes missing P2P for a TP layout (R37)', () => {
    const a = adviseLayout({ ...L20, p2pOk: false, model: model('meta-llama/Llama-3.1-70B-Instruct') });
    expect(a.notes.join('\n')).toContain('R37');
  });

  it('reads the shape from config.json and the index total_size, also nested text_config', () => {
    const cfg = JSON.stringify({
      num_hidden_layers: 28,
      num_attention_heads: 28,
      num_key_value_heads: 4,
      torch_dtype: 'bfloat16',
    });
    expect(modelShapeFromFiles('Qwen/Qwen2.5-7B-Instruct', cfg, 15231233024, 'n1')).toMatchObject({
      layers: 28,
      heads: 28,
      kvHeads: 4,
      weightBytes: 15231233024,
    });
    const nested = JSON.stringify({
      text_config: { num_hidden_layers: 40, num_attention_heads: 40 },
      quantization_config: { quant_method: 'fp8' },
    });
    expect(modelShapeFromFiles('m', nested, 10, 'n1')).toMatchObject({
      layers: 40,
      heads: 40,
      kvHeads: 40,
      quantization: 'fp8',
    });
    expect(modelShapeFromFiles('m', '{', 10, 'n1')).toMatch(/not valid JSON/);
    expect(modelShapeFromFiles('m', cfg, undefined, 'n1')).toMatch(/total_size/);
  });
});
