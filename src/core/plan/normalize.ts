import { isBatonError } from '../errors.js';
import { parseFlowRate } from '../flow.js';
import { ntfyTarget } from '../hook-formats/ntfy.js';
import { checkForEachSteps } from './check-for-each.js';
import { checkWhens } from './check-when.js';
import { parseDurationMs } from './duration.js';
import { checkDependsOn, findCycles, SuggestionBudget } from './graph.js';
import { formatIssuePath, PlanInvalidError, type PlanIssue, stepPathNames } from './issues.js';
import { normalizeCheckpoint } from './normalize-checkpoint.js';
import { checkCleanup, checkOutput } from './normalize-cleanup.js';
import { subPlanStepProblems } from './normalize-sub-plan.js';
import { normalizeVerify } from './normalize-verify.js';
import { normalizeWait } from './normalize-wait.js';
import { checkPlanTemplates } from './plan-templates.js';
import { normalizeResultFields } from './result-fields.js';
import type { PlanFile, PlanFileStep } from './schema.js';
import { MAX_TIMEOUT_MS } from './schema-fields.js';
import {
  type AgentSpec,
  type Budget,
  DEFAULT_APPROVE_TIMEOUT_MS,
  DEFAULT_LIMITS,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  type FallbackSpec,
  type HookSpec,
  type ModelStepSpec,
  type ModelTargetSpec,
  type Plan,
  type PlanInput,
  type PlanStep,
  type RetryPolicy,
  type StepFlow,
} from './types.js';

type RawRetry = NonNullable<PlanFileStep['retry']>;
type RawAgent = NonNullable<PlanFileStep['agent']>;

/** `defaults:` of the plan file over the built-in defaults (durations not yet parsed). */
interface StepDefaults {
  agent: RawAgent | undefined;
  retry: RetryPolicy;
  timeoutMs: string | number;
  delayBeforeMs: string | number;
  flowKey: string | undefined;
  flow: PlanFileStep['flow'];
  sandbox: PlanFileStep['sandbox'];
  checkpoint: PlanFileStep['checkpoint'];
}

/**
 * Applies defaults to a plan that passed the schema and checks what the schema cannot see:
 * unique ids, one executor per step, the dependency DAG, required output paths, retry bounds
 * and template references. Throws one `PlanInvalidError` listing every problem found.
 */
