import { BatonError } from '../core/errors.js';

/**
 * The store's server could not be reached for now (refused, reset, timed out, starting up, out of
 * connections): worth waiting for, unlike a wrong password or a missing database. Still a
 * configuration error (exit 2) for whoever does not wait. `reason` is short and has no password.
 */
export class StoreUnreachableError extends BatonError {
  constructor(
    message: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super('CONFIG_INVALID', message, options);
    this.name = 'StoreUnreachableError';
  }
}
