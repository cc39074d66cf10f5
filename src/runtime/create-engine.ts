import { Engine, type EngineOptions } from '../engine/engine.js';
import type { EngineMeter } from '../engine/engine-meter.js';
import type { AgentCliExecutorOptions } from '../executors/agent-cli-executor.js';
import { FunctionExecutor, FunctionRegistry } from '../executors/function-executor.js';
import { graderOf } from '../executors/grader.js';
import type { ModelExecutor, ModelExecutorOptions } from '../executors/model-executor.js';
import type { AttemptResult, ExecutionContext, StepExecutor } from '../executors/step-executor.js';
import type { Store } from '../store/store.js';
import type { CommandContext } from './commands/context.js';
import { ownerId } from './owner-id.js';
import type { EngineSettings } from './settings.js';

/**
 * Loads an executor (the agent CLI's command policy, the model SDKs) only when a step of its kind
 * actually runs: `check` with nothing due starts faster, and a program of `fn` steps never loads them.
 */
class LazyExecutor implements StepExecutor {
  private executor: Promise<StepExecutor> | null = null;

  constructor(private readonly load: () => Promise<StepExecutor>) {}

  async execute(context: ExecutionContext): Promise<AttemptResult> {
    this.executor ??= this.load();
    return (await this.executor).execute(context);
  }
}

/** What a front door hands over to build an engine; everything else is the runtime's decision. */
interface EngineParts {
  store: Store;
  home: string;
  /** From `engineSettings` (flags or options, then BATON_* variables). */
  settings: EngineSettings;
  /** The functions `fn:` steps call (the CLI has none). */
  functions?: FunctionRegistry;
  agent?: AgentCliExecutorOptions;
  model?: ModelExecutorOptions;
  pollMs?: number;
  /** Claim-cycle latency for `/metrics` (`Baton.metrics()`, `baton worker --metrics`). */
  meter?: EngineMeter;
  /** Progress and failure observers of the front door (the CLI prints them). */
  observers?: Pick<EngineOptions, 'onClaim' | 'onSettle' | 'onError' | 'onHookFailure'>;
}

/**
 * The one way an engine is built, for `baton run`, `check` and `worker` and for `Baton`: a lease
 * owner of its own, the three executors (agent and model loaded on first use), the settings.
 */
export function createEngine(parts: EngineParts): Engine {
  const { agent = {}, model = {}, settings } = parts;
  // One model executor for model steps and for the graders of agent steps' `verify.rubric`.
  let modelExecutor: Promise<ModelExecutor> | null = null;
  const loadModel = () => {
    modelExecutor ??= import('../executors/model-executor.js').then((m) => new m.ModelExecutor(model));
    return modelExecutor;
  };
  const grader = graderOf(loadModel);
  return new Engine({
    store: parts.store,
    home: parts.home,
    owner: ownerId(),
    executors: {
      agent: new LazyExecutor(() =>
        import('../executors/agent-cli-executor.js').then(
          (m) => new m.AgentCliExecutor({ grader, ...agent }),
        ),
      ),
      fn: new FunctionExecutor(parts.functions ?? new FunctionRegistry()),
      model: new LazyExecutor(loadModel),
    },
    ...(settings.concurrency === undefined ? {} : { concurrency: settings.concurrency }),
    ...(settings.leaseMs === undefined ? {} : { leaseMs: settings.leaseMs }),
    ...(settings.secrets === undefined ? {} : { secrets: settings.secrets }),
    ...(parts.pollMs === undefined ? {} : { pollMs: parts.pollMs }),
    ...(parts.meter === undefined ? {} : { meter: parts.meter }),
    ...parts.observers,
  });
}

/**
 * The engine of a front door that holds a command context (`baton run`, `check`, `worker`): it
 * drives the runs of the context's store as stored (the engine records; it answers nobody, and
 * what a door shows of its work it reads again through `ctx.store`), with the context's home.
 */
export function engineFor(ctx: CommandContext, parts: Omit<EngineParts, 'store' | 'home'>): Engine {
  return createEngine({ ...parts, store: ctx.unmasked, home: ctx.home });
}
