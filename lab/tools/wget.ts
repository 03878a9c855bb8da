/**
 * GNU Wget 1.21.2 (jammy) against the few vendor downloads the stages and the tutorial fetch. The
 * lab has no network beyond its hosts: a URL is known (registerDownload: its size and, for the
 * files later commands read, what the saved file holds), or, on a known vendor host, answered with
 * `404 Not Found` — what the tutorial's MLNX_OFED-23.10-1.1.8.0 URL gets (docs/STAGES.md §4.3); other
 * hosts do not resolve. Messages go to stderr in wget's non-interactive log format (progress as
 * dots, 50 KiB a line; `-q` silences it; exit 8 on a server error, 4 on a name that does not resolve).
 */
import type { Machine } from '../model/types.js';
import { fail, getopt, has, value } from '../shell/args.js';
import { toolIo } from '../system/live.js';
import type { Tool } from './types.js';

export interface Download {
  bytes: number;
  /** What the saved file holds (default: a placeholder naming the download). */
  content?: string;
  type?: string;
}

const DOWNLOADS = new Map<string, Download>();

/** Makes a URL downloadable in the lab. */
export function registerDownload(url: string, d: Download): void {
  DOWNLOADS.set(url, d);
}

/** Vendor hosts the lab answers for (their address as a resolver on the hosts would print it). */
const HOSTS: Record<string, string> = {
  'content.mellanox.com': '23.46.234.146',
  'www.mellanox.com': '23.46.234.146',
  'linux.mellanox.com': '23.46.234.130',
  'developer.download.nvidia.com': '152.199.39.108',
  'us.download.nvidia.com': '152.199.39.144',
};

const BYTES_PER_S = 40_000_000;

/** The DOCA-Host 2.9.1 LTS repository package nic-stack.install-doca fetches (dpkg -i reads it by file name). */
registerDownload(
  'https://www.mellanox.com/downloads/DOCA/DOCA_v2.9.1/host/doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb',
  { bytes: 1_074_000_000, type: 'application/vnd.debian.binary-package' },
);
/** The real MLNX_OFED 23.10 GA bundle (the tutorial's 23.10-1.1.8.0 never existed). */
registerDownload(
  'https://content.mellanox.com/ofed/MLNX_OFED-23.10-1.1.9.0/MLNX_OFED_LINUX-23.10-1.1.9.0-ubuntu22.04-x86_64.tgz',
  { bytes: 332_104_192, type: 'application/x-gzip' },
);

function stamp(m: Machine): string {
  return new Date(m.clock.now()).toISOString().replace('T', ' ').slice(0, 19);
}

/** `1.0G`, `317M`, `21K` as wget's human-readable length. */
function human(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)}G`;
  if (n >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)}M`;
  return `${Math.round(n / 1024)}K`;
}

/** The dot progress of a non-interactive run: 50 dots of 1 KiB per line, percent, rate, ETA. */
function dotLines(bytes: number): string[] {
  const lines: string[] = [];
  const perLine = 50 * 1024;
  const rate = `${(BYTES_PER_S / 1024 / 1024).toFixed(1)}M`;
  for (let start = 0; start < bytes; start += perLine) {
    const chunk = Math.min(perLine, bytes - start);
    const dots = Math.ceil(chunk / 1024);
    const groups = Array.from({ length: 5 }, (_, g) => '.'.repeat(Math.max(0, Math.min(10, dots - g * 10))))
      .map((s) => s.padEnd(10))
      .join(' ');
    const done = start + chunk;
    const pct = `${Math.floor((done / bytes) * 100)}%`.padStart(4);
    const eta = Math.round((bytes - done) / BYTES_PER_S);
    lines.push(
      `${`${start / 1024}K`.padStart(6)} ${groups} ${pct} ${rate} ${done >= bytes ? `=${Math.max(0.1, bytes / BYTES_PER_S).toFixed(1)}s` : `${eta}s`}`,
    );
  }
  return lines;
}

export const wget: Tool = {
  name: 'wget',
  path: '/usr/bin/wget',
  packages: ['wget'],
  async run(args, { machine: m, ctx }) {
    const p = getopt(args, 'qO:cnv', {
      quiet: false,
      'output-document': true,
      progress: true,
      continue: false,
      'no-verbose': false,
      'no-check-certificate': false,
    });
    if (p.error)
      return fail(
        2,
        `wget: unrecognized option '${p.error.option.length > 1 ? '--' : '-'}${p.error.option}'\nUsage: wget [OPTION]... [URL]...\n\nTry \`wget --help' for more options.\n`,
      );
    const url = p.operands[0];
    if (!url)
      return fail(1, "wget: missing URL\nUsage: wget [OPTION]... [URL]...\n\nTry `wget --help' for more options.\n");
    const quiet = has(p, 'q', 'quiet');
    const io = toolIo(ctx, m.clock);
    const log = async (s: string): Promise<void> => {
      if (!quiet) await io.err(s);
    };
    const u = /^(https?):\/\/([^/:]+)(?::(\d+))?(\/.*)?$/.exec(url);
    if (!u) return fail(1, `${url}: Unsupported scheme.\n`);
    const [, scheme, host, port, path] = u as unknown as [
      string,
      string,
      string,
      string | undefined,
      string | undefined,
    ];
    const portNo = port ?? (scheme === 'https' ? '443' : '80');
    await log(`--${stamp(m)}--  ${url}\n`);
    const addr = HOSTS[host];
    if (!addr) {
      await log(
        `Resolving ${host} (${host})... failed: Temporary failure in name resolution.\nwget: unable to resolve host address ‘${host}’\n`,
      );
      return io.result(4);
    }
    await log(
      `Resolving ${host} (${host})... ${addr}\nConnecting to ${host} (${host})|${addr}|:${portNo}... connected.\n`,
    );
    await io.sleep(300);
    const d = DOWNLOADS.get(url);
    if (!d) {
      await log(`HTTP request sent, awaiting response... 404 Not Found\n${stamp(m)} ERROR 404: Not Found.\n\n`);
      return io.result(8);
    }
    const name = value(p, 'O', 'output-document') ?? (path ?? '/').split('/').pop() ?? 'index.html';
    await log(
      `HTTP request sent, awaiting response... 200 OK\nLength: ${d.bytes} (${human(d.bytes)}) [${d.type ?? 'application/octet-stream'}]\nSaving to: ‘${name}’\n\n`,
    );
    const lines = dotLines(d.bytes);
    const step = Math.max(1, Math.floor(lines.length / 50));
    for (let i = 0; i < lines.length; i += step) {
      if (!(await io.sleep(((step * 50 * 1024) / BYTES_PER_S) * 1000))) return io.result(130);
      await log(`${lines.slice(i, i + step).join('\n')}\n`);
    }
    const target = name === '-' ? undefined : ctx.fs.resolvePath(ctx.cwd, name);
    if (target) {
      try {
        await ctx.fs.writeFile(target, d.content ?? `l20-setup lab: ${url} (${d.bytes} bytes)\n`);
      } catch {
        await log(`${name}: Permission denied\n`);
        return io.result(3);
      }
    }
    await log(
      `\n${stamp(m)} (${(BYTES_PER_S / 1024 / 1024).toFixed(1)} MB/s) - ‘${name}’ saved [${d.bytes}/${d.bytes}]\n\n`,
    );
    return io.result(0);
  },
};