export function normalizePlan(file: PlanFile, fileName: string): Plan {
  const issues: PlanIssue[] = [];
  const stepNames = stepPathNames(file);
  // Called for every step: `steps.<id>` (or `steps[2]`) without the general formatter.
  const pathOf = (index: number, ...fields: (string | number)[]) => {
    const name = stepNames[index];
    const step = name === undefined ? `steps[${index}]` : `steps.${name}`;
    return fields.length === 0 ? step : formatIssuePath(['steps', index, ...fields], stepNames);
  };

  if (file.workspace?.includes('\u0000')) {
    issues.push({ path: 'workspace', problem: 'contains a NUL character' });
  }
  const inputs = normalizeInputs(file.inputs);
  const defaults: StepDefaults = {
    agent: file.defaults?.agent,
    retry: mergeRetry(DEFAULT_RETRY, file.defaults?.retry, 'defaults.retry', issues),
    timeoutMs: file.defaults?.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    delayBeforeMs: file.defaults?.delayBeforeMs ?? 0,
    flowKey: file.defaults?.flowKey,
    flow: file.defaults?.flow,
    sandbox: file.defaults?.sandbox,
    checkpoint: file.defaults?.checkpoint,
  };
  const steps = file.steps.map((step, index) => normalizeStep(step, defaults, pathOf(index), issues));
  const finallyNames = stepPathNames({ steps: file.finally ?? [] });
  const finallyPathOf = (index: number, ...fields: (string | number)[]) =>
    formatIssuePath(['finally', index, ...fields], [], finallyNames);
  const finallySteps = (file.finally ?? []).map((step, index) =>
    normalizeStep(step, defaults, finallyPathOf(index), issues),
  );

  issues.push(...checkUniqueIds(steps, pathOf));
  const budget = new SuggestionBudget();
  issues.push(...checkDependsOn(steps, pathOf, budget));
  // With duplicate ids the graph is ambiguous: the first step of an id stands for it.
  const firstIndex = new Map<string, number>();
  steps.forEach((step, index) => {
    if (!firstIndex.has(step.id)) firstIndex.set(step.id, index);
  });
  const graph = steps.filter((step, index) => firstIndex.get(step.id) === index);
  for (const cycle of findCycles(graph)) {
    issues.push({ path: pathOf(firstIndex.get(cycle[0]!)!, 'dependsOn'), problem: cycleProblem(cycle) });
  }
  issues.push(...checkPlanTemplates(steps, graph, Object.keys(inputs), pathOf, budget));
  issues.push(...checkWhens(steps, Object.keys(inputs), pathOf));
  issues.push(...checkForEachSteps(steps, Object.keys(inputs), pathOf));
  issues.push(
    ...checkCleanup(steps, finallySteps, Object.keys(inputs), { stepPathOf: pathOf, finallyPathOf }, budget),
  );
  if (file.output !== undefined) issues.push(...checkOutput(file.output, steps, Object.keys(inputs), budget));

  // Before the verdict: a hook's problems are the plan's problems too.
  const hooks = file.hooks === undefined ? undefined : normalizeHooks(file.hooks, issues);
  // Only a plan that matched the schema is normalised: a plan document.
  if (issues.length > 0) throw new PlanInvalidError(fileName, issues, { planDocument: true });
  const plan: Plan = {
    version: 1,
    name: file.name,
    inputs,
    // Field by field: a plan built in code may hold keys set to undefined.
    limits: {
      maxSteps: file.limits?.maxSteps ?? DEFAULT_LIMITS.maxSteps,
      noProgressAfter: file.limits?.noProgressAfter ?? DEFAULT_LIMITS.noProgressAfter,
      concurrency: file.limits?.concurrency ?? DEFAULT_LIMITS.concurrency,
      ...normalizeBudget(file.limits ?? {}, 'limits'),
    },
    ...(hooks === undefined ? {} : { hooks }),
    ...(file.priority === undefined || file.priority === 0 ? {} : { priority: file.priority }),
    ...(file.shadow ? { shadow: true } : {}),
    ...(typeof file.shadow === 'object' &&
    file.shadow.approvals !== undefined &&
    file.shadow.approvals !== 'approve'
      ? { shadowApprovals: file.shadow.approvals }
      : {}),
    steps,
    ...(finallySteps.length === 0 ? {} : { finally: finallySteps }),
    ...(file.onFailure === 'compensate' ? { onFailure: 'compensate' as const } : {}),
    ...(file.output === undefined ? {} : { output: file.output }),
  };
  if (file.description !== undefined) plan.description = file.description;
  if (file.workspace !== undefined) plan.workspace = file.workspace;
  return plan;
}

