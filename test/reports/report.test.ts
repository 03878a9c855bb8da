/**
 * The Markdown report on the lab: stage states, the hosts' configurations side by side with the
 * differing lines marked (pfc-mismatch: node 2's PFC vector), and the measured performance of the
 * stages' benchmark runs next to the tutorial's claims. Plus the side-by-side alignment itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labTarget, type LabTarget } from '../helpers/lab-target.js';
import { gatherReport, stageStatus, type ReportData } from '../../src/cluster-report/data.js';
import { renderMarkdown } from '../../src/cluster-report/markdown.js';
import { sideBySide } from '../../src/cluster-report/side-by-side.js';
import { escapeHtml, renderHtml } from '../../src/cluster-report/html.js';

describe('sideBySide', () => {
  it('pairs a changed line with its counterpart and leaves gaps for lines one side lacks', () => {
    expect(sideBySide('a\nb\nc\nd', 'a\nB\nc\ne\nf')).toEqual([
      { left: 'a', right: 'a', same: true },
      { left: 'b', right: 'B', same: false },
      { left: 'c', right: 'c', same: true },
      { left: 'd', right: 'e', same: false },
      { right: 'f', same: false },
    ]);
    expect(sideBySide('', '')).toEqual([]);
    expect(sideBySide('x\n', '')).toEqual([{ left: 'x', same: false }]);
  });
});

describe('stageStatus', () => {
  it('ignores checks that do not apply unless nothing ran', () => {
    const r = (status: 'pass' | 'skip' | 'fail') => ({
      id: 'x',
      stage: 'qos' as const,
      host: null,
      status,
      summary: '',
      evidence: '',
    });
    expect(stageStatus([r('pass'), r('skip')])).toBe('pass');
    expect(stageStatus([r('skip'), r('skip')])).toBe('skip');
    expect(stageStatus([r('pass'), r('fail'), r('skip')])).toBe('fail');
  });
});

async function report(scenario: string): Promise<{ data: ReportData; md: string }> {
  let t: LabTarget | undefined;
  try {
    t = await labTarget({ scenario });
    const data = await gatherReport({
      config: t.config,
      hosts: t.hosts,
      source: `lab ${scenario}`,
      runId: '20260101T000000Z',
    });
    return { data, md: renderMarkdown(data) };
  } finally {
    await t?.close();
  }
}

describe('report on the ready lab', () => {
  let r: { data: ReportData; md: string };
  beforeAll(async () => {
    r = await report('ready');
  }, 300_000);

  it('says PASS and lists every stage with its state', () => {
    expect(r.md.split('\n')[0]).toBe('# l20-setup report — PASS');
    for (const s of [
      'inventory',
      'os',
      'nic-stack',
      'network',
      'qos',
      'rdma-link',
      'gpu-driver',
      'gpudirect',
      'nccl',
      'vllm',
    ]) {
      expect(r.md).toMatch(new RegExp(`^\\| ${s} \\| PASS \\| \\d+ \\| .+ \\|$`, 'm'));
    }
  });

  it("puts ib_write_bw per cable, NCCL busbw and vllm tok/s next to the tutorial's claims", () => {
    const cables = r.data.perf.filter((p) => /^ib_write_bw cable \d$/.test(p.what));
    expect(cables).toHaveLength(4);
    for (const c of cables) {
      expect(c.value).toBeGreaterThan(22.5);
      expect(c.verdict).toBe('ok');
    }
    expect(r.md).toMatch(
      /^\| ib_write_bw cable 1<br>l20-n1 rocep26s0f0 → l20-n2 rocep26s0f0 \| \d+\.\d\d Gb\/s \(MTU 4096\) \| 25 GbE port: ≈ 24\.5 Gb\/s at RoCE MTU 4096 \| ok \|$/m,
    );
    expect(r.md).toMatch(
      /^\| ib_write_bw all 4 cables at once \| 9\d\.\d\d Gb\/s \| the tutorial's "logical 100GbE" bond0.* \| ok \|$/m,
    );
    const inter = r.data.perf.find((p) => p.what.startsWith('NCCL all-reduce, 2 nodes'));
    expect(inter?.value).toBeGreaterThan(4.5);
    expect(r.md).toMatch(
      /^\| NCCL all-reduce, 2 nodes × 8 GPUs \(busbw\) \| \d+\.\d\d GB\/s at 256 MiB \| no figure in the tutorial; NIC ceiling ≈ 11\.6 GB\/s per node/m,
    );
    const tok = r.data.perf.find((p) => p.what === 'vllm bench serve output tokens/s');
    expect(tok?.value).toBeGreaterThan(0);
    expect(r.md).toMatch(
      /^\| vllm bench serve output tokens\/s<br>640 prompts, 512 in \/ 1024 out, concurrency 64, layout \S+ \| [\d,]+ tok\/s \| 1,200 → 2,300 tok\/s from 8 to 16 GPUs .*R50, not comparable\) \| ok \|$/m,
    );
  });

  it('shows the configurations side by side: only the addresses differ', () => {
    expect(r.md).toContain('Differs: netplan.');
    expect(r.md).toMatch(/^### NCCL configuration \(nccl\.conf\) — identical$/m);
    expect(r.md).toMatch(/^### QoS, fabric port 1 — identical$/m);
    const port = (ip: string) =>
      `\`    ens1f0: {renderer: networkd, optional: true, mtu: 9000, addresses: [${ip}/24]}\``;
    expect(r.md.split('\n')).toContain(`| ≠ | ${port('192.168.101.1')} | ${port('192.168.101.2')} |`);
    expect(r.md).toMatch(/^\| {2}\| `NVIDIA driver: 580\.126\.09` \| `NVIDIA driver: 580\.126\.09` \|$/m);
  });

  it('keeps the API key out of the evidence', async () => {
    const html = renderHtml(r.data);
    for (const text of [r.md, html]) expect(text).not.toMatch(/--api-key [0-9a-f]{32,}/);
  });
});

describe('report on pfc-mismatch', () => {
  let r: { data: ReportData; md: string };
  beforeAll(async () => {
    r = await report('pfc-mismatch');
  }, 300_000);
  afterAll(() => undefined);

  it('fails qos and rdma-link with R26 named under the verdict', () => {
    expect(r.md.split('\n')[0]).toBe('# l20-setup report — FAIL');
    expect(r.md).toMatch(/^\| qos \| FAIL \| \d+ \(\d+ not passing\) \| .+ \|$/m);
    expect(r.md).toMatch(/^\| rdma-link \| FAIL \| /m);
    expect(r.md).toMatch(/^- FAIL `qos\.pfc` on l20-n2 \(R26\): PFC off on priority 3/m);
    expect(r.md).toMatch(/^- FAIL `qos\.pair` on the cluster \(R26\): PFC differs/m);
  });

  it("marks node 2's PFC vector as the differing line of every port", () => {
    for (let i = 1; i <= 4; i++) expect(r.md).toMatch(new RegExp(`^### QoS, fabric port ${i} — differs$`, 'm'));
    expect(r.md).toMatch(
      /^\| ≠ \| `prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off ` \| `prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off ` \|$/m,
    );
    // The rest of the QoS output is equal and unmarked.
    expect(r.md).toMatch(/^\| {2}\| `dscp-prio 26:3 ` \| `dscp-prio 26:3 ` \|$/m);
  });

  it('shows every cable below line rate against the 25 GbE port', () => {
    const cables = r.data.perf.filter((p) => /^ib_write_bw cable \d$/.test(p.what));
    expect(cables).toHaveLength(4);
    for (const c of cables) {
      expect(c.value).toBeLessThan(22.5);
      expect(c.verdict).toBe('low');
    }
  });

  it('escapes host output in the HTML', () => {
    expect(escapeHtml('<b>&"\'')).toBe('&lt;b&gt;&amp;&quot;&#39;');
    const html = renderHtml(r.data);
    expect(html).toContain('<mark>on</mark>');
    expect(html).not.toMatch(/<(?:script|link|img|iframe)\b/);
  });
});
