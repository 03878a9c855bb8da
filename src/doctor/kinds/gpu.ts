import type { KindDef } from '../types.js';

export const gpuKinds: KindDef[] = [];