function normalizeStep(
  step: PlanFileStep,
  defaults: StepDefaults,
  path: string,
  issues: PlanIssue[],
): PlanStep {
  const executors = [
    step.instruction === undefined ? null : 'instruction',
    step.fn === undefined ? null : 'fn',
    step.model === undefined ? null : 'model',
    step.plan === undefined ? null : 'plan',
  ].filter((name): name is string => name !== null);
  const wait = normalizeWait(step, path, issues);
  const kind: PlanStep['kind'] =
    wait !== undefined
      ? 'wait'
      : step.plan !== undefined && executors.length === 1
        ? 'plan'
        : step.fn !== undefined
          ? 'fn'
          : step.model !== undefined
            ? 'model'
            : 'agent';
  if (kind === 'plan') issues.push(...subPlanStepProblems(step, path));
  if (wait !== undefined) {
    // normalizeWait reported a body next to the wait.
  } else if (executors.length > 1) {
    issues.push({
      path,
      problem: `has ${executors.map((name) => `"${name}"`).join(' and ')}: a step is either an agent step (instruction), a function step (fn), a model step (model) or a sub-plan (plan)`,
    });
  } else if (executors.length === 0) {
    issues.push({
      path,
      problem:
        'needs "instruction" (run by an agent), "fn" (a registered function), "model" (a model call), "plan" (a child run of another plan) or "wait" (a person or an event)',
    });
  }
  if (step.args !== undefined && step.fn === undefined) {
    issues.push({
      path: `${path}.args`,
      problem: 'only function steps take args: add "fn" or remove "args"',
    });
  }
  if (step.agent !== undefined && step.fn !== undefined) {
    issues.push({ path: `${path}.agent`, problem: 'a function step does not run an agent: remove "agent"' });
  }
  if (step.agent !== undefined && step.model !== undefined) {
    issues.push({ path: `${path}.agent`, problem: 'a model step does not run an agent CLI: remove "agent"' });
  }
  (step.requiredOutputs ?? []).forEach((output, index) => {
    const problem = outputPathProblem(output);
    if (problem !== undefined) issues.push({ path: `${path}.requiredOutputs[${index}]`, problem });
  });
  if (step.model?.stallTimeoutMs !== undefined && step.model.stream !== true) {
    issues.push({
      path: `${path}.model.stallTimeoutMs`,
      problem:
        'only a streamed response is watched for silence: add "stream: true" or remove "stallTimeoutMs"',
    });
  }
  // A sub-plan step's attempt lasts as long as its child run: no timeout of its own unless given.
  const timeout = step.timeoutMs ?? (kind === 'plan' ? MAX_TIMEOUT_MS : defaults.timeoutMs);
  const delayBefore = step.delayBeforeMs ?? defaults.delayBeforeMs;

  const agent = kind === 'agent' ? (step.agent ?? defaults.agent) : undefined;
  if (step.flow !== undefined && step.flowKey !== undefined)
    issues.push({
      path: `${path}.flow`,
      problem: 'a step counts against one flow key: give flow (a keyed limit) or flowKey, not both',
    });
  // A step's own flowKey wins over defaults.flow, as its own flow wins over defaults.flowKey.
  const rawFlow = step.flow ?? (step.flowKey === undefined ? defaults.flow : undefined);
  const flow = rawFlow === undefined ? undefined : normalizeFlow(rawFlow, `${path}.flow`, issues);
  const flowKey = flow === undefined ? (step.flowKey ?? defaults.flowKey) : undefined;
  // Its agent, or an agent fallback (which runs as the step), is what a sandbox confines.
  const fallbackIsAgent =
    step.fallback !== undefined && step.fallback.fn === undefined && step.fallback.model === undefined;
  const runsAgent = kind === 'agent' || fallbackIsAgent;
  if (step.sandbox === 'workspace' && !runsAgent) {
    issues.push({
      path: `${path}.sandbox`,
      problem: `only agents run confined, and this ${kind} step has no agent fallback: remove "sandbox"`,
    });
  }
  const confined = runsAgent && (step.sandbox ?? defaults.sandbox) === 'workspace';
  const normalized: PlanStep = {
    id: step.id,
    title: step.title ?? step.id,
    kind,
    ...(step.instruction === undefined ? {} : { instruction: step.instruction }),
    ...(step.fn === undefined ? {} : { fn: step.fn }),
    ...(step.args === undefined ? {} : { args: structuredClone(step.args) }),
    ...(step.model === undefined ? {} : { model: normalizeModel(step.model, `${path}.model`) }),
    ...(agent === undefined ? {} : { agent: normalizeAgent(agent, `${path}.agent`) }),
    ...(wait === undefined ? {} : { wait }),
    ...(kind === 'plan' && step.plan !== undefined
      ? {
          subPlan: {
            ...(step.plan.path === undefined ? {} : { path: step.plan.path }),
            ...(step.plan.name === undefined ? {} : { name: step.plan.name }),
            inputs: { ...(step.plan.inputs ?? {}) },
          },
        }
      : {}),
    dependsOn: [...(step.dependsOn ?? [])],
    ...(step.when === undefined ? {} : { when: step.when }),
    requiredOutputs: [...(step.requiredOutputs ?? [])],
    ...normalizeResultFields(step, kind, path, issues),
    ...normalizeVerify(step, kind, path, issues),
    sideEffect: step.sideEffect ?? 'none',
    ...(step.budget === undefined ? {} : { budget: normalizeBudget(step.budget, `${path}.budget`) }),
    ...(flowKey === undefined ? {} : { flowKey }),
    ...(flow === undefined ? {} : { flow }),
    ...(confined ? { sandbox: 'workspace' as const } : {}),
    ...normalizeCheckpoint(step.checkpoint, defaults.checkpoint, runsAgent, path, issues),
    ...(step.shadowResult === undefined ? {} : { shadowResult: structuredClone(step.shadowResult) }),
    ...(step.fallback === undefined
      ? {}
      : { fallback: normalizeFallback(step.fallback, agent ?? defaults.agent, `${path}.fallback`, issues) }),
    retry: mergeRetry(defaults.retry, step.retry, `${path}.retry`, issues),
    timeoutMs: parseDurationMs(timeout, `${path}.timeoutMs`),
    ...heartbeatTimeout(step, kind, path, issues),
    delayBeforeMs: parseDurationMs(delayBefore, `${path}.delayBeforeMs`),
    ...(step.notBefore === undefined ? {} : { notBefore: step.notBefore }),
    ...(step.priority === undefined ? {} : { priority: step.priority }),
    ...(step.compensate === undefined
      ? {}
      : {
          compensate: normalizeFallback(
            typeof step.compensate === 'string' ? { instruction: step.compensate } : step.compensate,
            agent ?? defaults.agent,
            `${path}.compensate`,
            issues,
          ),
        }),
    ...(step.forEach === undefined
      ? {}
      : {
          forEach: {
            items: step.forEach.items,
            as: step.forEach.as ?? 'item',
            maxItems: step.forEach.maxItems,
            ...(step.forEach.concurrency === undefined ? {} : { concurrency: step.forEach.concurrency }),
            toleratedFailures: step.forEach.toleratedFailures ?? 0,
          },
        }),
  };
  return normalized;
}

