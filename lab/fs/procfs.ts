/**
 * /proc rendered from the model. Formats follow fs/proc/*.c of Linux 5.15: meminfo labels padded
 * to 16 columns with `%8lu kB`, HugePages_* counts as `%5lu`. /proc/driver/nvidia exists only
 * when an NVIDIA kernel module is loaded (none on `fresh`).
 */
import type { Machine } from '../model/types.js';
import { dir, file, text, type VDir, type VNode } from './vfs.js';
import { procNetBonding } from '../tools/bonding-render.js';
import { readerUid } from '../system/exec-context.js';
import { nvidiaProcEntries } from '../tools/nvidia-proc.js';

export function renderMeminfo(m: Machine): string {
  return m.meminfo
    .map(([key, value]) => {
      const label = `${key}:`;
      if (typeof value === 'string') return `${label.padEnd(16)}${value.padStart(8)}`;
      return `${label.padEnd(16)}${String(value).padStart(8)} kB`;
    })
    .map((l) => `${l}\n`)
    .join('');
}

function renderCpuinfo(m: Machine): string {
  const c = m.cpu;
  const perSocket = c.coresPerSocket;
  const total = c.sockets * perSocket * c.threadsPerCore;
  const blocks: string[] = [];
  for (let cpu = 0; cpu < total; cpu++) {
    const core = cpu % (c.sockets * perSocket);
    const socket = Math.floor(core / perSocket);
    const coreId = core % perSocket;
    blocks.push(
      [
        `processor\t: ${cpu}`,
        `vendor_id\t: ${c.vendor}`,
        `cpu family\t: ${c.family}`,
        `model\t\t: ${c.model}`,
        `model name\t: ${c.modelName}`,
        `stepping\t: ${c.stepping}`,
        'microcode\t: 0x2b000620',
        'cpu MHz\t\t: 2800.000',
        `cache size\t: ${c.cacheKiB.l3} KB`,
        `physical id\t: ${socket}`,
        `siblings\t: ${perSocket * c.threadsPerCore}`,
        `core id\t\t: ${coreId}`,
        `cpu cores\t: ${perSocket}`,
        `apicid\t\t: ${socket * 128 + coreId * 2 + (cpu >= total / 2 ? 1 : 0)}`,
        `initial apicid\t: ${socket * 128 + coreId * 2 + (cpu >= total / 2 ? 1 : 0)}`,
        'fpu\t\t: yes',
        'fpu_exception\t: yes',
        'cpuid level\t: 32',
        'wp\t\t: yes',
        `flags\t\t: ${c.flags}`,
        'bugs\t\t: spectre_v1 spectre_v2 spec_store_bypass swapgs eibrs_pbrsb bhi',
        `bogomips\t: ${c.bogoMips}`,
        'clflush size\t: 64',
        'cache_alignment\t: 64',
        `address sizes\t: ${c.addressSizes}`,
        'power management:',
      ].join('\n') + '\n\n',
    );
  }
  return blocks.join('');
}

export function buildProcfs(m: Machine): VDir {
  return dir(() => {
    const e: Record<string, VNode> = {
      meminfo: file(() => renderMeminfo(m)),
      cpuinfo: file(() => renderCpuinfo(m)),
      version: file(
        () =>
          `Linux version ${m.os.kernelRelease} (buildd@lcy02-amd64-029) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, ` +
          `GNU ld (GNU Binutils for Ubuntu) 2.38) ${m.os.kernelVersion}\n`,
      ),
      cmdline: file(() => `${m.os.cmdline}\n`),
      uptime: file(() => {
        const up = m.clock.uptimeSeconds() + 600;
        return `${up.toFixed(2)} ${(up * 127.9).toFixed(2)}\n`;
      }),
      loadavg: text('0.08 0.05 0.01 1/1520 4242\n'),
      modules: file(() => m.modules.map((mod) => `${mod} 65536 0 - Live 0x0000000000000000\n`).join('')),
      driver: dir(() => ({ rtc: text('rtc_time\t: 09:00:00\n'), ...nvidiaProcEntries(m) })),
      // Bonding's view of each bond; the 802.3ad details are root-only (CAP_NET_ADMIN).
      net: dir(() => ({ bonding: procNetBonding(m, () => readerUid(m.user.uid) === 0) })),
      sys: dir(() => ({
        kernel: dir(() => ({
          hostname: file(() => `${m.hostname}\n`),
          osrelease: file(() => `${m.os.kernelRelease}\n`),
          random: dir(() => ({ boot_id: file(() => `${m.bootId}\n`) })),
        })),
        net: dir(() => ({ ipv4: dir(() => ({ ip_forward: text('0\n') })) })),
      })),
      sysvipc: dir(() => ({})),
    };
    return e;
  });
}
