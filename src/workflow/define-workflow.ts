import '../runtime/core-libraries.js';
import { BatonError } from '../core/errors.js';
import { validatePlanObject } from '../core/plan/parse.js';
import { MAX_PLAN_NESTING, type Plan, type SideEffect } from '../core/plan/types.js';
import { checkChildInputs, planNesting } from '../core/sub-plans.js';

/** What a workflow step's function receives. `Results` holds the values of its dependencies only. */
export interface StepContext<Inputs, Results> {
  runId: string;
  stepId: string;
  /** 1 for the first attempt. */
  attempt: number;
  inputs: Inputs;
  /** The values returned by the steps this one depends on, typed. */
  results: Results;
  /**
   * Aborted at the step's timeout, when the run is cancelled, the lease is lost or the worker
   * stops: stop soon. At its timeout the attempt ends (`timed out`) whether or not the step stops.
   * Once the step has returned, nothing aborts it.
   */
  signal: AbortSignal;
  /** A shadow run: `effect` performs nothing (see `shadow` on `Baton.start`). */
  shadow: boolean;
  /** In an item of a fan-out (`forEach`): its element of the list and its index; absent otherwise. */
  item?: unknown;
  itemIndex?: number;
  /** Run id + step id: the same in every attempt, for keying side effects outside Baton. */
  idempotencyKey: string;
  /**
   * Says the step is alive (see `heartbeatTimeoutMs`) and records progress in the run's timeline
   * (`step.heartbeat`, at most one every 5 s).
   */
  heartbeat(note?: string): void;
  /** Appends a line to the attempt's log (`baton logs <run> <step>`). */
  log(message: string): void;
  /**
   * Runs `fn` at most once per `key` in this step, across retries and crashes: an intent is stored
   * before and the result after, and a replay returns the stored result. `fn` receives the
   * idempotency key (run id + step id + key) to pass to the service it calls. The result must be
   * JSON. An intent without a result (a crash mid-effect) blocks the step as `unknown_outcome`,
   * unless the step is `idempotent` (run again) or has `reconcile` (asked what happened). A result
   * over 64 KiB is kept in the artifact store, like a step's. In a shadow run `fn` is not called:
   * a `step.would_execute` event with the key is recorded and the step's `shadowResult` (else
   * `undefined`) is returned.
   */
  effect<T>(key: string, fn: (idempotencyKey: string) => T | Promise<T>): Promise<T>;
}

/** What `reconcile` found out about an effect whose outcome was not recorded. */
export type ReconcileResult = { happened: true; result: unknown } | { happened: false };

export interface StepPolicy<Inputs, Deps extends string> {
  title?: string;
  dependsOn?: readonly Deps[];
  /**
   * A condition (CEL) over `inputs.<name>` and `steps.<id>.result` / `steps.<id>.status` of the
   * steps in `dependsOn`, e.g. `steps.check.result.passed == false`: false skips the step (its
   * result is then null) and the steps after it go on. Checked with the plan: PLAN_INVALID.
   */
  when?: string;
  /**
   * Runs the step once per element of a list (`ctx.item`), e.g. `{ items: 'steps.research.result.pages',
   * maxItems: 100 }`: its value is then the list of the items' values, in item order (see the
   * `forEach` of a plan step).
   */
  forEach?: {
    items: string;
    as?: string;
    maxItems: number;
    concurrency?: number;
    toleratedFailures?: number | string;
  };
  /**
   * Attempts in total (default 3) and the backoff between them (milliseconds or "30s");
   * `maxInterruptions` (default 10): attempts ended by a dead worker or a lost lease, which do not
   * spend `maxAttempts`.
   */
  retry?: {
    maxAttempts?: number;
    maxInterruptions?: number;
    initialDelayMs?: number | string;
    factor?: number;
    maxDelayMs?: number | string;
  };
  /**
   * One attempt's timeout (milliseconds or "5m"). Default 1 h. At the timeout `ctx.signal` fires and
   * the attempt fails as a timeout (retried like any transient failure), whether or not the step stops.
   */
  timeoutMs?: number | string;
  /**
   * The longest the step may go without `ctx.heartbeat()` (milliseconds or "30s", from the
   * attempt's start): then `ctx.signal` fires and the attempt fails as stalled (retried like any
   * transient failure). Default: no such watch, only `timeoutMs`.
   */
  heartbeatTimeoutMs?: number | string;
  /**
   * The step's first attempt is not due before this instant: an ISO 8601 date-time with an offset
   * (`'2026-12-24T08:00:00+08:00'`), or a template resolving to one (`'{{inputs.when}}'`,
   * `'{{steps.<dep>.result.at}}'`). Default: none.
   */
  notBefore?: string;
  /** Claim priority of this step, 0 to 9, higher first. Default: the run's priority. */
  priority?: number;
  /**
   * Default `none`. `unsafe`: an interrupted or timed-out attempt is an unknown outcome, never
   * retried blindly. In a shadow run a step with a side effect is not called at all.
   */
  sideEffect?: SideEffect;
  /**
   * In a shadow run, what stands in (JSON): the step's result when it has a `sideEffect` (default
   * null), otherwise what each `ctx.effect` returns (default `undefined`).
   */
  shadowResult?: unknown;
  /**
   * The flow-control key its attempts count against (`baton.setFlowLimit(key, ...)`), e.g. the API
   * it calls. Default `fn:<workflow>.<step>`.
   */
  flowKey?: string;
  /**
   * Keyed flow control, as a plan step's `flow`: `{ key: 'customer:{{inputs.customer}}', concurrency: 1,
   * rate: '10/m' }`: the key is rendered per run, and the limit applies to every key it renders to
   * unless an operator set one (`baton flow set`, `setFlowLimit`). Not with `flowKey`.
   */
  flow?: { key: string; concurrency?: number; rate?: string };
  /** Asked, after a crash mid-effect, whether the effect `key` happened. */
  reconcile?: (
    context: StepContext<Inputs, unknown>,
    key: string,
  ) => ReconcileResult | Promise<ReconcileResult>;
}

