/**
 * Scenario parts for the gpu-driver and gpudirect stages (docs/STAGES.md §4.4). `ready` is what applying
 * both stages leaves on design A: nvidia-driver-580-server-open 580.126.09 (CUDA 13.0) from apt,
 * held, loaded (open module → DMA-BUF), persistence daemon enabled, iommu=pt booted, ACS off (the
 * BIOS default of the modelled servers). `tutorial` is the recipe as written: apt nvidia-driver-535
 * (proprietary), the CUDA 12.3 runfile run over it with --driver --toolkit, which stopped at
 * "Existing package manager installation of the driver found" and installed nothing (no nvcc), and
 * nvidia-peermem from /etc/modules on its MLNX_OFED.
 */
import { installInModel } from '../apt/dpkg-db.js';
import { aptInstallInModel } from '../apt/model-install.js';
import { DOCA_VERSION, type RepoId } from '../apt/repos.js';
import { aptState } from '../apt/state.js';
import { clusterSchema } from '../../src/config/schema.js';
import { mlx5Reloaded } from '../model/nic-stack.js';
import { portQos, setPfc, setTrust } from '../model/qos.js';
import { findVersion, parseDep, versionsOf } from '../apt/archive.js';
import type { ArchivePackage } from '../apt/archive-types.js';
import { installedUnits } from '../apt/services.js';
import type { Cluster } from '../model/cluster.js';
import { bindGpus, installedModule, loadedFrom, runtime } from '../model/nvidia.js';
import type { AcsFlags, Machine } from '../model/types.js';

export const TUTORIAL_DRIVER = { pkg: 'nvidia-driver-535', version: '535.183.01-0ubuntu0.22.04.1' } as const;
export const MISMATCH_DRIVER = {
  pkg: 'nvidia-driver-570-server-open',
  version: '570.172.08-0ubuntu0.22.04.1',
} as const;
export const PROPRIETARY_DRIVER = { pkg: 'nvidia-driver-580-server', version: '580.126.09-0ubuntu0.22.04.1' } as const;

/** The packages apt would install for `pkg=version` on this machine: the version, then its dependencies' closure. */
export function closure(
  m: Machine,
  pkg: string,
  version: string,
): Array<{ name: string; version: string; auto: boolean }> {
  const out = new Map<string, ArchivePackage>();
  const visit = (a: ArchivePackage): void => {
    if (out.has(a.name)) return;
    out.set(a.name, a);
    for (const dep of a.depends ?? []) {
      const alts = parseDep(dep);
      // Already satisfied on the machine, or a name the archive leaves to the base system.
      if (alts.some((x) => m.packages.get(x.name)?.status[1] === 'i' || out.has(x.name))) continue;
      const alt = alts.find((x) => versionsOf(x.name).length > 0);
      if (!alt) continue;
      const exact = alt.rel === '=' && alt.version ? findVersion(alt.name, alt.version) : undefined;
      const pick = exact ?? versionsOf(alt.name)[0];
      if (pick) visit(pick);
    }
  };
  const root = findVersion(pkg, version);
  if (!root) throw new Error(`lab: ${pkg} ${version} is not in the lab's apt archive`);
  visit(root);
  return [...out.values()].map((a) => ({ name: a.name, version: a.version, auto: a.name !== pkg }));
}

const NVIDIA_PACKAGE = /^(?:nvidia-|libnvidia-|xserver-xorg-video-nvidia-)/;

/** What `apt-get install -y <driver>` then `apt-mark hold` of the NVIDIA packages leaves in dpkg. */
export function installDriver(m: Machine, driver: { pkg: string; version: string }, hold: boolean): void {
  installInModel(m, closure(m, driver.pkg, driver.version));
  if (hold) holdNvidia(m);
}

/** `apt-mark hold` of every installed NVIDIA package. */
function holdNvidia(m: Machine): void {
  for (const p of m.packages.values()) if (NVIDIA_PACKAGE.test(p.name) && p.status === 'ii ') p.status = 'hi ';
}

/** The state after a boot with the installed module: nvidia loaded (nouveau blacklisted), GPUs bound. */
export function bootDriver(m: Machine, persistence: boolean): void {
  const build = installedModule(m);
  if (!build) return;
  const nvidia = ['nvidia', 'nvidia_modeset', 'nvidia_drm', 'nvidia_uvm'];
  m.modules = [...m.modules.filter((x) => x !== 'nouveau' && !nvidia.includes(x)), ...nvidia];
  // The DKMS build ran when the package was installed, a while before this boot.
  runtime(m).loaded = loadedFrom(m, build, m.clock.now() - 86_400_000);
  runtime(m).persistence = persistence;
  bindGpus(m);
}

/**
 * The enable link the package's postinst creates for a unit it ships (tutorial: a file with the unit's
 * text stands in for the symlink).
 */
function enablePackageUnit(m: Machine, unit: string): void {
  const u = installedUnits(m).find((x) => x.name === unit);
  if (u) (m.files ??= new Map()).set(`/etc/systemd/system/multi-user.target.wants/${unit}`, { content: u.content });
}

