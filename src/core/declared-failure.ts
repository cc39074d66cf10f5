import type { FailureClass } from './failure.js';

/**
 * The failure classes any agent program may declare for its attempt, and the three ways it
 * declares one (docs/agent-clis.md, "Declaring a failure class"): a JSON line on stdout
 * `{"baton":{"class":"invalid","message":"…"}}` (the last one wins), the plan's
 * `agent.exitCodes` map (`STEP_EXIT_CODES` on the state.json path), and an HTTP status in a
 * structured error record the generic profile reads. `invalid` and `fatal` go to a person at once;
 * `transient` and `agent_failed` are retried.
 */
export const DECLARABLE_CLASSES = ['transient', 'agent_failed', 'invalid', 'fatal'] as const;

export type DeclarableClass = (typeof DECLARABLE_CLASSES)[number] & FailureClass;

export function isDeclarableClass(value: unknown): value is DeclarableClass {
  return typeof value === 'string' && (DECLARABLE_CLASSES as readonly string[]).includes(value);
}

/** A failure the agent declared itself. */
export interface DeclaredFailure {
  failureClass: DeclarableClass;
  message: string;
  /** With `transient` only: the wait the agent asked for before the retry. */
  retryAfterMs?: number;
}

/** The longest wait a declaration may ask for (a day); a longer one is cut to it. */
export const MAX_DECLARED_WAIT_MS = 86_400_000;

/** How many lines from the end of stdout are looked at for the declaration line. */
const MAX_LINES_SCANNED = 2000;

/**
 * The last `{"baton":{…}}` line of an agent's stdout, or undefined. A declaration that names no
 * known class, or whose fields have the wrong type, is itself the agent's bug: it is `invalid`
 * (a person fixes the program) with a message that says what was wrong.
 */
export function declaredFailure(stdout: string): DeclaredFailure | undefined {
  let end = stdout.length;
  for (let scanned = 0; scanned < MAX_LINES_SCANNED && end > 0; scanned++) {
    const start = stdout.lastIndexOf('\n', end - 1) + 1;
    const line = stdout.slice(start, end).trim();
    end = start - 1;
    if (!line.startsWith('{') || !line.endsWith('}') || !line.includes('"baton"')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) continue;
    if (!Object.hasOwn(parsed, 'baton')) continue;
    return declarationOf((parsed as { baton: unknown }).baton);
  }
  return undefined;
}

function declarationOf(value: unknown): DeclaredFailure {
  const shape = '{"baton":{"class":"<class>","message":"<text>"}}';
  const classes = DECLARABLE_CLASSES.join(', ');
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return malformed(`its "baton" field must be an object: ${shape}`);
  const fields = value as Record<string, unknown>;
  if (!isDeclarableClass(fields.class))
    return malformed(`"class" must be one of ${classes}, got ${JSON.stringify(fields.class) ?? 'nothing'}`);
  if (fields.message !== undefined && typeof fields.message !== 'string')
    return malformed('"message" must be a string');
  const message = (fields.message as string | undefined)?.trim() || `the agent declared ${fields.class}`;
  const wait = fields.retryAfterMs;
  if (wait !== undefined && (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0))
    return malformed(
      `"retryAfterMs" must be a number of milliseconds of at least 0, got ${JSON.stringify(wait)}`,
    );
  return {
    failureClass: fields.class,
    message,
    ...(fields.class === 'transient' && typeof wait === 'number'
      ? { retryAfterMs: Math.min(Math.round(wait), MAX_DECLARED_WAIT_MS) }
      : {}),
  };
}

function malformed(problem: string): DeclaredFailure {
  return {
    failureClass: 'invalid',
    message: `the agent printed a failure declaration Baton cannot read: ${problem}`,
  };
}

/**
 * The class of an HTTP status an agent's structured error record carries (the generic profile):
 * the request was wrong (400, 404, 422) is `invalid`, not allowed (401, 403) is `fatal`, try later
 * (408, 429, 5xx) is `transient`; any other status decides nothing.
 */
export function classOfDeclaredStatus(status: number): DeclarableClass | undefined {
  if (status === 400 || status === 404 || status === 422) return 'invalid';
  if (status === 401 || status === 403) return 'fatal';
  if (status === 408 || status === 429 || (status >= 500 && status <= 599)) return 'transient';
  return undefined;
}

/** The class a plan's (or STEP_EXIT_CODES') exit-code map gives `exitCode`, if it names one. */
export function classOfExitCode(
  map: Readonly<Record<string, DeclarableClass>> | undefined,
  exitCode: number | null,
): DeclarableClass | undefined {
  if (map === undefined || exitCode === null) return undefined;
  return Object.hasOwn(map, String(exitCode)) ? map[String(exitCode)] : undefined;
}
