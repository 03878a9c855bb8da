/** Helpers for the RDMA-kind tests: run a kind the way doctor does (cleaned text), by kind id. */
import { rdmaKinds } from '../../src/doctor/kinds/rdma.js';
import type { KindDef } from '../../src/doctor/types.js';
import { cleanText } from '../../src/parse/common.js';
import type { Finding } from '../../src/rules/types.js';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadFixture } from '../parse/fixtures.js';

const DIR = resolve(import.meta.dirname, '../fixtures');

export function kindOf(id: string): KindDef {
  const k = rdmaKinds.find((x) => x.kind === id);
  if (!k) throw new Error(`no kind ${id}`);
  return k;
}

/** Facts, findings and summary of `text` read as kind `id`, as doctor would (cleaned text). */
export function run<F = any>(id: string, text: string): { facts: F; findings: Finding[]; summary: Array<[string, string]>; text: string } {
  const k = kindOf(id);
  const cleaned = cleanText(text);
  const facts = k.parse(cleaned) as F;
  return { facts, findings: k.findings(facts, cleaned), summary: k.summary(facts), text: cleaned };
}

export function sample<F = any>(id: string, file: string): ReturnType<typeof run<F>> {
  return run<F>(id, loadFixture(`corpus/${file}`));
}

/** The 1-based line of the cleaned text. */
export function lineAt(text: string, n: number | undefined): string {
  return n === undefined ? '' : (text.split('\n')[n - 1] ?? '').trim();
}

/** File-name prefix → kind, for the families these kinds own. */
export const RDMA_PREFIX: Record<string, string> = {
  ibstat: 'ibstat',
  ibstatus: 'ibstatus',
  ibv_devices: 'ibv_devices',
  'ibv_devinfo-l': 'ibv_devinfo',
  'ibv_devinfo-v': 'ibv_devinfo',
  show_gids: 'show_gids',
  ibdev2netdev: 'ibdev2netdev',
  'ibdev2netdev-v': 'ibdev2netdev',
  'rdma-link': 'rdma-link',
  mlnx_qos: 'mlnx_qos',
  'proc-net-bonding': 'bonding',
  ethtool: 'ethtool',
  'ethtool-S': 'ethtool-S',
  'ethtool-i': 'ethtool-i',
  ib_write_bw: 'perftest',
  ib_read_bw: 'perftest',
  ib_send_bw: 'perftest',
  ib_send_lat: 'perftest',
  ib_read_lat: 'perftest',
  'ofed_info-s': 'ofed_info',
  'ofed_info-n': 'ofed_info',
  'ofed_info-s-and-n': 'ofed_info',
  ofed_info: 'ofed_info',
  lspci: 'lspci',
  'lspci-nn': 'lspci',
  'lspci-vv': 'lspci',
  'lspci-vvv': 'lspci',
  lsmod: 'lsmod',
  'lsmod-grep-nvidia': 'lsmod',
  show_counters: 'show_counters',
  'sysfs-infiniband': 'sysfs-infiniband',
  modinfo: 'modinfo',
  'mst-status': 'mst-status',
  'mst-status-v': 'mst-status',
  'dkms-status': 'dkms-status',
  cma_roce_mode: 'cma_roce_mode',
  'roce-validate': 'roce-validate',
  'ip-d-j-addr': 'ip-link',
  'ip-d-link': 'ip-link',
  'ip-s-s-link': 'ip-link',
};


/** Every corpus sample of these kinds' families, with its kind. */
export function rdmaSamples(): Array<{ file: string; kind: string }> {
  return readdirSync(join(DIR, 'corpus'))
    .filter((f) => f.includes('__'))
    .map((file) => ({ file, kind: RDMA_PREFIX[file.split('__')[0]!] }))
    .filter((s): s is { file: string; kind: string } => s.kind !== undefined);
}

