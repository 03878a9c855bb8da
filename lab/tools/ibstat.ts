/**
 * `ibstat` (infiniband-diags ibstat.c) and `show_gids` (mlnx-tools sbin/show_gids).
 *
 * ibstat: `CA '<name>'`, CA fields indented by one TAB, `Port 1:` and its fields by two, CAs in the
 * sorted order umad lists them (`mlx5_0, mlx5_1, mlx5_10 …`), as in fixtures/corpus/ibstat__h100-cx7-
 * roce-400g-plus-cx6dx-eth.txt; a down RoCE port reads `Down`/`Disabled`, rate 40 and port GUID 0
 * (ibstat__h100-cx7-roce-two-ports-disabled.txt). `ibstat <ca> <port>` prints the per-port form
 * (`CA: '<name>'`, unindented), `-l` the CA names, `-p` the port GUIDs. A ConnectX-4 Lx reports CA
 * type MT4117 and `Rate: 25` (docs/STAGES.md §4.2).
 *
 * show_gids: the header, a rule, one TAB-separated row per non-zero GID (`<ip>  ` then TAB in the
 * IPv4 cell, two TABs when empty), `n_gids_found=N` (fixtures/corpus/show_gids__tabs-raw-3dev-roce-
 * ipv4-eth0x-names.txt). Slots are walked in `ls` order, as the script does.
 */
import { defaultGid, gidTable, gidToIpv4, rdmaNetdev, rdmaPortState } from '../model/rdma.js';
import type { Machine, RdmaDevice } from '../model/types.js';
import { fail, ok } from '../shell/args.js';
import type { Tool } from './types.js';

const caOrder = (m: Machine): RdmaDevice[] =>
  [...m.rdma].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

function portGuid(m: Machine, r: RdmaDevice): string {
  const nd = rdmaNetdev(m, r);
  if (!nd || rdmaPortState(m, r).state !== 'ACTIVE') return '0x0000000000000000';
  return `0x${defaultGid(nd.mac).split(':').slice(4).join('')}`;
}

function portFields(m: Machine, r: RdmaDevice): Array<[string, string]> {
  const active = rdmaPortState(m, r).state === 'ACTIVE';
  return [
    ['State', active ? 'Active' : 'Down'],
    ['Physical state', active ? 'LinkUp' : 'Disabled'],
    ['Rate', active ? String((rdmaNetdev(m, r)?.linkSpeedMbps ?? 25000) / 1000) : '40'],
    ['Base lid', '0'],
    ['LMC', '0'],
    ['SM lid', '0'],
    ['Capability mask', '0x00010000'],
    ['Port GUID', portGuid(m, r)],
    ['Link layer', 'Ethernet'],
  ];
}

function fw(m: Machine, r: RdmaDevice): string {
  const nd = m.netdevs.find((d) => d.pci === r.pci && d.firmware) ?? rdmaNetdev(m, r);
  return (nd?.firmware ?? '').split(' ')[0] ?? '';
}

function caBlock(m: Machine, r: RdmaDevice): string {
  const lines = [
    `CA '${r.name}'`,
    `\tCA type: ${r.hcaType}`,
    '\tNumber of ports: 1',
    `\tFirmware version: ${fw(m, r)}`,
    '\tHardware version: 0',
    `\tNode GUID: 0x${r.nodeGuid}`,
    `\tSystem image GUID: 0x${r.sysImageGuid}`,
    `\tPort ${r.port}:`,
    ...portFields(m, r).map(([k, v]) => `\t\t${k}: ${v}`),
  ];
  return `${lines.join('\n')}\n`;
}

export const ibstat: Tool = {
  name: 'ibstat',
  path: '/usr/sbin/ibstat',
  packages: ['infiniband-diags'],
  run(args, { machine: m }) {
    const flags = args.filter((a) => a.startsWith('-'));
    const words = args.filter((a) => !a.startsWith('-'));
    const cas = caOrder(m);
    if (flags.includes('-l') || flags.includes('--list_of_cas')) return ok(cas.map((r) => `${r.name}\n`).join(''));
    if (flags.includes('-p') || flags.includes('--port_list'))
      return ok(cas.map((r) => `${portGuid(m, r)}\n`).join(''));
    const unknown = flags.find((f) => !['-d', '--debug', '-s', '--short'].includes(f));
    if (unknown) return fail(255, `ibstat: unrecognized option '${unknown}'\n`);
    if (words.length === 0) return ok(cas.map((r) => caBlock(m, r)).join(''));
    const r = cas.find((c) => c.name === words[0]);
    if (!r)
      return fail(
        255,
        `ibpanic: [${1000 + m.index}] main: stat of IB device '${words[0]}' failed: No such file or directory\n`,
      );
    if (words[1] === undefined) return ok(caBlock(m, r));
    if (words[1] !== String(r.port))
      return fail(
        255,
        `ibpanic: [${1000 + m.index}] main: stat of IB device '${r.name}' port ${words[1]} failed: No such file or directory\n`,
      );
    return ok(
      `CA: '${r.name}'\nPort ${r.port}:\n${portFields(m, r)
        .map(([k, v]) => `${k}: ${v}\n`)
        .join('')}`,
    );
  },
};

/** `ls` order of the slot files: 0 1 10 100 … 2 20 … (byte order of the names). */
const LS_ORDER = Array.from({ length: 256 }, (_, i) => i).sort((a, b) => (String(a) < String(b) ? -1 : 1));

export const showGids: Tool = {
  name: 'show_gids',
  path: '/usr/sbin/show_gids',
  packages: ['mlnx-ofed-kernel-utils'],
  run(args, { machine: m }) {
    let out =
      'DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---\n';
    let err = '';
    const devs = args[0] ? [args[0]] : caOrder(m).map((r) => r.name);
    let n = 0;
    for (const name of devs) {
      const r = m.rdma.find((x) => x.name === name);
      if (!r) {
        err += `ls: cannot access '/sys/class/infiniband/${name}/ports/': No such file or directory\n`;
        continue;
      }
      if (args[1] !== undefined && args[1] !== String(r.port)) continue;
      const table = gidTable(m, r);
      for (const i of LS_ORDER) {
        const e = table[i];
        if (!e || e.gid === 'fe80:0000:0000:0000:0000:0000:0000:0000') continue;
        const ver = e.type === 'RoCE v2' ? 'v2' : 'v1';
        const ipv4 = gidToIpv4(e.gid);
        out +=
          ipv4 !== undefined
            ? `${r.name}\t${r.port}\t${i}\t${e.gid}\t${ipv4}  \t${ver}\t${e.ndev}\n`
            : `${r.name}\t${r.port}\t${i}\t${e.gid}\t\t\t${ver}\t${e.ndev}\n`;
        n++;
      }
    }
    out += `n_gids_found=${n}\n`;
    return { stdout: out, stderr: err, exitCode: 0 };
  },
};