/**
 * A step that waits, with no function (the plan's `wait`): for a person (`baton approve` /
 * `baton.approve`) or an event (`baton send` / `baton.send`). `timeout`: a duration ("24h") or an
 * ISO 8601 date-time with an offset; `onTimeout`: block (default), skip or reject.
 */
export type WaitOption =
  | { for: 'approval'; prompt?: string; timeout?: string | number; onTimeout?: 'block' | 'skip' | 'reject' }
  | {
      for: 'event';
      event: string;
      timeout?: string | number;
      onTimeout?: 'block' | 'skip' | 'reject';
      /** A JSON Schema the payload must match (checked by send). */
      schema?: Record<string, unknown>;
    };

/** What a wait step for approval leaves for the steps after it (`ctx.results`). */
export interface ApprovalResult {
  approved: boolean;
  by: string;
  comment: string | null;
  /** When it was decided, ISO 8601. */
  at: string;
}

/** The policy of a wait step: no function, no retries or timeout of an attempt (it has none). */
export interface WaitStepPolicy<Deps extends string> {
  title?: string;
  dependsOn?: readonly Deps[];
  wait: WaitOption;
}

/**
 * A step that runs another workflow as a child run (the plan's `plan:`), with no function of its
 * own: its value is the child's results once it succeeded (a list in item order under `forEach`).
 * The child's spend counts in this run's budgets; cancelling this run cancels it.
 */
export interface SubWorkflowStepPolicy<Deps extends string, W> {
  title?: string;
  dependsOn?: readonly Deps[];
  when?: string;
  /** One child run per item (`{{item}}` in `inputs`). */
  forEach?: StepPolicy<unknown, Deps>['forEach'];
  retry?: StepPolicy<unknown, Deps>['retry'];
  /** The workflow the child run runs: its steps' functions are registered with this one's. */
  workflow: W;
  /**
   * The child run's inputs: templates over `{{inputs.<name>}}`, `{{steps.<id>.result}}` of the
   * steps in `dependsOn`, and `{{item}}` under `forEach`.
   */
  inputs?: Record<string, string>;
}

/** Any workflow, as a step's child (`workflow:`). */
// biome-ignore lint/suspicious/noExplicitAny: a child workflow's inputs and results are its own.
type AnyWorkflow = Workflow<any, any>;

/** Flattens an intersection into one object type, so results read as `{ a: A; b: B }`. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type StepFunction<Inputs, Results, R> = (context: StepContext<Inputs, Results>) => R | Promise<R>;

interface WorkflowStep {
  id: string;
  policy: StepPolicy<unknown, string> & {
    wait?: WaitOption;
    workflow?: AnyWorkflow;
    inputs?: Record<string, string>;
  };
  /** Absent for a wait step (`policy.wait`) and a child workflow's (`policy.workflow`): they run nothing here. */
  run?: StepFunction<unknown, Record<string, unknown>, unknown>;
}

