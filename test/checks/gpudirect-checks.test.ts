import { describe, expect, it } from 'vitest';
import * as c from '../../checks/gpudirect/checks.js';
import { collectGpudirect, type GpudirectFacts } from '../../checks/gpudirect/facts.js';
import { parseP2p } from '../../checks/gpudirect/p2p.js';
import { acsOff, iommuPt, peermem } from '../../checks/gpudirect/steps.js';
import type { CheckDef, HostCheckDef, StepDef, StepPlanContext } from '../../src/engine/types.js';
import type { RunResult } from '../../src/transport/types.js';
import { testContext } from '../helpers/stage-context.js';
import { notFound, notFoundText, unreadableVerdict } from '../helpers/needs.js';
import { gpudirectStage } from '../../checks/gpudirect/index.js';

const ctx = testContext();
const run = (stdout: string, exitCode = 0, stderr = ''): RunResult => ({
  commandLine: 'x',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 1,
  timedOut: false,
  cancelled: false,
  truncated: false,
});
const host = (check: CheckDef<GpudirectFacts>, f: GpudirectFacts, context = ctx) =>
  (check as HostCheckDef<GpudirectFacts>).evaluate(f, f.host, context);

const OFF = 'SrcValid- TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-';
const ON = 'SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-';
const CAP = 'SrcValid+ TransBlk+ ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-';
const acs = (ctl: string, at: string): string =>
  `\tCapabilities: [${at} v1] Access Control Services\n\t\tACSCap:\t${CAP}\n\t\tACSCtl:\t${ctl}\n`;

/** The pcie probe (inventory's PCIE_SCRIPT) for one GPU and one NIC port under one switch. */
function pcie(downstream = OFF): string {
  return [
    'pci_path 0000:18:00.0 /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0',
    'pci_path 0000:1a:00.0 /sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:02.0/0000:1a:00.0',
    `0000:15:01.0 PCI bridge: Intel Corporation Device 352a (rev 04) (prog-if 00 [Normal decode])\n\tKernel driver in use: pcieport\n${acs(OFF, '148')}`,
    'numa_node 0000:15:01.0 0',
    '0000:16:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n\tKernel driver in use: pcieport\n',
    `0000:17:00.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n${acs(downstream, 'f24')}`,
    `0000:17:02.0 PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0) (prog-if 00 [Normal decode])\n${acs(OFF, 'f24')}`,
    '0000:18:00.0 3D controller: NVIDIA Corporation AD102GL [L20] (rev a1)\n\tSubsystem: NVIDIA Corporation AD102GL [L20]\n\tKernel driver in use: nvidia\n',
    '0000:1a:00.0 Ethernet controller: Mellanox Technologies MT27710 Family [ConnectX-4 Lx]\n\tKernel driver in use: mlx5_core\n',
    '',
  ].join('\n');
}

const GPUS = ['GPU0', 'GPU1', 'GPU2', 'GPU3', 'GPU4', 'GPU5', 'GPU6', 'GPU7'];
/** `nvidia-smi topo -m` of the L20 box: GPUs 0–3 socket 0, NIC0/1 (rocep26s0f0/1) beside GPUs 0 and 1. */
function topo(): string {
  const nics = ['NIC0', 'NIC1', 'NIC2', 'NIC3'];
  const socket = (g: number): number => (g < 4 ? 0 : 1);
  const sw = (g: number): number => Math.floor(g / 2);
  const nicSw = [0, 0, 2, 2];
  const rel = (a: number, b: number): string => (socket(a) !== socket(b) ? 'SYS' : sw(a) === sw(b) ? 'PIX' : 'NODE');
  const head = `\t\u001b[4m${[...GPUS, ...nics].join('\t')}\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\u001b[0m`;
  const rows = GPUS.map(
    (g, i) =>
      `${g}\t${GPUS.map((_, j) => (i === j ? ' X ' : rel(i, j))).join('\t')}\t${nicSw.map((s) => (socket(i) !== socket(s * 2) ? 'SYS' : sw(i) === s ? 'PIX' : 'NODE')).join('\t')}\t${socket(i) === 0 ? '0-31,64-95' : '32-63,96-127'}\t${socket(i)}\t\tN/A`,
  );
  const legend = ['NIC0: rocep26s0f0', 'NIC1: rocep26s0f1', 'NIC2: rocep154s0f0', 'NIC3: rocep154s0f1'];
  return [
    head,
    ...rows,
    '',
    'Legend:',
    '',
    '  X    = Self',
    '',
    'NIC Legend:',
    '',
    ...legend.map((l) => `  ${l}`),
    '',
  ].join('\n');
}

