/** gpu-driver verdicts (docs/STAGES.md §3.7; R32 one install method, R33 branch, R47 parity). */
import type { CheckDef, Verdict } from '../../src/engine/types.js';
import { DRIVER_BRANCHES, L20_MIB } from '../../src/rules/cfg/data.js';
import { branchOf, installedDriver, type GpuDriverFacts } from './facts.js';
import { DRIVER_PACKAGE, WHEELS_CUDA } from './probes.js';

/** memory.total of an L20: ECC on (the default) or off. */
const L20_MEMORY = [L20_MIB, 49140];
const L20_NAME = 'NVIDIA L20';

const flavour = (open: boolean | undefined): string =>
  open === undefined ? 'no kernel-module package' : open ? 'open' : 'proprietary';
/** A field nvidia-smi left out of its row, said so rather than shown as a blank or a `?`. */
const field = (v: string | number | null | undefined, unit = ''): string =>
  v === undefined || v === null || v === '' ? 'not reported' : `${v}${unit}`;

function packageLines(f: GpuDriverFacts): string {
  return f.packages.length > 0
    ? f.packages.map((p) => `${p.status.padEnd(3)}${p.name} ${p.version}`).join('\n')
    : '(no NVIDIA driver packages installed)';
}

const cmpMinor = (a: string, b: string): number => {
  const [am = 0, an = 0] = a.split('.').map(Number);
  const [bm = 0, bn = 0] = b.split('.').map(Number);
  return am !== bm ? am - bm : an - bn;
};

export const loadedCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.loaded',
  title: 'NVIDIA kernel module loaded',
  scope: 'host',
  needs: ['packages'],
  evaluate(f) {
    const inst = installedDriver(f);
    if (f.loaded) {
      const evidence = `${f.loaded.line}\ninstalled userspace: ${inst.version ?? '(none)'}`;
      if (inst.version && inst.version !== f.loaded.version) {
        return {
          status: 'fail',
          summary: `userspace ${inst.version} over the loaded ${f.loaded.version} module: NVML reports a version mismatch until the host reboots`,
          evidence,
          fix: 'reboot the host so the installed module loads (apply gpu-driver.install, which reboots)',
        };
      }
      return {
        status: 'pass',
        summary: `NVIDIA ${f.loaded.version} (${flavour(f.loaded.open)} kernel module) loaded`,
        evidence,
      };
    }
    const nouveau = f.modules.includes('nouveau');
    const evidence = `${f.notLoadedEvidence ?? '/proc/driver/nvidia/version missing'}\n${nouveau ? 'nouveau is loaded (lsmod)' : 'no nouveau or nvidia module loaded'}\n${packageLines(f)}`;
    if (inst.version) {
      return {
        status: 'fail',
        summary: `driver ${inst.version} is installed but its module is not loaded${nouveau ? ' (nouveau still bound)' : ''}: a reboot is pending`,
        evidence,
        fix: 'reboot the host (apply gpu-driver.install, which reboots and waits for it)',
      };
    }
    return {
      status: 'fail',
      summary: `no NVIDIA driver installed${nouveau ? ': nouveau drives the GPUs' : ''}`,
      evidence,
      fix: `apply gpu-driver.install: apt-get install -y ${DRIVER_PACKAGE}, hold it, enable nvidia-persistenced, reboot`,
    };
  },
};

