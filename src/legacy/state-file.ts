import { z } from 'zod';
import { BatonError } from '../core/errors.js';
import { describeJsonTextProblem, linePosition, scanJsonText } from '../core/json-text.js';

/**
 * The agent-step-sequencer skill's state.json, a public format users already have on disk.
 * Fields Baton does not know are kept as they are when the file is rewritten.
 */
const LEGACY_STEP_STATUSES = ['PENDING', 'IN_PROGRESS', 'DONE', 'FAILED'] as const;

const stepDefinition = z.looseObject({
  title: z.string().optional(),
  instruction: z.string({ error: 'must be a string: the prompt given to the agent' }),
  requiredOutputs: z.array(z.string()).optional(),
  /** The skill's runner reads this spelling too; see requiredOutputsOf. */
  required_outputs: z.array(z.string()).optional(),
});

const stepRun = z.looseObject({
  status: z.enum(LEGACY_STEP_STATUSES),
  tries: z.number().int().min(0).default(0),
  /** Baton's own: tries cut short by a check that died; they gave their try back (see legacy-rules.ts). */
  interruptions: z.number().int().min(0).optional(),
  lastRunIso: z.string().optional(),
  error: z.string().optional(),
  /**
   * Baton's own: the class the agent declared for a FAILED try when it sends the step to a person
   * at once (invalid, fatal: docs/agent-clis.md, "Declaring a failure class"); not retried.
   */
  failureClass: z.enum(['invalid', 'fatal']).optional(),
});

const stateFile = z.looseObject({
  plan: z.looseObject({ steps: z.record(z.string(), stepDefinition) }),
  stepQueue: z.array(z.string()),
  currentStep: z.number().int().min(0).default(0),
  stepRuns: z.record(z.string(), stepRun).default({}),
  stepDelayMinutes: z.number().min(0).default(0),
  blockers: z.array(z.string()).default([]),
  lastHeartbeatIso: z.string().optional(),
  artifacts: z.array(z.string()).default([]),
  /** The skill treats a file without `status` as IN_PROGRESS (written back when the file changes). */
  status: z.enum(['IN_PROGRESS', 'DONE']).default('IN_PROGRESS'),
});

export type LegacyState = z.output<typeof stateFile>;
export type LegacyStepRun = z.output<typeof stepRun>;
type LegacyStepDefinition = z.output<typeof stepDefinition>;

/**
 * The outputs a step must leave: `requiredOutputs` and `required_outputs` (the skill's runner reads
 * both spellings); when a step has both, every path of either is required (merged, each once), so
 * no declared output goes unchecked.
 */
export function requiredOutputsOf(step: LegacyStepDefinition): string[] {
  return [...new Set([...(step.requiredOutputs ?? []), ...(step.required_outputs ?? [])])];
}

function pathText(path: readonly PropertyKey[]): string {
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`))
    .join('');
}

/** Parses and validates a state file's text; every problem is named with its path. Throws STATE_CORRUPT. */
export function parseLegacyState(text: string, file: string): LegacyState {
  // Too deep a file would overflow the validation and the writer that keeps its unknown fields;
  // Python's json never writes a key twice, so a repeated one is not the skill's file.
  const found = scanJsonText(text);
  const refuse = (offset: number, problem: string) => {
    const { line, column } = linePosition(text, offset);
    return new BatonError(
      'STATE_CORRUPT',
      `${file}:${line}:${column}: ${problem}; the file was left untouched`,
    );
  };
  if (found?.kind === 'too-deep') throw refuse(found.offset, describeJsonTextProblem(found, text));
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const hint = text.trim().length === 0 ? 'the file is empty' : (error as Error).message;
    throw new BatonError('STATE_CORRUPT', `${file}: not valid JSON (${hint}); the file was left untouched`, {
      cause: error,
    });
  }
  if (found) throw refuse(found.offset, describeJsonTextProblem(found, text));
  if (
    typeof raw !== 'object' ||
    raw === null ||
    Array.isArray(raw) ||
    !('plan' in raw) ||
    !('stepQueue' in raw)
  ) {
    throw new BatonError(
      'STATE_CORRUPT',
      `${file}: not an agent-step-sequencer state file (it needs "plan" and "stepQueue"); the file was left untouched`,
    );
  }
  const result = stateFile.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `${file}: ${pathText(issue.path) || '(top level)'}: ${issue.message}`,
    );
    throw new BatonError('STATE_CORRUPT', `${problems.join('\n')}\n(the file was left untouched)`);
  }
  const state = result.data;
  const unsafe = Object.keys(state.plan.steps).filter(
    (id) => id.length === 0 || /[\u0000-\u001f\u007f]/.test(id),
  );
  if (unsafe.length > 0) {
    throw new BatonError(
      'STATE_CORRUPT',
      `${file}: plan.steps has step id(s) ${unsafe.map((id) => JSON.stringify(id)).join(', ')} that are empty or hold control characters; rename them; the file was left untouched`,
    );
  }
  const unknown = state.stepQueue.filter((id) => !Object.hasOwn(state.plan.steps, id));
  if (unknown.length > 0) {
    const known = Object.keys(state.plan.steps).join(', ') || 'none';
    throw new BatonError(
      'STATE_CORRUPT',
      `${file}: stepQueue names step(s) ${unknown.map((id) => `"${id}"`).join(', ')} that plan.steps does not define (defined: ${known}); the file was left untouched`,
    );
  }
  if (state.currentStep > state.stepQueue.length) {
    throw new BatonError(
      'STATE_CORRUPT',
      `${file}: currentStep ${state.currentStep} is past the end of stepQueue (${state.stepQueue.length} steps); the file was left untouched`,
    );
  }
  return state;
}
