import type { EngineOptions, EngineReport } from '../../engine/engine.js';
import { createEngine } from '../create-engine.js';
import { drainDueWork, needsAPerson } from '../due-work.js';
import type { EngineSettings } from '../settings.js';
import type { CommandContext } from './context.js';

/**
 * `check` for a door that holds a command context (the MCP server's `check` tool): the runtime's
 * engine over the store drives what is due for at most `maxTimeMs`, then the runs that need a
 * person are read through the masking boundary. The engine writes to the store as it is (its
 * records are masked by its own settings); the answer is masked.
 */

export interface CheckRequest {
  /** Stop after this long (unfinished attempts are stopped and retried later); null: no limit. */
  maxTimeMs: number | null;
  /** From `engineSettings` (the door's options, then BATON_* variables). */
  settings: EngineSettings;
  /** Where the engine's failures are said (the door's stderr). */
  observers?: Pick<EngineOptions, 'onError' | 'onHookFailure'>;
}

export type CheckAnswer = EngineReport & Awaited<ReturnType<typeof needsAPerson>>;

export async function checkDueWork(ctx: CommandContext, request: CheckRequest): Promise<CheckAnswer> {
  const engine = createEngine({
    store: ctx.unmasked,
    home: ctx.home,
    settings: request.settings,
    ...(request.observers ? { observers: request.observers } : {}),
  });
  const report = await drainDueWork(engine, request.maxTimeMs);
  return { ...report, ...(await needsAPerson(ctx.store)) };
}
