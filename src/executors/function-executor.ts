import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { SUMMARY_MAX_CHARS } from '../core/agent-prompt.js';
import { BatonError } from '../core/errors.js';
import type { BatonEvent } from '../core/events.js';
import type { SideEffect } from '../core/plan/types.js';
import type { StepResult } from '../core/run-state.js';
import type { EffectLedger } from '../model-call/tools.js';
import {
  type AttemptResult,
  attemptLogPath,
  type ExecutionContext,
  type StepExecutor,
} from './step-executor.js';

/** What a registered TypeScript function receives. */
export interface FunctionStepContext {
  runId: string;
  stepId: string;
  attempt: number;
  /** The step's `args`: this attempt's own copy. */
  args: unknown;
  /** An item of a fan-out (`forEach`): its element of the list (own copy) and its index; absent otherwise. */
  item?: unknown;
  itemIndex?: number;
  inputs: Record<string, string>;
  workspace: string;
  /** Results of the steps this one depends on. */
  results: Record<string, StepResult>;
  /**
   * Aborted at the step's timeout (`timeoutMs`; reason: a `TimeoutError`), when the run is
   * cancelled, the lease is lost or the worker stops. A function that does not stop is abandoned
   * at its timeout: its late result is discarded and it can begin no effect. Once the function
   * has returned, nothing aborts it.
   */
  signal: AbortSignal;
  /**
   * The run is a shadow run: nothing external may happen (a workflow's `ctx.effect` records a
   * `step.would_execute` event instead). A step with a `sideEffect` is not even called.
   */
  shadow: boolean;
  /** The step's declared `shadowResult`: what stands in for its effects in a shadow run. */
  shadowResult?: unknown;
  /** The step's declared side effect. */
  sideEffect: SideEffect;
  /** This step's records in the store's effect table (exactly-once effects). */
  effects: EffectLedger;
  /** Appends events to the run's log while the step runs. */
  recordEvents(events: readonly BatonEvent[]): Promise<void>;
  /** Appends a line to this attempt's log (`baton logs <run> <step>`), created on first use. */
  log(message: string): void;
  /**
   * Says the function is alive: a step with `heartbeatTimeoutMs` is stopped (its signal aborted,
   * the attempt retried as transient) after that long without a call. Cheap: call it in a loop.
   * The first call and at most one every 5 s record a `step.heartbeat` event (with `note`) in the
   * run's timeline.
   */
  heartbeat(note?: string): void;
}

/** The least time between two `step.heartbeat` events of one attempt. */
const HEARTBEAT_EVENT_EVERY_MS = 5_000;

/** A function step returns a string (its summary) or any JSON value (summary = its JSON). */
export type StepFunction = (context: FunctionStepContext) => unknown | Promise<unknown>;

/** The classes a step function may choose for its failure (a subset of FAILURE_CLASSES). */
export const STEP_FAILURE_CLASSES = [
  'transient',
  'agent_failed',
  'invalid',
  'fatal',
  'unknown_outcome',
] as const;

export type StepFailureClass = (typeof STEP_FAILURE_CLASSES)[number];

/**
 * Thrown by a step function to say how its failure should be treated; any other throw is
 * `agent_failed`. The message comes first: `new StepFailure('quota used up', 'fatal')`. A class
 * outside STEP_FAILURE_CLASSES (the arguments swapped, a typo from plain JavaScript) throws a
 * TypeError naming the classes, instead of putting an unknown class in events and fingerprints.
 */
export class StepFailure extends Error {
  readonly failureClass: StepFailureClass;

  constructor(message: string, failureClass: StepFailureClass = 'agent_failed') {
    if (!(STEP_FAILURE_CLASSES as readonly unknown[]).includes(failureClass)) {
      const given = JSON.stringify(String(failureClass).slice(0, 100));
      const swapped = (STEP_FAILURE_CLASSES as readonly unknown[]).includes(message)
        ? ` (the arguments look swapped: the message comes first, new StepFailure(${given}, ${JSON.stringify(message)}))`
        : '';
      throw new TypeError(
        `new StepFailure(message, failureClass): failureClass ${given} is not one of ${STEP_FAILURE_CLASSES.join(', ')}${swapped}`,
      );
    }
    super(message);
    this.name = 'StepFailure';
    this.failureClass = failureClass;
  }
}

