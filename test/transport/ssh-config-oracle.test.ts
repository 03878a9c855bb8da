/**
 * The real OpenSSH client is the oracle for ~/.ssh/config resolution: for every alias of the corpus in
 * test/fixtures/ssh-config, `ssh -G -F <tree>/config <alias>` (HOME pointed at a temporary copy of the tree, no
 * other option) and l20-setup's resolver must give the same hostname, port, user, identity files,
 * known-hosts files, StrictHostKeyChecking, IdentitiesOnly, keepalives, ConnectTimeout, proxy settings,
 * GSSAPIAuthentication, PKCS11Provider and certificate files (what the transport choice reads); where ssh
 * refuses the config (exit 255) the resolver must refuse it too, at the file and line ssh names. `ssh -G`
 * leaves IdentityFile and CertificateFile unexpanded, so the expanded paths are taken from `ssh -v` with a ProxyCommand
 * that exits at once (`false`): ssh loads its identities, printing each, without touching the network.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSshConfig, type ResolvedSshConfig } from '../../src/transport/ssh-config.js';
import { explicitSshConfigFiles } from '../../src/transport/ssh-config-context.js';
import { SshConfigError } from '../../src/transport/ssh-config-read.js';
import { corpusAliases, corpusContext, corpusTrees, installTree, removeAll } from './helpers/ssh-config-corpus.js';

const temps: string[] = [];
afterAll(() => removeAll(temps));

function requireOpenSsh(): string {
  const r = spawnSync('ssh', ['-V'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(
      'the ssh-config oracle needs the OpenSSH client (`ssh`): install the Debian package openssh-client',
    );
  }
  return r.stderr.trim();
}

interface Fields {
  hostname: string;
  port: string;
  user: string;
  identityfile: string[];
  identityfileExpanded: string[];
  userknownhostsfile: string;
  stricthostkeychecking: string;
  identitiesonly: string;
  serveraliveinterval: string;
  serveralivecountmax: string;
  connecttimeout: string;
  proxyjump: string;
  proxycommand: string;
  gssapiauthentication: string;
  pkcs11provider: string;
  certificatefileExpanded: string[];
}

/** ssh -G prints `keyword value` lines; several `identityfile` lines; proxy lines only when set. */
function fieldsFromSsh(dump: string, expanded: { identities: string[]; certificates: string[] }): Fields {
  const values = new Map<string, string[]>();
  for (const line of dump.split('\n')) {
    const space = line.indexOf(' ');
    if (space < 0) continue;
    const key = line.slice(0, space);
    values.set(key, [...(values.get(key) ?? []), line.slice(space + 1)]);
  }
  const one = (k: string) => values.get(k)?.[0] ?? '';
  const unlessNone = (v: string) => (v === 'none' ? '' : v);
  return {
    hostname: one('hostname'),
    port: one('port'),
    user: one('user'),
    identityfile: values.get('identityfile') ?? [],
    identityfileExpanded: expanded.identities,
    userknownhostsfile: one('userknownhostsfile'),
    stricthostkeychecking: one('stricthostkeychecking'),
    identitiesonly: one('identitiesonly'),
    serveraliveinterval: one('serveraliveinterval'),
    serveralivecountmax: one('serveralivecountmax'),
    connecttimeout: one('connecttimeout'),
    proxyjump: unlessNone(one('proxyjump')),
    proxycommand: unlessNone(one('proxycommand')),
    gssapiauthentication: one('gssapiauthentication'),
    pkcs11provider: unlessNone(one('pkcs11provider')),
    certificatefileExpanded: expanded.certificates,
  };
}

const STRICT_AS_SSH_PRINTS = { yes: 'true', no: 'false', ask: 'ask', 'accept-new': 'accept-new' } as const;

function fieldsFromResolver(r: ResolvedSshConfig): Fields {
  return {
    hostname: r.hostName,
    port: String(r.port),
    user: r.user,
    identityfile: r.identityFilesConfigured,
    identityfileExpanded: r.identityFiles,
    userknownhostsfile: r.userKnownHostsFiles.length === 0 ? 'none' : r.userKnownHostsFiles.join(' '),
    stricthostkeychecking: STRICT_AS_SSH_PRINTS[r.strictHostKeyChecking],
    identitiesonly: r.identitiesOnly ? 'yes' : 'no',
    serveraliveinterval: String(r.serverAliveInterval),
    serveralivecountmax: String(r.serverAliveCountMax),
    connecttimeout: r.connectTimeout === undefined ? 'none' : String(r.connectTimeout),
    proxyjump: r.proxyJump ?? '',
    proxycommand: r.proxyCommand ?? '',
    gssapiauthentication: r.gssapiAuthentication ? 'yes' : 'no',
    pkcs11provider: r.pkcs11Provider ?? '',
    certificatefileExpanded: r.certificateFiles,
  };
}