/** `nvidia-smi topo -p2p r` as driver 580 prints it (tab cells, underlined header). */
function p2p(
  cell: (a: number, b: number) => string = (a, b) => (Math.floor(a / 4) === Math.floor(b / 4) ? 'OK' : 'CNS'),
): string {
  const head = ` \t\u001b[4m${GPUS.map((g) => `${g}\t`).join('')}\u001b[0m`;
  const rows = GPUS.map((g, i) => ` ${g}\t${GPUS.map((_, j) => `${i === j ? 'X' : cell(i, j)}\t`).join('')}`);
  return [
    head,
    ...rows,
    '',
    'Legend:',
    '',
    '  X    = Self',
    '  OK   = Status Ok',
    '  CNS  = Chipset not supported',
    '',
  ].join('\n');
}

const OPEN =
  'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.126.09  Release Build  (root@l20-n1)  Sun Nov 29 10:00:00 UTC 2026\n';
const PROPRIETARY = 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.126.09  Wed Jan  7 05:46:09 UTC 2026\n';
/** /proc/modules rows (what the probe reads: no lsmod, which Debian keeps off a login's PATH). */
const procModules = (...rows: string[]): string => rows.map((r) => `${r} - Live 0x0000000000000000 (OE)\n`).join('');

/** What `ready` looks like: open module, inbox stack, ACS off, iommu=pt. */
function facts(over: Record<string, RunResult> = {}): GpudirectFacts {
  return collectGpudirect({
    host: 'l20-n1',
    results: {
      kernel: run('5.15.0-126-generic\n'),
      'nvidia-version': run(OPEN),
      modules: run(
        procModules(
          'nvidia_uvm 1830912 0',
          'nvidia 14299136 1 nvidia_uvm,',
          'mlx5_ib 397312 0',
          'ib_core 417792 2 mlx5_ib,ib_uverbs,',
        ),
      ),
      'modules-load': run('### file /etc/modules\n# /etc/modules: kernel modules to load at boot time.\n'),
      'ofed-info': run('', 127, 'bash: line 1: ofed_info: command not found\n'),
      'dmabuf-env': run(''),
      cmdline: run('BOOT_IMAGE=/vmlinuz-5.15.0-126-generic root=UUID=0b1c ro iommu=pt\n'),
      dmesg: run('[    0.802344] iommu: Default domain type: Passthrough (set via kernel command line)\n'),
      pcie: run(pcie()),
      topo: run(topo()),
      p2p: run(p2p()),
      'rdma-link': run(
        'link rocep26s0f0/1 state ACTIVE physical_state LINK_UP netdev ens1f0 \nlink rocep26s0f1/1 state ACTIVE physical_state LINK_UP netdev ens1f1 \n',
      ),
      'acs-unit': run('enabled\n'),
      ...over,
    },
  });
}

