/**
 * The module boundaries, checked on the import graph the TypeScript compiler resolves (test/helpers/import-graph.ts):
 *
 * - src/ is the engine, transport, parsers and rules: no Ink or React there, so it runs headless.
 * - screens/ are views: no SSH or processes (ssh2, execa, src/transport), no lab; they ask the controller.
 * - checks/ are stages and checks as data: nothing from the lab.
 * - The product reads nothing from the simulator: only the lab starters import the lab. If the product took a
 *   value from the lab (a version pin, a file path, a generator), the lab would be confirming itself.
 * - The lab reaches checks/ through one module that exists for it, and the rest of the product through a short
 *   list of modules (both listed in the lab's README.md), so what the lab may depend on is a decision.
 * - No import cycle outside the lab (type-only imports count: see import-graph.ts); the lab's known ones may
 *   only shrink (docs/lab-cycles.md has the plan).
 * - Only src/cli.ts and src/commands/ import src/commands/ (the entry points sit on top).
 * - No re-export shims, and no re-export lines in src/, screens/, checks/ and the lab: a name is imported from
 *   the module that defines it, so moving a name means pointing its importers at the new home.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  boundaryViolations,
  buildImportGraph,
  describeCycle,
  importCycles,
  passThroughReExports,
  reExportOnlyFiles,
  type BoundaryRule,
  type ImportEdge,
  type ImportGraph,
} from '../helpers/import-graph.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** Where the simulator lives. */
const LAB = 'lab';
/** The one module the lab takes checks/ names through. */
const LAB_CHECKS_SURFACE = `${LAB}/product-checks.ts`;
/** Every directory whose files are scanned (a missing one is skipped). */
const SCANNED = ['src', 'screens', 'checks', 'bin', 'lab'];

/** Files allowed to import the lab, each with why: they start it or name its scenarios for the CLI. */
const LAB_STARTERS: Readonly<Record<string, string>> = {
  'src/commands/lab-serve.ts': '`l20-setup lab serve`: starts the lab and writes its inventory',
  'src/target.ts': '`--lab`: starts an in-process lab as the target of a run',
  'src/commands/common.ts': "`--scenario`: checks the scenario name against the lab's list before starting it",
};

/** The product modules outside checks/ that the lab may import, each with why (lab/README.md lists them too). */
const LAB_PRODUCT_SURFACE: Readonly<Record<string, string>> = {
  'src/config/schema.ts': "the configuration's defaults (QoS) that the lab's own inventory leaves out",
  'src/transport/quote.ts': "recognising the transport's sudo wrapper, which the lab's sudo runs",
  'src/util/ssh-keys.ts': "generating the lab's host and client keys",
};

/**
 * The lab's files that sit in an import cycle today, relative to the lab: one component, where the machine model
 * (model/types.ts, machine.ts), its system (system/machine-system.ts, systemd) and the shell and tools that act on
 * it import each other. docs/lab-cycles.md says why and how to take it apart. Kept exact: a file that joins a
 * cycle fails, and so does one that left it (take it off the list: the cycle shrank).
 */
const KNOWN_LAB_CYCLE_FILES: readonly string[] = [
  'apt/archive-base.ts',
  'apt/archive.ts',
  'apt/dpkg-db.ts',
  'apt/services.ts',
  'apt/state.ts',
  'fs/procfs.ts',
  'fs/rdma-sysfs.ts',
  'fs/rootfs.ts',
  'fs/sysfs.ts',
  'model/cluster.ts',
  'model/machine.ts',
  'model/nvidia.ts',
  'model/packages.ts',
  'model/pci-topology.ts',
  'model/rdma.ts',
  'model/traffic.ts',
  'model/types.ts',
  'shell/coreutils.ts',
  'shell/programs.ts',
  'shell/shell.ts',
  'system/base-units.ts',
  'system/boot.ts',
  'system/commands.ts',
  'system/file-commands.ts',
  'system/file-info.ts',
  'system/kernel.ts',
  'system/kmod-commands.ts',
  'system/machine-system.ts',
  'system/owner-commands.ts',
  'system/proc-commands.ts',
  'system/procfs.ts',
  'system/systemd/boot-units.ts',
  'system/systemd/exec.ts',
  'system/systemd/journalctl.ts',
  'system/systemd/manager.ts',
  'system/systemd/programs.ts',
  'system/systemd/render.ts',
  'system/systemd/service-start.ts',
  'system/systemd/systemctl.ts',
  'system/systemd/systemd-run.ts',
  'system/systemd/types.ts',
  'tools/bonding-render.ts',
  'tools/bonding.ts',
  'tools/mgmt-path.ts',
  'tools/netdev-ops.ts',
  'tools/nvidia-proc.ts',
  'tools/types.ts',
  'tools/ufw.ts',
];

