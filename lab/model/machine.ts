/**
 * Builds the hardware and base software of one L20 server. Scenarios then adjust the state
 * (`fresh` keeps these defaults). Every per-machine identifier comes from rng(seed, host, …).
 */
import { MachineSystem } from '../system/machine-system.js';
import { SimClock, type Speed } from '../util/clock.js';
import { macToString, rng } from '../util/prng.js';
import { jammyBasePackages } from './packages.js';
import { buildPciTree } from './pci-topology.js';
import type { Cpu, Gpu, IpAddress, Machine, NetDev, RdmaDevice } from './types.js';

export const MGMT_CLIENT_ADDRESS = '10.0.0.100';
export const MGMT_GATEWAY = '10.0.0.254';

/** Mellanox OUIs seen on ConnectX-4 Lx boards. */
const MLX_OUIS = [
  [0xb8, 0x59, 0x9f],
  [0x0c, 0x42, 0xa1],
  [0x1c, 0x34, 0xda],
  [0x98, 0x03, 0x9b],
];

const SPR_8462Y: Cpu = {
  modelName: 'Intel(R) Xeon(R) Platinum 8462Y+',
  vendor: 'GenuineIntel',
  family: 6,
  model: 143,
  stepping: 8,
  sockets: 2,
  coresPerSocket: 32,
  threadsPerCore: 2,
  maxMHz: '4100.0000',
  minMHz: '800.0000',
  bogoMips: '5600.00',
  addressSizes: '46 bits physical, 57 bits virtual',
  cacheKiB: { l1d: 48, l1i: 32, l2: 2048, l3: 61440 },
  flags:
    'fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe ' +
    'syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf ' +
    'tsc_known_freq pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 ' +
    'x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch cpuid_fault epb cat_l3 cat_l2 ' +
    'cdp_l3 invpcid_single intel_ppin cdp_l2 ssbd mba ibrs ibpb stibp ibrs_enhanced tpr_shadow vnmi flexpriority ept vpid ' +
    'ept_ad fsgsbase tsc_adjust bmi1 hle avx2 smep bmi2 erms invpcid rtm cqm rdt_a avx512f avx512dq rdseed adx smap avx512ifma ' +
    'clflushopt clwb intel_pt avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves cqm_llc cqm_occup_llc ' +
    'cqm_mbm_total cqm_mbm_local split_lock_detect avx_vnni avx512_bf16 wbnoinvd dtherm ida arat pln pts hwp hwp_act_window ' +
    'hwp_epp hwp_pkg_req avx512vbmi umip pku ospke waitpkg avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg tme ' +
    'avx512_vpopcntdq la57 rdpid bus_lock_detect cldemote movdiri movdir64b enqcmd fsrm md_clear serialize tsxldtrk pconfig ' +
    'arch_lbr amx_bf16 avx512_fp16 amx_tile amx_int8 flush_l1d arch_capabilities',
  vulnerabilities: [
    ['Gather data sampling', 'Not affected'],
    ['Itlb multihit', 'Not affected'],
    ['L1tf', 'Not affected'],
    ['Mds', 'Not affected'],
    ['Meltdown', 'Not affected'],
    ['Mmio stale data', 'Not affected'],
    ['Reg file data sampling', 'Not affected'],
    ['Retbleed', 'Not affected'],
    ['Spec rstack overflow', 'Not affected'],
    ['Spec store bypass', 'Mitigation; Speculative Store Bypass disabled via prctl and seccomp'],
    ['Spectre v1', 'Mitigation; usercopy/swapgs barriers and __user pointer sanitization'],
    [
      'Spectre v2',
      'Mitigation; Enhanced / Automatic IBRS; IBPB conditional; RSB filling; PBRSB-eIBRS SW sequence; BHI BHI_DIS_S',
    ],
    ['Srbds', 'Not affected'],
    ['Tsx async abort', 'Not affected'],
  ],
};

/** EUI-64 link-local address from a MAC (what the kernel generates with addrgenmode eui64). */
export function linkLocalFromMac(mac: string): string {
  const b = mac.split(':').map((x) => parseInt(x, 16));
  const w = (hi: number, lo: number): string => ((hi << 8) | lo).toString(16);
  return `fe80::${w((b[0] ?? 0) ^ 0x02, b[1] ?? 0)}:${w(b[2] ?? 0, 0xff)}:${w(0xfe, b[3] ?? 0)}:${w(b[4] ?? 0, b[5] ?? 0)}`;
}

