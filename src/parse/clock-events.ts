/**
 * NVML clock event reasons (called throttle reasons before driver 535): why a GPU's clocks sit below their
 * maximum. nvidia-smi shows them as the `clocks_event_reasons.active` bitmask (`--query-gpu`, what the monitor
 * polls), as `Clocks Event Reasons` / `Clocks Throttle Reasons` lines of `-q` (`SW Power Cap : Active`), as
 * `-q -x` tags (`<clocks_event_reason_sw_power_cap>`) and as `clocks_event_reasons.<name>` columns. This
 * module maps every form onto one set of reasons.
 */

/** nvml.h `nvmlClocksEventReason*` bits. */
export const EVENT_REASONS = {
  gpuIdle: 0x1,
  applicationsClocksSetting: 0x2,
  swPowerCap: 0x4,
  hwSlowdown: 0x8,
  syncBoost: 0x10,
  swThermalSlowdown: 0x20,
  hwThermalSlowdown: 0x40,
  hwPowerBrakeSlowdown: 0x80,
  displayClockSetting: 0x100,
} as const;

export type EventReason = keyof typeof EVENT_REASONS;

/** The reasons' names as `-q` prints them (the text the evidence shows). */
export const EVENT_REASON_NAMES: Record<EventReason, string> = {
  gpuIdle: 'Idle',
  applicationsClocksSetting: 'Applications Clocks Setting',
  swPowerCap: 'SW Power Cap',
  hwSlowdown: 'HW Slowdown',
  syncBoost: 'Sync Boost',
  swThermalSlowdown: 'SW Thermal Slowdown',
  hwThermalSlowdown: 'HW Thermal Slowdown',
  hwPowerBrakeSlowdown: 'HW Power Brake Slowdown',
  displayClockSetting: 'Display Clock Setting',
};

const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]+/g, '');

// Text names, XML tags and CSV field suffixes, letters and digits only: `SW Power Cap`, `sw_power_cap`.
const BY_NAME = new Map<string, EventReason>([
  ...Object.entries(EVENT_REASON_NAMES).map(([k, v]) => [norm(v), k as EventReason] as const),
  ...Object.keys(EVENT_REASONS).map((k) => [norm(k), k as EventReason] as const),
  ['gpuidle', 'gpuIdle'],
  ['displayclockssetting', 'displayClockSetting'],
]);

/**
 * `SW Power Cap`, `sw_power_cap`, `clocks_event_reason_sw_power_cap`, `clocks_throttle_reasons.sw_power_cap`
 * → `swPowerCap`.
 */
export function reasonFromName(name: string): EventReason | undefined {
  const n = norm(name.replace(/^clocks?_(?:event|throttle)_reasons?[._]/i, ''));
  return BY_NAME.get(n);
}

/** `0x0000000000000004` → 4 (the low 32 bits hold every reason NVML defines); null when it is no bitmask. */
export function eventBits(value: string | undefined): number | null {
  const t = value?.trim();
  if (!t || !/^0x[0-9a-f]+$/i.test(t)) return null;
  return Number(BigInt(t) & 0xffffffffn);
}

/** The reasons set in a `clocks_event_reasons.active` value (bits, or `0x…` text); undefined when it is neither. */
export function reasonsFromBitmask(value: string | number | null | undefined): EventReason[] | undefined {
  const bits = typeof value === 'number' ? value : typeof value === 'string' ? eventBits(value) : null;
  if (bits === null) return undefined;
  return (Object.keys(EVENT_REASONS) as EventReason[]).filter((k) => (bits & EVENT_REASONS[k]) !== 0);
}
