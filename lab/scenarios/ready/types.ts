/** The shape of the `ready` scenario's recorded files (snapshot.ts, written by `node scripts/record-ready.mjs`). */

export interface ReadyHostFiles {
  /**
   * Regular files the apply wrote beyond `fresh` (not those of the packages it installed): path → the
   * content split at newlines (one array entry per line, so a re-recorded change diffs line by line),
   * mode and owner.
   */
  files: Record<string, { lines: string[]; mode: number; uid: number; gid: number }>;
  /** Directories it made or changed (mode, owner): ~/.ssh 0700, the model directory the login user owns. */
  dirs: Record<string, { mode: number; uid: number; gid: number }>;
  /**
   * dpkg's database after the apply, one `status|name|version|arch` entry per package (`ii |chrony|4.2-2ubuntu2|amd64`,
   * `hi ` held, `rc ` removed with conffiles kept), and the packages apt marked automatically installed.
   */
  packages: string[];
  autoInstalled: string[];
  /** Symlinks it made (systemctl enable's wants links, the venv's interpreter): path → target. */
  links: Record<string, string>;
}

export interface ReadySnapshot {
  /** How the data was made: the command and the lab it ran on. */
  recordedWith: string;
  /** One entry per host, in cluster order. */
  hosts: ReadyHostFiles[];
}

/** Stands for the vLLM API key in /etc/l20/vllm.env: the scenario puts a key derived from the lab's seed there. */
export const READY_API_KEY_MARK = '@L20_API_KEY@';
