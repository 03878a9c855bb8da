/**
 * `nvidia-smi -q -x` reader: a linear XML tag scanner, the XML element → text path table, and `scanXml`,
 * which feeds each `<gpu>` through the same `gpuFrom` as the text form.
 */
import { compact } from './common.js';
import {
  gpuFrom,
  numUnit,
  type FieldMap,
  type NvidiaSmiQFacts,
  type NvidiaSmiQScan,
  type SmiQHit,
} from './nvidia-smi-q-facts.js';

interface XNode {
  name: string;
  attrs: string;
  children: XNode[];
  text: string;
  line: number;
}

const TOKEN = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<[?!][^>]*>|<(\/?)([A-Za-z_][\w.:-]*)([^>]*?)(\/?)>|([^<]+)/g;

function parseXml(text: string): XNode {
  const root: XNode = { name: '#root', attrs: '', children: [], text: '', line: 1 };
  const stack: XNode[] = [root];
  let line = 1;
  let last = 0;
  for (const m of text.matchAll(TOKEN)) {
    const idx = m.index ?? 0;
    for (let k = last; k < idx; k++) if (text.charCodeAt(k) === 10) line++;
    last = idx;
    const top = stack[stack.length - 1] ?? root;
    if (m[2] !== undefined) {
      if (m[1] === '/') {
        // Close the nearest open element of that name (tolerates stray tags).
        for (let j = stack.length - 1; j > 0; j--) {
          if (stack[j]?.name === m[2]) {
            stack.length = j;
            break;
          }
        }
      } else {
        const node: XNode = { name: m[2], attrs: m[3] ?? '', children: [], text: '', line };
        if (top.children.length < 5000) top.children.push(node);
        if (m[4] !== '/' && stack.length < 64) stack.push(node);
      }
    } else if (m[5] !== undefined && stack.length > 1) {
      if (top.text.length < 4096) top.text += m[5];
    }
  }
  return root;
}

const decode = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&')
    .trim();

function child(n: XNode | undefined, name: string): XNode | undefined {
  return n?.children.find((c) => c.name === name);
}

/** XML element names → the text paths `gpuFrom` reads. */
const XML_PATHS: Array<[string, string]> = [
  ['product_name', 'Product Name'],
  ['uuid', 'GPU UUID'],
  ['serial', 'Serial Number'],
  ['vbios_version', 'VBIOS Version'],
  ['persistence_mode', 'Persistence Mode'],
  ['mig_mode/current_mig', 'MIG Mode/Current'],
  ['mig_mode/pending_mig', 'MIG Mode/Pending'],
  ['ecc_mode/current_ecc', 'ECC Mode/Current'],
  ['ecc_mode/pending_ecc', 'ECC Mode/Pending'],
  ['pci/pci_bus_id', 'PCI/Bus Id'],
  ['pci/pci_gpu_link_info/pcie_gen/max_link_gen', 'PCI/GPU Link Info/PCIe Generation/Max'],
  ['pci/pci_gpu_link_info/pcie_gen/current_link_gen', 'PCI/GPU Link Info/PCIe Generation/Current'],
  ['pci/pci_gpu_link_info/link_widths/max_link_width', 'PCI/GPU Link Info/Link Width/Max'],
  ['pci/pci_gpu_link_info/link_widths/current_link_width', 'PCI/GPU Link Info/Link Width/Current'],
  ['fb_memory_usage/total', 'FB Memory Usage/Total'],
  ['fb_memory_usage/used', 'FB Memory Usage/Used'],
  ['utilization/gpu_util', 'Utilization/GPU'],
  ['temperature/gpu_temp', 'Temperature/GPU Current Temp'],
  ['gpu_power_readings/power_draw', 'GPU Power Readings/Power Draw'],
  ['gpu_power_readings/average_power_draw', 'GPU Power Readings/Average Power Draw'],
  ['gpu_power_readings/instant_power_draw', 'GPU Power Readings/Instantaneous Power Draw'],
  ['gpu_power_readings/current_power_limit', 'GPU Power Readings/Current Power Limit'],
  ['gpu_power_readings/power_limit', 'GPU Power Readings/Power Limit'],
  ['power_readings/power_draw', 'Power Readings/Power Draw'],
  ['power_readings/power_limit', 'Power Readings/Power Limit'],
  ['performance_state', 'Performance State'],
  ['compute_mode', 'Compute Mode'],
  ['retired_pages/multiple_single_bit_retirement/retired_count', 'Retired Pages/Single Bit ECC'],
  ['retired_pages/double_bit_retirement/retired_count', 'Retired Pages/Double Bit ECC'],
  ['retired_pages/pending_blacklist', 'Retired Pages/Pending Page Blacklist'],
  ['retired_pages/pending_retirement', 'Retired Pages/Pending Page Retirement'],
  ['remapped_rows/remapped_row_corr', 'Remapped Rows/Correctable Error'],
  ['remapped_rows/remapped_row_unc', 'Remapped Rows/Uncorrectable Error'],
  ['remapped_rows/remapped_row_pending', 'Remapped Rows/Pending'],
  ['remapped_rows/remapped_row_failure', 'Remapped Rows/Remapping Failure Occurred'],
];

