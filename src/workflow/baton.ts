import { ENGINE_DEFAULTS } from '../core/engine-defaults.js';
import { BatonError, runNotFound } from '../core/errors.js';
import type { StoredEvent } from '../core/events.js';
import type { Plan } from '../core/plan/types.js';
import type { RunStatus } from '../core/run-state.js';
import type { AgentCliExecutorOptions } from '../executors/agent-cli-executor.js';
import { FunctionRegistry } from '../executors/function-executor.js';
import type { ModelExecutorOptions } from '../executors/model-executor.js';
import {
  type BulkAnswer,
  cancelRuns,
  type RunsFilter,
  retryBlocked,
} from '../runtime/commands/bulk-commands.js';
import { type CommandContext, commandContext } from '../runtime/commands/context.js';
import { fileChanges, rollbackRun } from '../runtime/commands/file-commands.js';
import { removeFlowLimit, setFlowLimit } from '../runtime/commands/flow-commands.js';
import { forkRun, type RerunAnswer, rerunRun } from '../runtime/commands/rerun-commands.js';
import { applyRunCommand, decideStep, sendEvent } from '../runtime/commands/run-commands.js';
import { ensureSchedule, scheduleSnapshot } from '../runtime/commands/schedule-commands.js';
import { prepareRun, startRuns } from '../runtime/commands/start-commands.js';
import { createEngine } from '../runtime/create-engine.js';
import type { StepFileChanges } from '../runtime/file-changes.js';
import { resolveHome } from '../runtime/home.js';
import { firstOf, homePlans, type PlanLookup, withKnownPlans } from '../runtime/known-plans.js';
import type { BatonMetrics } from '../runtime/metrics.js';
import { METRICS_CONTENT_TYPE } from '../runtime/metrics-text.js';
import { openSqliteStoreNow } from '../runtime/open-sqlite-now.js';
import { openStoreTarget, type StoreAsker, type StoreTarget, storeTarget } from '../runtime/open-store.js';
import { checkAfter, runEventStream, storeWake } from '../runtime/run-event-stream.js';
import { runChildren } from '../runtime/run-reads.js';
import { API_OPTION_NAMES } from '../runtime/schedule-options.js';
import type { ScheduleView } from '../runtime/schedule-view.js';
import { type EngineSettings, engineSettings } from '../runtime/settings.js';
import { readStepResults } from '../runtime/step-results.js';
import {
  type Engine,
  EngineMeter,
  type EngineReport,
  type EventDelivery,
  emptyEngineReport,
  NO_STEPS,
  type RunSummary,
  type Store,
} from '../runtime/types.js';
import type { FilesRestored } from '../runtime/workspace-restore.js';
import type { Workflow, WorkflowResults } from './define-workflow.js';
import { type ScheduleApiOptions, type ScheduleControls, scheduleControls } from './schedule-plan.js';
import { resultValue, stepContext } from './step-context.js';

/**
 * How to open Baton. Each option wins over its environment variable, as a flag does on the command
 * line (docs/configuration.md lists them all).
 */
export interface BatonOptions {
  /** Baton's folder (the SQLite file and attempt logs). Default BATON_HOME, else `.baton`. */
  home?: string;
  /**
   * Where runs are kept: a PostgreSQL URL (`postgres://user:password@host:5432/db`, `?schema=` for
   * a schema other than "baton"; masked as a secret in everything Baton records), or a store you
   * built (`await PostgresStore.open(url)`, from `baton-steps/store`). Default BATON_DATABASE_URL, else the SQLite file in
   * `home`. Attempt logs and artifacts stay under `home` either way.
   */
  store?: Store | string;
  /** Steps running at once in this process. Default BATON_CONCURRENCY, else 8. */
  concurrency?: number;
  /** Lease of a running step in ms. Default BATON_LEASE_MS, else 30,000. */
  leaseMs?: number;
  /** Longest idle sleep of a worker in ms. Default 1,000. */
  pollMs?: number;
  agent?: AgentCliExecutorOptions;
  model?: ModelExecutorOptions;
}

type TypedWorkflow = Workflow<Record<string, string>, Record<string, unknown>>;

