/** R30 NIC stack, R31 OFED flags, R32 one driver method, R33 driver branch / CUDA, R35 memlock (cfg parts). */
import type { ShellCommand } from '../../parse/shell-commands.js';
import type { Finding, Severity } from '../types.js';
import { aptInstallOf, ofedInstallOf, pipInstallOf, runfileOf } from './commands.js';
import { allCommands, cmdText, cmpVersion, commandsOf, mk, short, worst } from './context.js';
import type { CfgContext, CfgFile, CfgRule } from './context.js';
import { DRIVER_BRANCHES, DRIVER_FIX, OFED_LAST, OFED_LTS, OFED_UNPUBLISHED } from './data.js';

const OFED_VER = /MLNX_OFED(?:_LINUX)?-(\d+\.\d+)-(\d+(?:\.\d+)+)/;

export const R30: CfgRule = {
  id: 'R30',
  title: 'NIC software stack: unpublished, short-lived or end-of-line MLNX_OFED',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    const seen = new Set<string>();
    for (const c of commandsOf(f)) {
      for (const w of c.argv) {
        const m = OFED_VER.exec(w.text);
        if (!m) continue;
        const branch = m[1] as string;
        const version = `${branch}-${m[2]}`;
        if (seen.has(version)) continue;
        seen.add(version);
        const why: Array<[Severity, string]> = [];
        const ga = OFED_UNPUBLISHED[version];
        if (ga)
          why.push(['high', `MLNX_OFED ${version} was never published (the ${branch} GA is ${ga}): the download 404s`]);
        if (cmpVersion(branch, OFED_LAST) > 0)
          why.push(['high', `no MLNX_OFED ${branch} exists: ${OFED_LAST} LTS was the last standalone release`]);
        else if (!OFED_LTS.includes(branch))
          why.push(['medium', `${branch} is a short-lived branch (LTS: ${OFED_LTS.join(', ')})`]);
        why.push([
          'info',
          `MLNX_OFED is end-of-line (${OFED_LAST} LTS was the last; successor DOCA-OFED). The NIC (ConnectX-4 15b3:1013 vs ConnectX-4 Lx 15b3:1015) is identified by PCI ID, never by the label "CX4": not checked (needs host: lspci -nn)`,
        ]);
        const sev = worst(why.map(([s]) => s));
        if (sev === 'info') continue;
        const url =
          /^(?:https?|ftp):/.test(w.text) && ga ? ` (that release: \`wget ${w.text.split(version).join(ga)}\`)` : '';
        out.push(
          mk(
            this,
            sev,
            f,
            w.line,
            `${cmdText(f, c, w.line)} → ${why.map(([, t]) => t).join('; ')}`,
            `ConnectX-4 Lx: the inbox stack (\`sudo apt-get install -y rdma-core ibverbs-utils rdmacm-utils infiniband-diags perftest\`) or current DOCA-OFED; ConnectX-4: MLNX_OFED 24.10 LTS or DOCA 2.9 LTS, pinned${url}. Same stack and version on both hosts.`,
          ),
        );
      }
    }
    return out;
  },
};

const OFED_NEEDLESS: Record<string, string> = {
  '--enable-gds': 'GPUDirect Storage (NCCL does not use it)',
  '--with-nvmf': 'NVMe-oF target/host modules',
  '--with-neohost-backend': 'the NEO-Host management backend',
  '--add-kernel-support':
    'a rebuild against the running kernel (only needed when no prebuilt kernel matches `uname -r`)',
};

export const R31: CfgRule = {
  id: 'R31',
  title: 'OFED installer flags an NCCL host does not need',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const c of commandsOf(f)) {
      const flags = ofedInstallOf(c);
      const extra = (flags ?? []).filter((x) => OFED_NEEDLESS[x.name]);
      if (extra.length === 0) continue;
      out.push(
        mk(
          this,
          'low',
          f,
          c.line,
          `${cmdText(f, c)} → ${extra.map((x) => `${x.name}: ${OFED_NEEDLESS[x.name]}`).join('; ')}. The installer also flashes NIC firmware by default`,
          '`sudo ./mlnxofedinstall --skip-unsupported-devices-check --without-fw-update` (add `--add-kernel-support` only for a kernel without prebuilt modules).',
        ),
      );
    }
    return out;
  },
};

interface DriverInstall {
  file: CfgFile;
  c: ShellCommand;
  line: number;
  method: 'apt' | 'runfile';
  branch?: number;
  what: string;
  /** CUDA a runfile bundles. */
  cuda?: string;
}