describe('gpudirect checks', () => {
  it('ready: DMA-BUF, ACS off, IOMMU passthrough, P2P inside each socket, GPUs 0 and 1 near NIC 1', () => {
    const f = facts();
    expect(host(c.pathCheck, f)).toMatchObject({
      status: 'pass',
      rule: 'R34',
      summary: expect.stringContaining('DMA-BUF'),
    });
    expect(host(c.peermemDmesgCheck, f)).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('does not use nvidia-peermem'),
    });
    expect(host(c.acsCheck, f)).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('all 4 bridges above 1 GPUs and 1 NIC ports'),
    });
    expect(host(c.iommuCheck, f).status).toBe('pass');
    const p = host(c.p2pCheck, f);
    expect(p).toMatchObject({ status: 'pass', rule: 'R37' });
    expect(p.summary).toContain('2 group(s) of 4 GPUs (16 pairs across groups are not)');
    const l = host(c.localityCheck, f);
    expect(l.summary).toMatch(/^GPU0, GPU1, GPU4, GPU5 reach a NIC at ≤ PXB/);
    expect(l.evidence).toContain('rocep26s0f0(ens1f0) PIX');
  });

  it('acs-enabled: SrcValid+ on a downstream port fails R36 with the BDF and the ACSCtl line', () => {
    const v = host(c.acsCheck, facts({ pcie: run(pcie(ON)) }));
    expect(v).toMatchObject({ status: 'fail', rule: 'R36', fix: expect.stringContaining('gpudirect.acs-off') });
    expect(v.evidence).toContain(`0000:17:00.0 ACSCtl:\t${ON} (above 0000:18:00.0)`);
  });

  it('no-peermem: DOCA with the proprietary module and no peermem has no GDR path; the peermem step is offered', () => {
    const f = facts({ 'nvidia-version': run(PROPRIETARY), 'ofed-info': run('OFED-internal-25.07-0.9.7:\n') });
    expect(f.stack).toBe('doca');
    expect(host(c.pathCheck, f)).toMatchObject({
      status: 'warn',
      rule: 'R34',
      fix: expect.stringContaining('gpudirect.peermem'),
    });
    const p = peermem.plan!({
      ...ctx,
      host: 'l20-n1',
      hostIndex: 0,
      facts: f,
      all: [{ host: 'l20-n1', facts: f }],
      results: [],
    } as StepPlanContext<GpudirectFacts>)!;
    expect(p.files![0]).toMatchObject({
      path: '/etc/modules-load.d/nvidia-peermem.conf',
      content: expect.stringContaining('\nnvidia-peermem\n'),
    });
    expect(p.commands![0]!.command).toEqual({ argv: ['modprobe', 'nvidia-peermem'] });
  });

  it('tutorial: nvidia_peermem loaded on MLNX_OFED and listed in /etc/modules is a working (legacy) path', () => {
    // The rows of the corpus's `lsmod | grep nvidia_peermem` (MLNX_OFED host), as /proc/modules prints them.
    const f = facts({
      'nvidia-version': run(PROPRIETARY.replace(/580\.126\.09/, '535.183.01')),
      modules: run(
        procModules(
          'nvidia_peermem 16384 0',
          'ib_core 348160 9 rdma_cm,ib_ipoib,nvidia_peermem,iw_cm,ib_umad,rdma_ucm,ib_uverbs,mlx5_ib,ib_cm,',
          'nvidia 56344576 492 nvidia_uvm,nvidia_peermem,nvidia_modeset,',
        ),
      ),
      'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.9.0:\n'),
      'modules-load': run(
        '### file /etc/modules\n# /etc/modules: kernel modules to load at boot time.\nnvidia-peermem\n',
      ),
    });
    expect(host(c.pathCheck, f)).toMatchObject({
      status: 'pass',
      summary: expect.stringContaining('MLNX_OFED ib_core, persisted in /etc/modules'),
    });
    expect(host(c.peermemDmesgCheck, f).status).toBe('pass');
  });

  it('peermem on the inbox stack: configured, refused by the kernel → R34 fail with the dmesg line', () => {
    const f = facts({
      'nvidia-version': run(PROPRIETARY),
      'modules-load': run('### file /etc/modules-load.d/nvidia-peermem.conf\nnvidia-peermem\n'),
      dmesg: run(
        '[   12.000001] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -2)\n[    0.802344] iommu: Default domain type: Passthrough (set via kernel command line)\n',
      ),
    });
    expect(host(c.pathCheck, f)).toMatchObject({
      status: 'fail',
      rule: 'R34',
      summary: expect.stringContaining('inbox'),
    });
    expect(host(c.peermemDmesgCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('Unknown symbol ib_register_peer_memory_client'),
    });
    expect(
      peermem.plan!({
        ...ctx,
        host: 'l20-n1',
        hostIndex: 0,
        facts: f,
        all: [],
        results: [],
      } as StepPlanContext<GpudirectFacts>),
    ).toBeNull();
  });

  it('NCCL_DMABUF_ENABLE=0 breaks the DMA-BUF path', () => {
    const f = facts({ 'dmabuf-env': run('/etc/nccl.conf:NCCL_DMABUF_ENABLE=0\n') });
    expect(host(c.pathCheck, f)).toMatchObject({
      status: 'fail',
      summary: expect.stringContaining('/etc/nccl.conf:NCCL_DMABUF_ENABLE=0'),
    });
  });

  it('a translated IOMMU warns with the iommu-pt step', () => {
    const f = facts({
      cmdline: run('BOOT_IMAGE=/vmlinuz-5.15.0-126-generic root=UUID=0b1c ro\n'),
      dmesg: run('[    0.802344] iommu: Default domain type: Translated \n'),
    });
    expect(host(c.iommuCheck, f)).toMatchObject({
      status: 'warn',
      rule: 'R36',
      fix: expect.stringContaining('gpudirect.iommu-pt'),
    });
  });

  it('P2P: NS inside a socket warns; a TP 8 plan makes the cross-socket pairs count', () => {
    const ns = facts({
      p2p: run(
        p2p((a, b) =>
          (a === 0 && b === 1) || (a === 1 && b === 0) ? 'NS' : Math.floor(a / 4) === Math.floor(b / 4) ? 'OK' : 'CNS',
        ),
      ),
    });
    expect(host(c.p2pCheck, ns)).toMatchObject({ status: 'warn', evidence: expect.stringContaining('GPU0↔GPU1 NS') });
    const tp8 = testContext(['l20-n1', 'l20-n2'], { vllm: { layout: 'tp-pp' } } as never);
    expect(host(c.p2pCheck, facts(), tp8).status).toBe('warn');
  });

  it('a host with no GPU or ConnectX: zero bridges is an answer (skip), not "could not read"', () => {
    const none = facts({
      pcie: run(''),
      'nvidia-version': run('', 1, 'cat: /proc/driver/nvidia/version: No such file or directory\n'),
      topo: notFound('nvidia-smi'),
      p2p: notFound('nvidia-smi'),
    });
    const v = host(c.acsCheck, none);
    expect(v).toMatchObject({ status: 'skip', summary: expect.stringContaining('no NVIDIA GPU or ConnectX port') });
    expect(v.evidence).toContain('listed no function');
    expect(host(c.localityCheck, none)).toMatchObject({
      status: 'skip',
      summary: expect.stringContaining('no NVIDIA driver loaded'),
      evidence: expect.stringContaining('command not found'),
    });
    // nvidia-smi's absence is the answer "no driver", never a tool to install first.
    expect(unreadableVerdict(gpudirectStage, 'gpudirect.locality', { topo: notFound('nvidia-smi') })).toBeUndefined();
  });

  it('lspci missing, sudo refused or lspci failing is "cannot tell", naming the tool and its package', () => {
    const twice = run('', 0, notFoundText('lspci').repeat(2));
    const missing = unreadableVerdict(gpudirectStage, 'gpudirect.acs', { pcie: twice });
    expect(missing).toMatchObject({
      status: 'error',
      summary: 'cannot tell: lspci is not installed on l20-n1 (package pciutils)',
    });
    const refused = run('', 1, 'sudo: a password is required\n');
    expect(unreadableVerdict(gpudirectStage, 'gpudirect.acs', { pcie: refused })?.summary).toContain('sudo refused');
    const pcilib = 'pcilib: Cannot open /proc/bus/pci\nlspci: Cannot find any working access method.\n';
    const broken = host(c.acsCheck, facts({ pcie: run('', 0, pcilib) }));
    expect(broken).toMatchObject({
      status: 'error',
      summary: expect.stringMatching(/^cannot tell: lspci -vv of the bridges/),
    });
    expect(broken.summary).toContain('(pcilib: Cannot open /proc/bus/pci)');
    const noTty = run('', 1, 'sudo: a terminal is required to read the password\n');
    expect(unreadableVerdict(gpudirectStage, 'gpudirect.peermem-dmesg', { dmesg: noTty })?.status).toBe('error');
  });

  it('nvidia_peermem is read from /proc/modules: a host without lsmod on its PATH still sees it loaded', () => {
    const f = facts({
      modules: run(procModules('nvidia_peermem 16384 0', 'nvidia 14299136 1 nvidia_peermem,')),
      'nvidia-version': run(PROPRIETARY),
      'ofed-info': run('MLNX_OFED_LINUX-23.10-1.1.9.0:\n'),
      'modules-load': run('### file /etc/modules\nnvidia-peermem\n'),
    });
    expect(f.peermem).toMatchObject({ loaded: true, read: true });
    expect(host(c.pathCheck, f).evidence).toContain('/proc/modules nvidia_peermem: nvidia_peermem 16384 0');
    const unread = host(
      c.pathCheck,
      facts({
        modules: run('', 1, 'cat: /proc/modules: No such file or directory\n'),
        'nvidia-version': run(PROPRIETARY),
      }),
    );
    expect(unread).toMatchObject({ status: 'error', summary: expect.stringMatching(/^cannot tell: \/proc\/modules/) });
  });

  it('parses the real single-GPU -p2p r capture (H200, 580.159.04)', () => {
    const captured =
      ' \t\u001b[4mGPU0\t\u001b[0m\n GPU0\tX\t\n\nLegend:\n\n  X    = Self\n  OK   = Status Ok\n  CNS  = Chipset not supported\n  GNS  = GPU not supported\n  TNS  = Topology not supported\n  NS   = Not supported\n  U    = Unknown\n';
    expect(parseP2p(captured)).toEqual({ gpus: ['GPU0'], status: { GPU0: {} } });
    expect(parseP2p(p2p()).status['GPU0']).toMatchObject({ GPU1: 'OK', GPU4: 'CNS' });
  });
});