/** A worker of this process: its engine once the store is open; a stop asked for before that. */
interface LocalWorker {
  engine: Engine | null;
  stopAfter: number | null;
}

/** How the API names its store option in messages, and finds its home (never a folder above). */
const API_ASKER: StoreAsker = { option: 'Baton.open store', home: 'here' };

/** A run that ended without succeeding; `status` and `reason` say why. */
export class RunNotSucceededError extends Error {
  constructor(
    readonly runId: string,
    readonly status: RunStatus,
    readonly reason: string | null,
  ) {
    super(`run ${runId} is ${status}${reason ? `: ${reason}` : ''}`);
    this.name = 'RunNotSucceededError';
  }
}

/**
 * Baton from TypeScript: the same engine and store as the CLI. Register workflows, start runs of
 * workflows or plans (idempotently by run id), await their results, or run a worker in this process.
 */
/** A run and the children its running sub-plan steps wait on (`Baton.tree`). */
export interface RunTree {
  runId: string;
  planName: string;
  status: RunStatus;
  /** The run that started this one, and its step. */
  parentRunId?: string;
  parentStepId?: string;
  /** Each with the parent's step that waits on it. */
  children: (RunTree & { stepId: string })[];
}

export class Baton {
  /** The named executor registry: plans reference these as `fn: <name>`; swap one with `register`. */
  readonly functions = new FunctionRegistry();
  readonly home: string;
  /** This process's workers, from `worker()` until they stop (their engine once the store is open). */
  private readonly workers = new Set<LocalWorker>();
  /** What each registered function name runs, so registering the same workflow again is a no-op. */
  private readonly registered = new Map<string, TypedWorkflow['steps'][number]>();
  /** The workflows registered, by name: the plans a step's `plan: { name }` finds first. */
  private readonly workflowsByName = new Map<string, TypedWorkflow>();
  private readonly opening: Promise<Store>;
  private opened: Store | null = null;
  /** The commands of this Baton, over its store once it is open (see runtime/commands). */
  private context: CommandContext | null = null;
  private openFailure: unknown = null;
  /** Concurrency, lease and the secrets to mask, from the options, then BATON_* variables. */
  private readonly settings: EngineSettings;
  /** What this process's workers measure of themselves, for `metrics()`. */
  private readonly meter = new EngineMeter();
  private exporter: Promise<BatonMetrics> | null = null;
  /** The Content-Type of what `metrics()` answers (Prometheus text format 0.0.4). */
  static readonly metricsContentType = METRICS_CONTENT_TYPE;

  private constructor(private readonly options: BatonOptions) {
    const url = typeof options.store === 'string' ? options.store : undefined;
    this.home = resolveHome(
      { ...(options.home === undefined ? {} : { home: options.home }) },
      process.env,
      process.cwd(),
      'here',
    );
    // An option given wins over its variable, which is then not read at all (as a flag on the CLI).
    this.settings = engineSettings({
      ...(url === undefined ? {} : { store: url }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.leaseMs === undefined ? {} : { lease: options.leaseMs }),
    });
    const given = options.store;
    let target: Promise<StoreTarget> | null = null;
    let chosen: StoreTarget | null = null;
    if (given !== undefined && typeof given !== 'string') this.opened = given;
    else {
      try {
        chosen = storeTarget(
          { home: this.home, ...(url === undefined ? {} : { store: url }) },
          process.env,
          API_ASKER,
        );
      } catch (error) {
        // A URL that is not PostgreSQL's: reported by ready() and every method, as a server that is down.
        target = Promise.reject(error);
      }
    }
    // SQLite opens at once, so `baton.store` is there without `await` and a home that cannot hold
    // a store (a file in the way, a damaged or newer database) is refused by Baton.open itself.
    if (chosen?.kind === 'sqlite') this.opened = openSqliteStoreNow(chosen.path);
    else if (chosen) target = Promise.resolve(chosen);
    if (this.opened) this.opening = Promise.resolve(this.opened);
    else {
      // A PostgreSQL URL: its driver, pg, loads and connects in the background.
      this.opening = target!.then(openStoreTarget).then((store) => {
        this.opened = store;
        return store;
      });
      // Seen by whoever awaits a method (or `ready()`), not as an unhandled rejection.
      this.opening.catch((error: unknown) => {
        this.openFailure = error;
      });
    }
  }

