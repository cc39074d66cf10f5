/**
 * Helpers for end-to-end tests of `baton check|step|import <state.json>`, the drop-in for the Python
 * agent-step-sequencer skill: they write skill state files into temporary folders and run the built
 * CLI on them through `runBaton` / `spawnBaton` (test/helpers/cli.ts).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentCommand, type BatonOptions, type BatonResult, runBaton } from './cli.js';

/** A skill state file as the tests read it back: only the fields they look at are typed. */
export interface LegacyStateJson {
  plan: { steps: Record<string, { title?: string; instruction: string; requiredOutputs?: string[] }> };
  stepQueue: string[];
  currentStep: number;
  stepRuns: Record<
    string,
    { status: string; tries: number; lastRunIso?: string; error?: string; log?: string; [k: string]: unknown }
  >;
  stepDelayMinutes: number;
  blockers: string[];
  lastHeartbeatIso?: string;
  artifacts: string[];
  status: string;
  [field: string]: unknown;
}

/** The `--json` report of `baton check|step <state.json>`. */
export interface LegacyReportJson {
  outcome: string;
  stepsRun: number;
  blockers: string[];
  /** The BLOCKED lines: steps listed in `blockers` that are not DONE, with their reasons. */
  blocked: { stepId: string; reason: string }[];
  waitingUntil?: string;
}

/**
 * A fresh IN_PROGRESS state of steps `stepIds` (instruction `do <id>`), as the skill's agent
 * writes it after the plan was approved; `extra` overrides or adds top-level fields.
 */
export function legacyState(
  stepIds: readonly string[],
  extra: Record<string, unknown> = {},
): LegacyStateJson {
  return {
    plan: {
      steps: Object.fromEntries(
        stepIds.map((id) => [id, { title: `Title of ${id}`, instruction: `do ${id}` }]),
      ),
    },
    stepQueue: [...stepIds],
    currentStep: 0,
    stepRuns: {},
    stepDelayMinutes: 0,
    blockers: [],
    artifacts: [],
    status: 'IN_PROGRESS',
    ...extra,
  };
}

/** `step-1` … `step-<n>`. */
export function stepIds(n: number, prefix = 'step-'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
}

/** Writes `state` (pretty JSON, like the skill's json.dump(indent=2)) to `<dir>/<name>`; returns the path. */
export function writeState(dir: string, state: unknown, name = 'state.json'): string {
  const file = join(dir, name);
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
  return file;
}

/** Parses the state file; throws with the file's text when it is not JSON (a torn write). */
export function readState(file: string): LegacyStateJson {
  const text = readFileSync(file, 'utf8');
  try {
    return JSON.parse(text) as LegacyStateJson;
  } catch (error) {
    throw new Error(`${file} is not valid JSON (${error}); ${text.length} chars: ${text.slice(0, 300)}`);
  }
}

/** STEP_AGENT_CMD running a fixture with this very Node, as a JSON array (paths may hold spaces). */
export function legacyAgent(name: string): string {
  return JSON.stringify(agentCommand(name));
}

/** `baton <command> <statePath> [--json]` with the skill's environment variables in `env`. */
export function runLegacy(
  command: 'check' | 'step' | 'import',
  statePath: string,
  env: Record<string, string | undefined> = {},
  options: Omit<BatonOptions, 'env'> & { json?: boolean; args?: string[] } = {},
): Promise<BatonResult> {
  const { json, args = [], ...rest } = options;
  return runBaton([command, statePath, ...args, ...(json ? ['--json'] : [])], { ...rest, env });
}

/** The parsed `--json` report of a legacy check or step. */
export function reportOf(result: BatonResult): LegacyReportJson {
  try {
    return JSON.parse(result.stdout) as LegacyReportJson;
  } catch (error) {
    throw new Error(
      `no JSON report (exit ${result.code ?? result.signal}): ${error}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
}

/** Names of leftover temporary files (`*.tmp`) in `dir`. */
export function tmpFilesIn(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.tmp'));
}

/** `{ stepId: status }` of a state, PENDING for a step without a run. */
export function statuses(state: LegacyStateJson): Record<string, string> {
  return Object.fromEntries(state.stepQueue.map((id) => [id, state.stepRuns[id]?.status ?? 'PENDING']));
}

/** The JSON lines of agent-fail-echo's ARGV_LOG (the prompts it received, in order). */
export function readPrompts(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as string);
}
