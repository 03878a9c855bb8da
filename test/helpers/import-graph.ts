/**
 * The import graph of a source tree as the TypeScript compiler sees it: `ts.preProcessFile` lists every module
 * specifier of a file (import/export … from, side-effect imports, `import()` and `typeof import()` in types,
 * `import type`), `ts.resolveModuleName` turns each relative one into the file it names under the tree's own
 * compiler options (NodeNext: `./x.js` → `./x.ts`). A dev tool for test/build/module-boundaries.test.ts and
 * anyone who wants to look at the graph; nothing in the product uses it.
 *
 * Type-only imports are edges like any other. `import type` vanishes from the emitted JavaScript, so a cycle made
 * only of type edges cannot deadlock module loading — but it still ties the two modules' meaning together: one
 * cannot be read, moved or tested without the other, which is what a layering rule is for. A type shared by two
 * modules belongs in a third, lower one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One module specifier of a file and what it names. */
export interface ImportEdge {
  /** The importing file, relative to the tree's root, '/'-separated. */
  readonly from: string;
  /** The specifier as written. */
  readonly specifier: string;
  /** The file it resolves to, relative to the root (set for relative and other in-tree specifiers). */
  readonly file?: string;
  /** The package a bare specifier names (`react` for `react/jsx-runtime`, `node:fs` for builtins). */
  readonly packageName?: string;
}

export interface ImportGraph {
  /** The root every path is relative to. */
  readonly root: string;
  /** Every scanned source file, relative to the root, sorted. */
  readonly files: readonly string[];
  /** The edges of each scanned file, in source order. */
  readonly importsOf: ReadonlyMap<string, readonly ImportEdge[]>;
  /** Relative specifiers into a scanned directory that resolve to no file: `from: specifier`. */
  readonly unresolved: readonly string[];
}

const SOURCE_FILE = /\.(?:tsx?|mts|cts|jsx?|mjs|cjs)$/;

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

function sourceFilesUnder(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // a directory the tree does not have (lab/ before the move, bin/ in a planted tree)
  }
  return names.flatMap((name) => {
    if (name === 'node_modules') return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFilesUnder(path);
    return SOURCE_FILE.test(name) && !/\.d\.[mc]?ts$/.test(name) ? [path] : [];
  });
}

/** The root's tsconfig.json options, or plain NodeNext ones when it has none (a planted tree). */
function compilerOptionsOf(root: string): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, ts.sys.readFile);
  if (read.error) {
    return { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, allowJs: true };
  }
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  // allowJs so that bin/*.js and scripts' .mjs resolve to what they import like the .ts files do.
  return { ...parsed.options, allowJs: true };
}

/** `react` for `react/jsx-runtime`, `@scope/pkg` for `@scope/pkg/sub`, `node:fs` as is. */
export function packageNameOf(specifier: string): string {
  if (specifier.startsWith('node:')) return specifier;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** Scans the given directories of `root` (relative names; missing ones are skipped). */
export function buildImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const absoluteRoot = resolve(root);
  const options = compilerOptionsOf(absoluteRoot);
  const host: ts.ModuleResolutionHost = ts.sys;
  const cache = ts.createModuleResolutionCache(absoluteRoot, (name) => name, options);
  const absoluteFiles = dirs.flatMap((dir) => sourceFilesUnder(join(absoluteRoot, dir)));
  const files = absoluteFiles.map((path) => toPosix(relative(absoluteRoot, path))).sort();
  const importsOf = new Map<string, ImportEdge[]>();
  const unresolved: string[] = [];
  for (const from of files) {
    const absolute = join(absoluteRoot, from);
    const info = ts.preProcessFile(readFileSync(absolute, 'utf8'), true, true);
    const edges: ImportEdge[] = [];
    for (const { fileName: specifier } of info.importedFiles) {
      const relativeSpecifier = specifier.startsWith('.') || isAbsolute(specifier);
      if (!relativeSpecifier) {
        edges.push({ from, specifier, packageName: packageNameOf(specifier) });
        continue;
      }
      // The package is "type": "module", so every file resolves as ESM (import conditions, explicit extensions).
      const resolved = ts.resolveModuleName(
        specifier,
        absolute,
        options,
        host,
        cache,
        undefined,
        ts.ModuleKind.ESNext,
      ).resolvedModule;
      if (!resolved) {
        // Only a broken import of scanned source counts: bin/ reaches the build output (dist/), which may not exist.
        const wouldBe = toPosix(relative(absoluteRoot, resolve(absolute, '..', specifier)));
        if (dirs.some((dir) => wouldBe.startsWith(`${dir}/`))) unresolved.push(`${from}: ${specifier}`);
        edges.push({ from, specifier });
        continue;
      }
      edges.push({ from, specifier, file: toPosix(relative(absoluteRoot, resolved.resolvedFileName)) });
    }
    importsOf.set(from, edges);
  }
  return { root: absoluteRoot, files, importsOf, unresolved };
}

/** A rule of the form "files matching `appliesTo` import nothing that `forbids`", with the reason. */
export interface BoundaryRule {
  readonly name: string;
  readonly why: string;
  appliesTo(file: string): boolean;
  forbids(edge: ImportEdge): boolean;
}