  /**
   * Opens Baton on its SQLite file in `home`, on a PostgreSQL URL, or on a store you built. With a
   * URL the connection (and the schema's migrations) happen in the background: methods wait for
   * it, and `await baton.ready()` surfaces a server that cannot be reached.
   */
  static open(options: BatonOptions = {}): Baton {
    return new Baton(options);
  }

  /** Resolves once the store is open; rejects (exit-2 style BatonError) if it cannot be. */
  async ready(): Promise<this> {
    await this.opening;
    return this;
  }

  /**
   * The store, once open (always at once for SQLite or a given store; after `ready()` for a URL),
   * behind the masking boundary: what it answers has this process's secrets, and each run's, masked.
   */
  get store(): Store {
    if (this.opened) return this.commandsOver(this.opened).store;
    if (this.openFailure !== null) throw this.openFailure;
    throw new BatonError(
      'INVALID_ARGUMENT',
      'the PostgreSQL store is still being opened: await baton.ready() before reading baton.store',
    );
  }

  /**
   * Makes the workflows' steps runnable by this process's workers, the running ones included:
   * they claim those steps from their next look, which happens at once.
   */
  register(...workflows: TypedWorkflow[]): this {
    let added = false;
    for (const workflow of workflows) {
      this.workflowsByName.set(workflow.name, workflow);
      for (const step of workflow.steps) {
        // A child workflow's steps run in its child runs, on this process's workers.
        if (step.policy.workflow) this.register(step.policy.workflow);
        const run = step.run;
        // A wait step runs nothing: there is no function to register.
        if (run === undefined) continue;
        const name = workflow.functionName(step.id);
        if (this.registered.get(name) === step) continue;
        this.registered.set(name, step);
        added = true;
        this.functions.register(name, (base) => run(stepContext(base, step.policy) as never));
      }
    }
    if (added) this.nudgeWorkers();
    return this;
  }

  private nudgeWorkers(): void {
    for (const worker of this.workers) worker.engine?.nudge();
  }

  /** The command context over the open store (made once). */
  private commandsOver(store: Store): CommandContext {
    this.context ??= commandContext({
      store,
      home: this.home,
      secretValues: this.settings.secrets,
      functions: () => this.functions.names(),
      nudge: () => this.nudgeWorkers(),
    });
    return this.context;
  }

  /** The command context, once the store is open. */
  private async commands(): Promise<CommandContext> {
    return this.commandsOver(await this.opening);
  }

  /**
   * The plan with its `plan: { name }` children found: a workflow this Baton registered, else a plan
   * its home knows (runtime/known-plans.ts).
   */
  private withKnownPlans(ctx: CommandContext, plan: Plan): Promise<Plan> {
    const registered: PlanLookup = async (name) => this.workflowsByName.get(name)?.toPlan() ?? null;
    return withKnownPlans(plan, firstOf(registered, homePlans(ctx.unmasked)));
  }

  /** How this Baton prepares a run: its home and the functions it registered. */
  private starting() {
    return { home: this.home, functions: this.functions.names() };
  }

  /**
   * Starts a run of `workflow`. Idempotent: with a `runId` that already exists for this workflow,
   * the existing run is returned (`created: false`) and nothing else happens. `shadow: true`: a
   * shadow run, where nothing external happens (steps with a `sideEffect` are not called, and
   * `ctx.effect` performs nothing); what would have happened is recorded as `step.would_execute`.
   * `priority`: the run's claim priority, 0 to 9, higher first (see StartPlanOptions).
   */
  async start<W extends TypedWorkflow>(
    workflow: W,
    inputs: W extends Workflow<infer I, Record<string, unknown>> ? I : never,
    options: { runId?: string; shadow?: boolean; priority?: number } = {},
  ): Promise<{ runId: string; created: boolean }> {
    this.register(workflow);
    return this.startPlan(workflow.toPlan(), inputs as Record<string, string>, options);
  }

