/**
 * Markdown and prose. Fenced blocks are split out (their content is then linted as whatever kind it is);
 * prose lines — including code that a publisher flattened into running text — are read for what they imply:
 * commands (from a known command head to the next head, a ` #` comment or the end of the ASCII run),
 * `NCCL_X=…` settings, a vLLM `LLM(...)` call, firewall advice (`禁用防火墙` / "disable the firewall" → the
 * command `ufw disable`), UDP 4791 port advice, monitoring tools, and performance claims with the workload
 * facts the document states. Never throws; linear in the input.
 */
import type { ProseFacts } from '../rules/cfg/context.js';

export interface Segment {
  kind: 'code' | 'prose';
  firstLine: number;
  lines: string[];
}

/** Splits Markdown into fenced code blocks and prose (an unclosed fence runs to the end). */
export function segments(lines: string[], firstLine = 1): Segment[] {
  const out: Segment[] = [];
  let cur: Segment = { kind: 'prose', firstLine, lines: [] };
  let fence: string | null = null;
  lines.forEach((l, i) => {
    const m = /^\s*(```+|~~~+)/.exec(l);
    if (m && (fence === null || l.trim().startsWith(fence))) {
      if (cur.lines.length > 0) out.push(cur);
      fence = fence === null ? (m[1] as string) : null;
      cur = { kind: fence === null ? 'prose' : 'code', firstLine: firstLine + i + 1, lines: [] };
      return;
    }
    cur.lines.push(l);
  });
  if (cur.lines.length > 0) out.push(cur);
  return out;
}

/** A command read out of prose: the text to parse, its line, and the evidence to show. */
export interface Snippet {
  line: number;
  text: string;
  evidence: string;
}

export interface ProseExtract {
  snippets: Snippet[];
  settings: Array<{ key: string; value: string; line: number; raw: string }>;
  python: Array<{ line: number; text: string }>;
  facts: ProseFacts;
}

const HEAD =
  /(?<![\w./=-])(?:sudo\s|ray\s+(?:start|stop|status)\b|pip3?\s+install\b|python3?\s+-m\s|python3?\s+\S+\.py\b|vllm\s+serve\b|wget\s|curl\s|apt(?:-get)?\s+(?:install|update|full-upgrade|upgrade|remove|purge)\b|mlnx_qos\b|dcb\s+(?:app|pfc|ets)\b|\.\/[\w.-]+|sh\s+\S+\.(?:run|sh)\b|ufw\s+\w|iptables\s+-|systemctl\s+\w|source\s|modprobe\s|echo\s|tar\s+[xc]|cd\s|for\s+\w+\s+in\s|done\b|netplan\s+(?:apply|try|generate)\b|ib_(?:write|read|send)_(?:bw|lat)\b|torchrun\s|mpirun\s|ibstat\b|ibv_devices\b|nvidia-smi\b|nvcc\s)/g;
const FIREWALL =
  /禁用防火墙|关闭防火墙|停用防火墙|disable (?:the |your )?firewall|turn off (?:the |your )?firewall|stop (?:the )?firewall/i;
const MONITOR = /\b(iftop|nload|iptraf-ng|bmon|nethogs|tcpdump)\b/g;
const CLAIM_WORD = /tokens?\/s|tok\/s|吞吐|throughput|TTFT|首token|延迟|latency|并发|concurren|QPS|req(?:uests)?\/s/i;
const CLAIM_NUM = /(?<![\d,.])\d[\d,.]{0,20}\s*(?:tokens?\/s|tok\/s|req\/s|QPS|ms)\b/i;
const NON_ASCII = /[^\x20-\x7e\t]/;

/** Runs of printable ASCII (CJK text and backticks split them). */
function asciiRuns(line: string): Array<{ start: number; text: string }> {
  const out: Array<{ start: number; text: string }> = [];
  for (const m of line.matchAll(/[\x20-\x5f\x61-\x7e\t]+/g)) out.push({ start: m.index ?? 0, text: m[0] });
  return out;
}

/** The text around index `i`: the non-ASCII phrase holding it plus adjoining ASCII up to the next ASCII word. */
function phrase(line: string, i: number, back = true): string {
  let s = i;
  while (back && s > 0 && NON_ASCII.test(line[s - 1] as string)) s--;
  let e = i;
  while (e < line.length && !NON_ASCII.test(line[e] as string)) e++;
  while (e < line.length && (NON_ASCII.test(line[e] as string) || !/[A-Za-z]/.test(line[e] as string))) e++;
  return line.slice(s, e).trim().slice(0, 160);
}

function commandsIn(line: string, lineNo: number, out: Snippet[]): void {
  for (const run of asciiRuns(line)) {
    const heads = [...run.text.matchAll(HEAD)].map((m) => m.index ?? 0);
    const kept: number[] = [];
    for (const h of heads) {
      const prev = kept[kept.length - 1];
      if (prev !== undefined && /^sudo(?:\s+-\S+)*\s*$/.test(run.text.slice(prev, h))) continue; // `sudo apt …` is one command
      kept.push(h);
    }
    kept.forEach((h, k) => {
      let text = run.text.slice(h, kept[k + 1] ?? run.text.length);
      const comment = /\s#/.exec(text);
      if (comment) text = text.slice(0, comment.index);
      text = text
        .replace(/\s+\\\s+/g, ' ')
        .replace(/\s*(?:&&|\|\||\|)\s*$/, '')
        .trim();
      // an unbalanced quote in prose must not swallow the commands after it
      let parse = text;
      for (const q of ["'", '"', '`']) if ((parse.split(q).length - 1) % 2 === 1) parse = parse.split(q).join('');
      if (text !== '') out.push({ line: lineNo, text: parse, evidence: text });
    });
  }
}