export const methodCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.method',
  title: 'one install method and one branch',
  scope: 'host',
  needs: ['packages', 'dkms'],
  evaluate(f) {
    const apt = f.packages.filter((p) => p.kind !== 'cuda-drivers');
    const branches = [...new Set(f.packages.map((p) => p.branch).filter((b): b is number => b !== undefined))].sort();
    const dkmsNvidia = f.dkms.modules.filter((m) => /^nvidia/.test(m.name));
    const dkmsVersions = [...new Set(dkmsNvidia.map((m) => m.version))];
    const attempts = f.runfile.logs.filter((l) => l.existingPackage || l.branch !== undefined);
    const problems: string[] = [];
    if (f.runfile.uninstaller && apt.length > 0)
      problems.push('a runfile driver (/usr/bin/nvidia-uninstall) over the apt packages');
    else if (f.runfile.uninstaller)
      problems.push('a runfile driver (/usr/bin/nvidia-uninstall): apt cannot hold, update or remove it');
    if (apt.length > 0) {
      if (attempts.length > 0) {
        const branch = attempts.find((a) => a.branch !== undefined)?.branch;
        const stopped = attempts.some((a) => a.existingPackage);
        problems.push(
          `a runfile --driver install${branch ? ` (branch ${branch})` : ''} ran over the apt driver${stopped ? ' and stopped at "Existing package manager installation of the driver found": it installed nothing' : ''} (${attempts.map((a) => a.path).join(', ')})`,
        );
      }
    }
    if (branches.length > 1) problems.push(`packages of ${branches.length} branches (${branches.join(', ')})`);
    if (dkmsVersions.length > 1)
      problems.push(`DKMS builds of ${dkmsVersions.length} driver versions (${dkmsVersions.join(', ')})`);
    if (f.packages.some((p) => p.kind === 'cuda-drivers'))
      problems.push(
        "the CUDA repository's cuda-drivers metapackage (it pulls whatever driver the repository ships next)",
      );
    const evidence = [
      packageLines(f),
      f.runfile.uninstaller ? '/usr/bin/nvidia-uninstall present' : 'no /usr/bin/nvidia-uninstall',
      ...f.runfile.logs.map((l) => `${l.path}:\n${l.lines.slice(-8).join('\n')}`),
      f.dkms.evidence,
    ].join('\n');
    if (problems.length > 0) {
      return {
        status: 'fail',
        rule: 'R32',
        summary: `mixed GPU-driver installs: ${problems.join('; ')}`,
        evidence,
        fix: "apply gpu-driver.remove-conflicts (runfile driver uninstalled, the failed runfile's logs archived, other branches purged), then gpu-driver.install; a toolkit comes from cuda-toolkit-X-Y, never from a runfile with --driver",
      };
    }
    const inst = installedDriver(f);
    // No driver at all is no install method to judge: gpu-driver.loaded reports the absence.
    if (!inst.version)
      return {
        status: 'skip',
        rule: 'R32',
        summary: 'no GPU driver installed: no install method to judge (gpu-driver.loaded)',
        evidence,
      };
    const branch = inst.branch !== undefined ? `branch ${inst.branch}` : `version ${inst.version}`;
    return { status: 'pass', rule: 'R32', summary: `one method: apt packages of ${branch} only`, evidence };
  },
};

export const branchCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.branch',
  title: 'driver branch supported and new enough for the CUDA wheels',
  scope: 'host',
  needs: ['packages'],
  evaluate(f) {
    const version = f.loaded?.version ?? installedDriver(f).version;
    const branch = branchOf(version);
    if (!version || branch === undefined)
      return {
        status: 'skip',
        rule: 'R33',
        summary: 'no NVIDIA driver installed (gpu-driver.loaded)',
        evidence: packageLines(f),
      };
    const info = DRIVER_BRANCHES[branch];
    const evidence = [
      `driver ${version}${f.smi.cudaVersion ? `, nvidia-smi CUDA Version: ${f.smi.cudaVersion}` : ''}`,
      info
        ? `branch ${branch}: ${info.note}; newest CUDA ${info.cuda}`
        : `branch ${branch}: not in the lifecycle table`,
      `pinned wheels: CUDA ${WHEELS_CUDA} (torch cu${WHEELS_CUDA.replace('.', '')})`,
    ].join('\n');
    const fix = `apply gpu-driver.install: ${DRIVER_PACKAGE} (R580 LTSB, EOL June 2028, CUDA 13.0, open kernel modules), the same version on every host`;
    if (!info)
      return {
        status: 'warn',
        rule: 'R33',
        summary: `driver branch ${branch} is not in the lifecycle table`,
        evidence,
        fix,
      };
    const cuda = f.smi.cudaVersion ?? info.cuda;
    const wheelsMajor = Number(WHEELS_CUDA.split('.')[0]);
    const driverMajor = Number(cuda.split('.')[0]);
    if (wheelsMajor > driverMajor) {
      return {
        status: 'fail',
        rule: 'R33',
        summary: `driver ${version} supports CUDA ${cuda}, the wheels need ${WHEELS_CUDA}: "CUDA driver version is insufficient for CUDA runtime version"`,
        evidence,
        fix,
      };
    }
    const notes: string[] = [];
    if (info.status === 'eol') notes.push(`${info.note}: past end of support`);
    if (info.status === 'nfb') notes.push(`${info.note}: short-lived, not for production`);
    if (cmpMinor(WHEELS_CUDA, cuda) > 0)
      notes.push(
        `CUDA ${WHEELS_CUDA} wheels run on CUDA ${cuda} only through minor-version compatibility (no newer-PTX JIT)`,
      );
    if (notes.length > 0)
      return { status: 'warn', rule: 'R33', summary: `driver ${version}: ${notes.join('; ')}`, evidence, fix };
    return {
      status: 'pass',
      rule: 'R33',
      summary: `driver ${version}: ${info.note}, CUDA ${cuda} ≥ wheels' ${WHEELS_CUDA}`,
      evidence,
    };
  },
};

