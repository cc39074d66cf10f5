#!/usr/bin/env node
// An offline stand-in for an agent CLI (claude -p, codex exec, ...): Baton appends the step's
// prompt as the last argument and sets BATON_* variables; this writes the step's output file
// in the working directory (the run's workspace) and prints a one-line summary.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const prompt = process.argv[process.argv.length - 1] ?? '';
const step = process.env.BATON_STEP_ID ?? 'step';
const outputs = {
  research: 'study/notes.md',
  outline: 'study/outline.md',
  summarise: 'study/summary.md',
  report: 'report.md',
  send: 'sent.txt',
};
const file = outputs[step] ?? `${step}.txt`;
mkdirSync(dirname(file), { recursive: true });
writeFileSync(
  file,
  `# ${step}\n\nWritten by the fake agent, attempt ${process.env.BATON_ATTEMPT}.\n\nPrompt:\n${prompt}\n`,
);
console.log(`${step}: wrote ${file} (${prompt.length} characters of instructions)`);
