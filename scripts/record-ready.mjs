#!/usr/bin/env node
/**
 * Re-records the lab's `ready` scenario from the stages' own apply (test/lab/record-ready.ts): run it
 * after changing anything the apply writes (a generator, a unit, a script); test/lab/ready-from-apply.test.ts
 * fails naming the file until then. Bundles the recorder with esbuild (packages stay in node_modules) and runs it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importBundled } from './esbuild-node.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { recordReady } = await importBundled(root, 'test/lab/record-ready.ts', 'record-ready');
await recordReady(join(root, 'lab/scenarios/ready/snapshot.ts'));
