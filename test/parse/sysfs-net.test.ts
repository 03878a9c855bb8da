import { describe, expect, it } from 'vitest';
import { parseSysfsNet } from '../../src/parse/sysfs-net.js';
import { ansiWrap, CUTS, toCrlf, truncateAt, withPrompt } from './fixtures.js';

// `for i in /sys/class/net/*; do echo "$i $(readlink -f $i/device)"; done` on a l20 node:
// PCI netdevs resolve under their bridges; lo/bond0 have no `device` link, so readlink -f prints the
// canonical path with the missing last component.
const SAMPLE = `/sys/class/net/bond0 /sys/devices/virtual/net/bond0/device
/sys/class/net/eno1 /sys/devices/pci0000:00/0000:00:1c.0/0000:03:00.0
/sys/class/net/ens1f0 /sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:08.0/0000:1a:00.0
/sys/class/net/ens1f1 /sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:08.0/0000:1a:00.1
/sys/class/net/ens2f0 /sys/devices/pci0000:97/0000:97:01.0/0000:98:00.0/0000:99:08.0/0000:9a:00.0
/sys/class/net/lo /sys/devices/virtual/net/lo/device
`;

describe('parseSysfsNet', () => {
  it('maps netdevs to their BDF and upstream path', () => {
    const { netdevs } = parseSysfsNet(SAMPLE);
    expect(Object.keys(netdevs)).toEqual(['bond0', 'eno1', 'ens1f0', 'ens1f1', 'ens2f0', 'lo']);
    expect(netdevs['ens1f0']).toEqual({
      bdf: '0000:1a:00.0',
      pciPath: ['0000:17:01.0', '0000:18:00.0', '0000:19:08.0', '0000:1a:00.0'],
      path: '/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:08.0/0000:1a:00.0',
      virtual: false,
    });
    expect(netdevs['eno1']).toMatchObject({ bdf: '0000:03:00.0', pciPath: ['0000:00:1c.0', '0000:03:00.0'] });
    expect(netdevs['lo']).toMatchObject({ bdf: null, pciPath: [], virtual: true });
    expect(netdevs['bond0']).toMatchObject({ bdf: null, virtual: true });
  });

  it('handles an empty readlink, a netdev path and a USB device', () => {
    const text = [
      '/sys/class/net/bond0 ',
      '/sys/class/net/ens1f0np0 /sys/devices/pci0000:17/0000:17:01.0/0000:1a:00.0/net/ens1f0np0',
      '/sys/class/net/enx0c37 /sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0',
      '/sys/class/net/lo /sys/class/net/lo/device',
    ].join('\n');
    const { netdevs } = parseSysfsNet(text);
    expect(netdevs['bond0']).toEqual({ bdf: null, pciPath: [], path: '', virtual: true });
    expect(netdevs['ens1f0np0']).toMatchObject({ bdf: '0000:1a:00.0', pciPath: ['0000:17:01.0', '0000:1a:00.0'] });
    // The USB NIC's own device is not a PCI function; its controller is upstream.
    expect(netdevs['enx0c37']).toMatchObject({ bdf: null, pciPath: ['0000:00:14.0'], virtual: false });
    // A readlink that gave the unresolved path back.
    expect(netdevs['lo']).toMatchObject({ bdf: null, pciPath: [], virtual: true });
  });

  it('survives CRLF, ANSI, a prompt and truncation', () => {
    const base = parseSysfsNet(SAMPLE);
    for (const v of [
      toCrlf(SAMPLE),
      ansiWrap(SAMPLE),
      withPrompt(SAMPLE, 'for i in /sys/class/net/*; do echo "$i $(readlink -f $i/device)"; done'),
    ]) {
      expect(parseSysfsNet(v)).toEqual(base);
    }
    for (const cut of CUTS) {
      const f = parseSysfsNet(truncateAt(SAMPLE, cut));
      const names = Object.keys(f.netdevs);
      // All but the last (possibly cut) entry are exact.
      names.slice(0, -1).forEach((n) => expect(f.netdevs[n]).toEqual(base.netdevs[n]));
    }
    expect(parseSysfsNet('')).toEqual({ netdevs: {} });
    expect(parseSysfsNet('ls: cannot access')).toEqual({ netdevs: {} });
  });
});