/** Named TypeScript functions that plans reference with `fn: <name>`. */
export class FunctionRegistry {
  private readonly functions = new Map<string, StepFunction>();
  private sortedNames: readonly string[] | null = null;

  register(name: string, fn: StepFunction): this {
    if (!/^[A-Za-z0-9._-]{1,100}$/.test(name)) {
      throw new BatonError('INVALID_ARGUMENT', `function name "${name}" must match [A-Za-z0-9._-]{1,100}`);
    }
    this.functions.set(name, fn);
    this.sortedNames = null;
    return this;
  }

  get(name: string): StepFunction | undefined {
    return this.functions.get(name);
  }

  /** The registered names, sorted; the same array until the next register (every cycle asks). */
  names(): readonly string[] {
    this.sortedNames ??= Object.freeze([...this.functions.keys()].sort());
    return this.sortedNames;
  }
}

export class FunctionExecutor implements StepExecutor {
  constructor(private readonly registry: FunctionRegistry) {}

  functionNames(): readonly string[] {
    return this.registry.names();
  }

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    const { claim } = context;
    const name = claim.step.fn ?? '';
    const fn = this.registry.get(name);
    if (!fn) {
      const known = this.registry.names();
      const message = `no function registered as "${name}" (registered: ${known.length > 0 ? known.join(', ') : 'none'})`;
      return { outcome: { ok: false, failureClass: 'invalid', message }, logPath: null };
    }
    // The log's path is built on first use: most functions never log.
    let logFile: string | null = null;
    const log = (message: string) => {
      const file = logFile ?? join(context.home, attemptLogPath(claim));
      if (logFile === null) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      logFile = file;
      appendFileSync(file, `${new Date().toISOString()} ${message}\n`, { mode: 0o600 });
    };
    const logPath = () => (logFile === null ? null : attemptLogPath(claim));
    let lastBeatEvent = Number.NEGATIVE_INFINITY;
    const heartbeat = (note?: string) => {
      context.heartbeat();
      const at = Date.now();
      if (at - lastBeatEvent < HEARTBEAT_EVENT_EVERY_MS) return;
      lastBeatEvent = at;
      const event = { type: 'step.heartbeat' as const, stepId: claim.stepId, attempt: claim.attempt };
      void context
        .recordEvents([{ ...event, note: typeof note === 'string' ? note.slice(0, 300) : '' }])
        .catch(() => undefined);
    };
    try {
      const value = await fn({
        runId: claim.runId,
        stepId: claim.stepId,
        attempt: claim.attempt,
        // Copies: the plan's step is shared by every run of the plan (and every attempt), and a
        // function may change what it is given.
        args: copyOf(claim.step.args),
        ...(claim.step.forEachItem === undefined
          ? {}
          : { item: copyOf(claim.step.forEachItem.value), itemIndex: claim.step.forEachItem.index }),
        inputs: claim.inputs,
        workspace: claim.workspace,
        results: context.results,
        signal: context.signal,
        shadow: claim.shadow === true,
        ...(claim.step.shadowResult === undefined ? {} : { shadowResult: copyOf(claim.step.shadowResult) }),
        sideEffect: claim.step.sideEffect ?? 'none',
        effects: context.effects,
        recordEvents: context.recordEvents,
        log,
        heartbeat,
      });
      const summary = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
      return {
        outcome: {
          ok: true,
          summary: summary.slice(0, SUMMARY_MAX_CHARS),
          outputs: [],
          ...(value === undefined ? {} : { value }),
        },
        logPath: logPath(),
      };
    } catch (error) {
      const failureClass = error instanceof StepFailure ? error.failureClass : 'agent_failed';
      const message = error instanceof Error ? error.message : String(error);
      return {
        outcome: { ok: false, failureClass, message: `${name} threw: ${message}` },
        logPath: logPath(),
      };
    }
  }
}

/** A JSON value of the plan as a function's own (undefined stays undefined). */
function copyOf<T>(value: T): T {
  return value === undefined || value === null || typeof value !== 'object' ? value : structuredClone(value);
}
