/**
 * The gpu-driver stage's read-only probes (docs/STAGES.md §3.7). Scripts are constants: no config value is
 * spliced into them. Each probe is one command whose output one parser reads.
 */
import type { ProbeDef } from '../../src/engine/types.js';
import { DRIVER_FIX } from '../../src/rules/cfg/data.js';

/** `dpkg-query -W` format every stage uses: `ii  name version`. */
export const DPKG_FORMAT = '-f=${db:Status-Abbrev} ${Package} ${Version}\\n';

/** Package families that carry a GPU driver (docs/STAGES.md §3.7 gpu-driver.method) and its userspace. */
export const DRIVER_PATTERNS = [
  'nvidia-driver-*',
  'nvidia-dkms-*',
  'linux-modules-nvidia-*',
  'cuda-drivers*',
  'nvidia-utils-*',
  'libnvidia-compute-*',
  'nvidia-compute-utils-*',
  'nvidia-kernel-common-*',
] as const;

/** The package the install step installs (R580 LTSB, open kernel modules, server userspace). */
export const DRIVER_PACKAGE = DRIVER_FIX;

/**
 * CUDA of the wheels the later stages pin (torch 2.8 `cu128`, vLLM 0.11): the driver must support at
 * least this major (R33 blocker), and this minor for full compatibility (R33 medium otherwise).
 */
export const WHEELS_CUDA = '12.8';

/**
 * What a runfile install leaves behind: its uninstaller, and the installers' logs. The CUDA runfile
 * logs to /var/log/cuda-installer.log and, when it ran the driver installer, nvidia-installer writes
 * /var/log/nvidia-installer.log. Only the tail matters (the outcome of the last run).
 */
export const RUNFILE_SCRIPT = `if [ -x /usr/bin/nvidia-uninstall ]; then echo "### uninstaller /usr/bin/nvidia-uninstall"; fi
for f in /var/log/cuda-installer.log /var/log/nvidia-installer.log; do
  if [ -f "$f" ]; then echo "### log $f"; tail -n 30 "$f"; fi
done
true
`;

/** nvcc is not on PATH for the CUDA repository's toolkits (/usr/local/cuda/bin); look there too. */
export const NVCC_SCRIPT = `if command -v nvcc >/dev/null 2>&1; then nvcc --version
elif [ -x /usr/local/cuda/bin/nvcc ]; then /usr/local/cuda/bin/nvcc --version
else echo "nvcc: not found"; exit 127
fi
`;

export const QUERY_FIELDS = [
  'index',
  'name',
  'pci.bus_id',
  'driver_version',
  'persistence_mode',
  'memory.total',
  'power.limit',
  'pcie.link.gen.current',
  'pcie.link.width.current',
] as const;

export const gpuDriverProbes: readonly ProbeDef[] = [
  { id: 'kernel', command: { argv: ['uname', '-r'] } },
  { id: 'nvidia-version', command: { argv: ['cat', '/proc/driver/nvidia/version'] } },
  { id: 'modules', command: { argv: ['cat', '/proc/modules'] } },
  { id: 'packages', command: { argv: ['dpkg-query', '-W', DPKG_FORMAT, ...DRIVER_PATTERNS] } },
  { id: 'runfile', command: { script: RUNFILE_SCRIPT } },
  // dkms comes with the DKMS driver packages: without it there are no DKMS builds, which is an answer.
  { id: 'dkms', command: { argv: ['dkms', 'status'] }, sudo: true, tools: [] },
  { id: 'lspci-gpus', command: { argv: ['lspci', '-D', '-nn', '-d', '10de:'] } },
  // nvidia-smi comes with the driver: its absence is the verdict "no driver", not a tool to install first.
  {
    id: 'query',
    command: { argv: ['nvidia-smi', `--query-gpu=${QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'] },
    tools: [],
  },
  { id: 'smi', command: { argv: ['nvidia-smi'] }, tools: [] },
  { id: 'persistenced', command: { argv: ['systemctl', 'is-active', 'nvidia-persistenced'] } },
  { id: 'secure-boot', command: { argv: ['mokutil', '--sb-state'] } },
  { id: 'nvcc', command: { script: NVCC_SCRIPT }, tools: [] }, // no nvcc is an answer (no toolkit)
  { id: 'candidate', command: { argv: ['apt-cache', 'policy', DRIVER_PACKAGE] } },
  { id: 'holds', command: { argv: ['apt-mark', 'showhold'] } },
];