  /**
   * Starts one run of `workflow` per item of `inputs`, in order of the list. The runs are stored
   * together: the SQLite store commits all of them in one transaction (as it does for any starts
   * made at once), so a thousand runs cost about one fsync. Each run is idempotent as with `start`
   * when its item gives a `runId`. Every item is checked before any run is stored: one that cannot
   * be started (a missing input, a bad run id) rejects the whole call, and none of them is stored.
   */
  async startMany<W extends TypedWorkflow>(
    workflow: W,
    inputs: readonly (W extends Workflow<infer I, Record<string, unknown>> ? I : never)[],
    options: { runIds?: readonly string[]; shadow?: boolean; priority?: number } = {},
  ): Promise<{ runId: string; created: boolean }[]> {
    if (options.runIds !== undefined && options.runIds.length !== inputs.length) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `startMany: ${options.runIds.length} run ids for ${inputs.length} inputs: give one id per input, or none`,
      );
    }
    this.register(workflow);
    const ctx = await this.commands();
    const plan = workflow.toPlan();
    const prepared = inputs.map((item, index) => {
      const runId = options.runIds?.[index];
      return prepareRun(this.starting(), {
        plan,
        inputs: item as Record<string, string>,
        ...(runId === undefined ? {} : { runId }),
        ...(options.shadow === undefined ? {} : { shadow: options.shadow }),
        ...(options.priority === undefined ? {} : { priority: options.priority }),
      });
    });
    const started = await startRuns(ctx, prepared);
    return started.map(({ run, created }) => ({ runId: run.id, created }));
  }

  /**
   * Starts a run of a plan: a YAML or JSON plan file (`loadPlanFile`), its text (`parsePlanText`)
   * or an object (`validatePlanObject`), with agent, model and `fn` steps. This process's workers
   * (or `result`) run it; an `fn: <name>` step calls what `baton.functions.register(name, fn)`
   * registered, and a plan naming a function not registered is refused before anything is stored.
   * Idempotent by `runId` like `start`; await the run with `baton.result(runId)`.
   */
  async startPlan(
    plan: Plan,
    inputs: Record<string, string> = {},
    options: StartPlanOptions = {},
  ): Promise<{ runId: string; created: boolean }> {
    const ctx = await this.commands();
    const prepared = prepareRun(this.starting(), {
      plan: await this.withKnownPlans(ctx, plan),
      inputs,
      ...(options.runId === undefined ? {} : { runId: options.runId }),
      ...(options.shadow === undefined ? {} : { shadow: options.shadow }),
      ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
      ...(options.planPath === undefined ? {} : { planPath: options.planPath }),
      ...(options.allowWorkspace === undefined ? {} : { allowWorkspace: options.allowWorkspace }),
      ...(options.labels === undefined ? {} : { labels: options.labels }),
      ...(options.priority === undefined ? {} : { priority: options.priority }),
    });
    const [started] = await startRuns(ctx, [prepared]);
    return { runId: started!.run.id, created: started!.created };
  }

  /**
   * A run and the child runs its sub-plan steps wait on now, recursively (`plan:` steps): each with
   * its status and, for a child, the run and step that started it. Throws for an unknown run.
   */
  async tree(runId: string): Promise<RunTree> {
    const ctx = await this.commands();
    const run = await ctx.store.getRunSteps(runId, { statuses: ['running'], everyStepUpTo: 0 });
    if (!run) throw runNotFound(runId);
    const children = await runChildren(ctx.store, run);
    return {
      runId: run.id,
      planName: run.planName,
      status: run.status,
      ...(run.plan.parent
        ? { parentRunId: run.plan.parent.runId, parentStepId: run.plan.parent.stepId }
        : {}),
      children: await Promise.all(
        children.map(async (child) => ({ stepId: child.stepId, ...(await this.tree(child.runId)) })),
      ),
    };
  }

  /**
   * Waits for a run to end and returns its steps' values. A worker of this process drives it; with
   * none running, this call drives the run itself. Throws {@link RunNotSucceededError} when the run
   * ends blocked, failed or cancelled.
   */
  async result<W extends TypedWorkflow>(workflow: W, runId: string): Promise<WorkflowResults<W>>;
  async result(runId: string): Promise<Record<string, unknown>>;
  async result(
    workflowOrRunId: TypedWorkflow | string,
    maybeRunId?: string,
  ): Promise<Record<string, unknown>> {
    const runId = typeof workflowOrRunId === 'string' ? workflowOrRunId : maybeRunId!;
    if (typeof workflowOrRunId !== 'string') this.register(workflowOrRunId);
    const ctx = await this.commands();
    const run = await ctx.store.getRunSteps(runId, NO_STEPS);
    if (!run) throw runNotFound(runId);
    if (run.status === 'running' && this.workers.size === 0) {
      await this.engine(ctx.unmasked).run({ kind: 'until-settled', runId });
    }
    for (;;) {
      // Its status only while another worker drives it: every 50 ms, whatever the run's size.
      const current = await ctx.store.getRunSteps(runId, NO_STEPS);
      if (!current) throw runNotFound(runId);
      if (current.status === 'succeeded') {
        const ids = current.plan.steps.map((step) => step.id);
        const results = await readStepResults(ctx, current, ids);
        return Object.fromEntries(Object.entries(results).map(([id, result]) => [id, resultValue(result)]));
      }
      if (current.status !== 'running' && current.status !== 'awaiting_approval') {
        throw new RunNotSucceededError(runId, current.status, current.blockedReason);
      }
      await new Promise((done) => setTimeout(done, 50));
    }
  }

  /**
   * The run's events as they are stored, in order, each once: from now, or after the event whose
   * `seq` is `after` (resume where a stream stopped). The same events `baton timeline` shows,
   * masked as every read. The iteration ends when the run ends (succeeded, failed or cancelled,
   * its cleanup done) and every event up to its end was given; a `break` releases everything. The
   * store is read again at the workers' poll interval (`pollMs`, 1 s by default), so any process's
   * events are seen, and on PostgreSQL at once when a commit notifies work made due. Throws a BatonError RUN_NOT_FOUND for an unknown run (when iterated).
   */
  watch(runId: string, options: WatchOptions = {}): AsyncGenerator<StoredEvent, void, undefined> {
    const after = checkAfter(options.after, 'watch: after');
    return this.watchEvents(runId, { ...options, ...(after === undefined ? {} : { after }) });
  }

  private async *watchEvents(
    runId: string,
    options: WatchOptions,
  ): AsyncGenerator<StoredEvent, void, undefined> {
    const ctx = await this.commands();
    const wake = storeWake(ctx.store, this.options.pollMs ?? ENGINE_DEFAULTS.pollMs);
    yield* runEventStream(ctx.store, runId, wake, options);
  }

  /** `start` then `result`: runs a workflow to its end in this process. */
  async run<W extends TypedWorkflow>(
    workflow: W,
    inputs: W extends Workflow<infer I, Record<string, unknown>> ? I : never,
    options: { runId?: string; shadow?: boolean } = {},
  ): Promise<WorkflowResults<W>> {
    const { runId } = await this.start(workflow, inputs, options);
    return this.result(workflow, runId);
  }

  /**
   * Runs a workflow (or a plan) on a schedule: `{ cron: '0 8 * * *', tz: 'Asia/Shanghai' }` or
   * `{ every: '15m' }`, with `inputs`, `overlap` and `catchUp`. Each slot starts one run,
   * `<name>-<slot in UTC>`, started by whichever worker or `baton check` ticks first. Idempotent by
   * name: calling it at every start of the program changes nothing unless an argument changed.
   */
  async schedule(
    name: string,
    workflowOrPlan: TypedWorkflow | Plan,
    options: ScheduleApiOptions,
  ): Promise<ScheduleView> {
    const isWorkflow = 'toPlan' in workflowOrPlan;
    if (isWorkflow) this.register(workflowOrPlan);
    const ctx = await this.commands();
    const plan = isWorkflow ? workflowOrPlan.toPlan() : await this.withKnownPlans(ctx, workflowOrPlan);
    const prepare = () =>
      prepareRun(this.starting(), {
        plan,
        inputs: options.inputs ?? {},
        ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
      });
    return ensureSchedule(ctx, {
      name,
      snapshot: () => scheduleSnapshot(prepare()),
      options,
      names: API_OPTION_NAMES,
    });
  }

  /** The schedules of the store: `list`, `pause`, `resume`, `remove`, `trigger` (by name). */
  readonly schedules: ScheduleControls = scheduleControls(() => this.commands());

  /**
   * Limits a flow key across every run and every worker on this store, from their next claim on:
   * `{ concurrency: 2, rate: '10/1m' }` (either or both). `null` removes the key's limit.
   */
  async setFlowLimit(key: string, limit: { concurrency?: number; rate?: string } | null): Promise<void> {
    const ctx = await this.commands();
    if (limit === null) {
      await removeFlowLimit(ctx, { key, missingOk: true });
      return;
    }
    await setFlowLimit(ctx, {
      key,
      ...(limit.concurrency === undefined ? {} : { concurrency: limit.concurrency }),
      ...(limit.rate === undefined ? {} : { rate: limit.rate }),
      names: { concurrency: `flow ${key}: concurrency`, rate: `flow ${key}: rate` },
    });
  }

  /**
   * Approves a step waiting for approval (`wait: { for: approval }`); its result is
   * `{ approved: true, by, comment, at }` and the steps after it may start. `by` defaults to the OS
   * user. Throws a BatonError for an unknown run or a step that is not waiting.
   */
  async approve(runId: string, stepId: string, options: DecisionOptions = {}): Promise<RunSummary> {
    return decideStep(await this.commands(), { runId, stepId, decision: 'approve', ...options });
  }

  /** Rejects a step waiting for approval: the steps after it are skipped (see `approve`). */
  async reject(runId: string, stepId: string, options: DecisionOptions = {}): Promise<RunSummary> {
    return decideStep(await this.commands(), { runId, stepId, decision: 'reject', ...options });
  }

  /**
   * Retries every blocked step the filter chooses (`baton retry --blocked`): `{ failureClass:
   * 'transient', sinceMs: 7_200_000, planName, labels }`, all optional (none: every blocked step).
   * Returns each run touched (`retried`, or `refused` with why when it moved on meanwhile);
   * `{ dryRun: true }` only lists them. This process's workers drive the runs again.
   */
  async retryBlocked(filter: RunsFilter = {}, options: { dryRun?: boolean } = {}): Promise<BulkAnswer> {
    return retryBlocked(await this.commands(), { filter, ...options });
  }

  /**
   * Cancels a run (`baton cancel <run>`): no step of it starts again, its running steps are
   * stopped. Its cleanup runs first (`compensate: true`: the `compensate:` of every completed step,
   * in reverse order; `finally:` steps either way), then it is `cancelled`; the summary says
   * `running` meanwhile. Throws a BatonError for an unknown run or one that already ended.
   */
  async cancel(runId: string, options: { compensate?: boolean } = {}): Promise<RunSummary> {
    return applyRunCommand(await this.commands(), { command: 'cancel', runId, ...options });
  }

  /**
   * Cancels every unfinished run the filter chooses (`baton cancel` with filters; at least one
   * filter: `blocked`, `failureClass`, `sinceMs`, `planName`, `labels`, or `runIds`), as `retryBlocked`;
   * `compensate` as for `cancel`.
   */
  async cancelRuns(
    filter: RunsFilter,
    options: { dryRun?: boolean; compensate?: boolean } = {},
  ): Promise<BulkAnswer> {
    return cancelRuns(await this.commands(), { filter, ...options });
  }

  /**
   * Runs `from` again, and every step that depends on it, with fresh tries (`only`: it alone; the
   * steps after it keep results marked stale); every other step keeps its result. Effects recorded
   * with `ctx.effect` are not repeated unless `redoEffects`, which an `unsafe` step needs. Works on a
   * run that succeeded, is blocked or running; throws a BatonError for an unknown run or step, a
   * cancelled run (fork it) and a step that has not run yet. This process's workers drive it.
   */
  async rerun(runId: string, options: RerunOptions): Promise<RerunAnswer> {
    return rerunRun(await this.commands(), { runId, ...options });
  }

  /**
   * Puts the run's workspace back as it was before `stepId` (`checkpoint: workspace`), recorded as
   * a `run.files_restored` event; the steps keep their state. Throws a BatonError while the run is
   * running or awaiting approval, or when no checkpoint was recorded before the step.
   */
  async rollback(runId: string, stepId: string, options: { by?: string } = {}): Promise<FilesRestored> {
    return rollbackRun(await this.commands(), { runId, stepId, ...options });
  }

  /**
   * What each checkpointed step (`checkpoint: workspace`) added, changed and removed in the run's
   * workspace, with a unified diff of its text files (masked); `stepId`: that step only.
   */
  async fileChanges(
    runId: string,
    options: { stepId?: string; maxBytes?: number } = {},
  ): Promise<{ runId: string; steps: StepFileChanges[] }> {
    return fileChanges(await this.commands(), { runId, ...options });
  }

  /**
   * A new run from an old one: it keeps the results of the steps that do not depend on `from` and
   * runs the rest, with the old plan or `plan` (whose kept steps must be unchanged) and the old
   * inputs with `inputs` over them. Its workspace is a copy of the old one under
   * `<home>/workspaces/<runId>` unless `workspace` names one. Await it with `baton.result(runId)`.
   */
  async fork(
    runId: string,
    options: ForkOptions,
  ): Promise<{ runId: string; kept: string[]; workspace: string }> {
    const { runId: newRunId, ...rest } = options;
    const forked = await forkRun(await this.commands(), {
      runId,
      ...rest,
      ...(newRunId ? { newRunId } : {}),
    });
    return { runId: forked.summary.id, kept: forked.kept, workspace: forked.workspace };
  }

  /**
   * Sends an event (`wait: { for: event }`): `data` (JSON, checked against the step's schema) is the
   * result of every step waiting for it, in `runId` only or in every run; sent to a run whose step
   * does not wait yet, it is kept for it (the first one wins). Throws a BatonError when nothing
   * would take it, or the payload fails the schema or is over the payload limit, 1 MiB as JSON
   * (`INVALID_ARGUMENT`; nothing is stored then).
   */
  async send(
    event: string,
    data: unknown = null,
    options: { runId?: string } = {},
  ): Promise<EventDelivery[]> {
    return sendEvent(await this.commands(), {
      event,
      data: JSON.stringify(data ?? null) ?? 'null',
      where: 'data',
      ...(options.runId === undefined ? {} : { runId: options.runId }),
    });
  }

  /**
   * A worker in this process: runs due steps of every run until `stop()`, including steps of
   * workflows registered after it started. `done` rejects if the store cannot be opened.
   */
  worker(): { stop(graceMs?: number): Promise<EngineReport>; done: Promise<EngineReport> } {
    const worker: LocalWorker = { engine: null, stopAfter: null };
    this.workers.add(worker);
    const done = this.opening
      .then((store) => {
        if (worker.stopAfter !== null) return emptyEngineReport();
        worker.engine = this.engine(store);
        return worker.engine.run({ kind: 'forever' });
      })
      .finally(() => this.workers.delete(worker));
    return {
      done,
      stop: async (graceMs = 30_000) => {
        if (worker.engine) worker.engine.stop(graceMs);
        else worker.stopAfter = graceMs;
        return done;
      },
    };
  }

  /**
   * Prometheus metrics in the text format, for a service to answer its scraper with (Content-Type
   * `Baton.metricsContentType`): runs and steps by status, due steps and the oldest one's age,
   * waiting steps, expired and reclaimed leases, attempts by failure class, tokens and cost by
   * model, and hook calls, read from the store (every worker's); and this process's workers'
   * claim-cycle latency. Counters start at the first call. docs/operating.md lists every metric.
   */
  async metrics(): Promise<string> {
    this.exporter ??= Promise.all([this.opening, import('../runtime/metrics.js')]).then(
      ([store, { BatonMetrics }]) => new BatonMetrics(store, { meter: this.meter }),
    );
    return (await this.exporter).text();
  }

  async close(): Promise<void> {
    for (const worker of this.workers) {
      if (worker.engine) worker.engine.stop(0);
      else worker.stopAfter = 0;
    }
    const store = await this.opening.catch(() => null);
    await store?.close();
  }

  private engine(store: Store): Engine {
    return createEngine({
      store,
      home: this.home,
      settings: this.settings,
      functions: this.functions,
      meter: this.meter,
      ...(this.options.agent === undefined ? {} : { agent: this.options.agent }),
      ...(this.options.model === undefined ? {} : { model: this.options.model }),
      ...(this.options.pollMs === undefined ? {} : { pollMs: this.options.pollMs }),
    });
  }
}

