/**
 * DCGM doctor kinds: `dcgmi diag` (D18 on failed tests) and `dcgmi discovery -l`.
 */
import { parseDcgmiDiag, type DcgmiDiagFacts } from '../../../parse/dcgmi-diag.js';
import { parseDcgmiDiscovery, type DcgmiDiscoveryFacts } from '../../../parse/dcgmi-discovery.js';
import { d18DcgmDiagFail } from '../../../rules/output/d18-dcgm-diag-fail.js';
import type { KindDef } from '../../types.js';
import { defined, hasAny, head } from './common.js';

export const dcgmiDiag: KindDef<DcgmiDiagFacts> = {
  kind: 'dcgmi-diag',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!t.includes('iagnostic')) return 0;
    if (/\|\s*Diagnostic\s*\|\s*Result\s*\|/.test(t)) return 0.95;
    return /Successfully ran diagnostic for group/.test(t) ? 0.85 : 0;
  },
  parse: parseDcgmiDiag,
  findings: (f) => defined([d18DcgmDiagFail(f)]),
  summary(f) {
    const count = (r: string): number => f.results.filter((x) => x.result === r).length;
    const rows: Array<[string, string]> = [];
    if (f.dcgmVersion) rows.push(['DCGM', f.dcgmVersion]);
    if (f.driverVersion) rows.push(['driver', f.driverVersion]);
    rows.push([
      'tests',
      `${f.results.length}: ${count('Pass')} pass, ${count('Fail')} fail, ${count('Warn')} warn, ${count('Skip')} skip`,
    ]);
    const failed = f.results.filter((r) => r.result === 'Fail').map((r) => r.test);
    if (failed.length > 0) rows.push(['failed', failed.join(', ')]);
    const ran = f.results.filter((r) => r.section !== 'Deployment' && r.section !== 'Metadata');
    if (ran.length > 0 && ran.every((r) => r.result === 'Skip'))
      rows.push(['note', 'every test after Deployment was skipped: the diagnostic did not run']);
    return rows;
  },
};

export const dcgmiDiscovery: KindDef<DcgmiDiscoveryFacts> = {
  kind: 'dcgmi-discovery',
  detect(text) {
    const t = head(text, 64 * 1024);
    if (!hasAny(t, 'Device Information', 'PCI Bus ID')) return 0;
    if (/\|\s*GPU ID\s*\|\s*Device Information\s*\|/.test(t)) return 0.95;
    return /^\s*\d+ GPUs? found\.?\s*$/m.test(t) && /PCI Bus ID:/.test(t) ? 0.8 : 0;
  },
  parse: parseDcgmiDiscovery,
  findings: () => [],
  summary: (f) => [
    [
      'GPUs',
      `${f.gpusFound ?? f.gpus.length}${f.gpus[0]?.name ? ` × ${[...new Set(f.gpus.map((g) => g.name))].join(', ')}` : ''}`,
    ],
    ...(f.nvSwitchesFound !== undefined
      ? ([['NvSwitches', String(f.nvSwitchesFound)]] as Array<[string, string]>)
      : []),
  ],
};
