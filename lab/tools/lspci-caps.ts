/**
 * Capability lists for `lspci -vv` in pciutils 3.7.0 format (Ubuntu 22.04): `(ok)`/`(downgraded)`
 * after LnkSta for every port type, `Compliance De-emphasis`, no 10BitTagReq in DevCtl2, and the
 * extended-capability version shown only at -vv (`[100 v1]`).
 *
 * Sources: the ConnectX-4 Lx block is a real Ubuntu 22.04 `lspci -vvs` of an MCX4121A-ACAT
 * (driver bound here: BusMaster+, D0, MSI-X on); the L20 block is a real `lspci -vvs` of an
 * AD102GL [L20], reformatted to 3.7.0; bridge blocks are source-derived (pciutils ls-caps.c
 * layout, PEX880xx capability offsets from a real `lspci -v` of a PEX880xx downstream port).
 */
import type { AcsFlags, PciFunction, PcieLink } from '../model/types.js';

const T = '\t';
const TT = '\t\t';
const TTT = '\t\t\t';
const SPEED = ['', '2.5GT/s', '5GT/s', '8GT/s', '16GT/s', '32GT/s'];
const f = (b: boolean): string => (b ? '+' : '-');
const cmp = (sta: number, cap: number): string => (sta < cap ? 'downgraded' : sta > cap ? 'strange' : 'ok');

function linkLines(
  l: PcieLink,
  opts: { rcb: boolean; clockPm: boolean; capFlags: string; dlActive: boolean; commClk: boolean },
): string[] {
  return [
    `${TT}LnkCap:${T}Port #${l.port}, Speed ${SPEED[l.capGen]}, Width x${l.capWidth}, ASPM not supported`,
    `${TTT}ClockPM${f(opts.clockPm)} ${opts.capFlags} ASPMOptComp+`,
    `${TT}LnkCtl:${T}ASPM Disabled;${opts.rcb ? ' RCB 64 bytes,' : ''} Disabled- CommClk${f(opts.commClk)}`,
    `${TTT}ExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-`,
    `${TT}LnkSta:${T}Speed ${SPEED[l.staGen]} (${cmp(l.staGen, l.capGen)}), Width x${l.staWidth} (${cmp(l.staWidth, l.capWidth)})`,
    `${TTT}TrErr- Train- SlotClk+ DLActive${f(opts.dlActive)} BWMgmt- ABWMgmt-`,
  ];
}

/**
 * LnkCap2/LnkCtl2 are reserved for an endpoint function other than device 0 function 0 (pciutils
 * `cap_express_link2`): lspci prints only LnkSta2 there.
 */
function link2Lines(p: PciFunction, l: PcieLink, retimer: boolean, endpoint: boolean): string[] {
  const devFn = p.bdf.slice(p.bdf.lastIndexOf(':') + 1);
  const caps = !endpoint || devFn === '00.0';
  return [
    ...(caps
      ? [
          `${TT}LnkCap2: Supported Link Speeds: 2.5-${SPEED[l.capGen]}, Crosslink- ` +
            `Retimer${f(retimer)} 2Retimers${f(retimer)} DRS-`,
          `${TT}LnkCtl2: Target Link Speed: ${SPEED[l.capGen]}, EnterCompliance- SpeedDis-`,
          `${TTT} Transmit Margin: Normal Operating Range, EnterModifiedCompliance- ComplianceSOS-`,
          `${TTT} Compliance De-emphasis: -6dB`,
        ]
      : []),
    `${TT}LnkSta2: Current De-emphasis Level: -6dB, EqualizationComplete+ EqualizationPhase1+`,
    `${TTT} EqualizationPhase2+ EqualizationPhase3+ LinkEqualizationRequest-`,
    `${TTT} Retimer- 2Retimers- CrosslinkRes: unsupported`,
  ];
}

export function acsLines(where: string, acs: { cap: AcsFlags; ctl: AcsFlags }): string[] {
  const fmt = (a: AcsFlags): string =>
    `SrcValid${f(a.srcValid)} TransBlk${f(a.transBlk)} ReqRedir${f(a.reqRedir)} CmpltRedir${f(a.cmpltRedir)} ` +
    `UpstreamFwd${f(a.upstreamFwd)} EgressCtrl${f(a.egressCtrl)} DirectTrans${f(a.directTrans)}`;
  return [
    `${T}Capabilities: [${where} v1] Access Control Services`,
    `${TT}ACSCap:${T}${fmt(acs.cap)}`,
    `${TT}ACSCtl:${T}${fmt(acs.ctl)}`,
  ];
}

