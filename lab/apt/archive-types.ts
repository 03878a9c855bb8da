/**
 * The shape of one package version in the offline archive: what the tables (archive-*.ts) declare and the
 * index (archive.ts) serves. Apart from both so that the tables do not import the index that imports them.
 */
import type { Component, RepoId } from './repos.js';

export interface PackageFile {
  content: string;
  mode?: number;
  /** dpkg conffile: kept on remove, deleted on purge (`Purging configuration files for …`). */
  conffile?: boolean;
}

export interface UnitSpec {
  /** `chrony.service` */
  name: string;
  /** Unit file text, installed to /lib/systemd/system/<name>. */
  content: string;
  /** The postinst enables it (deb-systemd-helper), printing `Created symlink …`. */
  enable?: boolean;
  /** The postinst starts it (deb-systemd-invoke start). */
  start?: boolean;
}

export interface ArchivePackage {
  name: string;
  version: string;
  arch: 'amd64' | 'all';
  /** Pockets that carry this exact version, with the component. */
  origins: Array<{ repo: RepoId; component: Component }>;
  section: string;
  priority: 'required' | 'important' | 'standard' | 'optional' | 'extra';
  /** One-line synopsis (dpkg -l, apt-cache show). */
  description: string;
  /** Size of the .deb in bytes (`Get:` lines, `Need to get`). */
  size: number;
  /** Installed-Size in kB (`After this operation`). */
  installedKb: number;
  /** Each entry `a`, `a (>= 1.2)` or alternatives `a | b`. */
  depends?: string[];
  recommends?: string[];
  suggests?: string[];
  /** Package or virtual names; a conflicting installed package is removed (`will be REMOVED`). */
  conflicts?: string[];
  provides?: string[];
  /** Multi-Arch: same libraries print as `name:amd64` in dpkg output. */
  multiArch?: 'same' | 'foreign' | 'allowed';
  source?: string;
  maintainer?: string;
  files?: Record<string, PackageFile | string>;
  /** Symbolic links it creates (update-alternatives and the like): path → target. */
  links?: Record<string, string>;
  units?: UnitSpec[];
  /** Kernel modules it provides (built by DKMS or shipped prebuilt). */
  modules?: string[];
  /** A DKMS module it registers and builds for the running kernel. */
  dkms?: { module: string; version: string };
  /** Lines its postinst prints after `Setting up …` (adduser, DKMS, update-initramfs, …). */
  setup?: string[];
  /** Triggers it activates (`Processing triggers for man-db …`): names of installed packages. */
  triggers?: string[];
  /** Uses debconf: without a terminal, debconf's frontend fallbacks are printed. */
  debconf?: boolean;
  /** Modelled unpack + configure time at speed 1 (default from the size; DKMS builds are long). */
  ms?: number;
}
