import type { FallbackSpec, Plan, PlanStep } from '../core/plan/types.js';
import { formatDuration } from './format.js';

/**
 * What a person approving a plan must see besides each step's instruction (a proposal's and a
 * schedule's summary, runtime/proposal.ts): each wait for a person or an event, each condition,
 * fan-out and fallback, each step that acts on the world, and the plan's hooks. Texts are the plan's
 * as stored (masked by the caller's reads), cut to one short line.
 */

function shorten(text: string, max = 120): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** When a wait gives up, and what it then does. */
function waitTimeout(step: PlanStep): string {
  const wait = step.wait!;
  const after =
    wait.timeoutMs !== undefined
      ? `after ${formatDuration(wait.timeoutMs)}`
      : wait.deadlineAt !== undefined
        ? `at ${new Date(wait.deadlineAt).toISOString()}`
        : null;
  if (after === null) return ' (no timeout)';
  const action =
    wait.onTimeout === 'block' ? 'blocks' : wait.onTimeout === 'skip' ? 'is skipped' : 'counts as rejected';
  return ` (${after} it ${action})`;
}

function fallbackAction(fallback: FallbackSpec): string {
  if (fallback.kind === 'fn') return `function ${fallback.fn}`;
  if (fallback.kind === 'model' && fallback.model)
    return `${fallback.model.provider} ${fallback.model.model}: ${fallback.model.prompt}`;
  return fallback.instruction ?? '';
}

const SIDE_EFFECT_TEXT = {
  idempotent: 'acts outside the workspace (idempotent: doing it twice is harmless)',
  unsafe: 'acts outside the workspace (unsafe: an attempt cut short is not repeated, a person decides)',
} as const;

/** The lines under a step: what it waits for, when it runs, how often, its fallback, its effect. */
export function stepNotes(step: PlanStep): string[] {
  const notes: string[] = [];
  if (step.wait?.for === 'approval')
    notes.push(`waits for a person to approve: ${shorten(step.wait.prompt ?? '')}${waitTimeout(step)}`);
  else if (step.wait?.for === 'event')
    notes.push(`waits for the event ${shorten(step.wait.event ?? '', 60)}${waitTimeout(step)}`);
  if (step.when !== undefined) notes.push(`runs only when ${shorten(step.when)} (else it is skipped)`);
  if (step.forEach) {
    const { items, maxItems, concurrency, toleratedFailures } = step.forEach;
    const parts = [`at most ${maxItems}`];
    if (concurrency !== undefined) parts.push(`${concurrency} at a time`);
    if (toleratedFailures !== 0) parts.push(`${toleratedFailures} may fail`);
    notes.push(`runs once per item of ${shorten(items, 80)} (${parts.join(', ')})`);
  }
  if (step.fallback) notes.push(`if it cannot succeed: ${shorten(fallbackAction(step.fallback))}`);
  if (step.sideEffect !== 'none') notes.push(`side effect: ${SIDE_EFFECT_TEXT[step.sideEffect]}`);
  return notes;
}

/** The plan-wide lines: which steps act on the world or wait, and whom the hooks tell. */
export function planNotes(plan: Plan): string[] {
  const steps = plan.steps.filter((step) => step.forEachItem === undefined);
  const effects = steps.filter((step) => step.sideEffect !== 'none');
  const lines = [
    effects.length > 0
      ? `Side effects: ${effects.map((step) => `${step.id} (${step.sideEffect})`).join(', ')}.`
      : 'No step declares a side effect (sideEffect).',
  ];
  const waits = steps.filter((step) => step.wait);
  if (waits.length > 0)
    lines.push(
      `Waits: ${waits.map((step) => `${step.id} (for ${step.wait!.for === 'event' ? 'an event' : 'approval'})`).join(', ')}.`,
    );
  for (const hook of plan.hooks ?? []) {
    const target = hook.command
      ? `runs ${shorten(hook.command.join(' '), 80)}`
      : hook.urlEnv !== undefined
        ? `posts to the URL in ${hook.urlEnv}`
        : `posts to ${hostOf(hook.url ?? '')}`;
    lines.push(`Hook on ${hook.on.join(', ')}: ${target}.`);
  }
  return lines;
}

/** A hook URL's host alone: its path or query may hold the receiver's token. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'a URL';
  }
}