function claimLine(l: string): boolean {
  if (/(?:^|\s)--\w/.test(l) || !CLAIM_WORD.test(l)) return false;
  if (/^\s*\|/.test(l)) {
    // a table row: the metric (first cell) names throughput/latency/concurrency, and some cell is a number
    const cells = l.split('|').slice(1);
    return CLAIM_WORD.test(cells[0] ?? '') && cells.some((cell) => /^\s*[+-]?\d[\d,.]*\s*%?\s*$/.test(cell));
  }
  return CLAIM_NUM.test(l);
}

/** Reads prose lines (`lines[k]` is line `firstLine + k`); `whole` is the document, for workload facts. */
export function extractProse(lines: string[], firstLine: number, whole: string): ProseExtract {
  const out: ProseExtract = {
    snippets: [],
    settings: [],
    python: [],
    facts: {
      claims: [],
      monitors: [],
      udp4791: [],
      workload: {
        lengths:
          /input[-_ ]len|输入长度|prompt[-_ ]len/i.test(whole) && /output[-_ ]len|输出长度|max_tokens/i.test(whole),
        concurrency: /--max-concurrency|max_concurrency|concurrency\s*[=:]\s*\d|并发数\s*[=:：]\s*\d/i.test(whole),
        prompts: /--num-prompts|num_prompts|\bprompts?\s*[=:]\s*\d|请求数\s*[=:：]\s*\d/i.test(whole),
        tool: /vllm bench serve|benchmark_serving|benchmark_throughput|genai-perf|llmperf|guidellm/i.test(whole),
        layout:
          /--tensor-parallel-size|tensor_parallel_size|\s-tp\s+\d|--data-parallel-size|pipeline[-_]parallel/i.test(
            whole,
          ),
      },
    },
  };
  let block: Array<{ line: number; text: string }> = [];
  lines.forEach((raw, k) => {
    const line = firstLine + k;
    const l = raw.slice(0, 100_000);
    commandsIn(l, line, out.snippets);
    for (const m of l.matchAll(/(?<![\w])((?:NCCL|GLOO|VLLM|RAY)_[A-Z0-9_]+)=([^\s`'"]+)/g)) {
      let value = (m[2] as string).replace(/[,;，。]+$/, '');
      const after = l.slice((m.index ?? 0) + m[0].length).trimStart();
      // a section number glued on by flattening: `NCCL_BUFFSIZE=41943044. 分布式…` is 4194304 + "4."
      if (/\d\d\.$/.test(value) && NON_ASCII.test(after[0] ?? '')) value = value.slice(0, -2);
      out.settings.push({ key: m[1] as string, value, line, raw: `${m[1]}=${value}` });
    }
    const llm = /\b(?:vllm\.)?LLM\(/.exec(l);
    if (llm) out.python.push({ line, text: l.slice(llm.index) });
    const fw = FIREWALL.exec(l);
    if (fw)
      out.snippets.push({ line, text: 'ufw disable', evidence: `${phrase(l, fw.index)} (implies \`ufw disable\`)` });
    if (
      /\b4791\b/.test(l) &&
      /udp|port|open|allow|端口|开放|防火墙|firewall/i.test([lines[k - 2], lines[k - 1], l].join(' '))
    )
      out.facts.udp4791.push({ line, text: l.trim().slice(0, 160) });
    for (const m of l.matchAll(MONITOR))
      out.facts.monitors.push({ line, tool: m[1] as string, text: phrase(l, m.index ?? 0, false) });
    if (claimLine(l)) block.push({ line, text: l.trim().slice(0, 200) });
    else if (block.length > 0 && !/^\s*\|?\s*:?-{3,}/.test(l)) {
      out.facts.claims.push(block);
      block = [];
    }
  });
  if (block.length > 0) out.facts.claims.push(block);
  return out;
}