/** A step's `flow:`: its rate parsed (a problem at `path.rate`). */
function normalizeFlow(flow: NonNullable<PlanFileStep['flow']>, path: string, issues: PlanIssue[]): StepFlow {
  let rate: StepFlow['rate'];
  if (flow.rate !== undefined) {
    try {
      rate = parseFlowRate(flow.rate, `${path}.rate`);
    } catch (error) {
      issues.push({
        path: `${path}.rate`,
        problem: `${JSON.stringify(flow.rate)} is not a rate: use <starts>/<window>, e.g. 10/m, 100/h or 1/2m`,
      });
      if (!isBatonError(error)) throw error;
    }
  }
  return {
    key: flow.key,
    ...(flow.concurrency === undefined ? {} : { concurrency: flow.concurrency }),
    ...(rate === undefined ? {} : { rate }),
  };
}

const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;

function normalizeFallback(
  fallback: NonNullable<PlanFileStep['fallback']>,
  stepAgent: RawAgent | undefined,
  path: string,
  issues: PlanIssue[],
): FallbackSpec {
  const executors = [fallback.instruction, fallback.fn, fallback.model].filter((x) => x !== undefined);
  if (executors.length !== 1) {
    issues.push({ path, problem: 'needs exactly one of "instruction", "fn" or "model"' });
  }
  const kind: FallbackSpec['kind'] =
    fallback.fn !== undefined ? 'fn' : fallback.model !== undefined ? 'model' : 'agent';
  const agent = kind === 'agent' ? (fallback.agent ?? stepAgent) : undefined;
  return {
    kind,
    ...(fallback.instruction === undefined ? {} : { instruction: fallback.instruction }),
    ...(agent === undefined ? {} : { agent: normalizeAgent(agent, `${path}.agent`) }),
    ...(fallback.fn === undefined ? {} : { fn: fallback.fn }),
    ...(fallback.args === undefined ? {} : { args: structuredClone(fallback.args) }),
    ...(fallback.model === undefined ? {} : { model: normalizeModel(fallback.model, `${path}.model`) }),
  };
}

/** Why an ntfy hook's `url` is not a topic URL, or null. */
function ntfyProblem(url: string): string | null {
  const target = ntfyTarget(url);
  return 'problem' in target ? `is ntfy, but url ${target.problem}` : null;
}

function normalizeHooks(hooks: NonNullable<PlanFile['hooks']>, issues: PlanIssue[]): HookSpec[] {
  return hooks.map((hook, index) => {
    const targets = [hook.command, hook.url, hook.urlEnv].filter((target) => target !== undefined);
    if (targets.length !== 1) {
      issues.push({
        path: `hooks[${index}]`,
        problem: 'needs exactly one of "command" (argv), "url" or "urlEnv" (a variable holding the URL)',
      });
    }
    if (hook.format === 'ntfy') {
      const problem =
        hook.command !== undefined
          ? 'is ntfy, which posts to a topic URL: give url or urlEnv (e.g. https://ntfy.sh/my-topic), not a command'
          : hook.url === undefined
            ? null
            : ntfyProblem(hook.url);
      if (problem !== null) issues.push({ path: `hooks[${index}].format`, problem });
    }
    return {
      on: [...new Set(hook.on)],
      ...(hook.command === undefined ? {} : { command: [...hook.command] }),
      ...(hook.url === undefined ? {} : { url: hook.url }),
      ...(hook.urlEnv === undefined ? {} : { urlEnv: hook.urlEnv }),
      ...(hook.format === undefined || hook.format === 'json' ? {} : { format: hook.format }),
      timeoutMs: parseDurationMs(hook.timeoutMs ?? 10_000, `hooks[${index}].timeoutMs`),
      retries: hook.retries ?? 3,
    };
  });
}

