/** Verdicts rest on evidence on every lab scenario, shard 2 of 3 (the cases: evidence-scenarios.ts). */
import { describeEvidenceScenarios } from './evidence-scenarios.js';

describeEvidenceScenarios(1, 3);