export const openCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.open',
  title: 'open GPU kernel modules',
  scope: 'host',
  needs: ['packages'],
  evaluate(f) {
    const open = f.loaded?.open ?? installedDriver(f).open;
    const evidence = f.loaded?.line ?? packageLines(f);
    if (open === undefined)
      return { status: 'skip', summary: 'no NVIDIA kernel module installed (gpu-driver.loaded)', evidence };
    if (open)
      return {
        status: 'pass',
        summary: 'open kernel module: DMA-BUF GPUDirect RDMA works with the inbox RDMA stack',
        evidence,
      };
    return {
      status: 'warn',
      summary:
        'proprietary kernel module: GPUDirect RDMA then needs nvidia-peermem on an OFED/DOCA ib_core (no DMA-BUF)',
      evidence,
      fix: `apply gpu-driver.install (${DRIVER_PACKAGE}: the -open flavour)`,
    };
  },
};

export const gpusCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.gpus',
  title: 'every GPU visible to the driver',
  scope: 'host',
  needs: ['lspci-gpus', 'query'],
  evaluate(f) {
    const q = f.query;
    const pci = f.pciGpus.map((g) => g.bdf);
    const rows = q.gpus.map((g) =>
      [
        `index ${field(g.index)}`,
        field(g.name),
        field(g.busId),
        `persistence ${field(g.values['persistence_mode'])}`,
        `memory ${field(g.memoryTotalMiB, ' MiB')}`,
        `power limit ${field(g.values['power.limit'], ' W')}`,
        `PCIe gen ${field(g.pcieLinkGenCurrent)} width ${field(g.pcieLinkWidthCurrent)}`,
      ].join(', '),
    );
    const onBus = pci.length ? `${pci.length} NVIDIA GPU function(s): ${pci.join(' ')}` : 'no NVIDIA GPU function';
    const evidence = `${q.evidence}\nlspci -d 10de: ${onBus}`;
    const noSmi = q.error !== undefined && /command not found/.test(q.error);
    if (pci.length === 0 && q.gpus.length === 0) {
      const smi = noSmi ? '; nvidia-smi is not installed (no NVIDIA driver)' : q.error ? `; ${q.error}` : '';
      return {
        status: 'fail',
        summary: `no NVIDIA GPU on the PCIe bus (lspci lists none)${smi}`,
        evidence,
        fix: 'this host has no GPU for the driver to see: check the inventory (inventory.gpus) and the host list',
      };
    }
    if (q.error) {
      return {
        status: 'fail',
        evidence,
        summary: noSmi
          ? `nvidia-smi is not installed (no NVIDIA driver) beside ${pci.length} GPU(s) on the PCIe bus`
          : q.error,
        fix: /mismatch/i.test(q.error)
          ? 'the installed userspace is newer than the loaded module: reboot (apply gpu-driver.install)'
          : /command not found/.test(q.error)
            ? 'apply gpu-driver.install'
            : 'load the driver: reboot after installing it (apply gpu-driver.install)',
      };
    }
    if (q.gpus.length === 0)
      return {
        status: 'fail',
        summary: 'nvidia-smi listed no GPUs',
        evidence,
        fix: 'check dmesg for NVRM errors; apply gpu-driver.install',
      };
    const seen = q.gpus.map((g) => g.bdf).filter((b): b is string => b !== undefined);
    const missing = pci.filter((b) => !seen.includes(b));
    const extra = seen.filter((b) => !pci.includes(b));
    const names = [...new Set(q.gpus.map((g) => g.name ?? 'name not reported'))];
    const memory = [...new Set(q.gpus.map((g) => g.memoryTotalMiB))];
    const power = [...new Set(q.gpus.map((g) => g.values['power.limit']))];
    if (missing.length > 0 || extra.length > 0) {
      return {
        status: 'fail',
        summary: `nvidia-smi sees ${q.gpus.length} GPUs, lspci ${pci.length}${missing.length ? `; missing ${missing.join(' ')}` : ''}${extra.length ? `; not in lspci ${extra.join(' ')}` : ''}`,
        evidence: `${evidence}\n${rows.join('\n')}`,
        fix: 'a GPU the driver does not see: dmesg | grep NVRM (fallen off the bus, Xid 79), reseat or RMA',
      };
    }
    const detail =
      `${q.gpus.length} × ${names.join('/')}, ${memory.map((m) => field(m)).join('/')} MiB, ` +
      `${power.map((w) => field(w)).join('/')} W`;
    if (names.some((n) => n !== L20_NAME) || memory.some((m) => m === undefined || !L20_MEMORY.includes(m))) {
      return {
        status: 'warn',
        summary: `${detail}: not the expected ${L20_NAME} (${L20_MEMORY.join(' or ')} MiB)`,
        evidence: `${evidence}\n${rows.join('\n')}`,
      };
    }
    return {
      status: 'pass',
      summary: `${detail} on ${seen[0]} … ${seen[seen.length - 1]}`,
      evidence: `${evidence}\n${rows.join('\n')}`,
    };
  },
};

