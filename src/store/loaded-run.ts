import type { RunState } from '../core/run-state.js';

/**
 * A run as every store loads it for a cycle or a human command: its state (what the core's
 * transitions decide on) and what its steps run with. What a report, a claim or a lease does to it
 * is the core's (core/settle-report.ts, core/claim-rules.ts, core/transitions.ts).
 */
export interface LoadedRun {
  state: RunState;
  planHash: string;
  inputs: Record<string, string>;
  workspace: string;
}