interface WorkflowOptions<Inputs> {
  /** Also the prefix of the step functions' registered names: `<name>.<step id>`. */
  name: string;
  description?: string;
  /** Declared inputs; those without a default are required when a run starts. */
  inputs?: { [K in keyof Inputs]: { default?: string; description?: string } | null };
  limits?: { maxSteps?: number; noProgressAfter?: number; concurrency?: number };
}

/**
 * A workflow defined in TypeScript: `defineWorkflow({ name }).step(id, fn).step(id, { dependsOn }, fn)`.
 * Each step's `ctx.results` is typed from the steps it depends on. It runs on the same engine and
 * store as plans: its runs show in `baton status` and `baton timeline`.
 */
export class Workflow<Inputs extends Record<string, string>, Results extends Record<string, unknown>> {
  /** Phantom field carrying the result types for `Baton.result(workflow, runId)`. */
  declare readonly results: Results;

  /**
   * This workflow's steps are the first `count` of `chain`. `step` appends to the same array when
   * this workflow is its last holder (the usual chain of calls), so defining n steps costs O(n),
   * not O(n²); a second `step` on the same workflow (a branch) copies the array once.
   */
  private chain: WorkflowStep[];
  private count: number;
  private stepsView: readonly WorkflowStep[] | undefined;

  constructor(
    readonly options: WorkflowOptions<Inputs>,
    steps: readonly WorkflowStep[] = [],
  ) {
    this.chain = [...steps];
    this.count = steps.length;
  }

  get name(): string {
    return this.options.name;
  }

  /** The steps in the order they were added. */
  get steps(): readonly WorkflowStep[] {
    this.stepsView ??= this.chain.slice(0, this.count);
    return this.stepsView;
  }

  step<Id extends string, R>(
    id: Id,
    run: StepFunction<Inputs, Record<string, never>, R>,
  ): Workflow<Inputs, Simplify<Results & { [K in Id]: Awaited<R> }>>;
  /** A fan-out (`forEach`): the step's value is the list of its items' values. */
  step<Id extends string, Deps extends keyof Results & string, R>(
    id: Id,
    policy: StepPolicy<Inputs, Deps> & { forEach: NonNullable<StepPolicy<Inputs, Deps>['forEach']> },
    run: StepFunction<Inputs, Pick<Results, Deps>, R>,
  ): Workflow<Inputs, Simplify<Results & { [K in Id]: Awaited<R>[] }>>;
  step<Id extends string, Deps extends keyof Results & string, R>(
    id: Id,
    policy: StepPolicy<Inputs, Deps>,
    run: StepFunction<Inputs, Pick<Results, Deps>, R>,
  ): Workflow<Inputs, Simplify<Results & { [K in Id]: Awaited<R> }>>;
  step<Id extends string, Deps extends keyof Results & string, W extends WaitOption>(
    id: Id,
    policy: WaitStepPolicy<Deps> & { wait: W },
  ): Workflow<
    Inputs,
    Simplify<Results & { [K in Id]: W extends { for: 'approval' } ? ApprovalResult : unknown }>
  >;
  /** Runs another workflow as a child run under `forEach`: one child per item, their results in item order. */
  step<Id extends string, Deps extends keyof Results & string, W extends AnyWorkflow>(
    id: Id,
    policy: SubWorkflowStepPolicy<Deps, W> & {
      forEach: NonNullable<SubWorkflowStepPolicy<Deps, W>['forEach']>;
    },
  ): Workflow<Inputs, Simplify<Results & { [K in Id]: WorkflowResults<W>[] }>>;
  /** Runs another workflow as a child run: the step's value is the child's results. */
  step<Id extends string, Deps extends keyof Results & string, W extends AnyWorkflow>(
    id: Id,
    policy: SubWorkflowStepPolicy<Deps, W>,
  ): Workflow<Inputs, Simplify<Results & { [K in Id]: WorkflowResults<W> }>>;
  step(id: string, policyOrRun: unknown, maybeRun?: unknown): unknown {
    const policy = (typeof policyOrRun === 'function' ? {} : policyOrRun) as WorkflowStep['policy'];
    const run = (typeof policyOrRun === 'function' ? policyOrRun : maybeRun) as WorkflowStep['run'];
    const runsNothing = policy.wait !== undefined ? 'a wait option' : policy.workflow ? 'a workflow' : null;
    if (typeof run !== 'function' && runsNothing === null)
      throw new TypeError(
        `step "${id}" of workflow ${this.name} needs a function (or a wait option, or a workflow to run)`,
      );
    if (typeof run === 'function' && runsNothing !== null)
      throw new TypeError(
        `step "${id}" of workflow ${this.name} has ${runsNothing} and a function: such a step runs no function of its own; put the function in a step that depends on it`,
      );
    if (policy.wait !== undefined && policy.workflow)
      throw new TypeError(`step "${id}" of workflow ${this.name} has a wait option and a workflow: give one`);
    const chain = this.chain.length === this.count ? this.chain : this.chain.slice(0, this.count);
    chain.push({ id, policy, run });
    const next = new Workflow(this.options);
    next.chain = chain;
    next.count = chain.length;
    return next;
  }

