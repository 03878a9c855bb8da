/**
 * Bad input (issue 7): 10,000 seeded hostile inventories through the loader the CLI uses
 * (loadInventoryFile on a real file, and clusterSchema.safeParse on the object). Each is either
 * rejected with a message that names the mutated field in the project's path format and says what is
 * expected — escaped, bounded, never raw control characters — or accepted; then every string of the
 * accepted inventory goes through buildCommand into a command line a real bash runs as
 * `printf '%s\0' WORDS`, and must come back byte-identical. No injection payload may ever create
 * the canary file. Reproduce one case with fuzzCase(SEED, index, { canary }).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clusterSchema } from '../../src/config/schema.js';
import { loadInventoryFile, SavedConfig } from '../../src/config/store.js';
import { asciiSafe, ConfigError } from '../../src/config/errors.js';
import { buildCommand, quoteArgv, quoteWord } from '../../src/transport/quote.js';
import {
  batches,
  echoMismatch,
  fuzzCases,
  hostileArg,
  hostileAtoms,
  hostileString,
  injectionPayloads,
  caseRng,
  pathText,
  show,
  stringLeaves,
  type FuzzCase,
} from '../helpers/fuzz.js';

const SEED = 0x1_20_7; // issue 7
const COUNT = 10_000;
const dir = mkdtempSync(join(tmpdir(), 'l20-fuzz-inv-'));
// In /tmp itself, no metacharacters: a payload spliced unquoted anywhere on this machine could create it.
const canary = join(tmpdir(), `l20-fuzz-canary-${process.pid}-${randomBytes(4).toString('hex')}`);
const opts = { canary };

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(canary, { force: true });
});

/** Characters that must never reach the operator's terminal raw from a message: C0 but \n, DEL, C1, zero-width, bidi, LS/PS, BOM. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/u;

/** The path a problem line starts with: `hosts[1].port = 70000: …` or `hosts[0]: unknown field …`. */
const linePath = (line: string): string => /^(.*?)(?: = |: )/.exec(line)?.[1] ?? '';
/** `p` is `want` or a field inside it. */
const within = (p: string, want: string): boolean =>
  want === '(top level)' || p === want || p.startsWith(`${want}.`) || p.startsWith(`${want}[`);
const related = (p: string, want: string): boolean => within(p, want) || within(want, p);

/** What is wrong with a rejection of case `c` (empty: nothing). */
function rejectionProblems(c: FuzzCase, err: unknown, file: string): string[] {
  if (!(err instanceof ConfigError))
    return [`threw ${(err as Error)?.name}: ${String((err as Error)?.message).slice(0, 200)}`];
  const bad: string[] = [];
  if (!err.message.includes(file)) bad.push('message does not name the file');
  if (err.message.length > 20_000) bad.push(`message is ${err.message.length} chars`);
  for (const line of [err.message, ...err.problems])
    if (RAW.test(line.replace(/\n {2}/g, ''))) bad.push(`raw control or invisible character in ${show(line)}`);
  if (c.kind === 'file') {
    // Whole-file damage is named as such: unparsable, invalid, nested past the depth bound, or over the size cap.
    const explained =
      /not valid JSON or YAML|invalid configuration|nested more than \d+ levels deep at line \d+|is larger than \d+ [KM]iB/;
    if (!explained.test(err.message)) bad.push(`unexplained: ${err.message.slice(0, 200)}`);
    return bad;
  }
  if (c.kind === 'extra-key') {
    const parent = pathText(c.path.slice(0, -1));
    const key = String(c.path[c.path.length - 1]);
    const line = err.problems.find((p) => p.startsWith(`${parent}: unknown field`));
    if (!line) bad.push(`no "${parent}: unknown field" in ${show(err.problems)}`);
    // A short printable key is shown as is (JSON-quoted); anything else escaped (checked by RAW above).
    else if (/^[\x20-\x7e]{0,40}$/.test(key) && !line.includes(JSON.stringify(key)))
      bad.push(`key ${JSON.stringify(key)} not shown in ${line}`);
    for (const p of err.problems) if (!related(linePath(p), parent)) bad.push(`unrelated problem ${p}`);
    return bad;
  }
  const want = pathText(c.path);
  if (!err.problems.some((p) => within(linePath(p), want) || p.includes(want)))
    bad.push(`no problem names ${want}: ${show(err.problems)}`);
  for (const p of err.problems) {
    if (!related(linePath(p), want) && !p.includes(want)) bad.push(`unrelated problem ${p.slice(0, 200)}`);
    if (!/expected|must equal|unknown fields? .*; remove/i.test(p))
      bad.push(`does not say what is expected: ${p.slice(0, 200)}`);
  }
  return bad;
}