describe('gpudirect steps', () => {
  const plan = (step: StepDef<GpudirectFacts>, f: GpudirectFacts) =>
    step.plan!({
      ...ctx,
      host: f.host,
      hostIndex: 0,
      facts: f,
      all: [{ host: f.host, facts: f }],
      results: [],
    } as StepPlanContext<GpudirectFacts>);

  it('acs-off writes a setpci per bridge with the capability and a oneshot unit before nvidia-persistenced', () => {
    const p = plan(acsOff, facts({ pcie: run(pcie(ON)) }))!;
    const script = p.files!.find((f) => f.path === '/usr/local/sbin/l20-acs-off')!;
    expect(script.mode).toBe(0o755);
    expect(script.content.split('\n').filter((l) => l.startsWith('setpci'))).toEqual([
      'setpci -s 0000:15:01.0 ECAP_ACS+0x6.w=0000',
      'setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000',
      'setpci -s 0000:17:02.0 ECAP_ACS+0x6.w=0000',
    ]);
    const unit = p.files!.find((f) => f.path === '/etc/systemd/system/l20-acs-off.service')!;
    expect(unit.content).toContain('Before=nvidia-persistenced.service');
    expect(unit.content).toContain('Type=oneshot');
    expect(p.commands!.map((x) => ('argv' in x.command ? x.command.argv.join(' ') : ''))).toEqual([
      'systemctl daemon-reload',
      'systemctl enable l20-acs-off.service',
      'systemctl restart l20-acs-off.service',
    ]);
  });

  it('iommu-pt writes the grub.d drop-in, runs update-grub and reboots', () => {
    const p = plan(iommuPt, facts())!;
    expect(p.files![0]).toMatchObject({
      path: '/etc/default/grub.d/90-l20-iommu.cfg',
      content: expect.stringContaining('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT iommu=pt"'),
    });
    expect(p.reboot).toBe(true);
  });
});
