/**
 * Starts a lab (at full speed unless told) and returns SSH hosts connected through the real transport
 * (as --lab does).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLab, type Lab, type LabOptions } from '../../lab/index.js';
import { LAB_MAX_SPEED_RECONNECT_MS, hostsFromConfig, labInventory } from '../../src/target.js';
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
  const speed = options.speed ?? 'max';
  const lab = await startLab({ ...options, speed });
  const dir = mkdtempSync(join(tmpdir(), 'l20-labt-'));
  const { config, files } = labInventory(lab, dir);
  // As `--lab --speed max` connects (src/target.ts).
  const hosts = hostsFromConfig(config, speed === 'max' ? { reconnectBackoffMs: LAB_MAX_SPEED_RECONNECT_MS } : {});
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