/**
 * Identity and certificate files as ssh loads them: `identity file PATH type N`, each followed by its
 * PATH-cert line unless CertificateFile is set; `certificate file PATH type N` for each CertificateFile.
 */
function expandedFromSsh(verbose: string): { identities: string[]; certificates: string[] } {
  const identities: string[] = [];
  for (const m of verbose.matchAll(/^debug1: identity file (.*) type -?\d+$/gm)) {
    const path = m[1] as string;
    if (path !== `${identities[identities.length - 1]}-cert`) identities.push(path);
  }
  const certificates = [...verbose.matchAll(/^debug1: certificate file (.*) type -?\d+$/gm)].map((m) => m[1] as string);
  return { identities, certificates };
}

describe('ssh-config oracle: l20-setup agrees with real `ssh -G`', () => {
  it('resolves every corpus alias as OpenSSH does, and refuses what OpenSSH refuses', () => {
    const version = requireOpenSsh();
    let agree = 0;
    let refusedAlike = 0;
    const problems: string[] = [];
    const trees = corpusTrees();
    for (const tree of trees) {
      const home = installTree(tree, temps);
      const config = join(home, '.ssh', 'config');
      const { env, ctx } = corpusContext(home);
      const aliases = corpusAliases(tree);
      for (const alias of aliases) {
        const label = `${tree}/${alias}`;
        const run = { env, input: '', encoding: 'utf8', timeout: 20_000 } as const;
        const dump = spawnSync('ssh', ['-G', '-F', config, alias], run);
        let ours: ResolvedSshConfig | SshConfigError;
        try {
          ours = resolveSshConfig(alias, ctx, explicitSshConfigFiles(config));
        } catch (e) {
          if (!(e instanceof SshConfigError)) throw e;
          ours = e;
        }
        if (dump.status !== 0) {
          if (!(ours instanceof SshConfigError)) {
            problems.push(`${label}: ssh refused (${dump.stderr.trim()}) but l20-setup resolved it`);
            continue;
          }
          const where = /^(\/\S*?):? line (\d+)/m.exec(dump.stderr);
          if (where && (where[1] !== ours.file || Number(where[2]) !== ours.line)) {
            problems.push(`${label}: ssh names ${where[1]}:${where[2]}, l20-setup ${ours.file}:${ours.line}`);
            continue;
          }
          if (ours.line === undefined && !dump.stderr.includes(ours.reason)) {
            problems.push(`${label}: l20-setup's refusal names no line: ${ours.message}`);
            continue;
          }
          refusedAlike++;
          continue;
        }
        if (ours instanceof SshConfigError) {
          problems.push(`${label}: ssh resolved it but l20-setup refused: ${ours.message}`);
          continue;
        }
        const verbose = spawnSync(
          'ssh',
          ['-v', '-F', config, '-o', 'ProxyCommand=false', '-o', 'BatchMode=yes', alias, 'true'],
          run,
        );
        const theirs = fieldsFromSsh(dump.stdout, expandedFromSsh(verbose.stderr));
        const mine = fieldsFromResolver(ours);
        const differences = (Object.keys(theirs) as (keyof Fields)[]).filter(
          (k) => JSON.stringify(theirs[k]) !== JSON.stringify(mine[k]),
        );
        if (differences.length === 0) agree++;
        else {
          const show = (k: keyof Fields) => `${k}: ssh ${JSON.stringify(theirs[k])} ours ${JSON.stringify(mine[k])}`;
          const detail = differences.map(show);
          problems.push(`${label}: ${detail.join('; ')}`);
        }
      }
    }
    console.log(`ssh-config oracle: ${agree} aliases agree, ${refusedAlike} refused alike (${version})`);
    expect(problems).toEqual([]);
    expect(agree + refusedAlike).toBeGreaterThanOrEqual(80);
  }, 120_000);
});
