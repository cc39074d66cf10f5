import { controlCharacterProblem, firstControlCharacter } from './control-chars.js';
import { scanJsonText } from './json-text.js';

/**
 * Errors Baton throws for bad input, bad configuration and bugs.
 * A step that fails is not an error: its outcome is data (see StepOutcome in failure.ts).
 */
const ERROR_CODES = [
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
  /** A plan asks for `sandbox: workspace` where bubblewrap cannot confine its agents. */
  'SANDBOX_UNAVAILABLE',
  /** `baton schedule pause|resume|rm|trigger|update` of a name no schedule has. */
  'SCHEDULE_NOT_FOUND',
  /** `baton schedule add` of a name a schedule has: `schedule update` changes one. */
  'SCHEDULE_EXISTS',
  /** `baton trigger show|pause|resume|rm` of a name no trigger has. */
  'TRIGGER_NOT_FOUND',
  /** `baton trigger add` of a name a trigger has. */
  'TRIGGER_EXISTS',
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

/** The one message for an unknown run id, wherever it is looked up. */
export function runNotFound(runId: string): BatonError {
  return new BatonError('RUN_NOT_FOUND', `no run with id "${runId}" (list runs with: baton status)`);
}

/**
 * An agent command given as a JSON array of strings (a flag or an environment variable): argv,
 * never a string to split. `where` names the flag or variable in the message.
 */
export function parseArgvJson(value: string, where: string): string[] {
  let parsed: unknown;
  try {
    // An argv is one flat array: anything nested deeper is refused before JSON.parse builds it.
    if (scanJsonText(value, 1) !== null) throw new SyntaxError('nested');
    parsed = JSON.parse(value);
  } catch {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: expected a JSON array of strings such as '["claude","-p"]', got ${JSON.stringify(shorten(value))}`,
    );
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((arg) => typeof arg === 'string' && arg.length > 0)
  ) {
    throw new BatonError(
      'CONFIG_INVALID',
      `${where}: expected a non-empty JSON array of non-empty strings, got ${shorten(value)}`,
    );
  }
  const argv = parsed as string[];
  for (const [index, arg] of argv.entries()) {
    const code = firstControlCharacter(arg);
    if (code !== undefined) {
      throw new BatonError('CONFIG_INVALID', `${where}[${index}]: ${controlCharacterProblem(code)}`);
    }
  }
  return argv;
}

function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
