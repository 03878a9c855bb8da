/**
 * Stage 3, `nic-stack` (docs/STAGES.md §3.3): which RDMA stack drives the ConnectX-4 Lx ports, whether its
 * driver is the loaded one, firmware, userspace, the RDMA devices, and parity across hosts.
 *
 * The stack for ConnectX-4 Lx is the inbox one (mlx5 + Ubuntu's rdma-core): RoCE v2 and, with the open
 * GPU driver, DMA-BUF GPUDirect need nothing else. The config has no stack choice, so DOCA-OFED is only
 * planned where the installed stack fails nic-stack.flavor (an unpublished or unsupported OFED).
 * Installing rdma-core changes RDMA device names (`rocep…`) at the next boot or driver reload; the
 * stage does not reboot for it (gpu-driver's reboot follows), and later stages re-discover names.
 */
import type { StageDef, StepDef } from '../../src/engine/types.js';
import { collectNicStack, type NicStackFacts } from './facts.js';
import { nicStackChecks } from './checks.js';
import { INBOX_PACKAGES, nicStackProbes } from './probes.js';

/** DOCA-Host 2.9.1 LTS (DOCA-OFED 24.10), the last line that also supports ConnectX-4; current for ConnectX-4 Lx. */
export const DOCA_HOST_DEB = 'doca-host_2.9.1-018000-24.10-ubuntu2204_amd64.deb';
export const DOCA_HOST_URL = `https://www.mellanox.com/downloads/DOCA/DOCA_v2.9.1/host/${DOCA_HOST_DEB}`;

const aptInstall = (pkgs: readonly string[]) => ({
  argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'install', '-y', ...pkgs],
});

const installInbox: StepDef<NicStackFacts> = {
  id: 'nic-stack.install-inbox',
  title: 'install the inbox RDMA userspace (rdma-core, verbs and perftest tools)',
  danger: 'safe',
  guards: ['nic-stack.userspace'],
  plan: (ctx) => {
    // An OFED bundle ships its own packages of these names; mixing in Ubuntu's would break it.
    if (ctx.facts.stack.flavor === 'MLNX_OFED' || ctx.facts.stack.flavor === 'DOCA') return null;
    const missing = INBOX_PACKAGES.filter((p) => !ctx.facts.packages[p]);
    return {
      summary: `install ${missing.join(', ') || INBOX_PACKAGES.join(', ')}; RDMA devices are renamed rocep… at the next boot or driver reload`,
      commands: [
        { command: { argv: ['apt-get', 'update'] }, timeoutMs: 10 * 60_000 },
        { command: aptInstall(INBOX_PACKAGES), timeoutMs: 30 * 60_000 },
      ],
    };
  },
};

const installDoca: StepDef<NicStackFacts> = {
  id: 'nic-stack.install-doca',
  title: 'replace the installed OFED with DOCA-OFED 2.9.1 LTS',
  danger: 'disruptive',
  guards: ['nic-stack.flavor'],
  plan: (ctx) => {
    const f = ctx.facts;
    // Only a stack that fails the flavor check is replaced; an unknown one needs a human look.
    if (f.stack.flavor === 'inbox' || f.stack.flavor === 'unknown') return null;
    const mgmt = f.fabric.mgmt.netdev;
    const mgmtOnMlx5 = mgmt !== undefined && f.fabric.ports.some((p) => p.netdev === mgmt);
    const uninstall =
      f.stack.flavor === 'MLNX_OFED'
        ? [{ command: { argv: ['/usr/sbin/ofed_uninstall.sh', '--force'] }, timeoutMs: 20 * 60_000 }]
        : [];
    return {
      summary: `replace ${f.stack.flavor} ${f.stack.version ?? ''} with DOCA-OFED (DOCA-Host 2.9.1 LTS)${mgmtOnMlx5 ? '; no driver reload: management runs on an mlx5 port, so the new driver loads at the next reboot' : '; reloads the mlx5 driver (every mlx5 link drops for seconds)'}`,
      commands: [
        ...uninstall,
        { command: { argv: ['wget', '-q', '-O', `/tmp/${DOCA_HOST_DEB}`, DOCA_HOST_URL] }, timeoutMs: 10 * 60_000 },
        { command: { argv: ['dpkg', '-i', `/tmp/${DOCA_HOST_DEB}`] } },
        { command: { argv: ['apt-get', 'update'] }, timeoutMs: 10 * 60_000 },
        { command: aptInstall(['doca-ofed']), timeoutMs: 60 * 60_000 },
        ...(mgmtOnMlx5 ? [] : [{ command: { argv: ['/etc/init.d/openibd', 'restart'] }, timeoutMs: 5 * 60_000 }]),
      ],
      rollback: [
        {
          command: { argv: ['env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', 'purge', '-y', 'doca-ofed'] },
          timeoutMs: 30 * 60_000,
        },
        { command: aptInstall(INBOX_PACKAGES), timeoutMs: 30 * 60_000 },
      ],
    };
  },
};

export const nicStackStage: StageDef<NicStackFacts> = {
  id: 'nic-stack',
  title: 'rdma-core, DOCA-OFED or MLNX_OFED; firmware',
  purpose:
    "The RDMA stack for the ConnectX-4 Lx ports: the inbox mlx5 driver with Ubuntu's rdma-core runs RoCE v2 and DMA-BUF GPUDirect, so no OFED is needed. The tutorial's MLNX_OFED 23.10-1.1.8.0 was never published (the GA is 23.10-1.1.9.0), its installer flags are not needed and it flashes firmware; MLNX_OFED ended with 24.10 LTS. Both hosts must run the same stack.",
  probes: nicStackProbes,
  collect: collectNicStack,
  checks: nicStackChecks,
  steps: [installInbox, installDoca],
};
