/** Troubleshooting on the lab, shard 2 of 2 (the cases: lab-scenarios.ts). */
import { describeTroubleshootScenarios } from './lab-scenarios.js';

describeTroubleshootScenarios(1, 2);
