/**
 * `/proc/driver/nvidia/version`:
 *   proprietary: `NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022`
 *   open:        `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (builder@host)  `
 *   then         `GCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)`
 * The version is the first token after `Module` that starts with a digit. Lines are searched, not
 * anchored, so a pasted prefix (`## `) does not hide them. A missing file means no driver is loaded.
 */
import { z } from 'zod';
import { cleanLines, compact, guard, validate } from './common.js';

export const NvidiaDriverVersionFactsSchema = z.object({
  /** False when the file is missing (module not loaded). */
  present: z.boolean().optional(),
  version: z.string().optional(),
  /** The `Open Kernel Module` wording (open GPU kernel modules) vs `Kernel Module` (proprietary). */
  openKernelModule: z.boolean().optional(),
  arch: z.string().optional(),
  /** Text after the version: a build date (proprietary) or `Release Build (…)` (open). */
  build: z.string().optional(),
  gccVersion: z.string().optional(),
  nvrmLine: z.string().optional(),
});
export type NvidiaDriverVersionFacts = z.infer<typeof NvidiaDriverVersionFactsSchema>;

export function parseNvidiaDriverVersion(text: string): NvidiaDriverVersionFacts {
  return guard(
    () => {
      let facts: NvidiaDriverVersionFacts = {};
      let missing = false;
      for (const line of cleanLines(text, { commands: ['cat'] })) {
        const nvrm = /NVRM version:\s*(.*)$/.exec(line);
        if (nvrm && facts.version === undefined) {
          const body = (nvrm[1] ?? '').trim();
          // Both wordings print text after the version (a date, `Release Build`); a line that ends
          // at the version was cut there and its version may be incomplete.
          const mod = /^(.*?\bKernel Module\b(?:\s+for\s+\S+)?)\s+(\d[\w.-]*)\s+(\S.*)$/.exec(body);
          const open = /\bOpen Kernel Module\b/.test(body);
          const arch = /\b(x86_64|aarch64|ppc64le|arm64)\b/.exec(body)?.[1];
          facts = compact({
            ...facts,
            present: true,
            version: mod?.[2],
            openKernelModule: /\bKernel Module\b/.test(body) ? open : undefined,
            arch,
            build: mod?.[3]?.trim() || undefined,
            nvrmLine: body,
          });
          continue;
        }
        const gcc = /GCC version:\s*(?:gcc version\s+)?(\d[\w.~+-]*)/.exec(line);
        if (gcc && facts.gccVersion === undefined) {
          facts = { ...facts, gccVersion: gcc[1] };
          continue;
        }
        if (/\/proc\/driver\/nvidia\/version: No such file or directory/.test(line)) missing = true;
      }
      if (facts.present === undefined && missing) return { present: false };
      return validate(NvidiaDriverVersionFactsSchema, facts);
    },
    () => ({}),
  );
}