/** Runs `bash -c LINE` (stdin: `stdin`) and returns its stdout; stderr must be empty, the exit 0. */
function bash(line: string, stdin = ''): Promise<{ out: Buffer; err: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const p = spawn('bash', ['-c', line], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    p.stdout.on('data', (d: Buffer) => out.push(d));
    p.stderr.on('data', (d: Buffer) => err.push(d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ out: Buffer.concat(out), err: Buffer.concat(err).toString(), code }));
    // A line that never reads its stdin may exit before we write: EPIPE then is no failure.
    p.stdin.on('error', () => undefined);
    p.stdin.end(stdin);
  });
}

// `sudo` as a function: the line is parsed exactly as with sudo (its words, then `env …`), without root.
const SUDO_SHIM = 'sudo() { [ "$1" = -n ] && [ "$2" = -- ] && shift 2; "$@"; }';

/**
 * Every form buildCommand produces, run by bash: a plain argv, the same under `sudo -n -- env`, the
 * words as quoted env values (printenv -0 prints them back), and `bash -s -- ARGS` with the script on
 * stdin. Returns the mismatches. Batches stay under 100 kB: `bash -c LINE` goes through execve.
 */
async function roundTrip(words: readonly string[]): Promise<string[]> {
  const bad: string[] = [];
  for (const batch of batches(words, 100_000)) {
    const argv = buildCommand({ argv: ['printf', '%s\\0', ...batch] });
    const sudo = buildCommand({ argv: ['printf', '%s\\0', ...batch] }, { sudo: true });
    const names = batch.map((_, i) => `FUZZ_W${i}`);
    const env = buildCommand(
      { argv: ['printenv', '-0', ...names] },
      { env: Object.fromEntries(names.map((n, i) => [n, batch[i]!])) },
    );
    const script = buildCommand({ script: 'printf "%s\\0" "$@"\n', args: batch });
    const runs: Array<[string, Promise<{ out: Buffer; err: string; code: number | null }>]> = [
      ['argv', bash(argv.line)],
      ['sudo', bash(`${SUDO_SHIM}\n${sudo.line}`)],
      ['env', bash(env.line)],
      ['script', bash(script.line, String(script.stdin))],
    ];
    for (const [form, run] of runs) {
      const r = await run;
      const m = echoMismatch(batch, r.out);
      if (m || r.code !== 0 || r.err !== '') bad.push(`${form}: ${m ?? ''} exit ${r.code} ${r.err.slice(0, 200)}`);
    }
  }
  return bad;
}

