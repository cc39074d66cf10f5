import { parseDurationMs } from './duration.js';
import type { PlanIssue } from './issues.js';
import type { PlanFileStep } from './schema.js';
import { waitDeadlineAt } from './schema-wait.js';
import type { WaitSpec } from './types.js';

/** Fields a wait step cannot have: it runs nothing (a body, an agent, a fallback, outputs). */
const BODY_FIELDS = ['instruction', 'fn', 'model', 'agent', 'args', 'fallback', 'requiredOutputs'] as const;

/**
 * A wait step's `wait`, normalised; its problems (a body next to it, an event wait without its
 * name, fields of the other kind) pushed to `issues`.
 */
export function normalizeWait(step: PlanFileStep, path: string, issues: PlanIssue[]): WaitSpec | undefined {
  const wait = step.wait;
  if (wait === undefined) return undefined;
  for (const field of BODY_FIELDS) {
    if (step[field] === undefined) continue;
    issues.push({
      path: `${path}.${field}`,
      problem: `a wait step has no body and runs nothing: remove "${field}", or put the work in a step of its own with dependsOn: [${step.id}]`,
    });
  }
  if (wait.for === 'event' && wait.event === undefined) {
    issues.push({
      path: `${path}.wait.event`,
      problem: 'an event wait needs the name of its event: add event: <name>',
    });
  }
  if (wait.for === 'event' && wait.prompt !== undefined) {
    issues.push({
      path: `${path}.wait.prompt`,
      problem: 'only an approval has a prompt: remove "prompt" or use for: approval',
    });
  }
  if (wait.for === 'approval' && wait.event !== undefined) {
    issues.push({
      path: `${path}.wait.event`,
      problem: 'only an event wait has an event: remove "event" or use for: event',
    });
  }
  if (wait.for === 'approval' && wait.schema !== undefined) {
    issues.push({
      path: `${path}.wait.schema`,
      problem: 'only an event has a payload to check: remove "schema" or use for: event',
    });
  }
  const deadlineAt = waitDeadlineAt(wait.timeout);
  const timeoutMs =
    wait.timeout === undefined || deadlineAt !== undefined
      ? undefined
      : parseDurationMs(wait.timeout, `${path}.wait.timeout`);
  return {
    for: wait.for,
    ...(wait.prompt === undefined ? {} : { prompt: wait.prompt }),
    ...(wait.event === undefined ? {} : { event: wait.event }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(deadlineAt === undefined ? {} : { deadlineAt }),
    onTimeout: wait.onTimeout ?? 'block',
    ...(wait.schema === undefined ? {} : { schema: structuredClone(wait.schema) }),
  };
}
