/**
 * The files of the `ready` scenario, as data recorded from the stages' own apply fresh → ready
 * (snapshot.ts, written by `node scripts/record-ready.mjs`; test/lab/ready-from-apply.test.ts keeps it
 * byte-identical to what the apply writes). The scenario never calls the product's generators: a lab
 * that rendered its hosts' files with the code the checks compare against would only prove that the
 * code agrees with itself.
 *
 * Recorded on the two-host lab at seed 1. Per host position; a one-host lab gets node 1's files. The
 * one field derived per lab is the vLLM API key (from the seed, as before), marked in the data.
 */
import type { Cluster } from '../../model/cluster.js';
import type { Machine } from '../../model/types.js';
import { aptState } from '../../apt/state.js';
import { firewallState, ufwConfigOf, UFW_CONF, USER_RULES } from '../../tools/ufw.js';
import { rng } from '../../util/prng.js';
import { READY_SNAPSHOT } from './snapshot.js';
import { READY_API_KEY_MARK } from './types.js';

export const RECORD_COMMAND = 'node scripts/record-ready.mjs';

/** The key /etc/l20/vllm.env carries on `ready` (seeded per machine). */
export function readyApiKey(m: Machine): string {
  return rng(m.seed, m.hostname, 'vllm-api-key').hex(64);
}

/**
 * Puts the recorded dpkg database, directories, files and links (with owners) on every machine; loads the
 * firewall the files configure.
 */
export function putReadyFiles(cluster: Cluster): void {
  const recorded = READY_SNAPSHOT.hosts;
  if (cluster.machines.length > recorded.length) {
    const n = cluster.machines.length;
    throw new Error(`lab: the ready scenario is recorded for ${recorded.length} hosts, not ${n} (${RECORD_COMMAND})`);
  }
  cluster.machines.forEach((m, i) => {
    const host = recorded[i]!;
    m.packages = new Map(
      host.packages.map((entry) => {
        const [status, name, version, arch] = entry.split('|') as [string, string, string, string];
        return [name, { name, version, arch, status }];
      }),
    );
    aptState(m).auto = new Set(host.autoInstalled);
    m.files ??= new Map();
    m.links ??= new Map();
    m.dirs ??= new Map();
    for (const [path, d] of Object.entries(host.dirs)) {
      m.dirs.set(path, d.mode);
      m.system.files.set(path, { uid: d.uid, gid: d.gid });
    }
    for (const [path, f] of Object.entries(host.files)) {
      m.files.set(path, { content: f.lines.join('\n').replaceAll(READY_API_KEY_MARK, readyApiKey(m)), mode: f.mode });
      m.system.files.set(path, { uid: f.uid, gid: f.gid });
    }
    for (const [path, target] of Object.entries(host.links)) m.links.set(path, target);
    // ufw.service has loaded the saved rules since boot.
    const text = (path: string): string => m.files?.get(path)?.content ?? '';
    m.firewall = firewallState(ufwConfigOf(text(UFW_CONF), text(USER_RULES)));
    m.revision++;
  });
}
