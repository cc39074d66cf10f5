import { BatonError } from '../../core/errors.js';
import { decideStep, decideToolCall, sendEvent } from '../../runtime/commands/run-commands.js';
import { withCommandContext } from '../../runtime/open-store.js';
import { decidedBy, readEventData } from '../../runtime/wait-inputs.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';

/** Options of `baton approve <run> <step>` and `baton reject <run> <step>`. */
interface DecideStepOptions extends GlobalOptions {
  tool?: string;
  comment?: string;
  by?: string;
  delay?: string;
}

/**
 * `baton approve <run> <step>` / `baton reject <run> <step>`: a person ends a step waiting for
 * approval; its result is `{ approved, by, comment, at }`.
 */
export async function decideStepCommand(
  decision: 'approve' | 'reject',
  runId: string,
  stepId: string,
  options: DecideStepOptions,
): Promise<number> {
  if (options.delay !== undefined)
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--delay is for approving a proposed run (baton approve ${runId}), not a step: remove it`,
    );
  const by = decidedBy(options.by);
  if (options.tool !== undefined) return decideToolCommand(decision, runId, stepId, options.tool, options);
  return withCommandContext(options, async (ctx) => {
    const summary = await decideStep(ctx, { runId, stepId, decision, by, comment: options.comment ?? null });
    if (options.json) printJson(summary);
    else {
      const next =
        decision === 'approve'
          ? 'the steps after it may start (baton check or baton worker drives them)'
          : 'the steps after it are skipped';
      process.stdout.write(
        `step ${stepId} of run ${runId} ${decision}d by ${by}; ${next}; run is ${summary.status}\n`,
      );
    }
    return EXIT.ok;
  });
}

/** `baton approve|reject <run> <step> --tool <call-id>`: answers a tool call the running agent waits on. */
async function decideToolCommand(
  decision: 'approve' | 'reject',
  runId: string,
  stepId: string,
  callId: string,
  options: DecideStepOptions,
): Promise<number> {
  return withCommandContext(options, async (ctx) => {
    const made = await decideToolCall(ctx, {
      runId,
      stepId,
      callId,
      decision,
      by: decidedBy(options.by),
      comment: options.comment ?? null,
    });
    if (options.json) printJson(made);
    else
      process.stdout.write(
        `tool call ${callId} (${made.tool}) of step ${stepId} ${made.decision === 'allow' ? 'allowed' : 'denied'} by ${made.by}; the agent ${made.decision === 'allow' ? 'runs it' : 'is told, and goes on without it'}\n`,
      );
    return EXIT.ok;
  });
}

/** `--comment` and `--by` are for a step: approving or rejecting a whole proposed run takes neither. */
export function refuseStepOptions(runId: string, options: DecideStepOptions): void {
  for (const [flag, value] of [
    ['--tool', options.tool],
    ['--comment', options.comment],
    ['--by', options.by],
  ] as const) {
    if (value !== undefined)
      throw new BatonError(
        'INVALID_ARGUMENT',
        `${flag} is for a step that waits for approval (baton approve ${runId} <step> ${flag} ...): add the step, or remove ${flag}`,
      );
  }
}

/** `baton send <event> [--run <run>] [--data <json|@file>]`: the event ends the steps waiting for it. */
export async function sendCommand(
  event: string,
  options: GlobalOptions & { run?: string; data?: string },
): Promise<number> {
  // Read (a file) and checked before any store is opened.
  const data = readEventData(options.data);
  return withCommandContext(options, async (ctx) => {
    const deliveries = await sendEvent(ctx, {
      event,
      data,
      where: '--data',
      ...(options.run === undefined ? {} : { runId: options.run }),
    });
    if (options.json) printJson(deliveries);
    else {
      for (const d of deliveries) {
        const line =
          d.outcome === 'received'
            ? `step ${d.stepId} of run ${d.runId} received ${event}`
            : d.outcome === 'kept'
              ? `run ${d.runId}: kept ${event} for its step that will wait for it`
              : `run ${d.runId}: ${event} was kept already (the first one wins): this one is dropped`;
        process.stdout.write(`${line}\n`);
      }
    }
    return EXIT.ok;
  });
}
