import { describe, expect, it } from 'vitest';
import { parseIpNeigh, parseLldpNeighbors } from '../../src/parse/lldp.js';
import { ansiWrap, CUTS, toCrlf, truncateAt, withPrompt } from './fixtures.js';

// lldpcli -f json show neighbors, shaped as lldpd's json writer prints it (src/client/json_writer.c
// cleanup; lldpd 1.0.x on jammy). Peers run lldpd with defaults: port id = MAC, port descr = ifname.
const ONE = `{
  "lldp": {
    "interface": {
      "ens1f0": {
        "via": "LLDP",
        "rid": "1",
        "age": "0 day, 00:03:12",
        "chassis": {
          "l20-n2": {
            "id": {
              "type": "mac",
              "value": "3c:ec:ef:10:20:31"
            },
            "descr": "Ubuntu 22.04.5 LTS Linux 5.15.0-126-generic #136-Ubuntu SMP Wed Nov 6 10:38:22 UTC 2024 x86_64",
            "mgmt-ip": [
              "10.0.0.2",
              "fe80::3eec:efff:fe10:2031"
            ],
            "capability": [
              {
                "type": "Bridge",
                "enabled": false
              },
              {
                "type": "Router",
                "enabled": false
              },
              {
                "type": "Wlan",
                "enabled": false
              },
              {
                "type": "Station",
                "enabled": true
              }
            ]
          }
        },
        "port": {
          "id": {
            "type": "mac",
            "value": "0c:42:a1:5e:22:b0"
          },
          "descr": "ens1f0",
          "ttl": "120",
          "mfs": "9022"
        }
      }
    }
  }
}
`;

// Several interfaces: an array of one-key objects. The second chassis sent no SysName, so it is not
// re-keyed; the third port sends an ifname port id.
const MANY = JSON.stringify({
  lldp: {
    interface: [
      {
        ens1f0: {
          via: 'LLDP',
          rid: '1',
          chassis: { 'l20-n2': { id: { type: 'mac', value: '3C:EC:EF:10:20:31' }, 'mgmt-ip': '10.0.0.2' } },
          port: { id: { type: 'mac', value: '0c:42:a1:5e:22:b0' }, descr: 'ens1f0', ttl: '120' },
        },
      },
      {
        ens1f1: {
          via: 'LLDP',
          rid: '2',
          chassis: { id: { type: 'mac', value: '3c:ec:ef:10:20:99' }, descr: 'switch' },
          port: { id: { type: 'mac', value: '0c:42:a1:5e:22:b1' }, ttl: '120' },
        },
      },
      {
        ens2f0: {
          via: 'LLDP',
          rid: '1',
          chassis: { 'l20-n2': { id: { type: 'mac', value: '3c:ec:ef:10:20:31' } } },
          port: { id: { type: 'ifname', value: 'ens2f0' }, descr: 'ens2f0', ttl: '120' },
        },
      },
    ],
  },
});

// -f json0: every level an array, names kept as `name` keys.
const JSON0 = JSON.stringify({
  lldp: [
    {
      interface: [
        {
          name: 'ens1f0',
          via: 'LLDP',
          rid: '1',
          chassis: [
            {
              id: [{ type: 'mac', value: '3c:ec:ef:10:20:31' }],
              name: [{ value: 'l20-n2' }],
              'mgmt-ip': [{ value: '10.0.0.2' }, { value: 'fe80::1' }],
            },
          ],
          port: [
            {
              id: [{ type: 'mac', value: '0c:42:a1:5e:22:b0' }],
              descr: [{ value: 'ens1f0' }],
              ttl: [{ value: '120' }],
            },
          ],
        },
      ],
    },
  ],
});

