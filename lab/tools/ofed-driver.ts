/**
 * How the mlx5 driver stack reacts to being loaded, unloaded and rebooted (docs/STAGES.md §4.3):
 *
 * - mlx5_ib registering the RDMA devices (boot, `modprobe mlx5_ib`, `openibd restart`) names them
 *   afresh — `rocep…` under Ubuntu's rdma-core rule, `mlx5_N` otherwise — and makes an installed
 *   OFED's mlx5_core the running one (model/nic-stack.ts mlx5Reloaded);
 * - mlx5_core going away drops what the driver held: DCB settings, GID tables, counters;
 * - a reboot drops the DCB settings too (the modules are not unloaded one by one then), so only an
 *   enabled unit (l20-roce-qos.service) brings them back;
 * - `modinfo -F version mlx5_core` reports the module on disk: an installed OFED's, else none.
 */
import { installedOfed, mlx5ModuleVersion, mlx5Reloaded } from '../model/nic-stack.js';
import { resetQos } from '../model/qos.js';
import { resetRdmaRuntime } from '../model/rdma.js';
import { registerBootHook } from '../system/boot.js';
import { kernelModule, registerKernelModule } from '../system/kernel.js';

const core = kernelModule('mlx5_core');
const ib = kernelModule('mlx5_ib');
if (!core || !ib) throw new Error('lab: mlx5_core/mlx5_ib must be registered before tools/ofed-driver.ts');

registerKernelModule({
  ...core,
  version: (m) => mlx5ModuleVersion(m),
  path: (m) =>
    installedOfed(m) ? 'updates/dkms/mlx5_core.ko' : 'kernel/drivers/net/ethernet/mellanox/mlx5/core/mlx5_core.ko',
  unloaded: (m) => {
    resetQos(m);
    resetRdmaRuntime(m);
  },
});

registerKernelModule({
  ...ib,
  loaded: (m) => mlx5Reloaded(m),
});

registerBootHook('shutdown', 'qos', ({ machine }) => resetQos(machine));