/**
 * `heartbeatTimeoutMs` of a function step (only a function calls `ctx.heartbeat()`; an agent has
 * `agent.stallTimeoutMs`), left out when absent or 0.
 */
function heartbeatTimeout(
  step: PlanFileStep,
  kind: PlanStep['kind'],
  path: string,
  issues: PlanIssue[],
): Pick<PlanStep, 'heartbeatTimeoutMs'> {
  if (step.heartbeatTimeoutMs === undefined) return {};
  if (kind !== 'fn') {
    const instead = kind === 'agent' ? ' (an agent step has agent.stallTimeoutMs)' : '';
    issues.push({
      path: `${path}.heartbeatTimeoutMs`,
      problem: `only a function step calls ctx.heartbeat()${instead}: remove "heartbeatTimeoutMs"`,
    });
    return {};
  }
  const ms = parseDurationMs(step.heartbeatTimeoutMs, `${path}.heartbeatTimeoutMs`);
  return ms === 0 ? {} : { heartbeatTimeoutMs: ms };
}

/** A model's `stallTimeoutMs`, left out when absent or 0. */
function streamStall(
  value: string | number | undefined,
  path: string,
): Pick<ModelStepSpec, 'stallTimeoutMs'> {
  const ms = value === undefined ? 0 : parseDurationMs(value, path);
  return ms === 0 ? {} : { stallTimeoutMs: ms };
}

function normalizeBudget(
  budget: {
    maxWallMs?: string | number | undefined;
    maxTokens?: number | undefined;
    maxCostUsd?: number | undefined;
  },
  path: string,
): Budget {
  return {
    ...(budget.maxWallMs === undefined
      ? {}
      : { maxWallMs: parseDurationMs(budget.maxWallMs, `${path}.maxWallMs`) }),
    ...(budget.maxTokens === undefined ? {} : { maxTokens: budget.maxTokens }),
    ...(budget.maxCostUsd === undefined ? {} : { maxCostUsd: budget.maxCostUsd }),
  };
}

function normalizeModel(model: NonNullable<PlanFileStep['model']>, path: string): ModelStepSpec {
  const target = (spec: ModelTargetSpec): ModelTargetSpec => ({
    provider: spec.provider,
    model: spec.model,
    ...(spec.baseUrl === undefined ? {} : { baseUrl: spec.baseUrl }),
    ...(spec.apiKeyEnv === undefined ? {} : { apiKeyEnv: spec.apiKeyEnv }),
    ...(spec.capabilities === undefined ? {} : { capabilities: { ...spec.capabilities } }),
    ...(spec.price === undefined ? {} : { price: { ...spec.price } }),
  });
  return {
    ...target(model),
    ...(model.system === undefined ? {} : { system: model.system }),
    prompt: model.prompt,
    tools: [...(model.tools ?? [])],
    maxOutputTokens: model.maxOutputTokens ?? 1024,
    maxTurns: model.maxTurns ?? 20,
    stream: model.stream ?? false,
    ...streamStall(model.stallTimeoutMs, `${path}.stallTimeoutMs`),
    requestTimeoutMs: parseDurationMs(
      model.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      `${path}.requestTimeoutMs`,
    ),
    ...(model.fallback === undefined ? {} : { fallback: target(model.fallback) }),
  };
}

/** `override` merged over `base`; an initial delay above the maximum is an issue at `path`. */
function mergeRetry(
  base: RetryPolicy,
  override: RawRetry | undefined,
  path: string,
  issues: PlanIssue[],
): RetryPolicy {
  if (override === undefined) return { ...base };
  const retry: RetryPolicy = {
    maxAttempts: override.maxAttempts ?? base.maxAttempts,
    initialDelayMs:
      override.initialDelayMs === undefined
        ? base.initialDelayMs
        : parseDurationMs(override.initialDelayMs, `${path}.initialDelayMs`),
    factor: override.factor ?? base.factor,
    maxDelayMs:
      override.maxDelayMs === undefined
        ? base.maxDelayMs
        : parseDurationMs(override.maxDelayMs, `${path}.maxDelayMs`),
    maxInterruptions: override.maxInterruptions ?? base.maxInterruptions,
  };
  const delaysGiven = override.initialDelayMs !== undefined || override.maxDelayMs !== undefined;
  if (delaysGiven && retry.initialDelayMs > retry.maxDelayMs) {
    const from = (field: 'initialDelayMs' | 'maxDelayMs') =>
      override[field] === undefined ? ', inherited' : '';
    issues.push({
      path,
      problem: `initialDelayMs (${retry.initialDelayMs} ms${from('initialDelayMs')}) is greater than maxDelayMs (${retry.maxDelayMs} ms${from('maxDelayMs')}): lower initialDelayMs or raise maxDelayMs`,
    });
  }
  return retry;
}

