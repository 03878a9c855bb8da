import type { KindDef } from '../types.js';

export const rdmaKinds: KindDef[] = [];
