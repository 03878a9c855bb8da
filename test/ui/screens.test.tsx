import React from 'react';
import { describe, expect, it, vi } from 'vitest';
import { render } from 'ink-testing-library';
import { App } from '../../screens/App.js';
import { Providers } from '../../screens/store-context.js';
import { AppStore, appState } from '../../screens/state/app-store.js';
import type { Controller } from '../../src/engine/controller.js';
import { fakeController } from '../helpers/fake-controller.js';
import { aliasView, hopResolver, pathView, resolveHost } from '../../src/transport/ssh-config-report.js';
import { clean } from '../../src/util/sanitize.js';

const hosts = [
  { name: 'l20-n1', address: '127.0.0.1:4001' },
  { name: 'l20-n2', address: '127.0.0.1:4002' },
];

const controller = (over: Partial<Controller> = {}): Controller =>
  fakeController({
    testConnection: vi.fn(async () => ({ ok: true, message: 'connected to l20-n1 in 3 ms' })),
    ...over,
  });

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function mount(store: AppStore, c: Controller) {
  return render(
    <Providers store={store} controller={c}>
      <App />
    </Providers>,
  );
}

describe('pipeline and stage view', () => {
  it('shows stages × hosts and runs the selected stage on r', async () => {
    const store = new AppStore(appState(hosts));
    const c = controller();
    const ui = mount(store, c);
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('inventory');
    expect(frame).toContain('l20-n1');
    expect(frame).toContain('l20-n2');
    expect(frame).toContain('cluster');
    expect(frame).toContain('not yet'); // unimplemented stages say so
    ui.stdin.write('r');
    await until(() => (c.runStage as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'runStage');
    expect(c.runStage).toHaveBeenCalledWith('inventory');
    await until(() => (ui.lastFrame() ?? '').includes('stage 1/11 inventory'), 'stage view');
    ui.unmount();
  });

  it('renders both panes with commands, output and verdicts as events arrive', async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    const ui = mount(store, controller());
    store.dispatch({ type: 'stage.state', stage: 'inventory', state: 'running' });
    for (const h of ['l20-n1', 'l20-n2']) {
      store.dispatch({ type: 'host.state', host: h, state: 'connected' });
      store.dispatch({
        type: 'cmd.start',
        host: h,
        runId: `${h}1`,
        stage: 'inventory',
        probe: 'kernel',
        commandLine: 'LC_ALL=C uname -r',
        sudo: false,
      });
      store.dispatch({
        type: 'cmd.output',
        host: h,
        runId: `${h}1`,
        stage: 'inventory',
        probe: 'kernel',
        stream: 'stdout',
        lines: [clean(`5.15.0-126-generic on ${h}`)],
      });
      store.dispatch({
        type: 'cmd.exit',
        host: h,
        runId: `${h}1`,
        exitCode: 0,
        signal: null,
        durationMs: 42,
        timedOut: false,
        cancelled: false,
      });
    }
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.os',
        stage: 'inventory',
        host: 'l20-n1',
        status: 'pass',
        summary: 'Ubuntu 22.04.5 LTS',
        evidence: '',
      },
    });
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.os',
        stage: 'inventory',
        host: 'l20-n2',
        status: 'fail',
        summary: 'Ubuntu 20.04',
        evidence: '',
      },
    });
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.pair-hardware',
        stage: 'inventory',
        host: null,
        status: 'pass',
        summary: '2 hosts match',
        evidence: '',
      },
    });
    await until(() => (ui.lastFrame() ?? '').includes('2 hosts match'), 'cluster row');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('5.15.0-126-generic on l20-n1');
    expect(frame).toContain('5.15.0-126-generic on l20-n2');
    expect(frame).toContain('kernel: exit 0 42ms');
    expect(frame).toMatch(/✔ os\s+Ubuntu 22\.04\.5 LTS/);
    expect(frame).toMatch(/✘ os\s+Ubuntu 20\.04/);
    ui.unmount();
  });

  it('marks a command whose output an earlier stage of the pass produced as not run again', async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    const ui = mount(store, controller());
    const h = 'l20-n1';
    store.dispatch({
      type: 'cmd.start',
      host: h,
      runId: 'r1',
      stage: 'inventory',
      probe: 'ip-addr',
      commandLine: 'LC_ALL=C ip -j addr show',
      sudo: false,
      reusedFrom: 'os/ip-addr',
    });
    store.dispatch({
      type: 'cmd.output',
      host: h,
      runId: 'r1',
      stage: 'inventory',
      probe: 'ip-addr',
      stream: 'stdout',
      lines: [clean('[{"ifname":"eno1"}]')],
    });
    store.dispatch({
      type: 'cmd.exit',
      host: h,
      runId: 'r1',
      exitCode: 0,
      signal: null,
      durationMs: 0,
      timedOut: false,
      cancelled: false,
    });
    await until(() => (ui.lastFrame() ?? '').includes('reused from'), 'the reused command');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('$ ip-addr: exit 0 · reused from os/ip-addr'); // whole, in a pane of a 100-column terminal
    expect(frame).toContain('[{"ifname":"eno1"}]');
    expect(frame).not.toContain('ip-addr: exit 0 0ms');
    ui.unmount();
  });

  it("shows each stage its own run: after two stages ran, the first stage's view has its commands and output", async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    const ui = mount(store, controller());
    const h = 'l20-n1';
    const runStage = (stage: 'inventory' | 'os', probe: string, line: string) => {
      store.dispatch({ type: 'stage.state', stage, state: 'running' });
      store.dispatch({
        type: 'cmd.start',
        host: h,
        runId: `${stage}-1`,
        stage,
        probe,
        commandLine: probe,
        sudo: false,
      });
      store.dispatch({
        type: 'cmd.output',
        host: h,
        runId: `${stage}-1`,
        stage,
        probe,
        stream: 'stdout',
        lines: [clean(line)],
      });
      store.dispatch({
        type: 'cmd.exit',
        host: h,
        runId: `${stage}-1`,
        exitCode: 0,
        signal: null,
        durationMs: 7,
        timedOut: false,
        cancelled: false,
      });
      store.dispatch({ type: 'stage.state', stage, state: 'pass' });
    };
    runStage('inventory', 'lspci-gpus', '8 × NVIDIA L20');
    runStage('os', 'uname', 'Linux 5.15.0-126-generic');
    await until(() => (ui.lastFrame() ?? '').includes('lspci-gpus: exit 0'), 'the inventory command');
    let frame = ui.lastFrame() ?? '';
    expect(frame).toContain('8 × NVIDIA L20');
    expect(frame).not.toContain('uname');
    expect(frame).not.toContain('Linux 5.15.0-126-generic');
    store.dispatch({ type: 'ui.selectStage', stage: 'os' });
    await until(() => (ui.lastFrame() ?? '').includes('uname: exit 0'), 'the os command');
    frame = ui.lastFrame() ?? '';
    expect(frame).toContain('Linux 5.15.0-126-generic');
    expect(frame).not.toContain('lspci-gpus');
    ui.unmount();
  });

  it('opens verdict details worst first, with evidence and fix', async () => {
    const store = new AppStore(appState(hosts, { screen: 'stage' }));
    const ui = mount(store, controller());
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.os',
        stage: 'inventory',
        host: 'l20-n1',
        status: 'pass',
        summary: 'Ubuntu 22.04.5 LTS',
        evidence: 'VERSION_ID="22.04"',
      },
    });
    store.dispatch({
      type: 'check.result',
      result: {
        id: 'inventory.links',
        stage: 'inventory',
        host: 'l20-n2',
        status: 'fail',
        summary: 'ens1f0: Link detected: no',
        evidence: 'ens1f0: admin up, Speed Unknown!',
        fix: 'check the DAC cable',
      },
    });
    ui.stdin.write('d');
    await until(() => (ui.lastFrame() ?? '').includes('fix: check the DAC cable'), 'details of the worst check');
    const frame = ui.lastFrame() ?? '';
    expect(frame).toContain('l20-n2 · inventory.links · fail');
    expect(frame).toContain('ens1f0: admin up, Speed Unknown!');
    expect(frame.indexOf('inventory.links')).toBeLessThan(frame.indexOf('inventory.os'));
    ui.stdin.write('j');
    await until(() => (ui.lastFrame() ?? '').includes('VERSION_ID="22.04"'), 'second check');
    ui.stdin.write('\u001b');
    await until(() => (ui.lastFrame() ?? '').includes('cluster checks'), 'back to panes');
    ui.unmount();
  });

  it('Ctrl-C cancels while busy, asks before quitting, and q quits when idle', async () => {
    const store = new AppStore(appState(hosts));
    const c = controller();
    const ui = mount(store, c);
    store.dispatch({ type: 'stage.state', stage: 'inventory', state: 'running' });
    await until(() => store.getState().busy, 'busy');
    ui.stdin.write('\u0003');
    await until(() => (c.cancel as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'cancel');
    expect(c.quit).not.toHaveBeenCalled();
    ui.stdin.write('q');
    await until(() => (ui.lastFrame() ?? '').includes('Quit anyway'), 'confirm');
    ui.stdin.write('n');
    await until(() => !(ui.lastFrame() ?? '').includes('Quit anyway'), 'confirm closed');
    store.dispatch({ type: 'engine.idle' });
    ui.stdin.write('q');
    await until(() => (c.quit as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'quit');
    ui.unmount();
  });

  it('asks the operator to trust an unknown host key, showing the fingerprint', async () => {
    const store = new AppStore(appState(hosts));
    const c = controller();
    const ui = mount(store, c);
    const trust = { id: 1, kind: 'trust', host: 'l20-n1', address: '10.0.0.1:22', keyType: 'ssh-ed25519' } as const;
    store.dispatch({
      type: 'prompt.open',
      prompt: { ...trust, fingerprint: 'SHA256:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ' },
    });
    await until(() => (ui.lastFrame() ?? '').includes('SHA256:abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ'), 'prompt');
    ui.stdin.write('y');
    await until(() => (c.answerTrust as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'answer');
    expect(c.answerTrust).toHaveBeenCalledWith(1, true);
    ui.unmount();
  });

  it("names the known_hosts file trusting writes: the inventory's, not ~/.ssh/known_hosts", async () => {
    const store = new AppStore(appState(hosts));
    const ui = mount(store, controller());
    const file = '/srv/cluster/known_hosts';
    // One question shown again with new content keeps its id.
    const prompt = {
      id: 1,
      kind: 'trust',
      host: 'l20-n1',
      address: '10.0.0.1:22',
      keyType: 'ssh-ed25519',
      fingerprint: 'SHA256:abc',
    } as const;
    store.dispatch({ type: 'prompt.open', prompt: { ...prompt, knownHostsFile: file } });
    await until(() => (ui.lastFrame() ?? '').includes(`y adds it to ${file}`), 'the file in the prompt');
    expect(ui.lastFrame()).not.toContain('~/.ssh/known_hosts');
    store.dispatch({ type: 'prompt.open', prompt });
    await until(() => (ui.lastFrame() ?? '').includes('y trusts it for this session only'), 'no file');
    ui.unmount();
  });

  it('says when a certificate authority vouches for the host, which only the OpenSSH transport can check', async () => {
    const store = new AppStore(appState(hosts));
    const ui = mount(store, controller());
    const prompt = {
      id: 1,
      kind: 'trust',
      host: 'l20-n1',
      address: '10.0.0.1:22',
      keyType: 'ssh-ed25519',
      fingerprint: 'SHA256:abc',
    } as const;
    store.dispatch({ type: 'prompt.open', prompt });
    await until(() => (ui.lastFrame() ?? '').includes('SHA256:abc'), 'the plain prompt');
    expect(ui.lastFrame()).not.toContain('certificate authority');
    const note = 'The host is vouched for by a certificate authority; use `transport: openssh`';
    store.dispatch({ type: 'prompt.open', prompt: { ...prompt, certificateAuthority: note } });
    await until(() => (ui.lastFrame() ?? '').replace(/\s+/g, ' ').includes(note), 'the CA sentence');
    ui.unmount();
  });
});

describe('setup screen', () => {
  it('edits a host field, tests connections and saves', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const c = controller();
    const ui = mount(store, c);
    expect(ui.lastFrame()).toContain('Setup');
    // Move to the address field of the first host and type it.
    // Keys sent back to back, faster than React renders: every one must land.
    ui.stdin.write('\u001b[C');
    ui.stdin.write('\r');
    await until(() => (ui.lastFrame() ?? '').includes('▏'), 'edit mode');
    for (const ch of '10.0.0.1') ui.stdin.write(ch);
    await until(() => (ui.lastFrame() ?? '').includes('10.0.0.1▏'), 'typed');
    ui.stdin.write('\r');
    await until(() => !(ui.lastFrame() ?? '').includes('▏'), 'committed');
    ui.stdin.write('t');
    await until(() => (ui.lastFrame() ?? '').includes('✔ connected to l20-n1'), 'test result');
    // The network design with its consequences; n cycles A → B → tutorial.
    expect(ui.lastFrame()).toContain('Network design: [A]  B  tutorial');
    expect(ui.lastFrame()).toContain('one subnet per cable');
    ui.stdin.write('n');
    await until(() => (ui.lastFrame() ?? '').includes('Network design: A  [B]  tutorial'), 'design B');
    expect(ui.lastFrame()).toContain('802.3ad RoCE-LAG bond per NIC');
    ui.stdin.write('n');
    await until(
      () => (ui.lastFrame() ?? '').includes('DCB cannot be set on the bond (R25)'),
      'the tutorial design and its consequences',
    );
    ui.stdin.write('w');
    await until(() => (c.saveHosts as ReturnType<typeof vi.fn>).mock.calls.length === 1, 'save');
    const saved = (c.saveHosts as ReturnType<typeof vi.fn>).mock.calls[0]![0] as Array<{
      name: string;
      address: string;
    }>;
    expect(saved[0]).toMatchObject({ name: 'l20-n1', address: '10.0.0.1', role: 'head' });
    expect((c.saveHosts as ReturnType<typeof vi.fn>).mock.calls[0]![1]).toEqual({ design: 'tutorial' });
    ui.unmount();
  });

  /** Moves to the first host's address, types `address` and leaves edit mode. */
  async function typeAddress(ui: ReturnType<typeof mount>, address: string): Promise<void> {
    ui.stdin.write('\u001b[C');
    ui.stdin.write('\r');
    await until(() => (ui.lastFrame() ?? '').includes('▏'), 'edit mode');
    for (const ch of address) ui.stdin.write(ch);
    ui.stdin.write('\r');
  }

  it('shows where an alias address leads and the ssh config lines that decided it', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const configFile = new URL('../fixtures/ssh-config/basic/config', import.meta.url).pathname;
    // The same resolution the resolve verb prints, from the corpus config instead of ~/.ssh/config.
    const c = controller({ describeAddress: vi.fn((h) => aliasView(h, resolveHost(h.address, { configFile }))) });
    const ui = mount(store, c);
    await typeAddress(ui, 'gpu-a');
    await until(() => (ui.lastFrame() ?? '').includes('↳ ubuntu@10.0.0.11:2222 key'), 'the alias resolution');
    expect(ui.lastFrame()).toContain('HostName config:4 · Port config:5 · User config:6 · IdentityFile config:11');
    ui.unmount();
  });

  it('shows the path to each host: its jump hosts and the transport', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const configFile = new URL('../fixtures/ssh-config/proxy/config', import.meta.url).pathname;
    const describePath = vi.fn((h: { address: string }) =>
      pathView(h, resolveHost(h.address, { configFile }), hopResolver({ configFile })),
    );
    const ui = mount(store, controller({ describePath }));
    await typeAddress(ui, 'pj-multi');
    await until(() => (ui.lastFrame() ?? '').includes('⇢ via hop1 → hop2 → ssh2'), 'the path line');
    ui.unmount();
  });

  it('shows the validation error when saving fails', async () => {
    const store = new AppStore(appState([], { screen: 'setup' }));
    const c = controller({ saveHosts: vi.fn(async () => 'hosts[0].address = "": expected a host name or IP address') });
    const ui = mount(store, c);
    ui.stdin.write('w');
    await until(() => (ui.lastFrame() ?? '').includes('hosts[0].address'), 'error shown');
    ui.unmount();
  });
});
