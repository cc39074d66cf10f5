import type { BatonEvent } from './events.js';
import type { HookSpec, HookTrigger } from './plan/types.js';

/**
 * The hook trigger an event is, or null: run.blocked, step.failed, run.succeeded, budget.exceeded,
 * run.cancelled, run.failed (as `failed`), and `waiting` for step.waiting and for a running agent's tool call held for a person.
 */
export function hookTrigger(event: BatonEvent): HookTrigger | null {
  switch (event.type) {
    case 'run.blocked':
      return 'blocked';
    case 'step.failed':
    case 'run.failed':
      return 'failed';
    case 'run.succeeded':
      return 'succeeded';
    case 'run.cancelled':
      return 'cancelled';
    case 'budget.exceeded':
      return 'budget';
    case 'step.waiting':
    case 'step.tool_approval_requested':
      return 'waiting';
    default:
      return null;
  }
}

/** Indexes of the hooks an event calls. */
export function hooksFor(event: BatonEvent, hooks: readonly HookSpec[] | undefined): number[] {
  const trigger = hookTrigger(event);
  if (trigger === null || !hooks) return [];
  const indexes: number[] = [];
  hooks.forEach((hook, index) => {
    if (hook.on.includes(trigger)) indexes.push(index);
  });
  return indexes;
}

/** The wait before call number `attempts + 1` of a hook: 1 s, 2 s, 4 s, ... at most 60 s. */
export function hookRetryDelayMs(attempts: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/**
 * Why a hook URL cannot be called, or null: it must be http(s) and carry no user name or password
 * (fetch refuses those). For `url` the plan's schema says it at load time; for `urlEnv`, the call.
 */
export function hookUrlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is not an http(s) URL';
  if (parsed.username !== '' || parsed.password !== '')
    return 'holds a user name or password (user:password@), which fetch refuses';
  return null;
}
