/**
 * Scenario parts for the qos stage (docs/STAGES.md §4.4).
 *
 * `ready`: what qos.persist leaves for design A with the default config — the PFs in the state the
 * script's inbox branch set: a DSCP 26 → 3 APP entry (DSCP trust) and PFC on priority 3; the
 * l20-roce-qos script, its unit and the enable link are among the recorded files (ready/).
 * `tutorial`: the recipe's mlnx_qos commands were typed once — trust dscp and PFC 3 on the four PFs
 * (runtime only), the bond0 lines failed — and its pfc.sh sits in the operator's home.
 * `pfc-mismatch`: node 2's PFs lost PFC (trust kept).
 */
import { clusterSchema } from '../../src/config/schema.js';
import type { Cluster } from '../model/cluster.js';
import { addDscpApp, portQos, setPfc, setTrust } from '../model/qos.js';
import type { Machine } from '../model/types.js';

/** The QoS settings of a default configuration (the lab's inventory has no qos section). */
const QOS = clusterSchema.parse({ hosts: [{ name: 'h', address: '127.0.0.1', role: 'head' }] }).qos;

/** ConnectX PF netdevs in PCI order (what the stage discovers). */
function pfs(m: Machine): string[] {
  return m.netdevs
    .filter((d) => d.driver === 'mlx5_core' && d.pci)
    .sort((a, b) => (a.pci ?? '').localeCompare(b.pci ?? ''))
    .map((d) => d.name);
}

const only = (prio: number): boolean[] => Array.from({ length: 8 }, (_, i) => i === prio);

export function ready(cluster: Cluster): void {
  for (const m of cluster.machines) {
    for (const p of pfs(m)) {
      const q = portQos(m, p)!;
      addDscpApp(q, QOS.dscp, QOS.priority);
      setPfc(q, only(QOS.priority));
    }
    m.revision++;
  }
}

/** The tutorial's pfc.sh, as the operator saved it. */
export const TUTORIAL_PFC_SH = `# 为所有物理接口配置PFC（优先级3对应RoCE流量）
for iface in ens1f0 ens1f1 ens2f0 ens2f1; do
  sudo mlnx_qos -i $iface --trust dscp
  sudo mlnx_qos -i $iface --pfc 0,0,0,1,0,0,0,0
done
# 同样为bond0接口配置PFC
sudo mlnx_qos -i bond0 --trust dscp
sudo mlnx_qos -i bond0 --pfc 0,0,0,1,0,0,0,0
`;

export function tutorial(cluster: Cluster): void {
  for (const m of cluster.machines) {
    for (const p of pfs(m)) {
      const q = portQos(m, p)!;
      setTrust(q, 'dscp');
      setPfc(q, only(3));
    }
    m.files ??= new Map();
    m.files.set(`${m.user.home}/pfc.sh`, { content: TUTORIAL_PFC_SH, mode: 0o644 });
    m.revision++;
  }
}

/** `pfc-mismatch`: node 2 PFC off on all four ports (trust dscp kept). */
export function pfcMismatch(cluster: Cluster): void {
  const m = cluster.machines[1];
  if (!m) return;
  for (const p of pfs(m)) setPfc(portQos(m, p)!, only(-1));
  m.revision++;
}
