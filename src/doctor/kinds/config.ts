import type { KindDef } from '../types.js';

export const configKinds: KindDef[] = [];
