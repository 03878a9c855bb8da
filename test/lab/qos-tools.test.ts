/**
 * The qos stage's tools on the lab over real SSH: mlnx_qos (tutorial, MLNX_OFED) against the corpus
 * layout and the bond0 failures of docs/STAGES.md §4.3; iproute2 dcb (ready, inbox); runtime-only state
 * that a reboot drops and the enabled l20-roce-qos unit puts back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from 'ssh2';
import type { Lab } from '../../lab/index.js';
import { parseMlnxQos } from '../../src/parse/mlnx-qos.js';
import { loadFixture } from '../parse/fixtures.js';
import { closeLab, openLab, rebootAndReconnect, sh } from './helpers.js';

/** Lines whose values are per-card (buffer sizes) or newer than the sample (default priority) are left out. */
const comparable = (t: string): string[] =>
  t.split('\n').filter((l) => l !== '' && !/^(Receive buffer size|default priority:|\s+buffer\s|mlnx_qos -i)/.test(l));

describe('mlnx_qos on the tutorial lab (MLNX_OFED 23.10)', () => {
  let lab: Lab;
  let c: Client;
  beforeAll(async () => {
    ({ lab, conn: c } = await openLab({ scenario: 'tutorial' }, 0));
  });
  afterAll(() => closeLab(lab, c));

  it('the PFs show what the tutorial set by hand, in the corpus layout (trust dscp, default map, PFC on 3)', async () => {
    const r = await sh(c, 'sudo mlnx_qos -i ens1f0');
    expect(r.code).toBe(0);
    expect(comparable(r.out)).toEqual(comparable(loadFixture('corpus/mlnx_qos__dscp-default-map-pfc3-vendor-tsa.txt')));
    expect(r.out).toContain('\ndefault priority:\n');
    expect(r.out).toMatch(/\nReceive buffer size \(bytes\): (\d+,){8}max_buffer_size=\d+\n/);
    expect(parseMlnxQos(r.out)).toMatchObject({
      trust: 'dscp',
      dcbx: 'os',
      pfc: [0, 0, 0, 1, 0, 0, 0, 0],
      cableLen: 7,
    });
    expect(parseMlnxQos(r.out).dscp2prio?.['26']).toBe(3);
  });

  it('bond0 has no DCB: --trust prints the not-supported line and --pfc dies in its error path, both exit 1', async () => {
    // The tutorial's bond0 (created here if the network part of the scenario did not).
    await sh(c, 'ip link show bond0 >/dev/null 2>&1 || sudo ip link add bond0 type bond mode balance-xor');
    const trust = await sh(c, 'sudo mlnx_qos -i bond0 --trust dscp');
    expect(trust).toMatchObject({ code: 1, out: 'Priority trust state is not supported on your system\n' });
    const pfc = await sh(c, 'sudo mlnx_qos -i bond0 --pfc 0,0,0,1,0,0,0,0');
    expect(pfc.code).toBe(1);
    expect(pfc.out).toBe('Netlink error: Operation not supported (95)\n');
    expect(pfc.err).toMatch(/^Traceback \(most recent call last\):\n[\s\S]*\nTypeError: .*\n$/);
    // The tutorial's pfc.sh under `set -e` stops at the first bond0 line; the PF lines before it ran.
    expect(await sh(c, 'sudo dcb pfc set dev bond0 prio-pfc 3:on')).toMatchObject({
      code: 1,
      err: 'Attribute read: Operation not supported\n',
    });
    const script = await sh(c, 'bash -e ~/pfc.sh; echo "exit $?"');
    expect(script.out).toContain('Priority trust state is not supported on your system\nexit 1\n');
  });

  it('setting commands print the full status afterwards; non-root cannot set', async () => {
    const off = await sh(c, 'sudo mlnx_qos -i ens1f1 --trust pcp --pfc 0,0,0,0,0,0,0,0');
    expect(off.code).toBe(0);
    expect(parseMlnxQos(off.out)).toMatchObject({ trust: 'pcp', pfc: [0, 0, 0, 0, 0, 0, 0, 0] });
    expect(off.out).not.toContain('dscp2prio mapping:');
    const back = await sh(c, 'sudo mlnx_qos -i ens1f1 --trust dscp --pfc 0,0,0,1,0,0,0,0');
    expect(parseMlnxQos(back.out)).toMatchObject({ trust: 'dscp', pfc: [0, 0, 0, 1, 0, 0, 0, 0] });
    expect((await sh(c, 'mlnx_qos -i ens1f1 --trust pcp')).code).toBe(1);
    expect(parseMlnxQos((await sh(c, 'mlnx_qos -i ens1f1')).out).trust).toBe('dscp');
    expect(await sh(c, 'mlnx_qos -i ens1f1 --trust foo')).toMatchObject({ code: 1 });
  });

  it('a reboot drops the runtime settings: nothing persisted them (R27)', async () => {
    c = await rebootAndReconnect(lab, c, 0);
    expect(parseMlnxQos((await sh(c, 'sudo mlnx_qos -i ens1f0')).out)).toMatchObject({
      trust: 'pcp',
      pfc: [0, 0, 0, 0, 0, 0, 0, 0],
    });
  });
});

