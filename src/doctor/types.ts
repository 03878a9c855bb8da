/**
 * A kind of diagnostic output `doctor` knows (docs/DOCTOR.md "Kinds"): how to recognise it by content, parse it
 * into the facts docs/DOCTOR.md requires, summarise it for people, and which output rules (D01–D25) read it.
 * Everything here must be total: never throw, never hang (linear-time regexes only), on any input.
 */
import type { Finding } from '../rules/types.js';

export interface KindDef<F = unknown> {
  /** docs/DOCTOR.md kind id: `ibstat`, `nccl-log`, `nvidia-smi`, … */
  kind: string;
  /**
   * Confidence 0–1 that `text` (already cleaned: no ANSI, LF line ends) is this kind, by structure: headers,
   * field names, line shapes the tool always prints. 0 when it is not. Cheap: it runs for every kind.
   * ≥ 0.5 means "this is it"; several kinds may score ≥ 0.5 on a file holding several outputs.
   */
  detect(text: string): number;
  /** The facts (field names per docs/DOCTOR.md; more allowed). Omit what the text does not contain. */
  parse(text: string): F;
  /** Findings of the output rules that read this kind. Only what the text supports; never from missing lines. */
  findings(facts: F, text: string): Finding[];
  /** The key facts as label/value rows for the human table (a handful, most telling first). */
  summary(facts: F): Array<[string, string]>;
}
