import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { BatonError, runNotFound } from '../core/errors.js';
import { parseFlowRate } from '../core/flow.js';
import type { RunStatus } from '../core/run-state.js';
import { Engine, type EngineReport } from '../engine/engine.js';
import { resolveResults } from '../engine/result-artifacts.js';
import { startRun } from '../engine/start-run.js';
import { AgentCliExecutor, type AgentCliExecutorOptions } from '../executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../executors/function-executor.js';
import { ModelExecutor, type ModelExecutorOptions } from '../executors/model-executor.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import type { Workflow, WorkflowResults } from './define-workflow.js';
import { resultValue, stepContext } from './step-context.js';

export interface BatonOptions {
  /** Baton's folder (the SQLite file and attempt logs). Default `.baton`. */
  home?: string;
  /** Another store (Postgres, say); default the SQLite file in `home`. */
  store?: Store;
  /** Steps running at once in this process. Default 8. */
  concurrency?: number;
  /** Lease of a running step in ms. Default 30,000. */
  leaseMs?: number;
  /** Longest idle sleep of a worker in ms. Default 1,000. */
  pollMs?: number;
  agent?: AgentCliExecutorOptions;
  model?: ModelExecutorOptions;
}

type TypedWorkflow = Workflow<Record<string, string>, Record<string, unknown>>;

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
 * Baton from TypeScript: the same engine and store as the CLI. Register workflows, start runs
 * (idempotently by run id), await their results, or run a worker in this process.
 */
export class Baton {
  /** The named executor registry: plans reference these as `fn: <name>`; swap one with `register`. */
  readonly functions = new FunctionRegistry();
  readonly store: Store;
  readonly home: string;
  private readonly workers = new Set<Engine>();

  private constructor(private readonly options: BatonOptions) {
    this.home = resolve(options.home ?? '.baton');
    this.store = options.store ?? SqliteStore.open(join(this.home, 'baton.db'));
  }

  static open(options: BatonOptions = {}): Baton {
    return new Baton(options);
  }

  /** Makes the workflows' steps runnable by this process's workers. */
  register(...workflows: TypedWorkflow[]): this {
    for (const workflow of workflows) {
      for (const step of workflow.steps) {
        this.functions.register(workflow.functionName(step.id), (base) =>
          step.run(stepContext(base, step.policy) as never),
        );
      }
    }
    return this;
  }

  /**
   * Starts a run of `workflow`. Idempotent: with a `runId` that already exists for this workflow,
   * the existing run is returned (`created: false`) and nothing else happens. `shadow: true`: a
   * shadow run, where nothing external happens (steps with a `sideEffect` are not called, and
   * `ctx.effect` performs nothing); what would have happened is recorded as `step.would_execute`.
   */
  async start<W extends TypedWorkflow>(
    workflow: W,
    inputs: W extends Workflow<infer I, Record<string, unknown>> ? I : never,
    options: { runId?: string; shadow?: boolean } = {},
  ): Promise<{ runId: string; created: boolean }> {
    this.register(workflow);
    if (options.runId !== undefined) {
      const existing = await this.existingRun(workflow, options.runId);
      if (existing) return existing;
    }
    const plan = options.shadow ? { ...workflow.toPlan(), shadow: true } : workflow.toPlan();
    try {
      const run = await startRun(this.store, {
        plan,
        inputs: inputs as Record<string, string>,
        workspace: this.home,
        trust: trustedPrograms(this.home, process.env),
        ...(options.runId === undefined ? {} : { runId: options.runId }),
      });
      return { runId: run.id, created: true };
    } catch (error) {
      // Another process started the same run id between the check and the insert.
      const existing = options.runId === undefined ? null : await this.existingRun(workflow, options.runId);
      if (existing) return existing;
      throw error;
    }
  }

  private async existingRun(
    workflow: TypedWorkflow,
    runId: string,
  ): Promise<{ runId: string; created: false } | null> {
    const run = await this.store.getRun(runId);
    if (!run) return null;
    if (run.planName !== workflow.name) {
      throw new BatonError(
        'INVALID_ARGUMENT',
        `run id "${runId}" is already a run of ${run.planName}, not of ${workflow.name}`,
      );
    }
    return { runId, created: false };
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
    const run = await this.store.getRun(runId);
    if (!run) throw runNotFound(runId);
    if (run.status === 'running' && this.workers.size === 0) {
      await this.engine().run({ kind: 'until-settled', runId });
    }
    for (;;) {
      const current = await this.store.getRun(runId);
      if (!current) throw runNotFound(runId);
      if (current.status === 'succeeded') {
        const results = await resolveResults(
          await this.store.getStepResults(
            runId,
            current.steps.map((step) => step.stepId),
          ),
          this.home,
        );
        return Object.fromEntries(Object.entries(results).map(([id, result]) => [id, resultValue(result)]));
      }
      if (current.status !== 'running' && current.status !== 'awaiting_approval') {
        throw new RunNotSucceededError(runId, current.status, current.blockedReason);
      }
      await new Promise((done) => setTimeout(done, 50));
    }
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
   * Limits a flow key across every run and every worker on this store, from their next claim on:
   * `{ concurrency: 2, rate: '10/1m' }` (either or both). `null` removes the key's limit.
   */
  async setFlowLimit(key: string, limit: { concurrency?: number; rate?: string } | null): Promise<void> {
    if (limit === null) {
      await this.store.removeFlowLimit(key);
      return;
    }
    await this.store.setFlowLimit(
      {
        key,
        concurrency: limit.concurrency ?? null,
        rate: limit.rate === undefined ? null : parseFlowRate(limit.rate, `flow ${key}: rate`),
      },
      Date.now(),
    );
  }

  /** A worker in this process: runs due steps of every run until `stop()`. */
  worker(): { stop(graceMs?: number): Promise<EngineReport>; done: Promise<EngineReport> } {
    const engine = this.engine();
    this.workers.add(engine);
    const done = engine.run({ kind: 'forever' }).finally(() => this.workers.delete(engine));
    return {
      done,
      stop: async (graceMs = 30_000) => {
        engine.stop(graceMs);
        return done;
      },
    };
  }

  async close(): Promise<void> {
    for (const engine of this.workers) engine.stop(0);
    await this.store.close();
  }

  private engine(): Engine {
    return new Engine({
      store: this.store,
      home: this.home,
      owner: `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`,
      executors: {
        agent: new AgentCliExecutor(this.options.agent ?? {}),
        fn: new FunctionExecutor(this.functions),
        model: new ModelExecutor(this.options.model ?? {}),
      },
      ...(this.options.concurrency === undefined ? {} : { concurrency: this.options.concurrency }),
      ...(this.options.leaseMs === undefined ? {} : { leaseMs: this.options.leaseMs }),
      ...(this.options.pollMs === undefined ? {} : { pollMs: this.options.pollMs }),
    });
  }
}