/** `baton.watch(runId, options)`: see Baton.watch. */
export interface WatchOptions {
  /** The `seq` of the last event already seen: the stream gives the events after it. Absent: from now. */
  after?: number;
  /** Ends the iteration when it aborts, as a `break` would. */
  signal?: AbortSignal;
}

/** Who decides and why, for `approve` and `reject`; `by` defaults to the OS user. */
/** `baton.rerun(runId, options)`: see Baton.rerun. */
export interface RerunOptions {
  /** The step to run again. */
  from: string;
  /** Run `from` alone; the steps after it keep their results (stale). */
  only?: boolean;
  /** Forget the effects the rerun steps recorded (`ctx.effect`), so they happen again. */
  redoEffects?: boolean;
  /** Steps after `from` that keep their results and do not run: what they did (a mail sent) is not done again. */
  keep?: readonly string[];
  /** Keep every succeeded `idempotent` or `unsafe` step after `from`. */
  keepEffects?: boolean;
  /** Who asks, recorded on the timeline. Default: the OS user. */
  by?: string;
  /** Leave the workspace as it is (default: put back as before `from`, when it was checkpointed). */
  keepFiles?: boolean;
}

/** `baton.fork(runId, options)`: see Baton.fork. */
export interface ForkOptions {
  /** The first step the new run runs again: it and every step that depends on it. */
  from: string;
  /** An edited plan; default the old run's. */
  plan?: Plan;
  /** The file `plan` came from, for messages. */
  planPath?: string;
  /** Inputs that change; the others are the old run's. */
  inputs?: Record<string, string>;
  /** The new run's id. Default `<old id>-fork-<random>`. */
  runId?: string;
  /** The new run's workspace, used as it is. Default: a copy of the old one under `<home>/workspaces/`. */
  workspace?: string;
  allowWorkspace?: string;
  /** Copy the old workspace as it ended (default: as before `from`, when it was checkpointed). */
  keepFiles?: boolean;
}

