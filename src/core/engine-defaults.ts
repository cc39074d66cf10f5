/**
 * What an engine uses where its options say nothing; the settings table (runtime/settings.ts) and
 * so the configuration page show these same values.
 */
export const ENGINE_DEFAULTS = {
  /** Steps executing at once in one process. */
  concurrency: 8,
  /** Lease of a running step; renewed every third of it. */
  leaseMs: 30_000,
  /** Longest idle sleep, so runs created by other processes are seen. */
  pollMs: 1000,
} as const;
