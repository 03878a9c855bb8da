/** Driver and GPU-platform rules (R30–R39): NIC stack, GPU driver and CUDA, GPUDirect, memlock, PCIe. */
import type { RuleRecord } from './schema.js';

export const DRIVER_RULES: readonly RuleRecord[] = [
  {
    id: 'R30',
    family: 'drivers',
    title: 'NIC software stack versus NIC generation',
    severity: 'high',
    graded: true,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'Identify the NIC by PCI ID, never by the label "CX4":\n' +
      '- `15b3:1013`, ConnectX-4 (MT4115): supported up to MLNX_OFED 24.10 LTS and the DOCA 2.9 LTS ' +
      'line; pin there.\n' +
      '- `15b3:1015`, ConnectX-4 Lx (MT4117): inbox mlx5 + rdma-core, or current DOCA-OFED; firmware ' +
      'ends at 14.32.x.\n' +
      'Then it fires when:\n' +
      '- the stack is newer than the device supports → `high`;\n' +
      '- the MLNX_OFED version was never published (e.g. `23.10-1.1.8.0`; the GA is 23.10-1.1.9.0) → ' +
      '`high`;\n' +
      '- MLNX_OFED is on a non-LTS branch → `medium`. LTS branches: 4.9, 5.4, 5.8, 23.10, 24.10; all ' +
      'others (5.5–5.7, 5.9, 23.04, 23.07, 24.01–24.07) were short-lived.',
    evidence: '`lspci -nn`, `ofed_info -s`, `ethtool -i`.',
    why:
      "A stack past the device's last supported release has no support for it; an unpublished version " +
      'cannot be downloaded or reproduced; short-lived branches get no fixes. 24.10 LTS is the last ' +
      'standalone MLNX_OFED; after it, only DOCA-OFED. The OFED installer removes the distro RDMA ' +
      'packages.',
    fix:
      'ConnectX-4: pin MLNX_OFED 24.10 LTS or the DOCA 2.9 LTS line. ConnectX-4 Lx: inbox mlx5 + ' +
      'rdma-core, or current DOCA-OFED; firmware 14.32.x.',
  },
  {
    id: 'R31',
    family: 'drivers',
    title: 'Irrelevant OFED installer flags',
    severity: 'low',
    graded: false,
    scope: ['cfg'],
    status: 'implemented',
    detect:
      'The install uses `--enable-gds`, `--with-nvmf` or `--with-neohost-backend` on an NCCL-only host, ' +
      'or `--add-kernel-support` for a prebuilt kernel.',
    why:
      'They build and install components an NCCL host never uses (`--add-kernel-support` rebuilds ' +
      'packages for a kernel that already has them). The installer also flashes firmware by default.',
    fix: '`./mlnxofedinstall --skip-unsupported-devices-check`.',
  },
  {
    id: 'R32',
    family: 'drivers',
    title: 'One GPU-driver install method',
    severity: 'blocker',
    graded: false,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'A distro or NVIDIA-repo driver (`nvidia-driver-*`, `nvidia-dkms-*`) is mixed with a runfile ' +
      'driver (`*.run --driver`, or `/usr/bin/nvidia-uninstall` present), or the plan uses two ' +
      'branches.',
    why: 'CUDA Installation Guide, "Handle Conflicting Installation Methods".',
    fix:
      'The apt driver only (e.g. `nvidia-driver-580-server-open`); a toolkit from `cuda-toolkit-X-Y`, ' +
      'or from a runfile with `--toolkit` and never `--driver`.',
  },
  {
    id: 'R33',
    family: 'drivers',
    title: 'Driver branch and CUDA compatibility',
    severity: 'high',
    graded: true,
    scope: ['cfg', 'host'],
    status: 'implemented',
    detect:
      'Show the `nvidia-smi` driver and CUDA version next to `torch.version.cuda`. It fires when:\n' +
      "- the runtime's CUDA major is above the driver's → `blocker`;\n" +
      '- the same major with a newer minor → `medium`;\n' +
      '- an EOL branch (R535, EOL June 2026) or a New Feature Branch (545, 555, 560…) in production → ' +
      '`high`.\n' +
      'The lifecycle table is data.',
    why:
      'A newer CUDA major fails with "CUDA driver version is insufficient…" (13.x needs ≥ 580). A newer ' +
      'minor runs by minor-version compatibility (≥ 525 for 12.x), with no newer-PTX JIT. EOL and ' +
      'feature branches stop getting fixes.',
    fix: 'R580 LTSB (EOL June 2028) or the production branch, with the open modules.',
  },
  {
    id: 'R34',
    family: 'drivers',
    title: 'GPUDirect RDMA path present',
    severity: 'high',
    graded: true,
    scope: ['host'],
    status: 'implemented',
    detect:
      'Pass on either path:\n' +
      '- DMA-BUF: `/proc/driver/nvidia/version` says "Open Kernel Module", the kernel is ≥ 5.12, and ' +
      'NCCL_DMABUF_ENABLE ≠ 0;\n' +
      '- peermem: `nvidia_peermem` is loaded on an OFED `ib_core`, with no `Unknown symbol ' +
      'ib_register_peer_memory_client` or `Invalid argument` in dmesg.\n' +
      'Proof: `via NET/IB/<n>/GDRDMA` channels.\n' +
      'A configured path is broken → `high`; no path is configured → `info` ("host-staged").',
    why:
      'Without a working path NCCL stages every transfer through host memory. That is fine at 25GbE, ' +
      'but a path that was configured and broke means the intended setup is not running.',
    fix:
      'DMA-BUF through the `-open` driver, or peermem from modules-load.d, rebuilt after every kernel ' +
      'or OFED update.',
  },
  {
    id: 'R35',
    family: 'drivers',
    title: 'Locked memory',
    severity: 'high',
    graded: false,
    scope: ['host', 'cfg'],
    status: 'implemented',
    detect:
      '`ulimit -l` is not `unlimited` where jobs start; or a unit lacks `LimitMEMLOCK=infinity` ' +
      '(limits.conf does not reach services); or a container lacks `--ulimit memlock=-1` and IPC_LOCK.',
    why:
      'RDMA registers (pins) its buffers; under a memlock limit registration fails. Symptom: `Call to ' +
      'ibv_reg_mr failed with error Cannot allocate memory`.',
    fix:
      '`* soft memlock unlimited` and `* hard memlock unlimited` in /etc/security/limits.d/; ' +
      '`LimitMEMLOCK=infinity` in units; `--ulimit memlock=-1 --cap-add IPC_LOCK` for containers.',
  },
  {
    id: 'R36',
    family: 'drivers',
    title: 'PCIe ACS and IOMMU',
    severity: 'high',
    graded: true,
    scope: ['host'],
    status: 'implemented',
    detect:
      '- a bridge above a GPU or NIC shows `ACSCtl: … SrcValid+` → `high`;\n' +
      '- the IOMMU runs translated (`Default domain type: Translated`) → `medium`.',
    why:
      'With ACS on, P2P and GDR detour through the root complex: "significant performance reduction or ' +
      'even a hang" (NCCL troubleshooting; NVIDIA/nccl#2079).',
    fix: 'Disable ACS in the BIOS, or run `setpci -s <bdf> ECAP_ACS+0x6.w=0000` from a boot unit; set ' + '`iommu=pt`.',
  },
  {
    id: 'R37',
    family: 'drivers',
    title: 'GPU P2P matrix',
    severity: 'medium',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect: '`nvidia-smi topo -p2p r` is not `OK` (CNS, GNS, TNS, NS, U) inside a TP group.',
    why: 'Without P2P between the GPUs of a TP group, NCCL goes through host memory.',
    fix: 'Find what blocks P2P: ACS or the IOMMU (R36), or the driver (D13); then read the matrix again.',
  },
  {
    id: 'R38',
    family: 'drivers',
    title: 'PCIe link health',
    severity: 'medium',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect:
      'A link is downtrained: expected are L20 `16GT/s x16` and ConnectX-4 Lx `8GT/s x8`. Always ' +
      'compare the width. Compare the speed only under load (idle GPUs drop to 2.5GT/s), or read ' +
      'nvidia-smi `pcie.link.gen.max`/`.current` and `pcie.link.width.current`.',
    why: "A downtrained link caps the device's bandwidth to the host and to its peers (D20).",
    fix: 'Reseat the device or check the BIOS PCIe settings.',
  },
  {
    id: 'R39',
    family: 'drivers',
    title: 'GPU↔NIC locality',
    severity: 'info',
    graded: false,
    scope: ['host'],
    status: 'implemented',
    detect:
      "Report each GPU's NIC column from `nvidia-smi topo -m`, and which GPUs get GDR by default (PXB " + 'or closer).',
    why: 'Only GPUs close to a NIC get GDR by default; the others stage through host memory.',
    fix: 'Nothing to change: never widen the level to force it (R04).',
  },
];
