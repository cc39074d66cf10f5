import type { WaitSpec } from './plan/types.js';

// Kept apart from waits.ts (and free of imports but types): `baton check`'s idle read prints these
// commands without loading the rest of the core.

/** The commands that end a waiting step, exactly as a person types them. */
export function waitCommands(runId: string, stepId: string, wait: WaitSpec, waitingFor?: string): string[] {
  if (wait.for === 'event')
    return [`baton send ${shellWord(waitingFor ?? wait.event ?? '')} --run ${runId} --data '<json>'`];
  return [
    `baton approve ${runId} ${stepId} --comment '...'`,
    `baton reject ${runId} ${stepId} --comment '...'`,
  ];
}

function shellWord(text: string): string {
  return /^[A-Za-z0-9._:@/-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