function normalizeAgent(agent: RawAgent, path: string): AgentSpec {
  return {
    command: [...agent.command],
    promptVia: agent.promptVia ?? 'arg',
    ...(agent.profile === undefined ? {} : { profile: agent.profile }),
    ...(agent.capRetries === undefined ? {} : { capRetries: agent.capRetries }),
    ...(agent.exitCodes === undefined ? {} : { exitCodes: { ...agent.exitCodes } }),
    ...(agent.resume === 'never' ? { resume: 'never' as const } : {}),
    ...(agent.approve === undefined
      ? {}
      : {
          approve: {
            rules: agent.approve.map((rule) => ({
              tool: rule.tool,
              ...(rule.match === undefined ? {} : { match: rule.match }),
              ...(rule.path === undefined ? {} : { path: rule.path }),
            })),
            timeoutMs: parseDurationMs(
              agent.approveTimeout ?? DEFAULT_APPROVE_TIMEOUT_MS,
              `${path}.approveTimeout`,
            ),
            onTimeout: agent.onTimeout ?? 'deny',
          },
        }),
    ...(agent.stallTimeoutMs === undefined
      ? {}
      : { stallTimeoutMs: parseDurationMs(agent.stallTimeoutMs, `${path}.stallTimeoutMs`) }),
    ...(agent.env === undefined
      ? {}
      : {
          env: {
            ...(agent.env.pass === undefined ? {} : { pass: [...agent.env.pass] }),
            ...(agent.env.set === undefined ? {} : { set: { ...agent.env.set } }),
          },
        }),
  };
}

function normalizeInputs(raw: PlanFile['inputs']): Record<string, PlanInput> {
  const inputs: Record<string, PlanInput> = {};
  for (const [name, spec] of Object.entries(raw ?? {})) {
    const input: PlanInput = {};
    if (spec?.default !== undefined) input.default = String(spec.default);
    if (spec?.description !== undefined) input.description = spec.description;
    inputs[name] = input;
  }
  return inputs;
}

/** `cycle: a -> c -> b -> a`, with only the first and last few steps of a long cycle named. */
function cycleProblem(cycle: readonly string[]): string {
  const steps = cycle.length - 1;
  const shown =
    steps <= 12
      ? cycle.join(' -> ')
      : `${cycle.slice(0, 6).join(' -> ')} -> ... (${steps - 9} more) -> ${cycle.slice(-4).join(' -> ')}`;
  const size = steps <= 12 ? '' : ` of ${steps} steps`;
  return `cycle${size}: ${shown} (each step depends on the next): remove one of these dependencies`;
}

function checkUniqueIds(
  steps: readonly PlanStep[],
  pathOf: (index: number, field: string) => string,
): PlanIssue[] {
  const issues: PlanIssue[] = [];
  const firstIndex = new Map<string, number>();
  steps.forEach((step, index) => {
    const first = firstIndex.get(step.id);
    if (first === undefined) {
      firstIndex.set(step.id, index);
    } else {
      issues.push({
        path: pathOf(index, 'id'),
        problem: `duplicate step id "${step.id}" (already used by steps[${first}]): step ids must be unique`,
      });
    }
  });
  return issues;
}

/** Lexical checks only: the workspace is not known here, and the files do not exist yet. */
function outputPathProblem(output: string): string | undefined {
  const shown = JSON.stringify(output);
  if (output.includes('\u0000')) return `${shown} contains a NUL character`;
  if (output.startsWith('/') || output.startsWith('\\') || /^[A-Za-z]:/.test(output)) {
    return `${shown} is absolute: use a path relative to the run workspace`;
  }
  if (output.split(/[\\/]/).includes('..')) {
    return `${shown} leaves the run workspace through "..": use a path inside it`;
  }
  return undefined;
}