/**
 * Booted with iommu=pt (gpudirect.iommu-pt): the grub drop-in and grub.cfg that update-grub made are
 * among the recorded files (ready/).
 */
export function bootIommuPt(m: Machine): void {
  if (!/(^|\s)iommu=pt(\s|$)/.test(m.os.cmdline)) m.os.cmdline = `${m.os.cmdline} iommu=pt`;
  (m.firmware ??= {}).grubCmdline = m.os.cmdline;
}

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) {
    bootDriver(m, true);
    bootIommuPt(m);
    m.revision++;
  }
}

/**
 * What the CUDA 12.3.2 runfile (`sh cuda_12.3.2_545.23.08_linux.run --silent --driver --toolkit`) logs
 * over an apt driver (docs/STAGES.md §4.3): it detects the package-manager driver, refuses to continue and
 * installs nothing — neither its 545 driver nor the toolkit (so no nvcc). Its detection line is the
 * installer's; the run's lines are modelled after cuda-installer's log format.
 */
export const RUNFILE_LOG = [
  '[INFO]: Driver installation detected by command: apt list --installed | grep -e nvidia-driver-[0-9][0-9][0-9] -e nvidia-[0-9][0-9][0-9]',
  '[INFO]: Checking compiler version...',
  '[INFO]: gcc location: /usr/bin/gcc',
  '',
  '[INFO]: gcc version: gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) ',
  '',
  '[INFO]: Initializing menu',
  '[INFO]: nvidia-fs.setKOVersion(2.18.3)',
  '[INFO]: Setup complete',
  '[INFO]: Components to install: ',
  '[INFO]: Driver',
  '[INFO]: 545.23.08',
  '[INFO]: CUDA Toolkit 12.3',
  '[ERROR]: Existing package manager installation of the driver found. It is strongly recommended that you remove this before continuing.',
  '[ERROR]: Install of driver component failed.',
  '',
].join('\n');

export const RUNFILE = 'cuda_12.3.2_545.23.08_linux.run';

/**
 * The recipe's downloaded runfile as the lab carries it: a shell script standing in for the makeself
 * archive. Run over an apt driver (`sudo sh cuda_12.3.2_545.23.08_linux.run --silent --driver
 * --toolkit`) it does what the real one does there: logs the refusal and installs nothing. Without an
 * apt driver the real runfile would install its 545 driver; the lab carries no such payload and says so.
 */
function runfileScript(): string {
  return [
    '#!/bin/sh',
    '# This script was generated using Makeself 2.1.5',
    `# (l20-setup lab stand-in for ${RUNFILE}: the refusal over an apt driver is modelled, the payload is not)`,
    "if dpkg-query -W -f='${db:Status-Abbrev}\\n' 'nvidia-driver-*' 2>/dev/null | grep -q '^[hi]i'; then",
    "  cat >> /var/log/cuda-installer.log <<'EOF'",
    RUNFILE_LOG.replace(/\n$/, ''),
    'EOF',
    '  echo " Installation failed. See log at /var/log/cuda-installer.log for details."',
    '  exit 1',
    'fi',
    'echo "l20-setup lab: this runfile carries no driver payload; install the driver from apt (gpu-driver.install)" >&2',
    'exit 1',
    '',
  ].join('\n');
}

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    installDriver(m, TUTORIAL_DRIVER, false);
    // `sudo apt install -y nvidia-driver-535` enables the daemon; the recipe never rebooted before
    // running the runfile, but the lab shows the host as the operator finds it later: rebooted.
    enablePackageUnit(m, 'nvidia-persistenced.service');
    bootDriver(m, true);
    m.files ??= new Map();
    m.files.set('/var/log/cuda-installer.log', { content: RUNFILE_LOG });
    m.files.set(`${m.user.home}/${RUNFILE}`, { content: runfileScript(), mode: 0o644 });
    // `echo "nvidia-peermem" | sudo tee -a /etc/modules`, and its modprobe worked on MLNX_OFED's ib_core.
    m.files.set('/etc/modules', {
      content:
        '# /etc/modules: kernel modules to load at boot time.\n#\n# This file contains the names of kernel modules that should be loaded\n# at boot time, one per line. Lines beginning with "#" are ignored.\nnvidia-peermem\n',
    });
    if (m.ofed?.loaded) m.modules.push('nvidia_peermem');
    m.revision++;
  }
}

/** Ubuntu's pockets and the DOCA-Host local repository, as apt sees them once doca-host is in and `apt-get update` ran. */
const WITH_DOCA: readonly RepoId[] = ['jammy', 'jammy-updates', 'jammy-security', 'jammy-backports', 'doca'];

/** The QoS defaults of the lab's configuration (the qos part's `ready` uses the same). */
const QOS = clusterSchema.parse({ hosts: [{ name: 'h', address: '127.0.0.1', role: 'head' }] }).qos;

/**
 * What l20-roce-qos.service leaves at boot once mlnx-tools is installed: its script takes the
 * `mlnx_qos --trust dscp --pfc …` branch (checks/qos/script.ts), so trust is set directly (the
 * driver publishes its whole DSCP map) instead of through one `dcb app` entry.
 */