  /** The registered function name of a step. */
  functionName(stepId: string): string {
    return `${this.name}.${stepId}`;
  }

  /**
   * The plan the engine runs: one `fn` step per workflow step. Throws PLAN_INVALID like a plan file.
   * Validated once per workflow: a Workflow does not change (`step` returns a new one), and every
   * `baton.start` asks for its plan, 200 starts of a 10-step workflow allocated 22 MB re-validating it.
   */
  toPlan(): Plan {
    this.plan ??= this.validatedPlan();
    return this.plan;
  }

  private plan: Plan | undefined;

  private validatedPlan(): Plan {
    const plan = validatePlanObject(
      {
        name: this.name,
        ...(this.options.description === undefined ? {} : { description: this.options.description }),
        ...(this.options.inputs === undefined ? {} : { inputs: this.options.inputs }),
        ...(this.options.limits === undefined ? {} : { limits: this.options.limits }),
        steps: this.steps.map(({ id, policy }) => ({
          id,
          ...(policy.wait !== undefined
            ? { wait: policy.wait }
            : policy.workflow
              ? { plan: { name: policy.workflow.name, ...(policy.inputs ? { inputs: policy.inputs } : {}) } }
              : { fn: this.functionName(id) }),
          ...(policy.title === undefined ? {} : { title: policy.title }),
          ...(policy.dependsOn === undefined ? {} : { dependsOn: [...policy.dependsOn] }),
          ...(policy.when === undefined ? {} : { when: policy.when }),
          ...(policy.forEach === undefined ? {} : { forEach: { ...policy.forEach } }),
          ...(policy.retry === undefined ? {} : { retry: policy.retry }),
          ...(policy.timeoutMs === undefined ? {} : { timeoutMs: policy.timeoutMs }),
          ...(policy.heartbeatTimeoutMs === undefined
            ? {}
            : { heartbeatTimeoutMs: policy.heartbeatTimeoutMs }),
          ...(policy.notBefore === undefined ? {} : { notBefore: policy.notBefore }),
          ...(policy.priority === undefined ? {} : { priority: policy.priority }),
          ...(policy.sideEffect === undefined ? {} : { sideEffect: policy.sideEffect }),
          ...(policy.flowKey === undefined ? {} : { flowKey: policy.flowKey }),
          ...(policy.flow === undefined ? {} : { flow: { ...policy.flow } }),
          ...(policy.shadowResult === undefined ? {} : { shadowResult: policy.shadowResult }),
        })),
      },
      `workflow ${this.name}`,
    );
    return this.withChildren(plan);
  }

  /** The plan with each child workflow's plan kept in its step, its inputs checked, nesting bounded. */
  private withChildren(plan: Plan): Plan {
    if (!this.steps.some((step) => step.policy.workflow)) return plan;
    const steps = plan.steps.map((step, index) => {
      const child = this.steps[index]?.policy.workflow;
      if (!child || !step.subPlan) return step;
      const childPlan = child.toPlan();
      checkChildInputs(childPlan, step.subPlan.inputs, `workflow ${this.name}: steps.${step.id}.inputs`);
      return { ...step, subPlan: { ...step.subPlan, plan: childPlan } };
    });
    const withChildren = { ...plan, steps };
    const nesting = planNesting(withChildren);
    if (nesting > MAX_PLAN_NESTING)
      throw new BatonError(
        'PLAN_INVALID',
        `workflow ${this.name}: workflows nest ${nesting} deep, more than the ${MAX_PLAN_NESTING} a run may`,
      );
    return withChildren;
  }
}

export function defineWorkflow<Inputs extends Record<string, string> = Record<string, never>>(
  options: WorkflowOptions<Inputs>,
): Workflow<Inputs, Record<never, never>> {
  return new Workflow<Inputs, Record<never, never>>(options);
}

/** The result types of a workflow: what `Baton.result(workflow, runId)` resolves to. */
export type WorkflowResults<W> = W extends Workflow<Record<string, string>, infer R> ? R : never;
