/** Every kind doctor knows, in one list; detection picks among them by content. */
import type { KindDef } from './types.js';
import { rdmaKinds } from './kinds/rdma.js';
import { gpuKinds } from './kinds/gpu.js';
import { configKinds } from './kinds/config.js';
import { netplanStatusKind } from './kinds/netplan-status.js';

export const KINDS: readonly KindDef[] = [...rdmaKinds, ...gpuKinds, ...configKinds, netplanStatusKind as KindDef];
