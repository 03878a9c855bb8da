/**
 * `modinfo <module>` (kmod): `key:           value` lines (`filename`, `version`, `license`, `description`,
 * `author`, `srcversion`, `depends`, `retpoline`, `intree`, `name`, `vermagic`, `sig_*`, `parm`, `alias`, …);
 * a new module starts at `filename:`. `modinfo: ERROR: Module <m> not found.` is kept as an error.
 */
import { z } from 'zod';
import { compact, guard, validate } from './common.js';
import { rdmaLines } from './rdma-util.js';

export const ModinfoModuleSchema = z.object({
  name: z.string().optional(),
  filename: z.string().optional(),
  version: z.string().optional(),
  license: z.string().optional(),
  description: z.string().optional(),
  author: z.string().optional(),
  srcversion: z.string().optional(),
  depends: z.array(z.string()).optional(),
  vermagic: z.string().optional(),
  /** Kernel release from `vermagic` (or the `/lib/modules/<rel>/` path). */
  kernel: z.string().optional(),
  intree: z.boolean().optional(),
  signer: z.string().optional(),
  parms: z.array(z.string()).optional(),
});
export type ModinfoModule = z.infer<typeof ModinfoModuleSchema>;

export const ModinfoFactsSchema = z.object({
  modules: z.array(ModinfoModuleSchema),
  errors: z.array(z.string()).optional(),
});
export type ModinfoFacts = z.infer<typeof ModinfoFactsSchema>;

const KEYS = new Set([
  'filename',
  'version',
  'license',
  'description',
  'author',
  'srcversion',
  'depends',
  'retpoline',
  'intree',
  'name',
  'vermagic',
  'signat',
  'signer',
  'sig_key',
  'sig_hashalgo',
  'signature',
  'sig_id',
  'parm',
  'alias',
  'softdep',
  'rhelversion',
  'firmware',
  'import_ns',
  'supported',
  'staging',
  'suserelease',
]);
const KV = /^\s*([a-z_]+):\s*(.*)$/;

export function parseModinfo(text: string): ModinfoFacts {
  return guard(
    () => {
      const modules: ModinfoModule[] = [];
      const errors: string[] = [];
      let cur: ModinfoModule | undefined;
      for (const line of rdmaLines(text)) {
        const t = line.trim();
        if (/^modinfo: ERROR:/.test(t)) {
          errors.push(t);
          continue;
        }
        const m = KV.exec(line);
        if (!m || m[1] === undefined || !KEYS.has(m[1])) continue;
        const key = m[1];
        const value = (m[2] ?? '').trim();
        if (key === 'filename' || !cur) {
          cur = {};
          modules.push(cur);
        }
        if (value === '') continue;
        switch (key) {
          case 'filename': {
            cur.filename = value;
            const k = /\/lib\/modules\/([^/]+)\//.exec(value);
            if (k) cur.kernel ??= k[1];
            break;
          }
          case 'depends':
            cur.depends = value
              .split(',')
              .map((s) => s.trim())
              .filter((s) => s !== '');
            break;
          case 'vermagic': {
            cur.vermagic = value;
            const k = /^(\S+)/.exec(value);
            if (k) cur.kernel = k[1];
            break;
          }
          case 'intree':
            cur.intree = /^y/i.test(value);
            break;
          case 'parm':
            (cur.parms ??= []).push(value);
            break;
          case 'name':
          case 'version':
          case 'license':
          case 'description':
          case 'author':
          case 'srcversion':
          case 'signer':
            cur[key] = value;
            break;
          default:
            break;
        }
      }
      for (const mod of modules) {
        if (mod.name === undefined && mod.filename) {
          const n = /([^/]+)\.ko(?:\.[a-z]+)?$/.exec(mod.filename);
          if (n) mod.name = n[1];
        }
      }
      return validate(
        ModinfoFactsSchema,
        compact({ modules: modules.map((x) => compact(x)), errors: errors.length ? errors : undefined }),
      );
    },
    () => ({ modules: [] }),
  );
}
