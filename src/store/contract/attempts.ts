import type { FailureClass, OutputArtifact, StepUsage } from '../../core/failure.js';

// An attempt as the Store names it: its key (run, step, attempt number) and its stored record.

export interface AttemptKey {
  runId: string;
  stepId: string;
  attempt: number;
}

export interface AttemptRecord extends AttemptKey {
  owner: string | null;
  startedAt: number | null;
  endedAt: number | null;
  outcome: 'succeeded' | 'failed' | 'interrupted' | 'discarded';
  failureClass: FailureClass | null;
  exitCode: number | null;
  fingerprint: string | null;
  message: string | null;
  summary: string | null;
  logPath: string | null;
  outputs: OutputArtifact[];
  usage: StepUsage | null;
}
