import { readFileSync } from 'node:fs';

/** One line a fixture agent appends to PROMPT_LOG: its step, attempt and prompt. */
export interface PromptLine {
  step: string;
  attempt: number;
  prompt: string;
}

/** The prompts a fixture agent logged (agent-result-file.mjs, agent-fix-test.mjs), in order. */
export function loggedPrompts(file: string): PromptLine[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as PromptLine);
}
