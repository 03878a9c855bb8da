/**
 * Package files the stages fetch with wget before `dpkg -i` (NVIDIA's documented route into the
 * CUDA repository). dpkg recognises a .deb by its Debian file name, so the saved bytes only
 * need the right size.
 */
import { registerDownload } from '../tools/wget.js';
import { CUDA_KEYRING } from './archive-nvidia.js';
import { debFileName } from './dpkg.js';
import { CUDA_REPO_URI } from './repos.js';

registerDownload(`${CUDA_REPO_URI}/${debFileName(CUDA_KEYRING)}`, {
  bytes: CUDA_KEYRING.size,
  type: 'application/x-debian-package',
});
