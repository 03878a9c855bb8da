/** Text → facts parsers for the commands the `inventory` stage runs (one file per tool). */
export * from './common.js';
export * from './os-release.js';
export * from './lscpu.js';
export * from './meminfo.js';
export * from './lspci.js';
export * from './ip-json.js';
export * from './sysfs-net.js';
export * from './rdma-link.js';
export * from './ethtool.js';
export * from './nvidia-smi-topo.js';
export * from './ofed-info.js';
export * from './nvidia-driver-version.js';
export * from './dpkg-query.js';
export * from './nvidia-smi-query-gpu.js';
export * from './lldp.js';
