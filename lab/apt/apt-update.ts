/**
 * `apt-get update` / `apt update`: one `Hit:`/`Get:` line per enabled source (InRelease, then the
 * Packages indices of sources whose index changed), `Fetched …` when anything was downloaded,
 * `Reading package lists...`. A source the lab does not serve fails as an offline host does
 * (`Temporary failure resolving`), which apt reports as warnings (exit 0).
 */
import type { AptIo } from './apt-io.js';
import { MIRROR_BYTES_PER_S } from './apt-io.js';
import { sizeToStr, timeToStr } from './format.js';
import type { Component } from './repos.js';
import { aptState, aptView } from './state.js';

/** How a source prints in fetch lines: `uri suite` (flat `/` repositories: `uri ` with an empty dist). */
function label(uri: string, suite: string): string {
  return suite === '/' ? `${uri} ` : `${uri} ${suite}`;
}

export async function aptUpdate(io: AptIo, quiet: number): Promise<number> {
  const { machine: m, ctx } = io.env;
  const st = aptState(m);
  const view = await aptView(m, ctx.fs);
  const say = async (t: string): Promise<void> => (quiet >= 2 ? undefined : io.out(t));
  let n = 0;
  let fetched = 0;
  let elapsed = 0;
  const failed: string[] = [];
  const seen = new Set<string>();
  const indices: Array<{ line: string; bytes: number }> = [];
  for (const src of view.sources) {
    const key = `${src.uri} ${src.suite}`;
    if (seen.has(key)) continue;
    seen.add(key);
    n++;
    const r = src.repo;
    if (!r) {
      const host = /^[a-z]+:\/\/([^/:]+)/.exec(src.uri)?.[1];
      const why = host
        ? `Temporary failure resolving '${host}'`
        : `File not found - ${src.uri.replace(/^file:/, '')}/${src.suite}/InRelease (2: No such file or directory)`;
      await say(`Err:${n} ${label(src.uri, src.suite)} InRelease\n  ${why}\n`);
      failed.push(`${src.uri}/dists/${src.suite}/InRelease  ${why}`);
      continue;
    }
    await io.sleep(120);
    elapsed += 120;
    // The release pocket never changes after release: an index the installer fetched is current.
    if (st.fresh.has(r.id) || (r.id === 'jammy' && st.lists.has(r.id))) {
      await say(`Hit:${n} ${label(src.uri, src.suite)} InRelease\n`);
      continue;
    }
    await say(`Get:${n} ${label(src.uri, src.suite)} InRelease [${sizeToStr(r.inReleaseBytes, io.grouping)}]\n`);
    fetched += r.inReleaseBytes;
    // Every sources line of this repository contributes its components' indices.
    const comps = new Set<Component>();
    for (const l of view.sources)
      if (l.repo?.id === r.id) for (const c of r.flat ? [''] : l.components) comps.add(c as Component);
    for (const c of comps) {
      const bytes = r.indexBytes[c];
      if (!bytes) continue;
      indices.push({
        line: r.flat ? `${label(src.uri, src.suite)} Packages` : `${src.uri} ${src.suite}/${c} amd64 Packages`,
        bytes,
      });
    }
    st.lists.add(r.id);
    st.fresh.add(r.id);
  }
  for (const ix of indices) {
    const ms = Math.round((ix.bytes / MIRROR_BYTES_PER_S) * 1000) + 80;
    if (!(await io.sleep(ms))) return 100;
    elapsed += ms;
    n++;
    fetched += ix.bytes;
    await say(`Get:${n} ${ix.line} [${sizeToStr(ix.bytes, io.grouping)}]\n`);
  }
  if (fetched > 0) {
    const secs = Math.max(1, Math.round(elapsed / 1000));
    await say(
      `Fetched ${sizeToStr(fetched, io.grouping)} in ${timeToStr(secs)} (${sizeToStr(fetched / secs, io.grouping)}/s)\n`,
    );
  }
  await io.sleep(400);
  await say('Reading package lists...\n');
  m.revision++;
  for (const f of failed) await io.err(`W: Failed to fetch ${f}\n`);
  if (failed.length > 0)
    await io.err('W: Some index files failed to download. They have been ignored, or old ones used instead.\n');
  return 0;
}
