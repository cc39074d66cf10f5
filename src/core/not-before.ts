import { DATE_TIME_EXAMPLE, instantOf } from './plan/date-time.js';
import type { PlanStep } from './plan/types.js';
import { renderRunText, type TemplateRun } from './run-text.js';

/** What a step's `notBefore` names: an instant, or why it names none (a template that rendered badly). */
export type NotBefore = { at: number } | { invalid: string };

type NotBeforeRun = TemplateRun;

/**
 * The instant a step's `notBefore` names, rendered over the run's inputs and the results of its
 * settled steps when the step becomes ready; null when it has none.
 */
export function notBeforeOf(run: NotBeforeRun, step: PlanStep): NotBefore | null {
  const text = step.notBefore;
  if (text === undefined) return null;
  const result = renderRunText(run, text);
  if ('problem' in result) return { invalid: `notBefore ${text}: ${result.problem}` };
  const rendered = result.text;
  const at = instantOf(rendered);
  if (at !== undefined) return { at };
  const shown =
    rendered === text ? JSON.stringify(text) : `${text} gave ${JSON.stringify(rendered.slice(0, 100))}`;
  return {
    invalid: `notBefore ${shown}: not an ISO 8601 date-time with an offset, e.g. ${DATE_TIME_EXAMPLE}`,
  };
}

/**
 * When a step that becomes ready at `now` is first due: after its `delayBeforeMs`, and not before
 * its `notBefore` (the later of the two). A `notBefore` that names no instant does not delay it:
 * claiming it blocks it as invalid (core/transitions.ts).
 */
export function firstDueAt(run: NotBeforeRun, step: PlanStep, now: number): number {
  const delayed = now + step.delayBeforeMs;
  if (step.notBefore === undefined) return delayed;
  const notBefore = notBeforeOf(run, step);
  return notBefore !== null && 'at' in notBefore ? Math.max(delayed, notBefore.at) : delayed;
}