/** Driver installs of a command: apt `nvidia-driver-N`/`nvidia-dkms-N`/`cuda-drivers`, or a runfile driver. */
function driverInstalls(file: CfgFile, c: ShellCommand): DriverInstall[] {
  const out: DriverInstall[] = [];
  for (const p of aptInstallOf(c) ?? []) {
    const m = /^(?:nvidia-driver|nvidia-dkms|nvidia-headless)-(\d{3})/.exec(p.text);
    if (m) out.push({ file, c, line: p.line, method: 'apt', branch: Number(m[1]), what: p.text });
    else if (/^cuda-drivers/.test(p.text)) out.push({ file, c, line: p.line, method: 'apt', what: p.text });
  }
  const r = runfileOf(c);
  if (r) {
    const name = r.file.text.slice(r.file.text.lastIndexOf('/') + 1);
    const cuda = /^cuda_(\d+\.\d+)(?:\.\d+)?_(\d{3})\.[\d.]+_linux/.exec(name);
    const drv = /^NVIDIA-Linux-[\w-]{1,40}?-(\d{3})\.[\d.]{1,20}\.run$/.exec(name);
    const flags = r.args.map((w) => w.text);
    if (drv) out.push({ file, c, line: r.file.line, method: 'runfile', branch: Number(drv[1]), what: name });
    else if (cuda && (flags.includes('--driver') || !flags.includes('--toolkit')))
      out.push({
        file,
        c,
        line: r.file.line,
        method: 'runfile',
        branch: Number(cuda[2]),
        what: `${name} --driver`,
        cuda: cuda[1] as string,
      });
  }
  return out;
}

function allDriverInstalls(ctx: CfgContext): DriverInstall[] {
  return allCommands(ctx).flatMap(({ file, c }) => driverInstalls(file, c));
}

const where = (d: DriverInstall, f: CfgFile): string =>
  d.file === f ? `line ${d.line}` : `${short(d.file.name)}:${d.line}`;

export const R32: CfgRule = {
  id: 'R32',
  title: 'Two GPU-driver install methods or branches',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const all = allDriverInstalls(ctx);
    const methods = new Set(all.map((d) => d.method));
    const branches = new Set(all.flatMap((d) => (d.branch ? [d.branch] : [])));
    if (methods.size < 2 && branches.size < 2) return [];
    const mine = all.filter((d) => d.file === f);
    const at = mine.find((d) => d.method === 'runfile') ?? mine[mine.length - 1];
    if (!at) return [];
    const list = all
      .map(
        (d) =>
          `${d.method === 'apt' ? 'apt' : 'runfile'} ${d.what}${d.branch ? ` (branch ${d.branch})` : ''} at ${where(d, f)}`,
      )
      .join('; ');
    const cudaRun = all.find((d) => d.cuda);
    return [
      mk(
        this,
        'blocker',
        f,
        at.line,
        `${cmdText(f, at.c, at.line)} → ${list}: ${methods.size > 1 ? 'a package driver mixed with a runfile driver (the runfile stops at "Existing package manager installation of the driver found", or overwrites its files)' : ''}${methods.size > 1 && branches.size > 1 ? ' and ' : ''}${branches.size > 1 ? `${branches.size} branches (${[...branches].join(', ')})` : ''}. Host traces (/usr/bin/nvidia-uninstall, dkms): not checked (needs host)`,
        `Use the apt driver only: \`sudo apt-get install -y ${DRIVER_FIX}\`; take the toolkit from \`cuda-toolkit-X-Y\`${cudaRun ? ` or \`sudo sh ${cudaRun.what.replace(/ --driver$/, '')} --silent --toolkit\` (never \`--driver\`)` : ''}. CUDA Installation Guide: "Handle Conflicting Installation Methods".`,
      ),
    ];
  },
};

/** CUDA runtimes the run installs: runfile names, `cuda-toolkit-X-Y`, `torch…+cuXYZ` pins. */
function cudaRuntimes(ctx: CfgContext): Array<{ version: string; what: string }> {
  const out: Array<{ version: string; what: string }> = [];
  for (const { c } of allCommands(ctx)) {
    const r = runfileOf(c);
    const m = r && /cuda_(\d+\.\d+)/.exec(r.file.text);
    if (m) out.push({ version: m[1] as string, what: r.file.text.slice(r.file.text.lastIndexOf('/') + 1) });
    for (const p of aptInstallOf(c) ?? []) {
      const t = /^cuda-toolkit-(\d+)-(\d+)$/.exec(p.text);
      if (t) out.push({ version: `${t[1]}.${t[2]}`, what: p.text });
    }
    for (const p of pipInstallOf(c)?.packages ?? []) {
      const t = /\+cu(\d{2})(\d)\b/.exec(p.text) ?? /cu(1\d)(\d)\b/.exec(p.text);
      if (t) out.push({ version: `${t[1]}.${t[2]}`, what: p.text });
    }
  }
  return out.filter((r, i) => out.findIndex((x) => x.version === r.version && x.what === r.what) === i);
}

export const R33: CfgRule = {
  id: 'R33',
  title: 'GPU driver branch: end-of-life, feature branch, or older than the CUDA runtime',
  check(f: CfgFile, ctx: CfgContext): Finding[] {
    const out: Finding[] = [];
    const runtimes = cudaRuntimes(ctx);
    for (const d of allDriverInstalls(ctx).filter((x) => x.file === f && x.branch !== undefined)) {
      const b = DRIVER_BRANCHES[d.branch as number];
      if (!b) continue;
      const why: Array<[Severity, string]> = [];
      if (b.status === 'eol') why.push(['high', `${b.note}: no security or bug fixes`]);
      if (b.status === 'nfb') why.push(['high', `${b.note}: short-lived, not for production`]);
      for (const rt of runtimes) {
        const [dMaj, rMaj] = [parseInt(b.cuda, 10), parseInt(rt.version, 10)];
        if (rMaj > dMaj)
          why.push([
            'blocker',
            `${rt.what} needs CUDA ${rt.version} > driver ${d.branch}'s CUDA ${b.cuda} ("CUDA driver version is insufficient for CUDA runtime version"; 13.x needs ≥ 580)`,
          ]);
        else if (rMaj === dMaj && cmpVersion(rt.version, b.cuda) > 0)
          why.push([
            'medium',
            `${rt.what} is CUDA ${rt.version} on driver ${d.branch} (CUDA ${b.cuda}): minor-version compatibility only, no newer-PTX JIT`,
          ]);
      }
      if (why.length === 0) continue;
      out.push(
        mk(
          this,
          worst(why.map(([s]) => s)),
          f,
          d.line,
          `${cmdText(f, d.c, d.line)} → ${why.map(([, t]) => t).join('; ')}. Installed driver vs torch.version.cuda: not checked (needs host)`,
          `\`sudo apt-get install -y ${DRIVER_FIX}\` (R580 LTSB, EOL June 2028, open kernel modules), the same version on both hosts, then hold it (\`apt-mark hold\`).`,
        ),
      );
    }
    return out;
  },
};

