/**
 * The session's questions to the operator: trust this host key, apply this previewed plan, confirm this
 * dangerous step, decide about this interrupted apply. Each question is an event with an id (the views
 * show it); the answer comes back as a command naming that id. Nothing the views hold can resolve a
 * question by itself, and an answer to a question that is no longer open is ignored.
 */
import type { JournalUi } from './journal-text.js';
import type { Danger, StageId } from './types.js';

export type Question =
  /** An unknown host key; `knownHostsFile`: where trusting records it (none: this session only). */
  | {
      kind: 'trust';
      host: string;
      address: string;
      keyType: string;
      fingerprint: string;
      knownHostsFile?: string;
      /** Why known_hosts names a CA for the host that the built-in transport cannot check (or that it is revoked). */
      certificateAuthority?: string;
    }
  /** The dry run of a stage is ready: apply it? `planned`: some step would change something. */
  | { kind: 'plan'; stage: StageId; planned: boolean }
  /** A dangerous step, about to run on `hosts`. */
  | { kind: 'confirm'; stage: StageId; step: string; danger: Danger; hosts: string[] }
  /** An interrupted apply found at start (its modal also shows the rollback's progress and result). */
  | { kind: 'journal'; journal: JournalUi };

export type QuestionKind = Question['kind'];

/** What each kind of question takes for an answer. */
export interface Answers {
  trust: boolean;
  plan: boolean;
  confirm: boolean;
  journal: 'resume' | 'rollback' | 'later';
}

export type Prompt = Question & { id: number };

/** Shown (or shown again with new content: same id) and gone. */
export type PromptEvent = { type: 'prompt.open'; prompt: Prompt } | { type: 'prompt.close'; id: number };

interface Open {
  kind: QuestionKind;
  onAnswer: (answer: Answers[QuestionKind]) => void;
}

export class Prompts {
  private nextId = 1;
  private readonly open = new Map<number, Open>();

  constructor(private readonly emit: (event: PromptEvent) => void) {}

  /**
   * Puts a question to the operator; `onAnswer` gets each answer until it is closed (a journal's modal
   * takes several: roll back, then later). Returns its id.
   */
  show<K extends QuestionKind>(
    question: Extract<Question, { kind: K }>,
    onAnswer: (answer: Answers[K]) => void,
  ): number {
    const id = this.nextId++;
    this.open.set(id, { kind: question.kind, onAnswer: onAnswer as Open['onAnswer'] });
    this.emit({ type: 'prompt.open', prompt: { ...question, id } });
    return id;
  }

  /** A question answered once: it closes with its answer. */
  ask<K extends QuestionKind>(question: Extract<Question, { kind: K }>): Promise<Answers[K]> {
    return new Promise((resolve) => {
      const id = this.show(question, (answer) => {
        this.close(id);
        resolve(answer);
      });
    });
  }

  /** New content for an open question (the journal's rollback lines). */
  update(id: number, question: Question): void {
    if (this.open.get(id)?.kind === question.kind) this.emit({ type: 'prompt.open', prompt: { ...question, id } });
  }

  close(id: number): void {
    if (this.open.delete(id)) this.emit({ type: 'prompt.close', id });
  }

  /** The operator's answer; false when no such question of that kind is open (answered already, or closed). */
  answer<K extends QuestionKind>(id: number, kind: K, answer: Answers[K]): boolean {
    const q = this.open.get(id);
    if (!q || q.kind !== kind) return false;
    q.onAnswer(answer);
    return true;
  }

  /** The open questions of a kind, oldest first. */
  idsOf(kind: QuestionKind): number[] {
    return [...this.open].filter(([, q]) => q.kind === kind).map(([id]) => id);
  }
}
