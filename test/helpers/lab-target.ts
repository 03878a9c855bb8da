/** Starts a lab and returns SSH hosts connected through the real transport (as --lab does). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLab, type Lab, type LabOptions } from '../../lab/index.js';
import { hostsFromConfig, labInventory } from '../../src/target.js';
import type { ClusterConfig } from '../../src/config/schema.js';
import type { Host } from '../../src/transport/types.js';

export interface LabTarget {
  lab: Lab;
  config: ClusterConfig;
  hosts: Host[];
  dir: string;
  knownHostsFile: string;
  identityFile: string;
  close(): Promise<void>;
}

export async function labTarget(options: LabOptions = {}): Promise<LabTarget> {
  const lab = await startLab({ speed: 'max', ...options });
  const dir = mkdtempSync(join(tmpdir(), 'l20-labt-'));
  const { config, files } = labInventory(lab, dir);
  const hosts = hostsFromConfig(config);
  return {
    lab,
    config,
    hosts,
    dir,
    knownHostsFile: files.knownHostsFile,
    identityFile: files.identityFile,
    async close() {
      await Promise.all(hosts.map((h) => h.close()));
      await lab.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
