import { BatonError } from '../core/errors.js';
import { parseDurationOption, parsePositiveInt } from './home.js';

export interface EngineCliOptions {
  concurrency?: string;
  lease?: string;
  /** `--store <url>`: not in the environment, so named here to be masked like BATON_DATABASE_URL. */
  store?: string;
}

export interface EngineSettings {
  concurrency?: number;
  leaseMs?: number;
  secrets?: string[];
}

const MAX_LEASE_MS = 86_400_000;

/** Flags, then BATON_* variables, checked before anything is stored or started. */
export function engineSettingsFromCli(options: EngineCliOptions): EngineSettings {
  const concurrency = options.concurrency ?? process.env.BATON_CONCURRENCY;
  const lease = options.lease ?? process.env.BATON_LEASE_MS;
  const settings: EngineSettings = {};
  if (options.store) settings.secrets = [options.store];
  if (concurrency) settings.concurrency = parsePositiveInt(concurrency, '--concurrency', 256);
  if (lease) {
    const leaseMs = parseDurationOption(lease, '--lease');
    if (leaseMs < 100 || leaseMs > MAX_LEASE_MS) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `--lease ${lease}: a lease must be from 100ms to 24h (it is renewed every third of it)`,
      );
    }
    settings.leaseMs = leaseMs;
  }
  return settings;
}