function aerLines(where: string, version: number, root: boolean): string[] {
  const lines = [
    `${T}Capabilities: [${where} v${version}] Advanced Error Reporting`,
    `${TT}UESta:${T}DLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-`,
    `${TT}UEMsk:${T}DLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-`,
    `${TT}UESvrt:${T}DLP+ SDES+ TLP- FCP+ CmpltTO- CmpltAbrt- UnxCmplt- RxOF+ MalfTLP+ ECRC- UnsupReq- ACSViol-`,
    `${TT}CESta:${T}RxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr-`,
    `${TT}CEMsk:${T}RxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr+`,
    `${TT}AERCap:${T}First Error Pointer: 00, ECRCGenCap+ ECRCGenEn- ECRCChkCap+ ECRCChkEn-`,
    `${TTT}MultHdrRecCap- MultHdrRecEn- TLPPfxPres- HdrLogCap-`,
    `${TT}HeaderLog: 00000000 00000000 00000000 00000000`,
  ];
  if (root) {
    lines.push(`${TT}RootCmd: CERptEn+ NFERptEn+ FERptEn+`);
    lines.push(`${TT}RootSta: CERcvd- MultCERcvd- UERcvd- MultUERcvd-`);
    lines.push(`${TTT} FirstFatal- NonFatalMsg- FatalMsg- IntMsg 0`);
    lines.push(`${TT}ErrorSrc: ERR_COR: 0000 ERR_FATAL/NONFATAL: 0000`);
  }
  return lines;
}

const PM_D0 = (flags: string): string[] => [
  `${T}Capabilities: [40] Power Management version 3`,
  `${TT}Flags: ${flags}`,
  `${TT}Status: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-`,
];