const JOB = /^(?:ray|vllm|python[\d.]*|torchrun|mpirun|all_reduce_perf|ib_(?:write|read|send)_(?:bw|lat))$/;

export const R35: CfgRule = {
  id: 'R35',
  title: 'Locked memory not unlimited where RDMA jobs start',
  check(f: CfgFile): Finding[] {
    const out: Finding[] = [];
    for (const u of f.units) {
      const job = u.commands.find((c) => JOB.test(c.program));
      if (!job) continue;
      const lim = u.entries.find((e) => e.key === 'LimitMEMLOCK');
      if (lim && /^(?:infinity|unlimited)$/i.test(lim.value.trim())) continue;
      const line = lim?.line ?? job.line;
      out.push(
        mk(
          this,
          'high',
          f,
          line,
          `${lim ? `${lim.key}=${lim.value}` : cmdText(f, job)} → a unit starting ${job.program} ${lim ? 'caps' : 'has no'} LimitMEMLOCK=infinity (limits.conf does not reach services): "Call to ibv_reg_mr failed with error Cannot allocate memory"`,
          'Add `LimitMEMLOCK=infinity` to the [Service] section.',
        ),
      );
    }
    for (const c of commandsOf(f)) {
      const l = c.program === 'ulimit' ? c.argv.findIndex((w) => /^-\w*l$/.test(w.text)) : -1;
      const v = l > 0 ? c.argv[l + 1]?.text : undefined;
      if (v && v !== 'unlimited' && commandsOf(f).some((x) => x.line > c.line && JOB.test(x.program))) {
        out.push(
          mk(
            this,
            'high',
            f,
            c.line,
            `${cmdText(f, c)} → locked memory capped at ${v} KiB for the jobs this script starts: "Call to ibv_reg_mr failed with error Cannot allocate memory"`,
            '`ulimit -l unlimited` (needs the hard limit: /etc/security/limits.d/90-l20-memlock.conf with `* hard memlock unlimited`).',
          ),
        );
      }
      if (!(c.program === 'docker' || c.program === 'podman') || c.argv[1]?.text !== 'run') continue;
      const a = c.argv.map((w) => w.text).join(' ');
      if (!/--gpus|\/dev\/infiniband/.test(a) || /--privileged/.test(a)) continue;
      const missing = [
        !/--ulimit[ =]memlock=-1/.test(a) && '--ulimit memlock=-1',
        !/--cap-add[ =](?:IPC_LOCK|ALL)/.test(a) && '--cap-add IPC_LOCK',
      ].filter(Boolean);
      if (missing.length > 0)
        out.push(
          mk(
            this,
            'high',
            f,
            c.line,
            `${cmdText(f, c)} → the container lacks ${missing.join(' and ')}: RDMA memory registration fails`,
            `Add ${missing.map((m) => `\`${m}\``).join(' ')} (and \`--device /dev/infiniband\`).`,
          ),
        );
    }
    return out;
  },
};
