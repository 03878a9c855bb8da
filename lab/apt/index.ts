/**
 * The lab's APT and dpkg model (docs/STAGES.md §4.1 software, §4.3 Packages): an offline archive
 * (archive*.ts), apt-get/apt, apt-cache, apt-mark, dpkg and dpkg-query over the machine's dpkg
 * database. See README.md next to the lab for how other parts hook in.
 */
import type { Tool } from '../tools/types.js';
import { apt, aptGet } from './apt-get.js';
import { aptCache } from './apt-cache.js';
import { aptMark } from './apt-mark.js';
import { dpkg } from './dpkg.js';
// Side effect: package scripts drive the lab's systemd; the archive's daemons become service programs.
import './systemd-bridge.js';
// Side effect: cuda-keyring's .deb can be fetched with wget.
import './downloads.js';

export const APT_TOOLS: readonly Tool[] = [aptGet, apt, aptCache, aptMark, dpkg];
