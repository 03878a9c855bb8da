/**
 * The shape of one expert rule of the catalog. docs/RULES.md, `l20-setup rules` and the rule-id tests all read
 * these records, so a malformed one would mislead every reader: the catalog test holds each record to the
 * schema below, and the data files are typed by it.
 */
import { z } from 'zod';
import type { Severity } from '../types.js';

export const SEVERITIES = ['blocker', 'high', 'medium', 'low', 'info'] as const satisfies readonly Severity[];

/** Where a rule looks (docs/RULES.md §1): supplied files, one live host, hosts compared, a diagnostic output. */
export const SCOPES = ['cfg', 'host', 'pair', 'output'] as const;

/** The catalog's data files, one per responsibility; `output` holds every D rule. */
export const FAMILIES = ['nccl', 'network', 'qos', 'drivers', 'serving', 'output'] as const;

/**
 * `retired`: no longer checked, and the id is never reused. `not-implemented`: specified, not checked yet.
 * Both stay listed so an id seen in an old report still explains itself.
 */
export const STATUSES = ['implemented', 'retired', 'not-implemented'] as const;

const text = z.string().trim().min(1);

export const ruleRecordSchema = z
  .strictObject({
    /** `Rnn`: configuration, host and pair rules; `Dnn`: reading diagnostic output. Never renumbered. */
    id: z.string().regex(/^[RD]\d{2}$/),
    family: z.enum(FAMILIES),
    title: text,
    /** The rule's severity as the spec heads it; a graded rule's detect names its sub-conditions' ones. */
    severity: z.enum(SEVERITIES),
    /** Graded rules set the severity per sub-condition; the finding carries the one that applied. */
    graded: z.boolean(),
    /** A qualification of the severity the spec states, e.g. when doctor reports it at all. */
    severityNote: text.optional(),
    /** In the spec's order (`cfg+host` and `host+cfg` are different emphases). */
    scope: z.array(z.enum(SCOPES)).min(1),
    status: z.enum(STATUSES),
    /** The condition, with the exact strings or values it matches. Lines: paragraphs, `- ` or `1. ` items. */
    detect: text,
    /** What a finding shows as its evidence, where the spec prescribes it. */
    evidence: text.optional(),
    /** The reasoning and its source (upstream docs, issue, commit or measurement); D rules: ranked causes. */
    why: text,
    /** The concrete action, or the next probe and which result separates the causes. */
    fix: text,
  })
  .refine((r) => (r.id.startsWith('D') ? r.family === 'output' : r.family !== 'output'), {
    message: 'D rules, and only D rules, belong to the output family',
  })
  .refine((r) => (r.id.startsWith('D') ? r.scope.join() === 'output' : !r.scope.includes('output')), {
    message: 'D rules have scope output; R rules never do',
  });

export type RuleRecord = z.infer<typeof ruleRecordSchema>;
export type RuleFamily = (typeof FAMILIES)[number];
export type RuleScope = (typeof SCOPES)[number];
