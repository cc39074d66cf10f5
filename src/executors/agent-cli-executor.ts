import { join } from 'node:path';
import { agentInvocation, summarizeAgentOutput, troubleshootPrompt } from '../core/agent-prompt.js';
import { classifyAgentExit } from '../core/classify-agent-exit.js';
import { isBatonError } from '../core/errors.js';
import type { OutputArtifact } from '../core/failure.js';
import { renderTemplate } from '../core/plan/template.js';
import type { AgentSpec } from '../core/plan/types.js';
import { checkAgentCommand } from './command-policy.js';
import { runProcess } from './run-process.js';
import {
  type AttemptResult,
  attemptLogPath,
  type ExecutionContext,
  type StepExecutor,
} from './step-executor.js';
import { checkOutputPath, describeArtifact } from './workspace-paths.js';

export interface AgentCliExecutorOptions {
  /** Used for steps whose plan sets no agent (from `--agent` or BATON_AGENT_CMD). */
  defaultAgent?: AgentSpec;
  /** Environment for agents; BATON_* variables are added per attempt. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Between SIGTERM and SIGKILL on timeout or abort. Default 5000 ms. */
  killGraceMs?: number;
}

/** Runs a step's instruction through an agent CLI: argv only, prompt as one argument, supervised. */
export class AgentCliExecutor implements StepExecutor {
  constructor(private readonly options: AgentCliExecutorOptions = {}) {}

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    const { claim } = context;
    const agent = claim.step.agent ?? this.options.defaultAgent;
    if (!agent) {
      const message =
        'no agent command: set defaults.agent.command in the plan, or pass --agent \'["claude","-p"]\'';
      return { outcome: { ok: false, failureClass: 'invalid', message }, logPath: null };
    }
    const env = this.options.env ?? process.env;
    const verdict = checkAgentCommand(agent.command, {
      cwd: claim.workspace,
      ...(env.PATH === undefined ? {} : { pathEnv: env.PATH }),
    });
    if (!verdict.ok)
      return { outcome: { ok: false, failureClass: 'invalid', message: verdict.reason }, logPath: null };

    let instruction: string;
    try {
      instruction = renderTemplate(claim.step.instruction ?? '', {
        run: { id: claim.runId, workspace: claim.workspace },
        inputs: claim.inputs,
        steps: Object.fromEntries(
          Object.entries(context.results).map(([id, result]) => [
            id,
            { summary: result.summary, outputs: result.outputs.map((o) => o.path) },
          ]),
        ),
      });
    } catch (error) {
      if (!isBatonError(error)) throw error;
      return { outcome: { ok: false, failureClass: 'invalid', message: error.message }, logPath: null };
    }
    const prompt =
      claim.lastError !== null && claim.attempt > 1
        ? troubleshootPrompt(claim.stepId, claim.attempt - 1, claim.lastError, instruction)
        : instruction;
    const { argv, stdinText } = agentInvocation(agent, prompt);
    const logPath = attemptLogPath(claim);
    const result = await runProcess({
      argv,
      cwd: claim.workspace,
      env: {
        ...env,
        BATON_RUN_ID: claim.runId,
        BATON_STEP_ID: claim.stepId,
        BATON_ATTEMPT: String(claim.attempt),
        BATON_WORKSPACE: claim.workspace,
      },
      ...(stdinText === undefined ? {} : { stdinText }),
      timeoutMs: claim.step.timeoutMs,
      killGraceMs: this.options.killGraceMs ?? 5000,
      logPath: join(context.home, logPath),
      signal: context.signal,
      onSpawn: (pid) => context.onProcess(pid),
    });
    if (result.aborted) {
      const message =
        'stopped before it finished (the run was cancelled, the lease was lost or the worker is shutting down)';
      return {
        outcome: { ok: false, failureClass: 'interrupted', message, exitCode: result.exitCode },
        logPath,
      };
    }
    const verdictOfExit = classifyAgentExit({
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      timeoutMs: claim.step.timeoutMs,
      command: agent.command[0] ?? '',
      stdoutTail: result.stdoutTail,
      stderrTail: result.stderrTail,
      ...(result.spawnError ? { spawnErrorCode: result.spawnError.code } : {}),
    });
    if (!verdictOfExit.ok) {
      const { failureClass, message } = verdictOfExit;
      const retryAfter =
        verdictOfExit.retryAfterMs === undefined ? {} : { retryAfterMs: verdictOfExit.retryAfterMs };
      return {
        outcome: { ok: false, failureClass, message, exitCode: result.exitCode, ...retryAfter },
        logPath,
      };
    }
    const outputs = await this.checkOutputs(claim.workspace, claim.step.requiredOutputs);
    if (!outputs.ok) {
      // A declared output that resolves outside the workspace is a safety problem for a human, not something to retry.
      const failureClass = outputs.escape ? 'invalid' : 'agent_failed';
      return {
        outcome: { ok: false, failureClass, message: outputs.message, exitCode: result.exitCode },
        logPath,
      };
    }
    return {
      outcome: {
        ok: true,
        summary: summarizeAgentOutput(result.stdoutTail),
        outputs: outputs.artifacts,
        exitCode: result.exitCode,
      },
      logPath,
    };
  }

  private async checkOutputs(
    workspace: string,
    required: readonly string[],
  ): Promise<{ ok: true; artifacts: OutputArtifact[] } | { ok: false; escape: boolean; message: string }> {
    const missing: string[] = [];
    const refused: string[] = [];
    const artifacts: OutputArtifact[] = [];
    for (const relPath of required) {
      const check = await checkOutputPath(workspace, relPath);
      if (check.ok) artifacts.push(await describeArtifact(workspace, check.absPath));
      else if (check.problem === 'missing') missing.push(relPath);
      else refused.push(check.message);
    }
    if (refused.length > 0)
      return { ok: false, escape: true, message: `Refused outputs: ${refused.join('; ')}` };
    if (missing.length > 0)
      return { ok: false, escape: false, message: `Missing required outputs: ${missing.join(', ')}` };
    return { ok: true, artifacts };
  }
}