function l20(p: PciFunction): string[] {
  const l = p.link as PcieLink;
  return [
    `${T}Capabilities: [60] Power Management version 3`,
    `${TT}Flags: PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0+,D1-,D2-,D3hot+,D3cold-)`,
    `${TT}Status: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-`,
    `${T}Capabilities: [68] MSI: Enable+ Count=1/1 Maskable- 64bit+`,
    `${TT}Address: 00000000fee00000  Data: 0000`,
    `${T}Capabilities: [78] Express (v2) Legacy Endpoint, MSI 00`,
    `${TT}DevCap:${T}MaxPayload 256 bytes, PhantFunc 0, Latency L0s unlimited, L1 <64us`,
    `${TTT}ExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+`,
    `${TT}DevCtl:${T}CorrErr- NonFatalErr- FatalErr- UnsupReq-`,
    `${TTT}RlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-`,
    `${TTT}MaxPayload 256 bytes, MaxReadReq 512 bytes`,
    `${TT}DevSta:${T}CorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-`,
    ...linkLines(l, {
      rcb: true,
      clockPm: true,
      capFlags: 'Surprise- LLActRep- BwNot-',
      dlActive: false,
      commClk: true,
    }),
    `${TT}DevCap2: Completion Timeout: Range AB, TimeoutDis+ NROPrPrP- LTR+`,
    `${TTT} 10BitTagComp+ 10BitTagReq+ OBFF Via message, ExtFmt- EETLPPrefix-`,
    `${TTT} EmergencyPowerReduction Not Supported, EmergencyPowerReductionInit-`,
    `${TTT} FRS- TPHComp- ExtTPHComp-`,
    `${TTT} AtomicOpsCap: 32bit- 64bit- 128bitCAS-`,
    `${TT}DevCtl2: Completion Timeout: 50us to 50ms, TimeoutDis- LTR- OBFF Disabled,`,
    `${TTT} AtomicOpsCtl: ReqEn-`,
    ...link2Lines(p, l, true, true),
    `${T}Capabilities: [b4] Vendor Specific Information: Len=14 <?>`,
    `${T}Capabilities: [c8] MSI-X: Enable- Count=6 Masked-`,
    `${TT}Vector table: BAR=0 offset=00b90000`,
    `${TT}PBA: BAR=0 offset=00ba0000`,
    `${T}Capabilities: [100 v1] Virtual Channel`,
    `${TT}Caps:${T}LPEVC=0 RefClk=100ns PATEntryBits=1`,
    `${TT}Arb:${T}Fixed- WRR32- WRR64- WRR128-`,
    `${TT}Ctrl:${T}ArbSelect=Fixed`,
    `${TT}Status:${T}InProgress-`,
    `${TT}VC0:${T}Caps:${T}PATOffset=00 MaxTimeSlots=1 RejSnoopTrans-`,
    `${TTT}Arb:${T}Fixed- WRR32- WRR64- WRR128- TWRR128- WRR256-`,
    `${TTT}Ctrl:${T}Enable+ ID=0 ArbSelect=Fixed TC/VC=ff`,
    `${TTT}Status:${T}NegoPending- InProgress-`,
    `${T}Capabilities: [250 v1] Latency Tolerance Reporting`,
    `${TT}Max snoop latency: 0ns`,
    `${TT}Max no snoop latency: 0ns`,
    `${T}Capabilities: [258 v1] L1 PM Substates`,
    `${TT}L1SubCap: PCI-PM_L1.2+ PCI-PM_L1.1+ ASPM_L1.2- ASPM_L1.1+ L1_PM_Substates+`,
    `${TTT}  PortCommonModeRestoreTime=255us PortTPowerOnTime=10us`,
    `${TT}L1SubCtl1: PCI-PM_L1.2- PCI-PM_L1.1- ASPM_L1.2- ASPM_L1.1-`,
    `${TTT}   T_CommonMode=0us`,
    `${TT}L1SubCtl2: T_PwrOn=10us`,
    `${T}Capabilities: [128 v1] Power Budgeting <?>`,
    ...aerLines('420', 2, false),
    `${T}Capabilities: [600 v1] Vendor Specific Information: ID=0001 Rev=1 Len=024 <?>`,
    `${T}Capabilities: [900 v1] Secondary PCI Express`,
    `${TT}LnkCtl3: LnkEquIntrruptEn- PerformEqu-`,
    `${TT}LaneErrStat: 0`,
    `${T}Capabilities: [bb0 v1] Physical Resizable BAR`,
    `${TT}BAR 0: current size: 16MB, supported: 16MB`,
    `${TT}BAR 1: current size: 64GB, supported: 64MB 128MB 256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB 64GB`,
    `${TT}BAR 3: current size: 32MB, supported: 32MB`,
    `${T}Capabilities: [bcc v1] Single Root I/O Virtualization (SR-IOV)`,
    `${TT}IOVCap:${T}Migration-, Interrupt Message Number: 000`,
    `${TT}IOVCtl:${T}Enable- Migration- Interrupt- MSE- ARIHierarchy+`,
    `${TT}IOVSta:${T}Migration-`,
    `${TT}Initial VFs: 32, Total VFs: 32, Number of VFs: 0, Function Dependency Link: 00`,
    `${TT}VF offset: 4, stride: 1, Device ID: 26ba`,
    `${TT}Supported Page Size: 00000573, System Page Size: 00000001`,
    `${TT}VF Migration: offset: 00000000, BIR: 0`,
    `${T}Capabilities: [c14 v1] Alternative Routing-ID Interpretation (ARI)`,
    `${TT}ARICap:${T}MFVC- ACS-, Next Function: 0`,
    `${TT}ARICtl:${T}MFVC- ACS-, Function Group: 0`,
    `${T}Capabilities: [c1c v1] Physical Layer 16.0 GT/s <?>`,
    `${T}Capabilities: [d00 v1] Lane Margining at the Receiver <?>`,
    `${T}Capabilities: [e00 v1] Data Link Feature <?>`,
  ];
}

