import { join } from 'node:path';
import { troubleshootPrompt } from '../core/agent-prompt.js';
import { childEnvironment } from '../core/child-env.js';
import type { AgentSpec } from '../core/plan/types.js';
import { runAgentAttempt } from './agent-attempt.js';
import { renderStepText } from './render-step-text.js';
import { probeSandbox, type SandboxSpec } from './sandbox.js';
import {
  type AttemptResult,
  attemptLogPath,
  type ExecutionContext,
  type StepExecutor,
} from './step-executor.js';
import { trustedPrograms } from './trusted-programs.js';

export interface AgentCliExecutorOptions {
  /** Used for steps whose stored plan sets no agent (plans built in code). */
  defaultAgent?: AgentSpec;
  /** Environment for agents; BATON_* variables are added per attempt. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Between SIGTERM and SIGKILL on timeout or abort. Default 5000 ms. */
  killGraceMs?: number;
  /**
   * Hidden from confined agents besides the Baton home (sandbox: workspace): e.g. a SQLite file
   * kept outside the home, with its -wal and -shm files.
   */
  hiddenPaths?: readonly string[];
}

/** Runs a step's instruction through an agent CLI: argv only, prompt as one argument, supervised. */
export class AgentCliExecutor implements StepExecutor {
  constructor(private readonly options: AgentCliExecutorOptions = {}) {}

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    const { claim } = context;
    const agent = claim.step.agent ?? this.options.defaultAgent;
    if (!agent) {
      const message = 'no agent command: set defaults.agent.command in the plan';
      return { outcome: { ok: false, failureClass: 'invalid', message }, logPath: null };
    }
    const rendered = renderStepText(claim.step.instruction ?? '', context);
    if (!rendered.ok) {
      return { outcome: { ok: false, failureClass: 'invalid', message: rendered.message }, logPath: null };
    }
    const instruction = rendered.text;
    const prompt =
      claim.lastError !== null && claim.attempt > 1
        ? troubleshootPrompt(claim.stepId, claim.attempt - 1, claim.lastError, instruction)
        : instruction;
    const logPath = attemptLogPath(claim);
    // This process's environment as the attempt starts, copied once: each walk of process.env
    // costs about 50 µs (every read crosses into C++), and an attempt reads it three times.
    const ownEnv = this.options.env ?? { ...process.env };
    // The policy of core/child-env.ts, then the attempt's own variables, which nothing overrides.
    const environmentFor = (reads: readonly string[]): NodeJS.ProcessEnv => ({
      ...childEnvironment({
        env: ownEnv,
        reads,
        ...(claim.secretEnv ? { plan: claim.secretEnv } : {}),
        ...(agent.env ? { spec: agent.env } : {}),
      }),
      BATON_RUN_ID: claim.runId,
      BATON_STEP_ID: claim.stepId,
      BATON_ATTEMPT: String(claim.attempt),
      BATON_WORKSPACE: claim.workspace,
      BATON_STORE_ID: context.storeId,
      // The same for every attempt of the step: an agent's side effects can be keyed by it.
      BATON_IDEMPOTENCY_KEY: `${claim.runId}:${claim.stepId}`,
    });
    let sandbox: SandboxSpec | undefined;
    if (claim.step.sandbox === 'workspace') {
      // Checked when the run was started too; the machine may have changed since. Never unconfined.
      const probe = probeSandbox(ownEnv);
      if (!probe.ok) {
        const message = `sandbox: workspace cannot run here: ${probe.problem} (fix: ${probe.fix})`;
        return { outcome: { ok: false, failureClass: 'fatal', message }, logPath: null };
      }
      sandbox = { bwrap: probe.bwrap, hidden: [context.home, ...(this.options.hiddenPaths ?? [])] };
    }
    const result = await runAgentAttempt({
      agent,
      // Read at each attempt: `baton trust rm` and a changed file take effect at once.
      trust: trustedPrograms(context.home, ownEnv),
      prompt,
      workspace: claim.workspace,
      requiredOutputs: claim.step.requiredOutputs,
      ...(claim.step.resultFile === undefined ? {} : { resultFile: claim.step.resultFile }),
      ...(claim.step.resultSchema === undefined ? {} : { resultSchema: claim.step.resultSchema }),
      env: environmentFor([]),
      envFor: (profile) => environmentFor(profile.readsEnv),
      // The attempt's deadline (engine/attempt-deadline.ts) fires `signal` at this time and decides
      // what a timeout counts as; this timer of the process supervisor is only a backstop.
      timeoutMs: claim.step.timeoutMs,
      killGraceMs: this.options.killGraceMs ?? 5000,
      logPath: join(context.home, logPath),
      signal: context.signal,
      onSpawn: (pid) => context.onProcess(pid),
      ...(sandbox ? { sandbox } : {}),
    });
    const loggedPath = result.ok || result.process !== null ? logPath : null;
    const reported = result.report?.usage;
    const usage = reported
      ? {
          usage: {
            inputTokens: reported.inputTokens,
            outputTokens: reported.outputTokens,
            costUsd: reported.costUsd,
          },
        }
      : {};
    if (result.ok) {
      return {
        outcome: {
          ok: true,
          summary: result.summary,
          outputs: result.outputs,
          ...(result.value === undefined ? {} : { value: result.value }),
          exitCode: result.exitCode,
          ...usage,
        },
        logPath: loggedPath,
      };
    }
    const retryAfter = result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs };
    return {
      outcome: {
        ok: false,
        failureClass: result.failureClass,
        message: result.message,
        exitCode: result.exitCode,
        ...retryAfter,
        ...usage,
      },
      logPath: loggedPath,
    };
  }
}