describe('fuzzing the inventory', () => {
  it('the payloads are live: spliced unquoted into a bash line, they create the canary', async () => {
    const control = join(tmpdir(), `l20-fuzz-control-${process.pid}`);
    const live = [];
    for (const p of injectionPayloads(control)) {
      rmSync(control, { force: true });
      if (!p.includes('\0')) await bash(`printf %s ${p}`);
      if (existsSync(control)) live.push(p);
    }
    rmSync(control, { force: true });
    // The detector works: most payloads fire when not quoted (a few need another context, e.g. an option parser).
    expect(live.length).toBeGreaterThanOrEqual(15);
    expect(live).toContain(`$(touch ${control})`);
    expect(live).toContain(`;touch ${control}`);
  });

  it(`fuzz: ${COUNT.toLocaleString('en-US')} seeded cases, each rejected naming its field or accepted and round-tripped byte-identical through bash; the canary never appears`, async () => {
    const start = Date.now();
    const failures: string[] = [];
    const words = new Set<string>();
    let rejected = 0;
    let accepted = 0;
    let saved = 0;
    const kinds = { field: 0, 'extra-key': 0, file: 0 };
    for (const c of fuzzCases(SEED, COUNT, opts)) {
      kinds[c.kind]++;
      const file = join(dir, `inventory.${c.ext}`);
      await writeFile(file, c.text);
      let loaded: unknown;
      let error: unknown;
      try {
        loaded = await loadInventoryFile(file);
      } catch (err) {
        error = err;
      }
      // The object itself, as the TUI's setup screen hands it over; for JSON it must agree with the file.
      const direct = c.input !== undefined ? clusterSchema.safeParse(c.input) : undefined;
      if (direct && c.ext === 'json' && direct.success === (error !== undefined))
        failures.push(
          `${c.label}: file ${error ? 'rejected' : 'accepted'}, object ${direct.success ? 'accepted' : 'rejected'}`,
        );
      if (error !== undefined) {
        rejected++;
        for (const p of rejectionProblems(c, error, file)) failures.push(`${c.label}: ${p}`);
      } else {
        accepted++;
        for (const w of stringLeaves(loaded)) {
          if (w.includes('\0')) failures.push(`${c.label}: accepted a NUL in ${show(w)}`);
          // Quoting keeps a word one word, but a program still reads "-x" as an option: none may start so.
          else if (w.startsWith('-'))
            failures.push(`${c.label}: accepted ${show(w)}, which a program would read as an option`);
          else words.add(w);
        }
      }
      // The saved inventory (conf's file) reads through the same validation: a sample of the JSON cases.
      if (c.index % 50 === 0 && c.input !== undefined && c.ext === 'json') {
        saved++;
        const cwd = join(dir, `saved-${c.index}`);
        mkdirSync(cwd);
        writeFileSync(join(cwd, 'inventory.json'), JSON.stringify({ cluster: c.input }));
        let savedError: unknown;
        try {
          new SavedConfig({ cwd }).load();
        } catch (err) {
          savedError = err;
        }
        if ((savedError === undefined) !== (error === undefined))
          failures.push(`${c.label}: saved inventory ${savedError ? 'rejected' : 'accepted'}, file the other way`);
        if (savedError !== undefined && c.kind === 'field' && !(savedError as Error).message.includes(pathText(c.path)))
          failures.push(`${c.label}: saved inventory error does not name ${pathText(c.path)}`);
      }
      if (existsSync(canary)) failures.push(`${c.label}: the canary exists`);
    }
    const checkedAt = Date.now();
    failures.push(...(await roundTrip([...words])));
    const injected = existsSync(canary) ? 1 : 0;
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      `fuzz: ${COUNT} cases (${kinds.field} field, ${kinds['extra-key']} extra key, ${kinds.file} whole file; ${saved} also as the saved inventory), ${rejected} rejected, ${accepted} accepted (${words.size} distinct strings round-tripped through bash in 4 command forms), ${injected} injected — ${s(checkedAt - start)} loading, ${s(Date.now() - checkedAt)} bash`,
    );
    expect(failures.slice(0, 30)).toEqual([]);
    expect(rejected + accepted).toBe(COUNT);
    // Both outcomes happen: the fuzz reaches the accepted path, not only the schema's refusals.
    expect(accepted).toBeGreaterThan(COUNT / 50);
    expect(rejected).toBeGreaterThan(COUNT / 2);
    expect(injected).toBe(0);
  }, 120_000);

  it('quoting alone holds: every hostile string (1 MB ones too) comes back byte-identical from bash and dash; NUL is refused', async () => {
    const rng = caseRng(SEED, -1);
    const words = [
      ...hostileAtoms(canary),
      ...Array.from({ length: 3000 }, () => hostileString(rng, opts)),
      `${'$(touch '.repeat(1000)}${canary}${')'.repeat(1000)}`,
      `x;touch ${canary}`.repeat(1 << 16),
    ];
    const withNul = words.filter((w) => w.includes('\0'));
    expect(withNul.length).toBeGreaterThan(0);
    for (const w of withNul) expect(() => quoteWord(w)).toThrow(/NUL/);
    const clean = words.filter((w) => !w.includes('\0'));
    // A script on stdin (not `-c`): words longer than execve's 128 kB per-argument limit fit.
    for (const shell of ['bash', 'sh']) {
      const lines = batches(clean, 200_000).map((b) => quoteArgv(['printf', '%s\\0', ...b]));
      const out = execFileSync(shell, ['-s'], { input: `${lines.join('\n')}\n`, maxBuffer: 64 << 20 });
      expect(echoMismatch(clean, out), shell).toBeUndefined();
    }
    expect(existsSync(canary)).toBe(false);
  });
});

type Outcome = { code: number | 'threw'; err: string };

/** main() in this process with stdout and stderr captured (nothing a case prints reaches the terminal). */
async function runMain(argv: string[]): Promise<Outcome> {
  const { main } = await import('../../src/cli.js');
  const out = { stdout: process.stdout.write, stderr: process.stderr.write };
  let err = '';
  process.stdout.write = (() => true) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (
    (err += String(chunk)),
    true
  )) as typeof process.stderr.write;
  try {
    return { code: await main(argv), err };
  } catch (e) {
    return { code: 'threw', err: `${err}${(e as Error).message}` };
  } finally {
    process.stdout.write = out.stdout;
    process.stderr.write = out.stderr;
  }
}

