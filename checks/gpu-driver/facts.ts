/** What the gpu-driver stage reads about one host, through the shared parsers. */
import type { ProbeOutputs } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { parseDpkgQuery } from '../../src/parse/dpkg-query.js';
import { parseDkmsStatus, type DkmsModule } from '../../src/parse/dkms-status.js';
import { parseLspci } from '../../src/parse/lspci.js';
import { parseNvcc } from '../../src/parse/nvcc.js';
import { parseNvidiaDriverVersion } from '../../src/parse/nvidia-driver-version.js';
import { parseNvidiaSmi } from '../../src/parse/nvidia-smi.js';
import { parseNvidiaSmiQueryGpu, type QueryGpu } from '../../src/parse/nvidia-smi-query-gpu.js';
import { QUERY_FIELDS } from './probes.js';

export type DriverPackageKind =
  'driver' | 'dkms' | 'modules' | 'cuda-drivers' | 'utils' | 'compute' | 'compute-utils' | 'kernel-common';

export interface DriverPackage {
  name: string;
  version: string;
  /** dpkg status (`ii`, `hi`). */
  status: string;
  held: boolean;
  kind: DriverPackageKind;
  /** Driver branch (`580`) from the name, or from the version for cuda-drivers. */
  branch?: number;
  /** Kernel-module packages: open (`-open`) or proprietary flavour. */
  open?: boolean;
}

export interface RunfileLog {
  path: string;
  lines: string[];
  /** The run stopped at `Existing package manager installation of the driver found`. */
  existingPackage: boolean;
  /** Driver branch the runfile carried (`cuda_12.3.2_545.23.08_linux.run` → 545), when logged. */
  branch?: number;
}

export interface GpuDriverFacts {
  host: string;
  kernel?: string;
  /** The loaded kernel module (/proc/driver/nvidia/version). */
  loaded?: { version: string; open: boolean; line: string };
  /** Why it is not loaded (the probe's error text). */
  notLoadedEvidence?: string;
  /** Loaded kernel modules (/proc/modules). */
  modules: string[];
  packages: DriverPackage[];
  runfile: { uninstaller: boolean; logs: RunfileLog[] };
  dkms: { ran: boolean; modules: DkmsModule[]; evidence: string };
  /** `lspci -D -nn -d 10de:` functions: BDF, description, device id. */
  pciGpus: Array<{ bdf: string; description: string; deviceId?: string; offBus: boolean }>;
  query: { gpus: QueryGpu[]; error?: string; evidence: string };
  smi: { driverVersion?: string; cudaVersion?: string; error?: string };
  /** `systemctl is-active nvidia-persistenced`: active, inactive, failed, activating; '' when it printed no state. */
  persistenced: string;
  /** The command, its exit and what it printed (stderr included: why there was no state). */
  persistencedEvidence: string;
  secureBoot?: boolean;
  secureBootEvidence: string;
  nvcc?: { version: string; line: string };
  nvccEvidence: string;
  /** `apt-cache policy nvidia-driver-580-server-open`: Installed / Candidate. */
  candidate?: string;
  candidateInstalled?: string;
  candidateEvidence: string;
  holds: string[];
}

/** Module names of /proc/modules (`name size refcount users state address`): no tool needed to read them. */
export function procModuleNames(procModules: string): string[] {
  return procModules
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter(Boolean);
}

function text(r: RunResult | undefined): string {
  return r ? `${r.stdout}${r.stderr}` : '';
}

/** `580.126.09-0ubuntu0.22.04.1` → `580.126.09` (no epoch, no Debian revision). */
export function upstreamVersion(debian: string): string {
  return debian.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
}

export function branchOf(version: string | undefined): number | undefined {
  const m = /^(\d{3})\./.exec(version ?? '');
  return m ? Number(m[1]) : undefined;
}

const PACKAGE_SHAPES: Array<[RegExp, DriverPackageKind]> = [
  [/^nvidia-driver-(\d+)(-server)?(-open)?$/, 'driver'],
  [/^nvidia-dkms-(\d+)(-server)?(-open)?$/, 'dkms'],
  [/^linux-modules-nvidia-(\d+)(-server)?(-open)?-/, 'modules'],
  [/^nvidia-utils-(\d+)(-server)?$/, 'utils'],
  [/^libnvidia-compute-(\d+)(-server)?$/, 'compute'],
  [/^nvidia-compute-utils-(\d+)(-server)?$/, 'compute-utils'],
  [/^nvidia-kernel-common-(\d+)(-server)?$/, 'kernel-common'],
];

