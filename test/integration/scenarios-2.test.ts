/** Fault scenarios across every stage, shard 2 of 3 (the cases: fault-scenarios.ts). */
import { describeFaultScenarios } from './fault-scenarios.js';

describeFaultScenarios(1, 3);
