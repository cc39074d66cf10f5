/**
 * Errors Baton throws for bad input, bad configuration and bugs.
 * A step that fails is not an error: its outcome is data (see outcome.ts).
 */
export const ERROR_CODES = [
  'PLAN_INVALID',
  'PLAN_NOT_FOUND',
  'AGENT_CMD_REFUSED',
  'PATH_ESCAPE',
  'STATE_CORRUPT',
  'DB_CORRUPT',
  'DB_TOO_NEW',
  'RUN_NOT_FOUND',
  'STEP_NOT_FOUND',
  'INPUT_MISSING',
  'INVALID_ARGUMENT',
  'INVALID_TRANSITION',
  'CONFIG_INVALID',
] as const;

export type BatonErrorCode = (typeof ERROR_CODES)[number];

export class BatonError extends Error {
  readonly code: BatonErrorCode;

  constructor(code: BatonErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BatonError';
    this.code = code;
  }
}

export function isBatonError(value: unknown, code?: BatonErrorCode): value is BatonError {
  return value instanceof BatonError && (code === undefined || value.code === code);
}
