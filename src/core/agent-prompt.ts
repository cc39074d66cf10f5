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
/** How much of a step's result stays in the state as its summary; the rest is in the log. */
export const SUMMARY_MAX_CHARS = 2000;

/**
 * What a later step sees as `{{steps.<id>.summary}}`: the `result` of a JSON final record
 * (`claude -p --output-format json`, `gemini -o json`'s `response`) when there is one, otherwise
 * the end of stdout. The full output stays in the attempt log.
 */
export function summarizeAgentOutput(stdoutTail: string): string {
  const trimmed = stdoutTail.trim();
  const lastLine = trimmed.slice(trimmed.lastIndexOf('\n') + 1);
  if (lastLine.startsWith('{') && lastLine.endsWith('}')) {
    try {
      const record = JSON.parse(lastLine) as { result?: unknown; response?: unknown };
      const text =
        typeof record.result === 'string'
          ? record.result
          : typeof record.response === 'string'
            ? record.response
            : null;
      if (text !== null) return text.trim().slice(-SUMMARY_MAX_CHARS);
    } catch {
      // Not JSON after all: fall through to the plain tail.
    }
  }
  return trimmed.slice(-SUMMARY_MAX_CHARS);
}
