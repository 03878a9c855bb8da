/** The contract between the views and the rest: what a screen may ask for (no SSH in views). */
import type { StageId } from './types.js';
import type { ClusterConfig, HostConfig } from '../config/schema.js';
import type { Timebase } from '../monitor/series.js';
import type { AliasView } from '../transport/ssh-config-report.js';

type Design = ClusterConfig['network']['design'];

/** What views may ask for; implemented outside the view layer (no SSH here). */
export interface Controller {
  runStage(stage: StageId): void;
  runAll(): void;
  /** Dry run of the stage's steps: commands and per-host diffs land in the store (ui.apply preview). */
  planStage(stage: StageId): void;
  /** Applies the stage; dangerous steps ask through ui.apply 'confirm' and answerStep. */
  applyStage(stage: StageId): void;
  /** Answer to a dangerous step's confirmation. */
  answerStep(yes: boolean): void;
  /** The interrupted apply of the start modal (ui.journal): apply its stage and the ones after it. */
  resumeInterrupted(): void;
  /** Undo the interrupted apply's in-flight steps; the modal shows what was restored or removed per host. */
  rollbackInterrupted(): void;
  /** Close the modal; the journal stays for later. */
  dismissInterrupted(): void;
  cancel(): void;
  quit(): void;
  /** Setup screen: connect to a host and report, without saving anything. */
  testConnection(host: HostConfig): Promise<{ ok: boolean; message: string }>;
  /**
   * Setup screen: for a host whose address is a ~/.ssh/config alias, where it will connect and the config
   * lines that decided it (the `resolve` verb's resolution); undefined for a plain address.
   */
  describeAddress(host: HostConfig): AliasView | undefined;
  /** Setup screen: the way to a host in one line ("via bastion → ssh2"); undefined for an empty address. */
  describePath(host: HostConfig): string | undefined;
  /** Answer to a pending host-key trust question. */
  answerTrust(trust: boolean): void;
  /** Setup screen: validate and save; resolves with an error message or undefined on success. */
  saveHosts(hosts: HostConfig[], network?: { design: Design }): Promise<string | undefined>;
  /** Stages that have checks implemented. */
  implementedStages: readonly StageId[];
  stageTitle(stage: StageId): string;
  stagePurpose(stage: StageId): string;
  initialHosts: HostConfig[];
  /** The network design of the current inventory (docs/STAGES.md §2). */
  initialDesign?: Design;
  /** Opens the live monitor (starting its samplers on first use; they keep sampling until quit). */
  openMonitor(): void;
  /** Back to the screen the monitor was opened from; sampling goes on, so history keeps growing. */
  closeMonitor(): void;
  /** Switches the sparklines' timebase (1m → 10m → 1h → 1m without an argument). */
  monitorTimebase(timebase?: Timebase): void;
  /** Opens the troubleshoot screen on the catalog; with a symptom id, selects it and runs its probes at once. */
  openTroubleshoot(symptom?: string): void;
  /** Runs the symptom's read-only probes on every host (live output in the panes); the diagnosis lands in the store. */
  runSymptom(symptom: string): void;
  /** Every symptom of the catalog in turn, each diagnosis as it arrives. */
  runAllSymptoms(): void;
  /** The diagnosis's first fix stage through the stage view's plan preview (y applies); when that apply ends, the symptom runs again. */
  fixSymptom(symptom: string): void;
}

