import { realpathSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resumedTroubleshootPrompt, troubleshootPrompt } from '../core/agent-prompt.js';
import { addUsage } from '../core/budget.js';
import { childEnvironment } from '../core/child-env.js';
import { type AgentSpec, DEFAULT_STALL_TIMEOUT_MS, type ToolApprovalSpec } from '../core/plan/types.js';
import { stallingEvent } from '../core/stall-message.js';
import { unknownIfUnsafe } from '../core/unsafe-outcome.js';
import type { ClaimedStep } from '../store/store.js';
import { runAgentAttempt } from './agent-attempt.js';
import { type AttemptSession, attemptSession } from './agent-session.js';
import { betweenCheckpoints } from './attempt-checkpoint.js';
import { type Grader, graderOf } from './grader.js';
import { renderStepText } from './render-step-text.js';
import { probeSandbox, type SandboxSpec } from './sandbox.js';
import {
  type AttemptResult,
  attemptLogPath,
  type ExecutionContext,
  type StepExecutor,
} from './step-executor.js';
import { startToolApprovalRelay, type ToolApprovalRelay } from './tool-approval-relay.js';
import { trustedPrograms } from './trusted-programs.js';
import { runVerifyGate } from './verify-gate.js';

/** A path as given (absolute) and as its real path, for comparing with paths found under a workspace. */
function bothSpellings(path: string): string[] {
  const given = resolve(path);
  try {
    const real = realpathSync(given);
    return real === given ? [given] : [given, real];
  } catch {
    return [given];
  }
}

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
  /**
   * Makes the model call that grades a `verify.rubric` (the engine's model executor, with its
   * providers, prices and limits). Default: a model executor with default options.
   */
  grader?: Grader;
}

/** The grader of an executor built without one: a model executor with default options. */
const defaultGrader = graderOf(async () => new (await import('./model-executor.js')).ModelExecutor());

/**
 * The CLI session the attempt asks for (executors/agent-session.ts); when its files changed since
 * the attempt before (`changedSince`), a fresh one that says why instead of continuing that one.
 */
function sessionOf(claim: ClaimedStep, home: string, changedSince: string | null): AttemptSession {
  const planned = attemptSession(claim, (attempt) => join(home, attemptLogPath({ ...claim, attempt })));
  return changedSince !== null && planned.previous !== undefined
    ? { id: planned.id, freshBecause: changedSince }
    : planned;
}

/** The tool approval server's module, run by node as the CLI's MCP server (mcp/tool-approval-server.ts). */
const APPROVAL_SERVER = fileURLToPath(new URL('../mcp/tool-approval-server.js', import.meta.url));

/**
 * An attempt's tool approvals: the MCP config the CLI reads (`<base>.approvals.json`, 0600), naming
 * the approval server with the rules, and the relay of its requests in this worker.
 */
async function startApprovals(
  context: ExecutionContext,
  spec: ToolApprovalSpec,
  base: string,
): Promise<{ configPath: string; relay: ToolApprovalRelay }> {
  const configPath = `${base}.approvals.json`;
  const settings = { base, rules: spec.rules, workspace: context.claim.workspace };
  const config = {
    mcpServers: {
      baton: {
        type: 'stdio',
        command: process.execPath,
        args: [APPROVAL_SERVER],
        env: { BATON_TOOL_APPROVALS: JSON.stringify(settings) },
      },
    },
  };
  await mkdir(dirname(configPath), { recursive: true, mode: 0o700 });
  await writeFile(configPath, JSON.stringify(config), { mode: 0o600 });
  const relay = startToolApprovalRelay({
    claim: context.claim,
    base,
    timeoutMs: spec.timeoutMs,
    recordEvents: (events) => context.recordEvents(events),
    readEvents: (afterSeq) => context.readEvents?.(afterSeq) ?? Promise.resolve([]),
  });
  return { configPath, relay };
}

/** Runs a step's instruction through an agent CLI: argv only, prompt as one argument, supervised. */
export class AgentCliExecutor implements StepExecutor {
  constructor(private readonly options: AgentCliExecutorOptions = {}) {}

  execute(context: ExecutionContext): Promise<AttemptResult> {
    // The home (its store and attempt logs) is never part of the workspace's checkpoint.
    const hidden = () => [context.home, ...(this.options.hiddenPaths ?? [])].flatMap(bothSpellings);
    return betweenCheckpoints(context, hidden, (changedSince) => this.attempt(context, changedSince));
  }

