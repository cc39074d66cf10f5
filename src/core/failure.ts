/**
 * The one failure vocabulary shared by every executor and the harness (docs/ARCHITECTURE.md).
 */
export const FAILURE_CLASSES = [
  'transient',
  'agent_failed',
  'invalid',
  'fatal',
  'interrupted',
  'unknown_outcome',
  'no_progress',
  'budget',
] as const;

export type FailureClass = (typeof FAILURE_CLASSES)[number];

/** Classes that a retry may fix. The others go straight to a human. */
const RETRYABLE: ReadonlySet<FailureClass> = new Set(['transient', 'agent_failed', 'interrupted']);

export function isRetryable(failureClass: FailureClass): boolean {
  return RETRYABLE.has(failureClass);
}

/** A file a step produced, recorded by path (relative to the workspace), size and content hash. */
export interface OutputArtifact {
  path: string;
  size: number;
  sha256: string;
}

/** Tokens and money an attempt spent (model steps; agent CLIs that report it). */
export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** What a step's verification gate (`verify:`) found: on its result once it passed. */
export interface Verification {
  passed: boolean;
  /** Checks run in this round of tries, the passing one included. */
  iterations: number;
  /** What failed in the last check (empty when it passed). */
  failures: string[];
}

/** What an attempt record keeps of a result's summary (the step keeps the result itself). */
export const ATTEMPT_SUMMARY_MAX_CHARS = 2000;

/** A result stored apart, by content: `<home>/artifacts/<sha256>` holds `{ summary, value }`. */
export interface ResultRef {
  sha256: string;
  /** Bytes of the stored JSON. */
  size: number;
}

/** What one attempt of a step came to. Outcomes are data: a failed step is not an exception. */
export type StepOutcome =
  | {
      ok: true;
      /** A short text a later step may reference as `{{steps.<id>.summary}}`. */
      summary: string;
      outputs: OutputArtifact[];
      /** The step's structured result: a function's return value, an agent's result file (JSON). */
      value?: unknown;
      exitCode?: number | null;
      usage?: StepUsage;
      /** Set when the result is second best (a fallback model answered): the step ends `degraded`. */
      degraded?: string;
      /** The full result lives in the artifact store (it was too large for the state): see ResultRef. */
      resultRef?: ResultRef;
      /** The step's `verify:` gate passed: how many checks it took. */
      verification?: Verification;
      /** A sub-plan step: the attempts its child run made, counted in this run's `maxSteps`. */
      childAttempts?: number;
    }
  | {
      ok: false;
      failureClass: FailureClass;
      /** Short, human-readable; the full output lives in the attempt log. */
      message: string;
      exitCode?: number | null;
      /** A wait the failure asked for (a CLI's "try again at", a Retry-After), used instead of backoff. */
      retryAfterMs?: number;
      usage?: StepUsage;
      /** A sub-plan step: the attempts its child run made, counted in this run's `maxSteps`. */
      childAttempts?: number;
    };