function xmlGpuMap(g: XNode): FieldMap {
  const m: FieldMap = new Map();
  const at = (path: string): XNode | undefined => path.split('/').reduce<XNode | undefined>((n, p) => child(n, p), g);
  for (const [xp, tp] of XML_PATHS) {
    const n = at(xp);
    if (n && n.children.length === 0) m.set(tp, { value: decode(n.text), line: n.line });
  }
  // ECC counters: every leaf under volatile/aggregate, nested names flattened (`single_bit/total`).
  const ecc = child(g, 'ecc_errors');
  for (const scope of ['volatile', 'aggregate'] as const) {
    const s = child(ecc, scope);
    const walk = (n: XNode, prefix: string[]): void => {
      for (const c of n.children) {
        if (c.children.length > 0) walk(c, [...prefix, c.name]);
        else
          m.set(
            `ECC Errors/${scope === 'volatile' ? 'Volatile' : 'Aggregate'}/${[...prefix, c.name].join(' ').replace(/_/g, ' ')}`,
            { value: decode(c.text), line: c.line },
          );
      }
    };
    if (s) walk(s, []);
  }
  for (const tag of ['clocks_event_reasons', 'clocks_throttle_reasons']) {
    const r = child(g, tag);
    for (const c of r?.children ?? []) {
      if (c.children.length === 0)
        m.set(`Clocks Event Reasons/${c.name.replace(/^clocks_(?:event|throttle)_reason_/, '').replace(/_/g, ' ')}`, {
          value: decode(c.text),
          line: c.line,
        });
    }
  }
  return m;
}

export function scanXml(text: string): NvidiaSmiQScan {
  const facts: NvidiaSmiQFacts = { format: 'xml', gpus: [], errors: [] };
  const hits: SmiQHit[] = [];
  const root = parseXml(text);
  const log = child(root, 'nvidia_smi_log') ?? root;
  const txt = (n: XNode | undefined): string | undefined =>
    n && n.children.length === 0 ? decode(n.text) || undefined : undefined;
  facts.driverVersion = txt(child(log, 'driver_version'));
  facts.cudaVersion = txt(child(log, 'cuda_version'));
  facts.timestamp = txt(child(log, 'timestamp'));
  const att = numUnit(txt(child(log, 'attached_gpus')));
  if (att !== undefined) facts.attachedGpus = att;
  for (const g of log.children) {
    if (g.name !== 'gpu') continue;
    const id = /\bid\s*=\s*"([^"]*)"/.exec(g.attrs)?.[1] ?? '';
    facts.gpus.push(gpuFrom(id, xmlGpuMap(g), hits));
  }
  return { facts: compact(facts), hits };
}
