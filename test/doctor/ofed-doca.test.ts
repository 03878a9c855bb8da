/**
 * `ofed_info -s` of a DOCA-OFED install prints `OFED-internal-<ver>:` (DOCA-Host 2.9 LTS: 24.10-1.1.4);
 * doctor reads its version exactly as it reads `MLNX_OFED_LINUX-<ver>:`, in the shapes pastes take.
 */
import { describe, expect, it } from 'vitest';
import { doctorText } from '../../src/doctor/doctor.js';
import type { OfedInfoFacts } from '../../src/parse/ofed-info.js';
import { toCrlf } from '../parse/fixtures.js';

const facts = (text: string): OfedInfoFacts => {
  const { report } = doctorText(text);
  expect(report.kind).toBe('ofed_info');
  return report.facts as OfedInfoFacts;
};

describe('ofed_info -s on DOCA-OFED', () => {
  const samples: Record<string, string> = {
    bare: 'OFED-internal-24.10-1.1.4:\n',
    'root prompt and command': 'root@l20-n1:~# ofed_info -s\nOFED-internal-24.10-1.1.4:\nroot@l20-n1:~#\n',
    'sudo, $ prompt, CRLF': toCrlf('$ sudo ofed_info -s\nOFED-internal-24.10-1.1.4:\n'),
    'plain ofed_info head (package list follows)':
      'OFED-internal-24.10-1.1.4:\n\nclusterkit:\nmlnx_ofed_clusterkit/clusterkit-1.14.462-1.2410068.src.rpm\n',
  };
  for (const [name, text] of Object.entries(samples)) {
    it(`${name}: version and flavour`, () => {
      expect(facts(text)).toMatchObject({ version: '24.10-1.1.4', flavor: 'DOCA', release: '24.10', build: '1.1.4' });
    });
  }

  it('reads the version the way it reads MLNX_OFED_LINUX-<ver>:', () => {
    const doca = facts('OFED-internal-25.04-0.6.1:\n');
    const mlnx = facts('MLNX_OFED_LINUX-25.04-0.6.1:\n');
    expect({ ...doca, flavor: undefined, raw: undefined }).toEqual({ ...mlnx, flavor: undefined, raw: undefined });
    expect([doca.flavor, mlnx.flavor]).toEqual(['DOCA', 'MLNX_OFED']);
  });

  it('D25 judges it by NIC: past ConnectX-4 support only when newer than 24.10', () => {
    const cx4 = '\n03:00.0 Infiniband controller [0207]: Mellanox Technologies MT27700 Family [ConnectX-4] [15b3:1013]';
    expect(doctorText(`OFED-internal-24.10-1.1.4:${cx4}`).report.findings.filter((f) => f.rule === 'D25')).toEqual([]);
    expect(doctorText(`OFED-internal-25.04-0.6.1:${cx4}`).report.findings.map((f) => f.rule)).toContain('D25');
  });
});