interface DecisionOptions {
  comment?: string;
  by?: string;
}

/** How `baton.startPlan` (and `baton.start`, which goes through it) starts a run. */
export interface StartPlanOptions {
  /**
   * The run's id (`[A-Za-z0-9_-]{1,64}`). A run with this id that exists and is the same run (plan,
   * inputs, workspace) is returned as it is (`created: false`) and nothing else happens; one that
   * differs is refused. Default a new ULID.
   */
  runId?: string;
  /**
   * A shadow run: steps with a `sideEffect` are not executed (their rendered inputs are recorded
   * as `step.would_execute`), and `ctx.effect` performs nothing.
   */
  shadow?: boolean;
  /**
   * The run's workspace, where agents work; relative to the current directory. Default: the plan's
   * own `workspace` (relative to the folder of `planPath`, else the current directory), else the
   * folder of `planPath`, else the current directory (as `baton run` decides it).
   */
  workspace?: string;
  /**
   * The plan file the plan came from (`loadPlanFile(path).absPath`): a relative `workspace` of the
   * plan is resolved from its folder, and messages name it.
   */
  planPath?: string;
  /**
   * The root, your home folder and the folders above the Baton home are refused as the workspace
   * unless it is this folder (the CLI's `--allow-workspace`).
   */
  allowWorkspace?: string;
  /**
   * What the run is for, e.g. `{ team: 'growth' }` (`baton run -l team=growth`): find and act on
   * runs by it (`baton status --label`, `retryBlocked({ labels })`). Never metric labels.
   */
  labels?: Record<string, string>;
  /**
   * The run's claim priority, 0 to 9, higher first (`baton run --priority`): a worker claims due
   * steps of higher priority first, aged by BATON_PRIORITY_AGING. Default: the plan's, else 0; a
   * step's own `priority` wins.
   */
  priority?: number;
}