function cx4lx(p: PciFunction): string[] {
  const l = p.link as PcieLink;
  const fn = Number(p.bdf.slice(-1));
  const vfBar = (p.bars[0]?.address ?? 0n) + 0x4000000n + BigInt(fn) * 0x800000n;
  return [
    `${T}Capabilities: [60] Express (v2) Endpoint, MSI 00`,
    `${TT}DevCap:${T}MaxPayload 512 bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited`,
    `${TTT}ExtTag+ AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 25.000W`,
    `${TT}DevCtl:${T}CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+`,
    `${TTT}RlxdOrd+ ExtTag+ PhantFunc- AuxPwr- NoSnoop+ FLReset-`,
    `${TTT}MaxPayload 256 bytes, MaxReadReq 512 bytes`,
    `${TT}DevSta:${T}CorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-`,
    ...linkLines(l, {
      rcb: true,
      clockPm: false,
      capFlags: 'Surprise- LLActRep- BwNot-',
      dlActive: false,
      commClk: true,
    }),
    `${TT}DevCap2: Completion Timeout: Range ABCD, TimeoutDis+ NROPrPrP- LTR-`,
    `${TTT} 10BitTagComp- 10BitTagReq- OBFF Not Supported, ExtFmt- EETLPPrefix-`,
    `${TTT} EmergencyPowerReduction Not Supported, EmergencyPowerReductionInit-`,
    `${TTT} FRS- TPHComp- ExtTPHComp-`,
    `${TTT} AtomicOpsCap: 32bit- 64bit- 128bitCAS-`,
    `${TT}DevCtl2: Completion Timeout: 50us to 50ms, TimeoutDis- LTR- OBFF Disabled,`,
    `${TTT} AtomicOpsCtl: ReqEn-`,
    ...link2Lines(p, l, false, true),
    `${T}Capabilities: [48] Vital Product Data`,
    `${TT}Product Name: CX4121A - ConnectX-4 LX SFP28`,
    `${TT}Read-only fields:`,
    `${TTT}[PN] Part number: MCX4121A-ACAT        `,
    `${TTT}[EC] Engineering changes: AF`,
    `${TTT}[SN] Serial number: ${(p.serial ?? 'MT0000K00000').padEnd(24)}`,
    `${TTT}[V0] Vendor specific: PCIeGen3 x8        `,
    `${TTT}[RV] Reserved: checksum good, 0 byte(s) reserved`,
    `${TT}End`,
    `${T}Capabilities: [9c] MSI-X: Enable+ Count=64 Masked-`,
    `${TT}Vector table: BAR=0 offset=00002000`,
    `${TT}PBA: BAR=0 offset=00003000`,
    `${T}Capabilities: [c0] Vendor Specific Information: Len=18 <?>`,
    ...PM_D0('PMEClk- DSI- D1- D2- AuxCurrent=375mA PME(D0-,D1-,D2-,D3hot-,D3cold+)'),
    ...aerLines('100', 1, false),
    `${T}Capabilities: [150 v1] Alternative Routing-ID Interpretation (ARI)`,
    `${TT}ARICap:${T}MFVC- ACS-, Next Function: ${fn === 0 ? 1 : 0}`,
    `${TT}ARICtl:${T}MFVC- ACS-, Function Group: 0`,
    `${T}Capabilities: [180 v1] Single Root I/O Virtualization (SR-IOV)`,
    `${TT}IOVCap:${T}Migration-, Interrupt Message Number: 000`,
    `${TT}IOVCtl:${T}Enable- Migration- Interrupt- MSE- ARIHierarchy${f(fn === 0)}`,
    `${TT}IOVSta:${T}Migration-`,
    `${TT}Initial VFs: 8, Total VFs: 8, Number of VFs: 0, Function Dependency Link: 0${fn}`,
    `${TT}VF offset: ${fn === 0 ? 2 : 9}, stride: 1, Device ID: 1016`,
    `${TT}Supported Page Size: 000007ff, System Page Size: 00000001`,
    `${TT}Region 0: Memory at ${vfBar.toString(16).padStart(16, '0')} (64-bit, prefetchable)`,
    `${TT}VF Migration: offset: 00000000, BIR: 0`,
    `${T}Capabilities: [1c0 v1] Secondary PCI Express`,
    `${TT}LnkCtl3: LnkEquIntrruptEn- PerformEqu-`,
    `${TT}LaneErrStat: 0`,
    ...(p.acs ? acsLines('230', p.acs) : []),
  ];
}

