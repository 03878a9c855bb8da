/**
 * Every modelled tool. Tools whose packages are absent on `fresh` (NVIDIA userspace, rdma-core
 * utilities, lldpd, MLNX_OFED) are registered already, so that bash answers with the right
 * not-found text today and the later stages only need to add their renderers and packages.
 */
import { fail } from '../shell/args.js';
import { dpkgQuery } from '../apt/dpkg-query.js';
import { ping } from './ping.js';
import { netplan } from './netplan.js';
import { ufw } from './ufw.js';
import { lldpcli, lldpctl } from './lldp.js';
// Registers the network's reboot hooks (bonds and addresses dropped, netplan and ufw at boot).
import './network-boot.js';
import { ip } from './ip.js';
import { lscpu } from './lscpu.js';
import { lspci } from './lspci.js';
import { ethtool, rdma } from './rdma-ethtool.js';
import { ibdev2netdev, ibvDevices, ibvDevinfo, ofedInfo } from './ofed.js';
import { dcb, mlnxQos } from './mlnx-qos.js';
import { wget } from './wget.js';
import { ibstat, showGids } from './ibstat.js';
import { ibReadBw, ibSendBw, ibWriteBw } from './perftest.js';
import { OS_TOOLS } from './os-tools.js';
import { APT_TOOLS } from '../apt/index.js';
import { python3 } from './venv.js';
// Registers torchrun (programs run by path, shell/programs.ts); venv.js registers python and pip.
import './torch-bench.js';
import { nvidiaSmi } from './nvidia-smi.js';
// Registers the NVIDIA kernel modules, boot hooks and nvidia-persistenced with the system layer.
import './nvidia-system.js';
import { nvcc } from './nvcc.js';
import { dkms } from './dkms.js';
import { mokutil } from './mokutil.js';
import { setpci } from './setpci.js';
import { updateGrub } from './grub.js';
import { ubuntuDrivers } from './ubuntu-drivers.js';
import { curl } from './curl.js';
import { ss } from './ss.js';
import { rsync } from './rsync.js';
import { openssl, sshKeygen } from './keys.js';
import { du } from './du.js';
// Register ray, vllm and hf (console scripts run by path) and the ray python one-liners.
import './ray.js';
import './ray-python.js';
import './vllm.js';
import './hf.js';
import type { Tool } from './types.js';
import { SYSTEM_TOOLS } from '../system/commands.js';

/** A tool the lab knows is installable but whose output is not modelled yet. */
function pending(name: string, path: string, packages: readonly string[]): Tool {
  return {
    name,
    path,
    packages,
    run: () => fail(1, `${name}: not modelled by this version of the l20-setup lab\n`),
  };
}

export const TOOLS: readonly Tool[] = [
  lspci,
  ip,
  rdma,
  ethtool,
  lscpu,
  dpkgQuery,
  ping,
  nvidiaSmi,
  nvcc,
  dkms,
  mokutil,
  setpci,
  updateGrub,
  ubuntuDrivers,
  lldpcli,
  lldpctl,
  netplan,
  ufw,
  ofedInfo,
  ibdev2netdev,
  showGids,
  mlnxQos,
  dcb,
  wget,
  ibstat,
  pending('ibstatus', '/usr/sbin/ibstatus', ['infiniband-diags']),
  ibvDevinfo,
  ibvDevices,
  ibWriteBw,
  ibReadBw,
  ibSendBw,
  pending('chronyc', '/usr/bin/chronyc', ['chrony']),
  ...APT_TOOLS,
  ...OS_TOOLS,
  ...SYSTEM_TOOLS,
  python3,
  curl,
  ss,
  rsync,
  sshKeygen,
  openssl,
  du,
];