export const persistenceCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.persistence',
  title: 'persistence mode',
  scope: 'host',
  needs: ['query', 'persistenced'],
  evaluate(f) {
    const modes = f.query.gpus.map((g) => `GPU ${field(g.index)} ${field(g.values['persistence_mode'])}`);
    const evidence = `persistence_mode: ${modes.join(' ') || 'no GPU row from nvidia-smi'}\n${f.persistencedEvidence}`;
    if (f.query.gpus.length === 0) return { status: 'skip', summary: 'no GPUs read (gpu-driver.gpus)', evidence };
    if (!f.persistenced) {
      return {
        status: 'error',
        summary: 'cannot tell: systemctl is-active nvidia-persistenced printed no state',
        evidence,
        fix: 'run `systemctl is-active nvidia-persistenced` on the host and read its message',
      };
    }
    const off = f.query.gpus.filter((g) => g.values['persistence_mode'] !== 'Enabled');
    if (off.length === 0 && f.persistenced === 'active')
      return {
        status: 'pass',
        summary: `persistence mode Enabled on ${f.query.gpus.length} GPUs (nvidia-persistenced active)`,
        evidence,
      };
    const what = [
      off.length > 0 ? `persistence mode off on ${off.length} GPUs` : '',
      f.persistenced !== 'active' ? `nvidia-persistenced ${f.persistenced}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    return {
      status: 'warn',
      summary: `${what}: every job re-initialises the GPUs (seconds per process start) and settings reset when the last client exits`,
      evidence,
      fix: 'apply gpu-driver.persistence: systemctl enable --now nvidia-persistenced',
    };
  },
};

export const secureBootCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.secure-boot',
  title: 'Secure Boot and DKMS modules',
  scope: 'host',
  needs: ['secure-boot'],
  evaluate(f) {
    const dkms = f.packages.some((p) => p.kind === 'dkms');
    if (f.secureBoot === undefined) {
      return {
        status: 'error',
        summary: 'cannot tell: mokutil --sb-state printed neither "SecureBoot enabled" nor "disabled"',
        evidence: f.secureBootEvidence,
        fix: 'run `mokutil --sb-state` on the host and read its message',
      };
    }
    if (!f.secureBoot) {
      const noEfi = /EFI variables are not supported/i.test(f.secureBootEvidence);
      return {
        status: 'pass',
        summary: noEfi
          ? 'no EFI (legacy boot): no Secure Boot, DKMS-built modules load'
          : 'Secure Boot disabled: DKMS-built modules load',
        evidence: f.secureBootEvidence,
      };
    }
    return dkms || !f.loaded
      ? {
          status: 'warn',
          summary: 'Secure Boot on: a DKMS-built nvidia module loads only after its MOK key is enrolled at the console',
          evidence: f.secureBootEvidence,
          fix: 'enrol the DKMS key (mokutil --import /var/lib/shim-signed/mok/MOK.der, confirm at the next boot console), or use the Canonical-signed linux-modules-nvidia-580-server-open-generic',
        }
      : { status: 'pass', summary: 'Secure Boot on; the loaded module is signed', evidence: f.secureBootEvidence };
  },
};

export const toolkitCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.toolkit',
  title: 'CUDA toolkit (only for building nccl-tests)',
  scope: 'host',
  needs: ['nvcc', 'smi'],
  evaluate(f) {
    const driverCuda = f.smi.cudaVersion ?? DRIVER_BRANCHES[branchOf(f.loaded?.version) ?? 0]?.cuda;
    if (!f.nvcc) {
      // No toolkit is the recommended state, seen in the probe's own "nvcc: not found".
      return {
        status: 'pass',
        summary:
          'no nvcc: not needed (the wheels bring their CUDA runtime); install cuda-toolkit-X-Y only to build nccl-tests',
        evidence: f.nvccEvidence,
      };
    }
    const evidence = `${f.nvcc.line}\ndriver CUDA ${driverCuda ?? 'not reported (no loaded driver, no nvidia-smi)'}`;
    // The claim is that the toolkit suits the driver: with no driver there is nothing to match it against.
    if (!driverCuda)
      return {
        status: 'skip',
        summary: `CUDA toolkit ${f.nvcc.version} (nvcc); no driver to match it against (gpu-driver.loaded)`,
        evidence,
      };
    if (driverCuda && Number(f.nvcc.version.split('.')[0]) > Number(driverCuda.split('.')[0])) {
      return {
        status: 'warn',
        summary: `toolkit CUDA ${f.nvcc.version} is newer than the driver's CUDA ${driverCuda}: what it builds will not run`,
        evidence,
        fix: `apply gpu-driver.toolkit (cuda-toolkit-${driverCuda.replace('.', '-')})`,
      };
    }
    return { status: 'pass', summary: `CUDA toolkit ${f.nvcc.version} (nvcc)`, evidence };
  },
};