function uuid(r: ReturnType<typeof rng>): string {
  const h = r.hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${'89ab'[r.int(0, 3)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function meminfo(r: ReturnType<typeof rng>): Array<[string, number | string]> {
  const total = 1056557576;
  const free = 1043125380 - r.int(0, 400000);
  const cached = 3012444 + r.int(0, 200000);
  return [
    ['MemTotal', total],
    ['MemFree', free],
    ['MemAvailable', free + cached - 760000],
    ['Buffers', 256112],
    ['Cached', cached],
    ['SwapCached', 0],
    ['Active', 1204440],
    ['Inactive', 2459324],
    ['Active(anon)', 3136],
    ['Inactive(anon)', 452236],
    ['Active(file)', 1201304],
    ['Inactive(file)', 2007088],
    ['Unevictable', 29856],
    ['Mlocked', 27312],
    ['SwapTotal', 8388604],
    ['SwapFree', 8388604],
    ['Dirty', 120],
    ['Writeback', 0],
    ['AnonPages', 434876],
    ['Mapped', 327500],
    ['Shmem', 11152],
    ['KReclaimable', 620736],
    ['Slab', 2735984],
    ['SReclaimable', 620736],
    ['SUnreclaim', 2115248],
    ['KernelStack', 37232],
    ['PageTables', 8540],
    ['NFS_Unstable', 0],
    ['Bounce', 0],
    ['WritebackTmp', 0],
    ['CommitLimit', 536667392],
    ['Committed_AS', 2402848],
    ['VmallocTotal', 13743895347199],
    ['VmallocUsed', 483012],
    ['VmallocChunk', 0],
    ['Percpu', 177152],
    ['HardwareCorrupted', 0],
    ['AnonHugePages', 0],
    ['ShmemHugePages', 0],
    ['ShmemPmdMapped', 0],
    ['FileHugePages', 0],
    ['FilePmdMapped', 0],
    ['CmaTotal', 0],
    ['CmaFree', 0],
    ['HugePages_Total', '0'],
    ['HugePages_Free', '0'],
    ['HugePages_Rsvd', '0'],
    ['HugePages_Surp', '0'],
    ['Hugepagesize', 2048],
    ['Hugetlb', 0],
    ['DirectMap4k', 1197056],
    ['DirectMap2M', 44617728],
    ['DirectMap1G', 1029701632],
  ];
}

export interface MachineOptions {
  index: number;
  seed: number;
  speed: Speed;
  /** The lab's clock (shared by every machine of a cluster); a new one at `speed` if absent. */
  clock?: SimClock;
}

export function createMachine({ index, seed, speed, clock }: MachineOptions): Machine {
  const hostname = `l20-n${index}`;
  const r = (subsystem: string): ReturnType<typeof rng> => rng(seed, hostname, subsystem);
  const pci = buildPciTree(r('pci'));
  const macR = r('mac');
  const mgmtAddress = `10.0.0.${index}`;

  const netdevs: NetDev[] = [];
  netdevs.push({
    ifindex: 1,
    name: 'lo',
    altnames: [],
    linkType: 'loopback',
    mac: '00:00:00:00:00:00',
    mtu: 65536,
    minMtu: 0,
    maxMtu: 0,
    txqlen: 1000,
    numTxQueues: 1,
    numRxQueues: 1,
    gsoMaxSize: 65536,
    gsoMaxSegs: 65535,
    adminUp: true,
    qdisc: 'noqueue',
    addrGenMode: 'eui64',
    addresses: [
      {
        family: 'inet',
        local: '127.0.0.1',
        prefixlen: 8,
        scope: 'host',
        label: 'lo',
        validLft: 4294967295,
        preferredLft: 4294967295,
      },
      { family: 'inet6', local: '::1', prefixlen: 128, scope: 'host', validLft: 4294967295, preferredLft: 4294967295 },
    ],
  });
  // Onboard I210 (Super Micro OUI), named eno1 by its ACPI index; path name as altname.
  const mgmtMac = macToString([0x3c, 0xec, 0xef, ...macR.bytes(3)]);
  const mgmtAddrs: IpAddress[] = [
    {
      family: 'inet',
      local: mgmtAddress,
      prefixlen: 24,
      broadcast: '10.0.0.255',
      scope: 'global',
      label: 'eno1',
      validLft: 4294967295,
      preferredLft: 4294967295,
    },
    {
      family: 'inet6',
      local: linkLocalFromMac(mgmtMac),
      prefixlen: 64,
      scope: 'link',
      validLft: 4294967295,
      preferredLft: 4294967295,
    },
  ];
  netdevs.push({
    ifindex: 2,
    name: 'eno1',
    altnames: ['enp3s0'],
    linkType: 'ether',
    pci: '0000:03:00.0',
    driver: 'igb',
    mac: mgmtMac,
    mtu: 1500,
    minMtu: 68,
    maxMtu: 9216,
    txqlen: 1000,
    numTxQueues: 4,
    numRxQueues: 4,
    gsoMaxSize: 65536,
    gsoMaxSegs: 65535,
    adminUp: true,
    qdisc: 'mq',
    addrGenMode: 'none',
    addresses: mgmtAddrs,
    phy: 'i210-copper',
    linkSpeedMbps: 1000,
    firmware: '3.30, 0x800005d0',
    msgLevel: 7,
  });

  const rdma: RdmaDevice[] = [];
  const nics = pci.filter((p) => p.kind === 'nic');
  const baseMacs = new Map<number, number[]>();
  nics.forEach((nic, i) => {
    const slot = nic.slot ?? 0;
    const fn = Number(nic.bdf.slice(-1));
    let base = baseMacs.get(slot);
    if (!base) {
      base = [...(MLX_OUIS[macR.int(0, MLX_OUIS.length - 1)] ?? [0xb8, 0x59, 0x9f]), ...macR.bytes(3)];
      base[5] = (base[5] ?? 0) & 0xfe;
      baseMacs.set(slot, base);
    }
    const mac = [...base];
    mac[5] = (mac[5] ?? 0) + fn;
    const name = `ens${slot}f${fn}`;
    const bus = parseInt(nic.bdf.slice(5, 7), 16);
    netdevs.push({
      ifindex: 3 + i,
      name,
      altnames: [`enp${bus}s0f${fn}`],
      linkType: 'ether',
      pci: nic.bdf,
      driver: 'mlx5_core',
      mac: macToString(mac),
      mtu: 1500,
      minMtu: 68,
      maxMtu: 9978,
      txqlen: 1000,
      numTxQueues: 504,
      numRxQueues: 63,
      gsoMaxSize: 65536,
      gsoMaxSegs: 65535,
      adminUp: false,
      qdisc: 'noop',
      addrGenMode: 'eui64',
      addresses: [],
      phy: 'cx4lx-sfp28',
      linkSpeedMbps: 25000,
      firmware: '14.32.1010 (MT_2420110034)',
      msgLevel: 4,
    });
    const guid = (m: number[]): string =>
      [m[0], m[1], m[2], 0x03, 0x00, m[3], m[4], m[5]].map((b) => (b ?? 0).toString(16).padStart(2, '0')).join('');
    rdma.push({
      name: `mlx5_${i}`,
      pci: nic.bdf,
      netdev: name,
      port: 1,
      nodeGuid: guid(mac),
      sysImageGuid: guid(base),
      hcaType: 'MT4117',
      boardId: 'MT_2420110034',
    });
  });

  const gpuR = r('gpu');
  const gpus: Gpu[] = pci
    .filter((p) => p.kind === 'gpu')
    .map((p, i) => ({
      index: i,
      pci: p.bdf,
      name: 'NVIDIA L20',
      uuid: `GPU-${uuid(gpuR)}`,
      serial: `16524230${gpuR.digits(5)}`,
      memoryMiB: 46068,
      powerLimitW: 350,
      vbios: '96.02.6F.00.02',
    }));
  for (const p of pci)
    if (p.kind === 'nic' || p.kind === 'mgmt-nic')
      p.serial ??= `MT${r('serial').digits(4)}K${r('serial-' + p.bdf).digits(5)}`;

  const machine: Machine = {
    index,
    hostname,
    seed,
    os: {
      prettyName: 'Ubuntu 22.04.5 LTS',
      version: '22.04.5 LTS (Jammy Jellyfish)',
      versionId: '22.04',
      codename: 'jammy',
      kernelRelease: '5.15.0-126-generic',
      kernelVersion: '#136-Ubuntu SMP Wed Nov 6 10:38:22 UTC 2024',
      cmdline: 'BOOT_IMAGE=/vmlinuz-5.15.0-126-generic root=UUID=' + uuid(r('disk')) + ' ro',
    },
    cpu: SPR_8462Y,
    meminfo: meminfo(r('meminfo')),
    pci,
    netdevs,
    routes: [
      { dst: 'default', gateway: MGMT_GATEWAY, dev: 'eno1', protocol: 'static' },
      { dst: '10.0.0.0/24', dev: 'eno1', protocol: 'kernel', scope: 'link', prefsrc: mgmtAddress },
    ],
    neighbors: [],
    rdma,
    gpus,
    packages: jammyBasePackages(),
    // Load order (lsmod prints newest first): what udev autoloads for this hardware.
    modules: ['mlxfw', 'mlx5_core', 'ib_core', 'ib_uverbs', 'mlx5_ib', 'igb', 'ast', 'nouveau', 'nvidiafb'],
    user: { name: 'l20', uid: 1000, gid: 1000, home: '/home/l20', sudoNoPasswd: true },
    mgmt: { ifname: 'eno1', address: mgmtAddress, sshPort: 22, clientAddress: MGMT_CLIENT_ADDRESS },
    bootId: uuid(r('boot')),
    clock: clock ?? new SimClock(speed),
    carrier: () => false,
    revision: 0,
    system: undefined as unknown as MachineSystem,
  };
  machine.system = new MachineSystem(machine);
  return machine;
}

/** carrier() for devices that are not cabled fabric ports: lo and an up management link. */
export function localCarrier(m: Machine, ifname: string): boolean | undefined {
  const dev = m.netdevs.find((d) => d.name === ifname);
  if (!dev) return undefined;
  if (dev.linkType === 'loopback' || dev.name === m.mgmt.ifname) return dev.adminUp;
  return undefined;
}
