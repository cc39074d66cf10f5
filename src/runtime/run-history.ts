import type { StoredEvent } from '../core/events.js';
import { redactValue } from '../core/redact.js';
import type { AttemptRecord, RunDetail } from '../store/store.js';
import type { CommandContext } from './commands/context.js';
import { planSecrets } from './plan-secrets.js';

/**
 * A read of a run's whole history (every attempt and event) for an answer that keeps little of it,
 * such as the console's timeline (numbers, step ids, short labels). Masking thousands of attempts
 * and events costs more than the rest of such an answer, so they are read as stored and handed to
 * `keep` alone; what `keep` returns is masked with the run's secrets before a door has it, so the
 * answer is masked as every read of the command layer is.
 */
export async function keptOfRunHistory<T>(
  ctx: CommandContext,
  run: Pick<RunDetail, 'id' | 'plan'>,
  keep: (attempts: readonly AttemptRecord[], events: readonly StoredEvent[]) => T,
): Promise<T> {
  const [attempts, events] = await Promise.all([
    ctx.unmasked.getAttempts(run.id),
    ctx.unmasked.getEvents(run.id),
  ]);
  return redactValue(keep(attempts, events), planSecrets(ctx, run.plan));
}
