/** The contract between the views and the rest: what a screen may ask for (no SSH in views). */
import type { StageId } from './types.js';
import type { Answers } from './prompts.js';
import type { ClusterConfig, HostConfig } from '../config/schema.js';
import type { Timebase } from '../monitor/series.js';
import type { AliasView } from '../transport/ssh-config-report.js';

type Design = ClusterConfig['network']['design'];

/** What views may ask for; implemented outside the view layer (no SSH here). */
export interface Controller {
  runStage(stage: StageId): void;
  runAll(): void;
  /**
   * Dry run of the stage's steps: commands and per-host diffs land in the store, then a plan prompt asks
   * whether to apply them (answerPlan); dangerous steps then ask each (confirm prompts, answerConfirm).
   */
  planStage(stage: StageId): void;
  /** The previewed plan (a plan prompt): apply it, or close it. */
  answerPlan(id: number, apply: boolean): void;
  /** A dangerous step's question (a confirm prompt): run it, or skip it. */
  answerConfirm(id: number, yes: boolean): void;
  /**
   * The interrupted apply found at start (a journal prompt): resume it (its stage and the ones after it), roll
   * its in-flight steps back (the modal then shows what was restored or removed per host), or decide later.
   */
  answerJournal(id: number, choice: Answers['journal']): void;
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
  /** Answer to a host-key trust question (a trust prompt). */
  answerTrust(id: number, trust: boolean): void;
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