export function classifyPackage(name: string, version: string, status: string): DriverPackage | undefined {
  const held = status.startsWith('h');
  if (/^cuda-drivers(?:-\d+)?$/.test(name))
    return {
      name,
      version,
      status,
      held,
      kind: 'cuda-drivers',
      ...(branchOf(version) ? { branch: branchOf(version)! } : {}),
    };
  for (const [re, kind] of PACKAGE_SHAPES) {
    const m = re.exec(name);
    if (!m) continue;
    const kernel = kind === 'driver' || kind === 'dkms' || kind === 'modules';
    return { name, version, status, held, kind, branch: Number(m[1]), ...(kernel ? { open: m[3] !== undefined } : {}) };
  }
  return undefined;
}

/** Splits `### <tag> <path>` sections of the runfile probe. */
function runfileTraces(out: string): GpuDriverFacts['runfile'] {
  let uninstaller = false;
  const logs: RunfileLog[] = [];
  let cur: RunfileLog | undefined;
  for (const line of out.split('\n')) {
    const m = /^### (uninstaller|log) (\S+)/.exec(line);
    if (m) {
      if (m[1] === 'uninstaller') uninstaller = true;
      else logs.push((cur = { path: m[2]!, lines: [], existingPackage: false }));
      continue;
    }
    if (!cur || line.trim() === '') continue;
    cur.lines.push(line);
    if (/Existing package manager installation of the driver found/i.test(line)) cur.existingPackage = true;
    // The driver the runfile carries: its file name, nvidia-installer's, or cuda-installer's component list.
    const run =
      /_(\d{3})\.\d+(?:\.\d+)?_linux(?:_\w+)?\.run\b/.exec(line) ??
      /NVIDIA-Linux-\w+-(\d{3})\.\d+/.exec(line) ??
      /^\[INFO\]:\s+(\d{3})\.\d+\.\d+\s*$/.exec(line);
    if (run && cur.branch === undefined) cur.branch = Number(run[1]);
  }
  return { uninstaller, logs };
}

