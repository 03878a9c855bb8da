import { it } from 'vitest';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SshHost } from '/work/main/src/transport/ssh.js';
import { startTestServer } from '/work/main/test/transport/helpers/ssh-server.js';
it('dbg', async () => {
  const srv = await startTestServer();
  const dir = mkdtempSync(join(tmpdir(), 'dbg'));
  const kh = join(dir, 'kh');
  writeFileSync(kh, `[127.0.0.1]:${srv.port} ssh-ed25519 ${srv.hostKeyBlob.toString('base64')}\n`);
  const h = new SshHost({ name: 'x', host: '127.0.0.1', port: srv.port, user: 'tester', privateKey: srv.clientPrivateKey, knownHostsFiles: [kh], debug: (m) => { if (/signal|SIGNAL|REQUEST|CLOSE/i.test(m)) console.log(m); } });
  let t = Date.now();
  for (let i = 0; i < 5; i++) { await h.run({ argv: ['true'] }); }
  console.log('5 runs ms', Date.now() - t);
  const r = await h.run({ argv: ['sleep', '30'] }, { timeoutMs: 300 });
  console.log(r, srv.stats.signals);
  await h.close(); await srv.close();
});