  /** `changedSince`: why the attempt before's session is not continued (its files changed since). */
  private async attempt(context: ExecutionContext, changedSince: string | null): Promise<AttemptResult> {
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
    const retrying = claim.lastError !== null && claim.attempt > 1;
    const prompt = retrying
      ? troubleshootPrompt(claim.stepId, claim.attempt - 1, claim.lastError!, instruction)
      : instruction;
    const logPath = attemptLogPath(claim);
    const stallTimeoutMs = agent.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS;
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
    // Read at each attempt (for the agent and its verify command alike): `baton trust rm` and a
    // changed file take effect at once.
    const trust = trustedPrograms(context.home, ownEnv);
    // agent.approve: the CLI asks a permission tool of Baton's, and this worker relays its requests.
    const approvals = agent.approve
      ? await startApprovals(context, agent.approve, join(context.home, logPath).replace(/\.log$/, ''))
      : undefined;
    const result = await runAgentAttempt({
      agent,
      trust,
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
      stallTimeoutMs,
      session: sessionOf(claim, context.home, changedSince),
      ...(retrying
        ? { resumePrompt: resumedTroubleshootPrompt(claim.stepId, claim.attempt - 1, claim.lastError!) }
        : {}),
      // The store and the attempt logs change while the agent is silent: no sign of its life.
      stallIgnore: [context.home, ...(this.options.hiddenPaths ?? [])].flatMap(bothSpellings),
      ...(approvals
        ? { approvalConfig: approvals.configPath, stallPaused: () => approvals.relay.pending() > 0 }
        : {}),
      onStalling: (silentMs) => {
        context.recordEvents([stallingEvent(claim, silentMs, stallTimeoutMs)]).catch(() => {
          // The watch goes on: a timeline without this notice loses nothing of the attempt.
        });
      },
    }).finally(() => approvals?.relay.stop());
    if (result.session?.sessionId !== undefined) {
      const { sessionId, resumed, reason } = result.session;
      const event = { type: 'step.session' as const, stepId: claim.stepId, attempt: claim.attempt };
      await context
        .recordEvents([{ ...event, sessionId, resumed, ...(reason ? { reason } : {}) }])
        .catch(() => undefined);
    }
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
      const verify = claim.step.verify;
      // A fallback's answer is second best already (the step ends degraded): it is not verified.
      const gate =
        verify && !claim.fallback
          ? await runVerifyGate({
              context,
              spec: verify,
              maxAttempts: claim.step.retry.maxAttempts,
              task: instruction,
              answer: result.summary,
              ...(result.value === undefined ? {} : { value: result.value }),
              outputs: result.outputs,
              env: environmentFor([]),
              trust,
              ...(sandbox ? { sandbox } : {}),
              killGraceMs: this.options.killGraceMs ?? 5000,
              grader: this.options.grader ?? defaultGrader,
            })
          : undefined;
      // The grader's tokens count in the step's and the run's budgets, whatever it decided.
      const spent = usage.usage || gate?.usage ? addUsage(usage.usage, gate?.usage) : undefined;
      const withUsage = spent ? { usage: spent } : {};
      if (gate && !gate.passed) {
        const failed = { ok: false as const, failureClass: gate.failureClass, message: gate.message };
        return { outcome: { ...failed, exitCode: result.exitCode, ...withUsage }, logPath: loggedPath };
      }
      return {
        outcome: {
          ok: true,
          summary: result.summary,
          outputs: result.outputs,
          ...(result.value === undefined ? {} : { value: result.value }),
          exitCode: result.exitCode,
          ...withUsage,
          ...(gate?.passed ? { verification: gate.verification } : {}),
        },
        logPath: loggedPath,
      };
    }
    const retryAfter = result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs };
    const failed = {
      ok: false as const,
      failureClass: result.failureClass,
      message: result.message,
      exitCode: result.exitCode,
      ...retryAfter,
      ...usage,
    };
    // A stalled attempt of an unsafe step may have had its effect: as at a timeout, a person decides.
    const outcome = result.stalled
      ? unknownIfUnsafe(failed, claim.step.sideEffect, { runId: claim.runId, stepId: claim.stepId })
      : failed;
    return { outcome, logPath: loggedPath };
  }
}