/** UI packages: only screens/ (and what starts them) may load them. */
const UI_PACKAGES = new Set(['ink', 'react', 'ink-spinner']);
/** Packages that reach hosts or run processes: never in a view. */
const SYSTEM_PACKAGES = new Set(['ssh2', 'execa', 'node-pty']);

const inDir =
  (dir: string) =>
  (file: string): boolean =>
    file.startsWith(`${dir}/`);
const inLab = inDir(LAB);
const importsFile =
  (test: (file: string) => boolean) =>
  (edge: ImportEdge): boolean =>
    edge.file !== undefined && test(edge.file);

const RULES: readonly BoundaryRule[] = [
  {
    name: 'src imports no UI',
    why: 'the engine runs headless (check, apply, monitor --plain); views live in screens/',
    appliesTo: (f) => inDir('src')(f) && !inLab(f),
    forbids: (e) => UI_PACKAGES.has(e.packageName ?? ''),
  },
  {
    name: 'screens reach no host',
    why: 'views ask the controller (src/engine/controller.ts); they do not open SSH or start processes',
    appliesTo: inDir('screens'),
    forbids: (e) =>
      SYSTEM_PACKAGES.has(e.packageName ?? '') || importsFile((f) => inDir('src/transport')(f) || inLab(f))(e),
  },
  {
    name: 'only the CLI and the commands import src/commands',
    why: 'a command is an entry point; a lower module taking a piece of one inverts the layers (move the piece down)',
    appliesTo: (f) => inDir('src')(f) && !inDir('src/commands')(f) && f !== 'src/cli.ts' && !inLab(f),
    forbids: importsFile(inDir('src/commands')),
  },
  {
    name: 'checks import no lab',
    why: 'the checks are what the lab is tested against; a value taken from the lab would confirm itself',
    appliesTo: inDir('checks'),
    forbids: importsFile(inLab),
  },
  {
    name: `the lab takes checks/ through ${LAB_CHECKS_SURFACE}`,
    why: 'what the lab may read of the checks is one deliberate, documented list',
    appliesTo: (f) => inLab(f) && f !== LAB_CHECKS_SURFACE,
    forbids: importsFile(inDir('checks')),
  },
  {
    name: 'the lab imports only its product surface',
    why: "the lab depends on the product through LAB_PRODUCT_SURFACE (listed in the lab's README.md)",
    appliesTo: inLab,
    forbids: importsFile((f) => !inLab(f) && !inDir('checks')(f) && !(f in LAB_PRODUCT_SURFACE)),
  },
  {
    name: 'only the lab starters import the lab',
    why: 'the product must not read from the simulator: move the value into checks/ or src/',
    appliesTo: (f) => !inLab(f) && !(f in LAB_STARTERS),
    forbids: importsFile(inLab),
  },
];

/** The relative specifier `from` would write for `to` (both root-relative .ts paths). */
function specifier(from: string, to: string): string {
  const path = posix.relative(posix.dirname(from), to).replace(/\.ts$/, '.js');
  return path.startsWith('.') ? path : `./${path}`;
}

function cyclesOutsideLab(graph: ImportGraph): string[] {
  return importCycles(graph, (f) => !inLab(f)).map((c) => `${describeCycle(graph, c)}: ${c.join(', ')}`);
}

/** Re-export shims, except the lab's checks surface, whose whole job is to name what the lab may use. */
function shims(graph: ImportGraph): string[] {
  return reExportOnlyFiles(graph).filter((f) => f !== LAB_CHECKS_SURFACE);
}

/** Where no statement may pass on another module's names (the lab's checks surface aside, as above). */
const NO_RE_EXPORTS = ['src', 'screens', 'checks', LAB];

function reExportLines(graph: ImportGraph): string[] {
  return passThroughReExports(graph, (f) => NO_RE_EXPORTS.some((dir) => inDir(dir)(f)) && f !== LAB_CHECKS_SURFACE);
}