function expressPort(p: PciFunction, where: string, type: 'Root Port' | 'Downstream Port' | 'Upstream Port'): string[] {
  const l = p.link as PcieLink;
  const down = type !== 'Upstream Port';
  const lines = [
    `${T}Capabilities: [${where}] Express (v2) ${type}${down ? ` (Slot${f(p.hasSlot === true)})` : ''}, MSI 00`,
    `${TT}DevCap:${T}MaxPayload 512 bytes, PhantFunc 0`,
    `${TTT}ExtTag+${type === 'Upstream Port' ? ' AttnBtn- AttnInd- PwrInd-' : ''} RBE+${type === 'Upstream Port' ? ' SlotPowerLimit 0.000W' : ''}`,
    `${TT}DevCtl:${T}CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+`,
    `${TTT}RlxdOrd- ExtTag+ PhantFunc- AuxPwr- NoSnoop-`,
    `${TTT}MaxPayload 256 bytes, MaxReadReq 128 bytes`,
    `${TT}DevSta:${T}CorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr- TransPend-`,
    ...linkLines(l, {
      rcb: type === 'Root Port',
      clockPm: false,
      capFlags: down ? 'Surprise+ LLActRep+ BwNot+' : 'Surprise- LLActRep- BwNot-',
      dlActive: down,
      commClk: true,
    }),
  ];
  if (down && p.hasSlot) {
    lines.push(
      `${TT}SltCap:${T}AttnBtn- PwrCtrl- MRL- AttnInd- PwrInd- HotPlug- Surprise-`,
      `${TTT}Slot #${slotOfPort(p)}, PowerLimit 75.000W; Interlock- NoCompl-`,
      `${TT}SltCtl:${T}Enable: AttnBtn- PwrFlt- MRL- PresDet- CmdCplt- HPIrq- LinkChg-`,
      `${TTT}Control: AttnInd Unknown, PwrInd Unknown, Power- Interlock-`,
      `${TT}SltSta:${T}Status: AttnBtn- PowerFlt- MRL- CmdCplt- PresDet+ Interlock-`,
      `${TTT}Changed: MRL- PresDet- LinkState-`,
    );
  }
  if (type === 'Root Port') {
    lines.push(
      `${TT}RootCap: CRSVisible-`,
      `${TT}RootCtl: ErrCorrectable- ErrNon-Fatal- ErrFatal- PMEIntEna+ CRSVisible-`,
      `${TT}RootSta: PME ReqID 0000, PMEStatus- PMEPending-`,
    );
  }
  lines.push(
    `${TT}DevCap2: Completion Timeout: ${down ? 'Range ABCD' : 'Not Supported'}, TimeoutDis+ NROPrPrP- LTR+`,
    `${TTT} 10BitTagComp+ 10BitTagReq- OBFF Not Supported, ExtFmt+ EETLPPrefix-`,
    `${TTT} EmergencyPowerReduction Not Supported, EmergencyPowerReductionInit-`,
    `${TTT} FRS-${down ? ' LN System CLS Not Supported, TPHComp+ ExtTPHComp- ARIFwd+' : ''}`,
    `${TTT} AtomicOpsCap: ${down ? 'Routing+ ' : ''}32bit- 64bit- 128bitCAS-`,
    `${TT}DevCtl2: Completion Timeout: 50us to 50ms, TimeoutDis- LTR- OBFF Disabled${down ? ', ARIFwd-' : ','}`,
    `${TTT} AtomicOpsCtl: ${down ? 'ReqEn- EgressBlck-' : 'EgressBlck-'}`,
    ...link2Lines(p, l, false, false),
  );
  return lines;
}

function slotOfPort(p: PciFunction): number {
  return p.bdf.startsWith('0000:97') ? 2 : 1;
}