describe('fuzzing the CLI flags', () => {
  it('400 seeded draws of hostile values for --stage, --scenario, --seed, --interval, --speed, --hosts, unknown flags and verbs: exit 2 naming the flag; nothing connects or serves; no canary', async () => {
    const { STAGE_IDS } = await import('../../src/engine/types.js');
    const { resolveScenario } = await import('../../lab/scenarios/index.js');
    const KNOWN = [
      'help',
      'version',
      'lab',
      'scenario',
      'seed',
      'hosts',
      'inventory',
      'inventory-out',
      'stage',
      'json',
      'verbose',
      'yes',
      'allow-reboot',
      'speed',
      'once',
      'interval',
      'record',
      'replay',
      'load',
      'out',
      'format',
    ];
    const missing = join(dir, 'no-such-inventory.json');
    // No saved inventory either: a case whose flags all happen to be valid stops at "no inventory", never at a host.
    const env = { XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    process.env.XDG_CONFIG_HOME = join(dir, 'xdg');
    const rng = caseRng(SEED, -2);
    const form = (flag: string, v: string): string[] => (rng.chance(0.5) ? [`--${flag}=${v}`] : [`--${flag}`, v]);
    const whole = (v: string, min: number, max: number): boolean =>
      /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max;
    const scenarioOk = (v: string): boolean => {
      try {
        resolveScenario(v);
        return true;
      } catch {
        return false;
      }
    };
    const failures: string[] = [];
    const counts: Record<string, number> = {};
    let runs = 0;
    try {
      for (let i = 0; i < 400; i++) {
        const kind = rng.pick(['stage', 'scenario', 'seed', 'interval', 'speed', 'hosts', 'unknown', 'verb'] as const);
        const v = hostileArg(
          rng,
          opts,
          {
            stage: 'network',
            scenario: 'ready',
            seed: '7',
            interval: '1000',
            speed: 'max',
            hosts: '2',
            unknown: 'stagee',
            verb: 'checkk',
          }[kind],
        );
        // [argv, the text stderr must hold]; the flag's own name whenever the value is invalid.
        let c: [string[], string];
        if (kind === 'stage')
          c = [
            ['check', ...form('stage', v), '--inventory', missing],
            v.split(',').every((s) => (STAGE_IDS as readonly string[]).includes(s))
              ? 'cannot read inventory'
              : '--stage',
          ];
        else if (kind === 'seed')
          c = [
            ['check', ...form('seed', v), '--inventory', missing],
            v === '' || whole(v, 0, 2 ** 31) ? 'cannot read inventory' : '--seed',
          ];
        else if (kind === 'speed')
          c = [
            ['check', ...form('speed', v), '--inventory', missing],
            v === 'max' || (/^\d+(\.\d+)?$/.test(v) && Number(v) > 0 && Number(v) <= 10_000)
              ? 'cannot read inventory'
              : '--speed',
          ];
        else if (kind === 'interval')
          c = [
            ['monitor', '--once', '--json', ...form('interval', v), '--inventory', missing],
            whole(v, 100, 3_600_000) ? 'cannot read inventory' : '--interval',
          ];
        // --seed is always bad here, so a valid --hosts stops there and `lab serve` never serves.
        else if (kind === 'hosts')
          c = [['lab', 'serve', ...form('hosts', v), '--seed=not-a-seed'], whole(v, 1, 256) ? '--seed' : '--hosts'];
        else if (kind === 'unknown') {
          const flag = `--${v}`;
          if (KNOWN.includes(flag.slice(2).split('=')[0]!) || flag === '--') continue;
          c = [['check', '--inventory', missing, flag], `Unknown option '${asciiSafe(flag.split('=')[0]!)}'`];
        } else if (kind === 'verb') {
          if (v.startsWith('-')) continue; // an option, not a verb (and -h/-V would print help or the version)
          c = [[v, '--inventory', missing], `unknown command "${asciiSafe(v)}"`];
        } else {
          // A valid (or empty, meaning the default) scenario would start a lab: only invalid ones run.
          if (v === '' || scenarioOk(v)) continue;
          c = [['check', '--lab', '--speed=max', ...form('scenario', v)], '--scenario'];
        }
        const [argv, want] = c;
        counts[kind] = (counts[kind] ?? 0) + 1;
        runs++;
        const r = await runMain(argv);
        const label = `#${i} ${show(argv)}`;
        if (r.code !== 2) failures.push(`${label}: exit ${r.code} ${r.err.slice(0, 200)}`);
        else if (!r.err.includes(want))
          failures.push(`${label}: stderr lacks ${show(want)}: ${show(r.err.slice(0, 200))}`);
        // What was typed is echoed escaped: nothing in the message can drive the operator's terminal.
        else if (/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u.test(r.err))
          failures.push(`${label}: raw control or bidi characters in stderr: ${show(r.err.slice(0, 200))}`);
        if (existsSync(canary)) failures.push(`${label}: the canary exists`);
      }
    } finally {
      process.env.XDG_CONFIG_HOME = env.XDG_CONFIG_HOME;
      if (env.XDG_CONFIG_HOME === undefined) delete process.env.XDG_CONFIG_HOME;
    }
    console.log(
      `fuzz cli: ${runs} runs of main() (${Object.entries(counts)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}), 0 injected`,
    );
    expect(failures.slice(0, 30)).toEqual([]);
    expect(runs).toBeGreaterThan(300);
    expect(existsSync(canary)).toBe(false);
  });
});