/** Every edge that breaks a rule, as `rule: from imports specifier (→ file)`. */
export function boundaryViolations(graph: ImportGraph, rules: readonly BoundaryRule[]): string[] {
  const found: string[] = [];
  for (const rule of rules) {
    for (const file of graph.files) {
      if (!rule.appliesTo(file)) continue;
      for (const edge of graph.importsOf.get(file) ?? []) {
        if (!rule.forbids(edge)) continue;
        const target = edge.file && edge.file !== edge.specifier ? ` (${edge.file})` : '';
        found.push(`${rule.name}: ${file} imports ${edge.specifier}${target}`);
      }
    }
  }
  return found;
}

/**
 * The import cycles among the files `include` accepts (edges to other files are ignored): Tarjan's strongly
 * connected components of more than one file, plus files that import themselves. Each cycle is its files sorted,
 * the cycles sorted by their first file, so the answer is stable enough to compare with a recorded list.
 */
export function importCycles(graph: ImportGraph, include: (file: string) => boolean): string[][] {
  const nodes = graph.files.filter(include);
  const scanned = new Set(nodes);
  const successors = new Map<string, string[]>();
  for (const node of nodes) {
    const targets = (graph.importsOf.get(node) ?? []).flatMap((e) => (e.file && scanned.has(e.file) ? [e.file] : []));
    successors.set(node, [...new Set(targets)]);
  }
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;

  // Iterative, so a long import chain cannot overflow the call stack.
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    lowLink.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = successors.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          lowLink.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          lowLink.set(frame.node, Math.min(lowLink.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) lowLink.set(parent.node, Math.min(lowLink.get(parent.node)!, lowLink.get(frame.node)!));
      if (lowLink.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.node);
      const selfImport = successors.get(frame.node)!.includes(frame.node);
      if (component.length > 1 || selfImport) components.push(component.sort());
    }
  }
  return components.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

/** One shortest loop through `cycle`'s first file, `a → b → a`, to show where to cut a component. */
export function describeCycle(graph: ImportGraph, cycle: readonly string[]): string {
  const members = new Set(cycle);
  const start = cycle[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const edge of graph.importsOf.get(node) ?? []) {
      if (!edge.file || !members.has(edge.file)) continue;
      if (edge.file === start) {
        const between: string[] = [];
        for (let at: string | undefined = node; at && at !== start; at = previous.get(at)) between.unshift(at);
        const loop = [start, ...between, start].join(' → ');
        return between.length + 1 < cycle.length ? `${loop} (one loop of ${cycle.length} files)` : loop;
      }
      if (previous.has(edge.file)) continue;
      previous.set(edge.file, node);
      queue.push(edge.file);
    }
  }
  return cycle.join(' ↔ ');
}

/**
 * Files that only pass on another module's names (`export … from`, or imports plus a bare `export { … }`): a
 * re-export shim, which hides where a name lives and lets a move leave a forwarding stub behind.
 */
export function reExportOnlyFiles(graph: ImportGraph): string[] {
  // A declaration at the start of a line rules a file out without parsing it (the AST below decides the rest).
  const modifiers = String.raw`(?:export\s+)?(?:default\s+|declare\s+|abstract\s+|async\s+)*`;
  const keyword = String.raw`(?:function|const|let|var|class|interface|type\s+\w|enum|namespace)\b`;
  const declaration = new RegExp(`^${modifiers}${keyword}`, 'm');
  return graph.files.filter((file) => {
    const text = readFileSync(join(graph.root, file), 'utf8');
    if (declaration.test(text)) return false;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
    const statements = source.statements;
    const forwards = statements.every((s) => ts.isExportDeclaration(s) || ts.isImportDeclaration(s));
    return forwards && statements.some(ts.isExportDeclaration);
  });
}

/** The names a file's import declarations bind locally (default, namespace and named imports, type-only too). */
function importedBindings(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    const clause = ts.isImportDeclaration(statement) ? statement.importClause : undefined;
    if (!clause) continue;
    if (clause.name) names.add(clause.name.text);
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) names.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) for (const element of bindings.elements) names.add(element.name.text);
  }
  return names;
}

/**
 * Every statement that passes on a name another module defines, as `file:line: statement`: `export … from`
 * (named, `*` or `* as ns`), and `export { x }` or `export default x` where `x` is an import. Unlike
 * reExportOnlyFiles this finds them in files that also declare things, where a split left forwarding lines behind.
 * Using an import (a registry listing the kinds it imports in an array) is not passing it on.
 */
export function passThroughReExports(graph: ImportGraph, include: (file: string) => boolean): string[] {
  const found: string[] = [];
  for (const file of graph.files.filter(include)) {
    const text = readFileSync(join(graph.root, file), 'utf8');
    // Only these statement forms can pass a name on; most files have none of them and need no parse.
    if (!/^\s*export\s*(?:\*|\{|type\s*\{|default\s+[\w$]+\s*(?:;|$)|=)/m.test(text)) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const imported = importedBindings(source);
    const importedNames = (names: readonly ts.ExportSpecifier[]) =>
      names.some((element) => imported.has((element.propertyName ?? element.name).text));
    for (const statement of source.statements) {
      const passesOn = ts.isExportDeclaration(statement)
        ? statement.moduleSpecifier !== undefined ||
          (statement.exportClause !== undefined &&
            ts.isNamedExports(statement.exportClause) &&
            importedNames(statement.exportClause.elements))
        : ts.isExportAssignment(statement) &&
          ts.isIdentifier(statement.expression) &&
          imported.has(statement.expression.text);
      if (!passesOn) continue;
      const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1;
      found.push(`${file}:${line}: ${statement.getText(source).replace(/\s+/g, ' ')}`);
    }
  }
  return found;
}