describe('module boundaries', () => {
  const planted = mkdtempSync(join(tmpdir(), 'l20-boundaries-'));
  afterAll(() => rmSync(planted, { recursive: true, force: true }));

  it('the checker reports a planted cycle (type-only), forbidden imports, shims, re-exports, a broken import', () => {
    const files: Record<string, string> = {
      'src/engine/a.ts': "import type { B } from './b.js';\nexport interface A { b?: B }\n",
      'src/engine/b.ts': "import type { A } from './a.js';\nexport interface B { a?: A }\n",
      'src/engine/forward.ts': "export type { A } from './a.js';\n",
      // Declares something, so it is no shim, but three of its statements pass names on; the last two do not.
      'src/engine/mixed.ts':
        "import type { B } from './b.js';\nimport { t } from './view.js';\n" +
        "export * from './a.js';\nexport { type A as Alias } from './a.js';\nexport type { B };\n" +
        'const own = 1;\nexport { own };\nexport const views = [t];\n',
      'screens/default.ts': "import Host from './Host.js';\nexport default Host;\n",
      'src/engine/view.ts': "import { Text } from 'ink';\nexport const t = Text;\n",
      'src/engine/broken.ts': "import { gone } from './gone.js';\nexport const g = gone;\n",
      'src/transport/ssh.ts': 'export class SshHost {}\n',
      'screens/Host.tsx': "import { SshHost } from '../src/transport/ssh.js';\nexport const h = SshHost;\n",
      'checks/pins.ts': "export const PIN = '1';\n",
      'checks/peek.ts': `export const lab = () => import('${specifier('checks/peek.ts', `${LAB}/index.ts`)}');\n`,
      [LAB_CHECKS_SURFACE]: `export { PIN } from '${specifier(LAB_CHECKS_SURFACE, 'checks/pins.ts')}';\n`,
      [`${LAB}/index.ts`]: "import { PIN } from './product-checks.js';\nexport const pin = PIN;\n",
      [`${LAB}/model.ts`]:
        `import type { A } from '${specifier(`${LAB}/model.ts`, 'src/engine/a.ts')}';\n` + 'export type M = A;\n',
      'src/target.ts': `export const start = () => import('${specifier('src/target.ts', `${LAB}/index.ts`)}');\n`,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(planted, path)), { recursive: true });
      writeFileSync(join(planted, path), text);
    }
    const graph = buildImportGraph(planted, SCANNED);
    expect(cyclesOutsideLab(graph)).toEqual([
      'src/engine/a.ts → src/engine/b.ts → src/engine/a.ts: src/engine/a.ts, src/engine/b.ts',
    ]);
    expect(boundaryViolations(graph, RULES).sort()).toEqual(
      [
        `checks import no lab: checks/peek.ts imports ../${LAB}/index.js (${LAB}/index.ts)`,
        `only the lab starters import the lab: checks/peek.ts imports ../${LAB}/index.js (${LAB}/index.ts)`,
        'screens reach no host: screens/Host.tsx imports ../src/transport/ssh.js (src/transport/ssh.ts)',
        'src imports no UI: src/engine/view.ts imports ink',
        `the lab imports only its product surface: ${LAB}/model.ts imports ` +
          `${specifier(`${LAB}/model.ts`, 'src/engine/a.ts')} (src/engine/a.ts)`,
      ].sort(),
    );
    expect(shims(graph)).toEqual(['src/engine/forward.ts']);
    expect(reExportLines(graph)).toEqual([
      'screens/default.ts:2: export default Host;',
      "src/engine/forward.ts:1: export type { A } from './a.js';",
      "src/engine/mixed.ts:3: export * from './a.js';",
      "src/engine/mixed.ts:4: export { type A as Alias } from './a.js';",
      'src/engine/mixed.ts:5: export type { B };',
    ]);
    expect(graph.unresolved).toEqual(['src/engine/broken.ts: ./gone.js']);
  });

  const graph = buildImportGraph(ROOT, SCANNED);

  it('every relative import resolves, and the scan sees the tree', () => {
    expect(graph.unresolved).toEqual([]);
    for (const dir of ['src', 'screens', 'checks', LAB]) {
      expect(graph.files.some(inDir(dir)), `files under ${dir}/`).toBe(true);
    }
  });

  it('the listed starters and surface modules exist (a stale entry would hide nothing)', () => {
    for (const path of [...Object.keys(LAB_STARTERS), ...Object.keys(LAB_PRODUCT_SURFACE), LAB_CHECKS_SURFACE]) {
      expect(graph.files, `listed module ${path}`).toContain(path);
    }
  });

  it('no file breaks a boundary rule', () => {
    const why = RULES.map((r) => `${r.name}: ${r.why}`).join('\n');
    expect(boundaryViolations(graph, RULES), why).toEqual([]);
  });

  it('no import cycle outside the lab', () => {
    expect(cyclesOutsideLab(graph), 'move the shared type or function down into a module both can import').toEqual([]);
  });

  it("the lab's cycles are the known ones (docs/lab-cycles.md), no more, no fewer", () => {
    const inCycles = importCycles(graph, inLab)
      .flat()
      .map((f) => posix.relative(LAB, f))
      .sort();
    const joined = inCycles.filter((f) => !KNOWN_LAB_CYCLE_FILES.includes(f));
    const left = KNOWN_LAB_CYCLE_FILES.filter((f) => !inCycles.includes(f));
    expect(joined, 'a lab file joined an import cycle: cut the edge instead (docs/lab-cycles.md)').toEqual([]);
    expect(left, "these left the lab's cycles: take them off KNOWN_LAB_CYCLE_FILES").toEqual([]);
  });

  it('no re-export shims', () => {
    expect(shims(graph), 'import each name from the module that defines it, then delete the shim').toEqual([]);
  });

  it("no statement passes on another module's names", () => {
    const fix = 'point the importers at the module that defines the name, then delete the re-export';
    expect(reExportLines(graph), fix).toEqual([]);
  });
});