describe('dcb and the QoS unit on the ready lab (inbox stack)', () => {
  let lab: Lab;
  let c: Client;
  beforeAll(async () => {
    ({ lab, conn: c } = await openLab({ scenario: 'ready' }, 1));
  });
  afterAll(() => closeLab(lab, c));

  it('shows the APP entry (numeric and named), PFC on 3 and OS-owned DCBX, iproute2 5.15 layout', async () => {
    expect(await sh(c, 'dcb -N app show dev ens2f0 dscp-prio')).toMatchObject({ code: 0, out: 'dscp-prio 26:3 \n' });
    expect((await sh(c, 'dcb app show dev ens2f0')).out).toBe('dscp-prio AF31:3 \n');
    expect((await sh(c, 'dcb pfc show dev ens2f0')).out).toBe(
      'pfc-cap 8 macsec-bypass off delay 7 \nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off \n',
    );
    expect((await sh(c, 'dcb pfc show dev ens2f0 prio-pfc')).out).toBe(
      'prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off \n',
    );
    expect((await sh(c, 'dcb dcbx show dev ens2f0')).out).toBe('host cee ieee \n');
    expect(await sh(c, 'dcb app show dev eno1')).toMatchObject({
      code: 1,
      err: 'Attribute read: Operation not supported\n',
    });
    expect(await sh(c, 'dcb pfc show dev nosuch0')).toMatchObject({ code: 1, err: 'Attribute read: No such device\n' });
    expect(await sh(c, 'dcb pfc set dev ens2f0 prio-pfc all:off')).toMatchObject({
      code: 1,
      err: 'Attribute write: Operation not permitted\n',
    });
    expect(await sh(c, 'mlnx_qos -i ens2f0')).toMatchObject({ code: 127 });
  });

  it('the unit is enabled and active; --reset returns the PFs to PCP trust without PFC; a restart re-applies', async () => {
    expect((await sh(c, 'systemctl is-enabled l20-roce-qos.service')).out).toBe('enabled\n');
    const reset = await sh(c, 'sudo /usr/local/sbin/l20-roce-qos --reset; echo rc=$?');
    expect(reset.out).toBe('rc=0\n');
    expect((await sh(c, 'dcb -N app show dev ens1f0 dscp-prio')).out).toBe('');
    expect((await sh(c, 'dcb pfc show dev ens1f0 prio-pfc')).out).toBe(
      'prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off \n',
    );
    expect((await sh(c, 'sudo systemctl restart l20-roce-qos.service; echo rc=$?')).out).toBe('rc=0\n');
    expect((await sh(c, 'dcb -N app show dev ens1f0 dscp-prio')).out).toBe('dscp-prio 26:3 \n');
    expect(
      (await sh(c, 'systemctl show -p ActiveState,Result l20-roce-qos.service')).out.split('\n').sort().join(' '),
    ).toContain('ActiveState=active Result=success');
  });

  it('a reboot drops the settings and the enabled unit puts them back at boot', async () => {
    c = await rebootAndReconnect(lab, c, 1);
    for (const pf of ['ens1f0', 'ens1f1', 'ens2f0', 'ens2f1']) {
      expect((await sh(c, `dcb -N app show dev ${pf} dscp-prio`)).out).toBe('dscp-prio 26:3 \n');
      expect((await sh(c, `dcb pfc show dev ${pf} prio-pfc`)).out).toContain(' 3:on ');
    }
  });

  it('inbox coupling: the first DSCP APP entry switches to DSCP trust, deleting the last restores PCP', async () => {
    expect((await sh(c, 'sudo dcb app flush dev ens2f1 dscp-prio; dcb app show dev ens2f1')).out).toBe('');
    expect((await sh(c, 'sudo dcb app add dev ens2f1 dscp-prio 26:3 46:5; dcb -N app show dev ens2f1')).out).toBe(
      'dscp-prio 26:3 46:5 \n',
    );
    expect((await sh(c, 'sudo dcb app replace dev ens2f1 dscp-prio 46:4; dcb -N app show dev ens2f1')).out).toBe(
      'dscp-prio 26:3 46:4 \n',
    );
    expect((await sh(c, 'sudo dcb app del dev ens2f1 dscp-prio 26:3 46:4; dcb -N app show dev ens2f1')).out).toBe('');
    expect(lab.hosts[1]!.machine.qos?.['0000:9a:00.1']?.trust).toBe('pcp');
  });
});
