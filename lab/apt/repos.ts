/**
 * The APT repositories the offline archive serves and how `sources.list` lines select them.
 * apt only offers a repository's packages after `apt-get update` fetched its index, and only
 * while a sources line names it: adding the CUDA or DOCA repository is a file write (by
 * cuda-keyring or doca-host, or by hand) followed by `apt-get update`, exactly as on a server.
 */
import type { IFileSystem } from 'just-bash';

export type RepoId = 'jammy' | 'jammy-updates' | 'jammy-security' | 'jammy-backports' | 'cuda' | 'doca';
export type Component = 'main' | 'restricted' | 'universe' | 'multiverse' | '';

export interface Repo {
  id: RepoId;
  uri: string;
  /** `jammy-updates`, or the path of a flat repository (`/`, `./`). */
  suite: string;
  flat: boolean;
  /** apt's pin priority for it (500 for every enabled source). */
  priority: number;
  /** Bytes of its InRelease file (the `Get:` line of `apt-get update`). */
  inReleaseBytes: number;
  /** Bytes of the Packages indices fetched on a refresh, per component. */
  indexBytes: Partial<Record<Component, number>>;
}

const UBUNTU = 'http://archive.ubuntu.com/ubuntu';
const SECURITY = 'http://security.ubuntu.com/ubuntu';
export const CUDA_REPO_URI = 'https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2204/x86_64';
/** DOCA-Host 2.9.1 LTS (DOCA-OFED 24.10) unpacks its repository here; `dpkg -i doca-host_…deb` ships the list. */
export const DOCA_VERSION = '2.9.1-018000-24.10-ubuntu2204';
export const DOCA_REPO_URI = `file:/usr/share/doca-host-${DOCA_VERSION}/repo`;

export const REPOS: readonly Repo[] = [
  { id: 'jammy', uri: UBUNTU, suite: 'jammy', flat: false, priority: 500, inReleaseBytes: 270_087, indexBytes: {} },
  {
    id: 'jammy-updates',
    uri: UBUNTU,
    suite: 'jammy-updates',
    flat: false,
    priority: 500,
    inReleaseBytes: 128_364,
    indexBytes: { main: 2_234_618, restricted: 3_160_541, universe: 1_196_810, multiverse: 51_339 },
  },
  {
    id: 'jammy-backports',
    uri: UBUNTU,
    suite: 'jammy-backports',
    flat: false,
    priority: 500,
    inReleaseBytes: 127_510,
    indexBytes: { universe: 33_244 },
  },
  {
    id: 'jammy-security',
    uri: SECURITY,
    suite: 'jammy-security',
    flat: false,
    priority: 500,
    inReleaseBytes: 129_206,
    indexBytes: { main: 1_967_310, restricted: 3_051_204, universe: 951_622, multiverse: 44_663 },
  },
  {
    id: 'cuda',
    uri: CUDA_REPO_URI,
    suite: '/',
    flat: true,
    priority: 500,
    inReleaseBytes: 1_581,
    indexBytes: { '': 2_061_314 },
  },
  {
    id: 'doca',
    uri: DOCA_REPO_URI,
    suite: './',
    flat: true,
    priority: 500,
    inReleaseBytes: 1_991,
    indexBytes: { '': 104_872 },
  },
];

export function repo(id: RepoId): Repo {
  const r = REPOS.find((x) => x.id === id);
  if (!r) throw new Error(`lab apt: unknown repository ${id}`);
  return r;
}

/** One `deb` line of a sources file. */
export interface SourceLine {
  uri: string;
  suite: string;
  components: string[];
  /** The archive repository it names, if the lab serves it. */
  repo?: Repo;
  file: string;
}

/** The jammy installer's /etc/apt/sources.list (comments trimmed to the ones it keeps). */
export const JAMMY_SOURCES_LIST = [
  '# See http://help.ubuntu.com/community/UpgradeNotes for how to upgrade to',
  '# newer versions of the distribution.',
  `deb ${UBUNTU} jammy main restricted`,
  '',
  '## Major bug fix updates produced after the final release of the',
  '## distribution.',
  `deb ${UBUNTU} jammy-updates main restricted`,
  '',
  `deb ${UBUNTU} jammy universe`,
  `deb ${UBUNTU} jammy-updates universe`,
  '',
  `deb ${UBUNTU} jammy multiverse`,
  `deb ${UBUNTU} jammy-updates multiverse`,
  '',
  `deb ${UBUNTU} jammy-backports main restricted universe multiverse`,
  '',
  `deb ${SECURITY} jammy-security main restricted`,
  `deb ${SECURITY} jammy-security universe`,
  `deb ${SECURITY} jammy-security multiverse`,
  '',
].join('\n');

const norm = (uri: string): string => uri.replace(/\/+$/, '');

/** Parses one-line-style sources (`deb [opts] URI SUITE [COMPONENT…]`); deb-src and comments are skipped. */
export function parseSources(text: string, file: string): SourceLine[] {
  const out: SourceLine[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line.startsWith('deb ') && !line.startsWith('deb\t')) continue;
    const words = line
      .slice(3)
      .trim()
      .replace(/^\[[^\]]*\]\s*/, '')
      .split(/\s+/);
    const [uri, suite, ...components] = words;
    if (!uri || !suite) continue;
    const flat = suite.endsWith('/');
    const known = REPOS.find(
      (r) =>
        norm(r.uri) === norm(uri) &&
        (flat ? r.flat && (suite === r.suite || suite === '/' || suite === './') : r.suite === suite),
    );
    out.push({ uri: norm(uri), suite, components, file, ...(known ? { repo: known } : {}) });
  }
  return out;
}

/** Every sources line on the machine, in the order apt reads them (sources.list, then sources.list.d/*.list). */
export async function readSources(fs: IFileSystem): Promise<SourceLine[]> {
  const lines: SourceLine[] = [];
  const main = '/etc/apt/sources.list';
  if (await fs.exists(main)) lines.push(...parseSources(await fs.readFile(main), main));
  const dir = '/etc/apt/sources.list.d';
  if (await fs.exists(dir)) {
    for (const name of (await fs.readdir(dir)).filter((n) => n.endsWith('.list')).sort()) {
      lines.push(...parseSources(await fs.readFile(`${dir}/${name}`), `${dir}/${name}`));
    }
  }
  return lines;
}

/** Whether a sources line enables the component a package lives in. */
export function lineCovers(line: SourceLine, id: RepoId, component: Component): boolean {
  return line.repo?.id === id && (line.repo.flat || line.components.includes(component));
}
