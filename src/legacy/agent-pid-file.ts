import { closeSync, ftruncateSync, openSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { stopOrphanedAttempt } from '../engine/orphans.js';
import { runNumberOf } from './legacy-rules.js';
import type { LegacyState } from './state-file.js';

/** Who runs the agent of a state file, so that the next check can stop it if this one crashed. */
interface AgentRecord {
  pid: number;
  runId: string;
  stepId: string;
  attempt: number;
}

/**
 * `agent.json` in the sidecar folder names the running agent's pid while it runs and is empty
 * between agents. One check opens it once and rewrites it in place for each step: creating and
 * unlinking a file per step cost more than the rest of the bookkeeping together.
 */
export class AgentPidFile {
  private fd: number | null;
  private readonly host = hostname();

  constructor(private readonly sidecar: string) {
    this.fd = openSync(AgentPidFile.path(sidecar), 'w', 0o600);
  }

  static path(sidecar: string): string {
    return join(sidecar, 'agent.json');
  }

  record(agent: AgentRecord): void {
    if (this.fd === null) return;
    const text = Buffer.from(JSON.stringify({ ...agent, host: this.host }));
    writeSync(this.fd, text, 0, text.length, 0);
    ftruncateSync(this.fd, text.length);
  }

  /** The agent has exited: nothing to stop any more. */
  clear(): void {
    if (this.fd !== null) ftruncateSync(this.fd, 0);
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    rmSync(AgentPidFile.path(this.sidecar), { force: true });
  }

  /** Stops the agent a crashed check left running (same host only), then forgets it. */
  static stopOrphan(sidecar: string): void {
    const file = AgentPidFile.path(sidecar);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return; // no file: no agent was running
    }
    try {
      if (text !== '') {
        const info = JSON.parse(text) as AgentRecord & { host: string };
        stopOrphanedAttempt(
          { runId: info.runId, stepId: info.stepId, attempt: info.attempt, pid: info.pid, host: info.host },
          hostname(),
        );
      }
    } catch {
      // A damaged pid file only means there is nothing we can safely stop.
    }
    try {
      unlinkSync(file);
    } catch {}
  }
}

/**
 * Stops what still carries the marker of a run the state shows IN_PROGRESS: that run's check died
 * (the caller holds the lock), and the pid file misses its agent when the check was killed between
 * starting it and recording it. Each run has its own marker (see runNumberOf), so this never
 * reaches the run about to start, and what it leaves is not taken by that run for its own.
 */
export function stopInterruptedAgents(state: LegacyState, runId: string): void {
  for (const [stepId, run] of Object.entries(state.stepRuns)) {
    if (run.status !== 'IN_PROGRESS') continue;
    const attempt = runNumberOf(run);
    stopOrphanedAttempt({ runId, stepId, attempt, pid: null, host: null }, hostname());
  }
}
