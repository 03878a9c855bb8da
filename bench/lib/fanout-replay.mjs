// What bench/fanout.mjs replays: the exact command lines our `check` ran (cmd.start in its session log,
// with the script a `bash -s` line read on stdin) and the exit code each got (cmd.exit). From them it
// writes the OpenSSH job list (fed NUL-separated to xargs, so no line is ever re-split by a shell) and
// the Ansible ad-hoc script, and checks afterwards that every command ran and exited as it did for us.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** Commands in the order they started: { id, host, line, script, exit }. */
export function readSessionLog(path) {
  const events = readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const exits = new Map(events.filter((e) => e.type === 'cmd.exit').map((e) => [e.runId, e.exitCode]));
  const cmds = events
    .filter((e) => e.type === 'cmd.start' && e.reusedFrom === undefined) // a reused result ran nothing
    .map((e, i) => ({
      id: i,
      host: e.host,
      probe: `${e.stage}/${e.probe}`,
      line: e.commandLine,
      script: e.script,
      exit: exits.has(e.runId) ? exits.get(e.runId) : undefined,
    }));
  for (const c of cmds) {
    // A `bash -s` line without its script would run nothing over OpenSSH: not a fair replay.
    if (/\bbash -s\b/.test(c.line) && c.script === undefined)
      throw new Error(
        `session log ${path}: \`${c.line}\` on ${c.host} has no script (a build of l20-setup before cmd.start carried it?)`,
      );
  }
  return cmds;
}

/**
 * Our own run against the reference: every reference command that completed ran again with the same
 * exit code (`differ` counts those that did not). `cutShort` counts this run's commands without an exit
 * code (a probe timeout, a lost connection): the check's answer is then not the real one.
 */
export function compareRuns(reference, run) {
  const key = (c) => `${c.host}\0${c.line}\0${c.script ?? ''}\0${c.exit}`;
  const done = (c) => c.exit !== null && c.exit !== undefined;
  const b = run.filter(done).reduce((m, c) => m.set(key(c), (m.get(key(c)) ?? 0) + 1), new Map());
  let differ = 0;
  const examples = [];
  for (const c of reference.filter(done)) {
    const left = b.get(key(c)) ?? 0;
    if (left > 0) b.set(key(c), left - 1);
    else {
      differ++;
      if (examples.length < 3)
        examples.push(`${c.host} \`${c.line.slice(0, 60)}\`: exit ${c.exit} in run 1, not in this run`);
    }
  }
  const cut = run.filter((c) => !done(c));
  const cutProbes = [...new Set(cut.map((c) => c.probe))].slice(0, 4).join(', ');
  return {
    ran: run.length - cut.length,
    expected: run.length,
    differ,
    cutShort: cut.length,
    examples: cut.length ? [`cut short: ${cutProbes}`, ...examples] : examples,
  };
}

/**
 * The xargs job list: per command `host NUL line NUL stdin-file NUL id NUL`. stdin is the script for a
 * `bash -s` line, /dev/null otherwise (so ssh sends EOF at once, as our tool does).
 */
export function writeSshJobs(dir, cmds) {
  const scripts = join(dir, 'scripts');
  mkdirSync(scripts, { recursive: true });
  const parts = [];
  for (const c of cmds) {
    let stdin = '/dev/null';
    if (c.script !== undefined) {
      stdin = join(scripts, `${c.id}.sh`);
      writeFileSync(stdin, c.script);
    }
    parts.push(c.host, c.line, stdin, String(c.id));
  }
  const jobs = join(dir, 'jobs');
  writeFileSync(jobs, `${parts.join('\0')}\0`);
  return jobs;
}

/**
 * The OpenSSH contender: one `ssh -F CONFIG HOST LINE` per command, `parallel` at a time. The per-job
 * wrapper only redirects (stdin from the script file, output to files) and appends `id exit` to rc.
 */
export function sshArgv(jobs, parallel) {
  const wrapper =
    'ssh -F "$L20_SSH_CONFIG" -o BatchMode=yes "$1" "$2" <"$3" >"$L20_OUT/$4.out" 2>"$L20_OUT/$4.err"; echo "$4 $?" >>"$L20_OUT/rc"';
  return ['xargs', '-0', '-n', '4', '-P', String(parallel), '-a', jobs, 'sh', '-c', wrapper, 'sh'];
}

/** Each command ran once and exited as for us; exit 255 is OpenSSH's own failure (refused, reset, auth). */
export function verifySsh(outDir, cmds) {
  const got = new Map();
  let rcText = '';
  try {
    rcText = readFileSync(join(outDir, 'rc'), 'utf8');
  } catch {
    // no job finished
  }
  for (const l of rcText.split('\n').filter(Boolean)) {
    const [id, code] = l.split(' ').map(Number);
    got.set(id, [...(got.get(id) ?? []), code]);
  }
  const v = { ran: 0, expected: cmds.length, differ: 0, sshFailures: 0, failureKinds: {}, examples: [] };
  for (const c of cmds) {
    const codes = got.get(c.id) ?? [];
    const code = codes[0];
    if (codes.length === 1 && (c.exit === null || c.exit === undefined || code === c.exit)) v.ran++;
    else if (code === 255) {
      v.sshFailures++;
      let err = '';
      try {
        err =
          readFileSync(join(outDir, `${c.id}.err`), 'utf8')
            .trim()
            .split('\n')
            .pop() ?? '';
      } catch {
        // missing
      }
      // Group by message with host and port taken out, so the kinds stay few.
      const kind = err.replace(/127\.0\.0\.1( port \d+)?/g, 'HOST').replace(/port \d+/g, 'port P') || '(no message)';
      v.failureKinds[kind] = (v.failureKinds[kind] ?? 0) + 1;
    } else {
      v.differ++;
      if (v.examples.length < 3)
        v.examples.push(`${c.host} \`${c.line.slice(0, 60)}\`: ours ${c.exit}, ssh ${codes.join(',') || 'never ran'}`);
    }
  }
  return v;
}