describe('parseLldpNeighbors', () => {
  it('reads a single neighbour (interface and chassis keyed by name)', () => {
    expect(parseLldpNeighbors(ONE)).toEqual({
      neighbors: [
        {
          localPort: 'ens1f0',
          via: 'LLDP',
          chassisName: 'l20-n2',
          chassisMac: '3c:ec:ef:10:20:31',
          chassisId: '3c:ec:ef:10:20:31',
          chassisIdType: 'mac',
          peerPortId: '0c:42:a1:5e:22:b0',
          peerPortIdType: 'mac',
          peerPortDescr: 'ens1f0',
          mgmtIps: ['10.0.0.2', 'fe80::3eec:efff:fe10:2031'],
        },
      ],
    });
  });

  it('reads several interfaces, an unnamed chassis and an ifname port id', () => {
    const { neighbors } = parseLldpNeighbors(MANY);
    expect(neighbors.map((n) => n.localPort)).toEqual(['ens1f0', 'ens1f1', 'ens2f0']);
    expect(neighbors[0]).toMatchObject({
      chassisName: 'l20-n2',
      chassisMac: '3c:ec:ef:10:20:31',
      mgmtIps: ['10.0.0.2'],
    });
    expect(neighbors[1]?.chassisName).toBeUndefined();
    expect(neighbors[1]).toMatchObject({ chassisMac: '3c:ec:ef:10:20:99', peerPortId: '0c:42:a1:5e:22:b1' });
    expect(neighbors[1]?.peerPortDescr).toBeUndefined();
    expect(neighbors[2]).toMatchObject({ peerPortId: 'ens2f0', peerPortIdType: 'ifname' });
  });

  it('reads the json0 format to the same facts', () => {
    expect(parseLldpNeighbors(JSON0).neighbors).toEqual([
      {
        localPort: 'ens1f0',
        via: 'LLDP',
        chassisName: 'l20-n2',
        chassisMac: '3c:ec:ef:10:20:31',
        chassisId: '3c:ec:ef:10:20:31',
        chassisIdType: 'mac',
        peerPortId: '0c:42:a1:5e:22:b0',
        peerPortIdType: 'mac',
        peerPortDescr: 'ens1f0',
        mgmtIps: ['10.0.0.2', 'fe80::1'],
      },
    ]);
  });

  it('reads two neighbours on one port', () => {
    const text = JSON.stringify({
      lldp: {
        interface: [
          {
            eno1: {
              chassis: { sw1: { id: { type: 'mac', value: 'aa:bb:cc:00:00:01' } } },
              port: { id: { type: 'ifname', value: 'Ethernet1' } },
            },
          },
          {
            eno1: {
              chassis: { sw2: { id: { type: 'mac', value: 'aa:bb:cc:00:00:02' } } },
              port: { id: { type: 'ifname', value: 'Ethernet7' } },
            },
          },
        ],
      },
    });
    expect(parseLldpNeighbors(text).neighbors.map((n) => [n.localPort, n.chassisName, n.peerPortId])).toEqual([
      ['eno1', 'sw1', 'Ethernet1'],
      ['eno1', 'sw2', 'Ethernet7'],
    ]);
  });

  it('reads no neighbours and reports errors without throwing', () => {
    expect(parseLldpNeighbors('{\n  "lldp": {\n    \n  }\n}\n')).toEqual({ neighbors: [] });
    expect(parseLldpNeighbors('{"lldp": [{}]}')).toEqual({ neighbors: [] });
    expect(parseLldpNeighbors('').error).toBe('empty output');
    expect(parseLldpNeighbors('bash: lldpcli: command not found').error).toBeDefined();
    expect(parseLldpNeighbors('{"foo": 1}').error).toBeDefined();
    // lldpd not running
    expect(parseLldpNeighbors('[lldpctl] unable to connect to socket /run/lldpd.socket').neighbors).toEqual([]);
  });

  it('survives CRLF, ANSI, a prompt; truncation never throws', () => {
    const base = parseLldpNeighbors(ONE);
    for (const v of [toCrlf(ONE), ansiWrap(ONE), withPrompt(ONE, 'lldpcli -f json show neighbors')]) {
      expect(parseLldpNeighbors(v)).toEqual(base);
    }
    for (const cut of CUTS) {
      const f = parseLldpNeighbors(truncateAt(MANY, cut));
      expect(Array.isArray(f.neighbors)).toBe(true);
    }
  });
});

// ip -6 -j neigh show dev ens1f0 after `ping -6 -c 2 -W 1 -I ens1f0 ff02::1` (iproute2 5.15).
const PING_AND_NEIGH = `PING ff02::1%ens1f0(ff02::1%ens1f0) from fe80::e42:a1ff:fe5e:11a0%ens1f0 ens1f0: 56 data bytes
64 bytes from fe80::e42:a1ff:fe5e:22b0%ens1f0: icmp_seq=1 ttl=64 time=0.094 ms

--- ff02::1%ens1f0 ping statistics ---
2 packets transmitted, 2 received, 0% packet loss, time 1001ms
rtt min/avg/max/mdev = 0.081/0.087/0.094/0.006 ms
[{"dst":"fe80::e42:a1ff:fe5e:22b0","lladdr":"0c:42:a1:5e:22:b0","state":["REACHABLE"]},{"dst":"fe80::1","lladdr":"3C:EC:EF:10:20:31","router":null,"state":["STALE"]},{"dst":"fe80::dead","state":["FAILED"]}]
`;

describe('parseIpNeigh', () => {
  it('reads neighbours after the ping output', () => {
    expect(parseIpNeigh(PING_AND_NEIGH)).toEqual({
      neighbors: [
        { dst: 'fe80::e42:a1ff:fe5e:22b0', lladdr: '0c:42:a1:5e:22:b0', state: ['REACHABLE'] },
        { dst: 'fe80::1', lladdr: '3c:ec:ef:10:20:31', state: ['STALE'], router: true },
        { dst: 'fe80::dead', state: ['FAILED'] },
      ],
    });
  });

  it('reads an empty table and bad input without throwing', () => {
    expect(parseIpNeigh('[]')).toEqual({ neighbors: [] });
    expect(parseIpNeigh('').error).toBe('empty output');
    expect(parseIpNeigh('Cannot find device "ens9f0"').error).toBeDefined();
    for (const cut of CUTS) expect(() => parseIpNeigh(truncateAt(PING_AND_NEIGH, cut))).not.toThrow();
    const cut = parseIpNeigh(truncateAt(PING_AND_NEIGH, 0.9));
    cut.neighbors.forEach((n, i) => expect(n).toEqual(parseIpNeigh(PING_AND_NEIGH).neighbors[i]));
  });
});
