import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { HOME_FOLDER } from '../../runtime/home.js';
import { EXIT } from '../exit-codes.js';
import type { GlobalOptions } from '../global-options.js';

const STARTER_PLAN = `# A Baton plan: steps run in order of their dependencies, each by an agent CLI.
# Schema for editors: schema/plan.schema.json in the Baton package.
version: 1
name: my-task
description: Research a topic, summarise it, then write a report
inputs:
  topic: { default: durable execution for AI agents, description: what to research }
defaults:
  # argv, never a shell string; the step's instruction is appended as the last argument.
  agent: { command: [claude, -p, --permission-mode, acceptEdits] }
  retry: { maxAttempts: 3, initialDelayMs: 30s, maxDelayMs: 10m }
  timeoutMs: 30m
steps:
  - id: research
    title: Research the topic
    instruction: Research {{inputs.topic}} and write your notes to study/notes.md
    requiredOutputs: [study/notes.md]
  - id: summarise
    dependsOn: [research]
    instruction: Read {{steps.research.outputs}} and write a one-page summary to study/summary.md
    requiredOutputs: [study/summary.md]
  - id: report
    dependsOn: [summarise]
    delayBeforeMs: 2m   # a pause between steps, e.g. for rate-limited APIs
    instruction: Using study/summary.md, write the final report to report.md
    requiredOutputs: [report.md]
  # More a plan can say (remove the leading "# " of a block to use it; docs/plans.md has them all):
  # - id: check                      # a structured result: the agent writes JSON, later steps read it
  #   dependsOn: [report]
  #   instruction: "Check report.md for broken links; write check.json: {passed: true or false}"
  #   resultFile: check.json
  # - id: fix                        # runs only when its condition holds (CEL), else is skipped
  #   dependsOn: [check]
  #   when: steps.check.result.passed == false
  #   instruction: Fix the broken links in report.md
  # - id: approve-send               # waits for your yes: baton approve <run> approve-send
  #   dependsOn: [fix]
  #   wait: { for: approval, prompt: "Send report.md?", timeout: 24h, onTimeout: reject }
  # - id: send
  #   dependsOn: [approve-send]
  #   instruction: Send report.md to the team
`;

/** `baton init [dir]`: a starter plan and the heartbeat line that drives it. */
export async function initCommand(
  dir: string | undefined,
  options: GlobalOptions & { force?: boolean },
): Promise<number> {
  const target = resolve(dir ?? '.');
  try {
    mkdirSync(target, { recursive: true });
  } catch (error) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `baton init ${dir}: ${target} is not a folder that can be created (${(error as NodeJS.ErrnoException).code}); give a folder`,
      { cause: error },
    );
  }
  const planPath = join(target, 'baton.plan.yaml');
  if (existsSync(planPath) && !options.force) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `${planPath} already exists; it was left as it is (use --force to overwrite it)`,
    );
  }
  writeFileSync(planPath, STARTER_PLAN, { mode: 0o644 });
  const home = resolve(options.home ?? process.env.BATON_HOME ?? join(target, HOME_FOLDER));
  // Made now, so every command run in the project's folders finds it (the nearest .baton upward).
  mkdirSync(home, { recursive: true, mode: 0o700 });
  process.stdout.write(
    [
      `wrote ${planPath}`,
      '',
      'next:',
      `  1. edit the plan (agent command, steps), then start it:  baton run ${planPath}`,
      `     or store it for the heartbeat to drive:               baton run ${planPath} --detach`,
      '  2. let a heartbeat drive due steps (crontab -e):',
      `     */5 * * * * cd ${target} && baton check --quiet --home ${home}`,
      '     or, for an OpenClaw agent, add this line to HEARTBEAT.md:',
      `     Run \`baton check --quiet --home ${home}\` and report only BLOCKED lines.`,
      '     (OpenClaw 2026.9+: then run openclaw doctor --fix once, which moves it into the heartbeat job)',
      '  3. see where things stand:  baton status',
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