/** Distinct (line, script) in order of first start, with the hosts that ran it and the exits we saw. */
export function ansibleGroups(cmds) {
  const groups = new Map();
  for (const c of cmds) {
    const k = `${c.line}\0${c.script ?? ''}`;
    if (!groups.has(k)) groups.set(k, { line: c.line, script: c.script, hosts: new Map() });
    const h = groups.get(k).hosts;
    h.set(c.host, new Set([...(h.get(c.host) ?? []), c.exit]));
  }
  return [...groups.values()];
}

const sq = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The Ansible contender as an operator's script of ad-hoc calls: one `ansible -m raw` per distinct
 * command, `--limit` to the hosts that ran it, `--forks N`. The command reaches raw through a variable
 * marked !unsafe, so Jinja never reads it and Ansible's key=value splitting never touches it; a script
 * travels as a quoted here-document on the same line (raw has no stdin). `-n` on ssh: see fanout.mjs.
 */
export function writeAnsibleScript(dir, groups, { ini, forks }) {
  const vars = join(dir, 'vars');
  mkdirSync(vars, { recursive: true });
  const lines = ['set -u'];
  groups.forEach((g, i) => {
    let cmd = g.line;
    if (g.script !== undefined) {
      let tag = 'L20_BENCH_EOF';
      while (g.script.split('\n').includes(tag)) tag += '_';
      cmd = `${g.line} <<'${tag}'\n${g.script}${g.script.endsWith('\n') ? '' : '\n'}${tag}`;
    }
    // A JSON string is a valid YAML double-quoted scalar.
    writeFileSync(join(vars, `${i}.yml`), `l20_cmd: !unsafe ${JSON.stringify(cmd)}\n`);
    const argv = [
      'ansible',
      'all',
      '-i',
      ini,
      '-m',
      'raw',
      '-a',
      '{{ l20_cmd }}',
      '-e',
      `@${join(vars, `${i}.yml`)}`,
      '--limit',
      [...g.hosts.keys()].join(','),
      '--forks',
      String(forks),
      '--one-line',
      '--ssh-extra-args=-n',
    ];
    lines.push(
      `${argv.map(sq).join(' ')} >${sq(join(dir, 'out', `${i}.txt`))} 2>&1; echo "${i} $?" >>${sq(join(dir, 'out', 'rc'))}`,
    );
  });
  mkdirSync(join(dir, 'out'), { recursive: true });
  const script = join(dir, 'ansible.sh');
  writeFileSync(script, `${lines.join('\n')}\n`);
  return script;
}

/** Ansible's one-line results: `h | CHANGED | rc=0 | …`, `h | FAILED! => {…"rc": 3…}`, `h | UNREACHABLE!: …`. */
export function verifyAnsible(dir, groups) {
  const v = {
    ran: 0,
    expected: 0,
    differ: 0,
    unreachable: 0,
    failureKinds: {},
    examples: [],
    invocations: groups.length,
  };
  groups.forEach((g, i) => {
    let text = '';
    try {
      text = readFileSync(join(dir, 'out', `${i}.txt`), 'utf8');
    } catch {
      // never ran
    }
    const rc = new Map();
    for (const l of text.split('\n')) {
      let m = /^(\S+) \| (?:CHANGED|SUCCESS|FAILED) \| rc=(-?\d+) \|/.exec(l);
      if (m) rc.set(m[1], Number(m[2]));
      else if ((m = /^(\S+) \| FAILED! => (\{.*\})\s*$/.exec(l))) rc.set(m[1], JSON.parse(m[2]).rc ?? 'failed');
      else if ((m = /^(\S+) \| UNREACHABLE!:? ?(.*)$/.exec(l))) {
        rc.set(m[1], 'unreachable');
        const kind = m[2]
          .replace(/127\.0\.0\.1( port \d+)?/g, 'HOST')
          .replace(/\/[^\s"]*\/\.ansible\/cp\/\w+/g, 'CONTROLPATH')
          .slice(0, 120);
        v.failureKinds[kind] = (v.failureKinds[kind] ?? 0) + 1;
      }
    }
    for (const [host, exits] of g.hosts) {
      v.expected++;
      const got = rc.get(host);
      if (got === 'unreachable') v.unreachable++;
      else if (got !== undefined && (exits.has(got) || exits.has(null) || exits.has(undefined))) v.ran++;
      else {
        v.differ++;
        if (v.examples.length < 3)
          v.examples.push(
            `${host} \`${g.line.slice(0, 60)}\`: ours ${[...exits].join('/')}, ansible ${got ?? 'no result'}`,
          );
      }
    }
  });
  return v;
}

/** How many jobs finished so far (the rc file has one line each), for progress lines. */
export function doneCount(outDir) {
  try {
    return readFileSync(join(outDir, 'rc'), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}
