/** Troubleshooting on the lab, shard 1 of 2 (the cases: lab-scenarios.ts). */
import { describeTroubleshootScenarios } from './lab-scenarios.js';

describeTroubleshootScenarios(0, 2);