function bootQosWithMlnxTools(m: Machine): void {
  const pfs = m.netdevs.filter((d) => d.driver === 'mlx5_core' && d.pci).map((d) => d.name);
  for (const name of pfs) {
    const q = portQos(m, name);
    if (!q) continue;
    setTrust(q, QOS.trust);
    setPfc(
      q,
      Array.from({ length: 8 }, (_, i) => i === QOS.priority),
    );
  }
}

/**
 * Points nccl.conf's NCCL_IB_HCA line at the devices' current names (`before`: device → netdev before
 * the rename), as the nccl stage would rewrite it; other lines stay.
 */
function renameNcclHca(m: Machine, before: ReadonlyMap<string, string | undefined>): void {
  const file = m.files?.get('/etc/nccl.conf');
  if (!file) return;
  const now = (old: string): string => {
    const netdev = before.get(old);
    return m.rdma.find((r) => netdev !== undefined && r.netdev === netdev)?.name ?? old;
  };
  const rename = (list: string): string =>
    list
      .split(',')
      .map((e) => e.replace(/^[^:]+/, now))
      .join(',');
  file.content = file.content.replace(/^(NCCL_IB_HCA==?)(.*)$/m, (_l, key: string, list: string) => key + rename(list));
}

/**
 * `no-peermem`: the operator moved a `ready` host to DOCA-OFED and the proprietary driver flavour,
 * rebooted, and never set up nvidia-peermem (neither loaded nor in modules-load.d): no GDR path.
 * The packages are what the real commands leave: `dpkg -i doca-host_….deb` (its local repository
 * and sources list), `apt-get update`, `apt-get install -y doca-ofed` (DOCA's rdma-core family
 * upgrades jammy's in place, so later apt runs find every dependency met), and `apt-get install -y
 * nvidia-driver-580-server=…` (apt swaps out the open flavour; the NVIDIA packages held again).
 * After the reboot DOCA's mlx5 driver runs, its rdma-core keeps the kernel's `mlx5_N` names,
 * nccl.conf names those (as the nccl stage would regenerate it), and the QoS unit's mlnx_qos
 * branch set trust and PFC.
 */
export function noPeermem(cluster: Cluster): void {
  for (const m of cluster.machines) {
    installInModel(m, [{ name: 'doca-host', version: DOCA_VERSION }]);
    aptState(m).lists.add('doca');
    aptInstallInModel(m, ['doca-ofed'], { repos: WITH_DOCA });
    for (const p of m.packages.values()) if (NVIDIA_PACKAGE.test(p.name) && p.status === 'hi ') p.status = 'ii ';
    aptInstallInModel(m, [{ name: PROPRIETARY_DRIVER.pkg, version: PROPRIETARY_DRIVER.version }], { repos: WITH_DOCA });
    for (const p of m.packages.values()) if (NVIDIA_PACKAGE.test(p.name) && p.status === 'ii ') p.status = 'hi ';
    // The reboot: DOCA's mlx5 registers the devices afresh (mlx5_N), DCB and GID state start over.
    const names = new Map(m.rdma.map((r) => [r.name, r.netdev]));
    mlx5Reloaded(m);
    bootQosWithMlnxTools(m);
    bootDriver(m, true);
    m.modules = m.modules.filter((x) => x !== 'nvidia_peermem');
    renameNcclHca(m, names);
    m.revision++;
  }
}

/** ACS as a BIOS with "ACS enable" sets it: source validation and redirection on. */
const ACS_ON: AcsFlags = {
  srcValid: true,
  transBlk: false,
  reqRedir: true,
  cmpltRedir: true,
  upstreamFwd: true,
  egressCtrl: false,
  directTrans: false,
};

/** `acs-enabled`: node 1's downstream ports above GPUs and NIC 1 have `ACSCtl: SrcValid+` (from the BIOS, so every boot). */
export function acsEnabled(cluster: Cluster): void {
  const m = cluster.machines[0];
  if (!m) return;
  const nic1 = m.pci.filter((p) => p.kind === 'nic' && p.slot === 1).map((p) => p.parent);
  const ports = m.pci.filter(
    (p) =>
      p.kind === 'switch-down' &&
      p.acs &&
      m.pci.some((c) => c.parent === p.bdf && (c.kind === 'gpu' || nic1.includes(p.bdf))),
  );
  m.firmware ??= {};
  m.firmware.acs ??= {};
  for (const p of ports) {
    m.firmware.acs[p.bdf] = { ...ACS_ON };
    p.acs!.ctl = { ...ACS_ON };
  }
  m.revision++;
}

/** `driver-mismatch`: node 2 runs a 570.x open driver, node 1 580.x. */
export function driverMismatch(cluster: Cluster): void {
  const m = cluster.machines[1];
  if (!m) return;
  for (const name of [...m.packages.keys()]) if (NVIDIA_PACKAGE.test(name)) m.packages.delete(name);
  installDriver(m, MISMATCH_DRIVER, true);
  bootDriver(m, true);
  m.revision++;
}
