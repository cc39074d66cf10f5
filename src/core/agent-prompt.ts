import type { AgentSpec } from './plan/types.js';

/**
 * The prompt of a retry, in the agent-step-sequencer skill's words so that agents and operators
 * used to it read the same thing.
 */
export function troubleshootPrompt(
  stepId: string,
  failedTries: number,
  lastError: string,
  instruction: string,
): string {
  return `Step ${stepId} failed (tries: ${failedTries}). Previous run ended with: ${lastError}. Please troubleshoot and retry: ${instruction}`;
}

/**
 * The prompt of a retry that continues the agent's own session (`agent.resume`): the conversation
 * already holds the instruction and what the agent did, so the turn says only what went wrong.
 */
export function resumedTroubleshootPrompt(stepId: string, failedTries: number, lastError: string): string {
  return `Step ${stepId} failed (tries: ${failedTries}). Previous run ended with: ${lastError}. Please troubleshoot and finish the task you were given above.`;
}

/**
 * The argv and stdin for one attempt: the prompt is always ONE argument (or stdin), never parsed.
 * A prompt that starts with "-" (from an input or an earlier step's summary) would be read as an
 * option by the agent CLI's parser; it gets a leading space, which keeps it a plain argument.
 */
export function agentInvocation(agent: AgentSpec, prompt: string): { argv: string[]; stdinText?: string } {
  if (agent.promptVia === 'stdin') return { argv: [...agent.command], stdinText: prompt };
  const asArgument = prompt.startsWith('-') ? ` ${prompt}` : prompt;
  if (agent.promptVia === 'placeholder')
    return { argv: agent.command.map((arg) => (arg === '{prompt}' ? asArgument : arg)) };
  return { argv: [...agent.command, asArgument] };
}
/** How much of a step's answer stays in the state as its summary; the rest is in the log. */
export const SUMMARY_MAX_CHARS = 2000;