export function capabilityLines(p: PciFunction): string[] {
  switch (p.profile) {
    case 'l20':
      return l20(p);
    case 'cx4lx':
      return cx4lx(p);
    case 'pex-up':
    case 'pex-down': {
      const down = p.profile === 'pex-down';
      return [
        ...PM_D0('PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0+,D1-,D2-,D3hot+,D3cold+)'),
        ...expressPort(p, '68', down ? 'Downstream Port' : 'Upstream Port'),
        `${T}Capabilities: [a4] Subsystem: Broadcom / LSI Device a064`,
        `${T}Capabilities: [100 v1] Device Serial Number ${p.serial ?? '00-00-00-00-00-00-00-00'}`,
        ...aerLines('fb4', 1, false),
        `${T}Capabilities: [148 v1] Virtual Channel`,
        `${TT}Caps:${T}LPEVC=0 RefClk=100ns PATEntryBits=8`,
        `${TT}Arb:${T}Fixed- WRR32- WRR64- WRR128-`,
        `${TT}Ctrl:${T}ArbSelect=Fixed`,
        `${TT}Status:${T}InProgress-`,
        `${TT}VC0:${T}Caps:${T}PATOffset=03 MaxTimeSlots=1 RejSnoopTrans-`,
        `${TTT}Arb:${T}Fixed- WRR32- WRR64+ WRR128- TWRR128- WRR256-`,
        `${TTT}Ctrl:${T}Enable+ ID=0 ArbSelect=WRR64 TC/VC=ff`,
        `${TTT}Status:${T}NegoPending- InProgress-`,
        `${T}Capabilities: [b70 v1] Vendor Specific Information: ID=0001 Rev=0 Len=010 <?>`,
        `${T}Capabilities: [e00 v1] Multicast`,
        `${TT}McastCap: MaxGroups 64, ECRCRegen+`,
        `${TT}McastCtl: NumGroups 1, Enable-`,
        `${TT}McastBAR: IndexPos 0, BaseAddr 0000000000000000`,
        `${TT}McastReceiveVec:      0000000000000000`,
        `${TT}McastBlockAllVec:     0000000000000000`,
        `${TT}McastBlockUntransVec: 0000000000000000`,
        `${TT}McastOverlayBAR: OverlaySize 0 (disabled), BaseAddr 0000000000000000`,
        ...(down && p.acs ? acsLines('f24', p.acs) : []),
      ];
    }
    case 'spr-rp':
    case 'pch-rp':
      return [
        ...expressPort(p, '40', 'Root Port'),
        `${T}Capabilities: [80] MSI: Enable+ Count=1/1 Maskable+ 64bit-`,
        `${TT}Address: fee00018  Data: 0000`,
        `${TT}Masking: 00000000  Pending: 00000000`,
        `${T}Capabilities: [90] Subsystem: Intel Corporation Device 0000`,
        `${T}Capabilities: [a0] Power Management version 3`,
        `${TT}Flags: PMEClk- DSI- D1- D2- AuxCurrent=0mA PME(D0+,D1-,D2-,D3hot+,D3cold+)`,
        `${TT}Status: D0 NoSoftRst+ PME-Enable- DSel=0 DScale=0 PME-`,
        ...aerLines('100', 2, true),
        ...(p.acs ? acsLines('148', p.acs) : []),
        `${T}Capabilities: [220 v1] Secondary PCI Express`,
        `${TT}LnkCtl3: LnkEquIntrruptEn- PerformEqu-`,
        `${TT}LaneErrStat: 0`,
      ];
    case 'i210':
      return [
        ...PM_D0('PMEClk- DSI+ D1- D2- AuxCurrent=0mA PME(D0+,D1-,D2-,D3hot+,D3cold+)'),
        `${T}Capabilities: [50] MSI: Enable- Count=1/1 Maskable+ 64bit+`,
        `${T}Capabilities: [70] MSI-X: Enable+ Count=5 Masked-`,
        `${TT}Vector table: BAR=3 offset=00000000`,
        `${TT}PBA: BAR=3 offset=00002000`,
        `${T}Capabilities: [a0] Express (v2) Endpoint, MSI 00`,
        `${TT}DevCap:${T}MaxPayload 512 bytes, PhantFunc 0, Latency L0s <512ns, L1 <64us`,
        `${TTT}ExtTag- AttnBtn- AttnInd- PwrInd- RBE+ FLReset+ SlotPowerLimit 0.000W`,
        `${TT}DevCtl:${T}CorrErr+ NonFatalErr+ FatalErr+ UnsupReq+`,
        `${TTT}RlxdOrd+ ExtTag- PhantFunc- AuxPwr- NoSnoop+ FLReset-`,
        `${TTT}MaxPayload 256 bytes, MaxReadReq 512 bytes`,
        `${TT}DevSta:${T}CorrErr- NonFatalErr- FatalErr- UnsupReq- AuxPwr+ TransPend-`,
        ...linkLines(p.link as PcieLink, {
          rcb: true,
          clockPm: false,
          capFlags: 'Surprise- LLActRep- BwNot-',
          dlActive: false,
          commClk: true,
        }),
        ...aerLines('100', 2, false),
        `${T}Capabilities: [140 v1] Device Serial Number ${p.serial ?? '00-00-00-00-00-00-00-00'}`,
      ];
    default:
      return [];
  }
}