export function collectGpuDriver({ host, results }: ProbeOutputs): GpuDriverFacts {
  const r = (id: string): RunResult | undefined => results[id];
  const ok = (id: string): boolean => r(id)?.exitCode === 0;

  const drv = parseNvidiaDriverVersion(ok('nvidia-version') ? r('nvidia-version')!.stdout : '');
  const loaded = drv.version
    ? { version: drv.version, open: drv.openKernelModule ?? false, line: `NVRM version: ${drv.nvrmLine ?? ''}`.trim() }
    : undefined;

  const packages: DriverPackage[] = [];
  for (const p of parseDpkgQuery(text(r('packages'))).packages) {
    if (!p.installed || !p.version || !p.status) continue;
    const c = classifyPackage(p.name, p.version, p.status);
    if (c) packages.push(c);
  }

  const dkmsRun = r('dkms');
  const dkmsRan = dkmsRun !== undefined && dkmsRun.exitCode === 0;
  const dkms = {
    ran: dkmsRan,
    modules: dkmsRan ? parseDkmsStatus(dkmsRun.stdout).modules : [],
    evidence: dkmsRun
      ? `$ sudo dkms status → exit ${dkmsRun.exitCode}\n${text(dkmsRun).trim() || '(no modules)'}`
      : 'dkms status: not run',
  };

  const pciGpus = parseLspci(ok('lspci-gpus') ? r('lspci-gpus')!.stdout : '')
    .devices.filter(
      (d) => /3D controller|VGA compatible controller/.test(d.class) || d.classId === '0302' || d.classId === '0300',
    )
    .map((d) => ({
      bdf: d.bdf,
      description: d.description,
      offBus: d.offBus ?? false,
      ...(d.deviceId ? { deviceId: d.deviceId } : {}),
    }));

  const q = r('query');
  const qf = parseNvidiaSmiQueryGpu(text(q), { fields: QUERY_FIELDS });
  const qError =
    qf.driverLoaded === false
      ? "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
      : qf.nvmlError
        ? `Failed to initialize NVML: ${qf.nvmlError}`
        : qf.notInstalled || q?.exitCode === 127
          ? 'nvidia-smi: command not found'
          : qf.noDevices
            ? 'No devices were found'
            : undefined;
  const query = {
    // An error text (Ubuntu's "Command 'nvidia-smi' not found, but can be installed with:") is no GPU row.
    gpus: qError ? [] : qf.gpus,
    ...(qError ? { error: qError } : {}),
    evidence: q ? `$ ${q.commandLine}\n${text(q).trim()}` : 'nvidia-smi --query-gpu: not run',
  };

  const smiF = parseNvidiaSmi(text(r('smi')));
  const smi = {
    ...(smiF.driverVersion ? { driverVersion: smiF.driverVersion } : {}),
    ...(smiF.cudaVersion ? { cudaVersion: smiF.cudaVersion } : {}),
    ...(smiF.errors[0] ? { error: smiF.errors[0] } : {}),
  };

  const pd = r('persistenced');
  const persistenced = pd ? (pd.stdout.trim().split('\n').pop() ?? '').trim() : '';
  const persistencedEvidence = pd
    ? `$ systemctl is-active nvidia-persistenced → exit ${pd.exitCode ?? 'none'}: ` +
      `${text(pd).trim().split('\n').slice(0, 2).join(' ') || 'no output'}`
    : 'systemctl is-active nvidia-persistenced: not run';

  const sb = r('secure-boot');
  const sbText = text(sb).trim();
  const secureBoot = /SecureBoot enabled/i.test(sbText)
    ? true
    : /SecureBoot disabled|EFI variables are not supported/i.test(sbText)
      ? false
      : undefined;

  const nv = r('nvcc');
  const nvccF = nv?.exitCode === 0 ? parseNvcc(nv.stdout) : undefined;
  const nvccLine = nv?.stdout
    .split('\n')
    .find((l) => /Cuda compilation tools/.test(l))
    ?.trim();

  const cand = r('candidate');
  const candText = cand ? cand.stdout : '';
  const candidate = /^\s*Candidate:\s*(\S+)/m.exec(candText)?.[1];
  const candidateInstalled = /^\s*Installed:\s*(\S+)/m.exec(candText)?.[1];

  const kernel = ok('kernel') ? r('kernel')!.stdout.trim() : undefined;
  return {
    host,
    ...(kernel ? { kernel } : {}),
    ...(loaded
      ? { loaded }
      : {
          notLoadedEvidence: `$ cat /proc/driver/nvidia/version → exit ${r('nvidia-version')?.exitCode ?? 'not run'}\n${text(r('nvidia-version')).trim()}`,
        }),
    modules: ok('modules') ? procModuleNames(r('modules')!.stdout) : [],
    packages,
    runfile: runfileTraces(r('runfile')?.stdout ?? ''),
    dkms,
    pciGpus,
    query,
    smi,
    persistenced,
    persistencedEvidence,
    ...(secureBoot !== undefined ? { secureBoot } : {}),
    secureBootEvidence: sb ? `$ mokutil --sb-state → exit ${sb.exitCode}\n${sbText}` : 'mokutil: not run',
    ...(nvccF?.cudaVersion
      ? { nvcc: { version: nvccF.cudaVersion, line: nvccLine ?? `release ${nvccF.cudaVersion}` } }
      : {}),
    nvccEvidence: nv ? `${text(nv).trim() || '(no output)'}` : 'nvcc: not run',
    ...(candidate && candidate !== '(none)' ? { candidate } : {}),
    ...(candidateInstalled && candidateInstalled !== '(none)' ? { candidateInstalled } : {}),
    candidateEvidence: cand
      ? `$ apt-cache policy ${cand.commandLine.split(' ').pop()}\n${text(cand).trim()}`
      : 'apt-cache policy: not run',
    holds: ok('holds')
      ? r('holds')!
          .stdout.split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
      : [],
  };
}

/** The driver the host's packages install: userspace version and the kernel module's flavour. */
export function installedDriver(f: GpuDriverFacts): {
  version?: string;
  branch?: number;
  open?: boolean;
  packages: DriverPackage[];
} {
  const userspace = f.packages.find((p) => p.kind === 'utils') ?? f.packages.find((p) => p.kind === 'compute');
  const kmod = f.packages.find((p) => p.kind === 'dkms') ?? f.packages.find((p) => p.kind === 'modules');
  const version = userspace ? upstreamVersion(userspace.version) : kmod ? upstreamVersion(kmod.version) : undefined;
  const branch = branchOf(version);
  return {
    ...(version ? { version } : {}),
    ...(branch ? { branch } : {}),
    ...(kmod?.open !== undefined ? { open: kmod.open } : {}),
    packages: f.packages,
  };
}
