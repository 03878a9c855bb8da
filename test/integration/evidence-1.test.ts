/** Verdicts rest on evidence on every lab scenario, shard 1 of 3 (the cases: evidence-scenarios.ts). */
import { describeEvidenceScenarios } from './evidence-scenarios.js';

describeEvidenceScenarios(0, 3);