function identity(f: GpuDriverFacts): { version?: string; open?: boolean; source: string } {
  if (f.loaded) return { version: f.loaded.version, open: f.loaded.open, source: 'loaded' };
  const inst = installedDriver(f);
  return {
    ...(inst.version ? { version: inst.version } : {}),
    ...(inst.open !== undefined ? { open: inst.open } : {}),
    source: inst.version ? 'installed, not loaded' : 'none',
  };
}

export const parityCheck: CheckDef<GpuDriverFacts> = {
  id: 'gpu-driver.parity',
  title: 'same driver version and flavour on every host',
  scope: 'pair',
  needs: ['packages'],
  evaluate(all): Verdict {
    const ids = all.map((a) => ({ host: a.host, ...identity(a.facts) }));
    const driverOf = (i: (typeof ids)[number]) =>
      i.version ? `${i.version} ${flavour(i.open)} (${i.source})` : 'no NVIDIA driver';
    const evidence = ids.map((i) => `${i.host}: ${driverOf(i)}`).join('\n');
    if (all.length < 2)
      return {
        status: 'skip',
        rule: 'R47',
        summary: `one host (${all[0]?.host ?? 'none'}): nothing to compare`,
        evidence: evidence || 'no host',
      };
    if (ids.every((i) => !i.version))
      return { status: 'skip', rule: 'R47', summary: 'no driver on any host yet', evidence };
    const ref = ids[0]!;
    const differ = ids.slice(1).filter((i) => i.version !== ref.version || i.open !== ref.open);
    if (differ.length === 0)
      return {
        status: 'pass',
        rule: 'R47',
        summary: `${ids.length} hosts run ${ref.version} (${flavour(ref.open)})`,
        evidence,
      };
    return {
      status: 'fail',
      rule: 'R47',
      summary: `${differ.map((d) => d.host).join(', ')} differ from ${ref.host} (${ref.version ?? 'none'} ${flavour(ref.open)}): one NCCL job needs one driver`,
      evidence,
      fix: `apply gpu-driver.install: ${DRIVER_PACKAGE} at one version on every host, then hold it`,
    };
  },
};

export const gpuDriverChecks: readonly CheckDef<GpuDriverFacts>[] = [
  loadedCheck,
  methodCheck,
  branchCheck,
  openCheck,
  gpusCheck,
  persistenceCheck,
  secureBootCheck,
  toolkitCheck,
  parityCheck,
];
