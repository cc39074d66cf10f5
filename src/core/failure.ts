/**
 * The one failure vocabulary shared by every executor and the harness (DESIGN.md).
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

/** What one attempt of a step came to. Outcomes are data: a failed step is not an exception. */
export type StepOutcome =
  | {
      ok: true;
      /** A short text a later step may reference as `{{steps.<id>.summary}}`. */
      summary: string;
      outputs: OutputArtifact[];
      /** A function step's JSON-serialisable return value. */
      value?: unknown;
      exitCode?: number | null;
      usage?: StepUsage;
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
    };
