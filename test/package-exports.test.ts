/**
 * The package's public surface, listed: what `import … from 'baton-steps'`, `'baton-steps/store'`
 * and `'baton-steps/testing'` give (the built entries package.json `exports` names). A change to a
 * list is a deliberate change to the public API: update the list here, and docs/typescript-api.md. The types
 * are held too: every type the `Store` contract names can be imported by whoever implements one,
 * and a plan, an event or an outcome can be named in full from the root.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/cli.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  exports: Record<string, { default: string; types: string }>;
};

function entryOf(subpath: string): { default: string; types: string } {
  const entry = manifest.exports[subpath];
  if (!entry) throw new Error(`package.json exports has no ${subpath}`);
  return entry;
}

async function exportsOf(subpath: string): Promise<string[]> {
  const module = (await import(pathToFileURL(join(repoRoot, entryOf(subpath).default)).href)) as object;
  return Object.keys(module).sort();
}

/** The built `.d.ts` of the entries, compiled together as a consumer's program would. */
function typesProgram(subpaths: string[]): {
  checker: ts.TypeChecker;
  exportsOf: (subpath: string) => Map<string, ts.Symbol>;
} {
  const files = subpaths.map((subpath) => join(repoRoot, entryOf(subpath).types));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  return {
    checker,
    exportsOf(subpath) {
      const file = program.getSourceFile(join(repoRoot, entryOf(subpath).types));
      const module = file && checker.getSymbolAtLocation(file);
      if (!module) throw new Error(`no module for ${subpath}`);
      return new Map(checker.getExportsOfModule(module).map((symbol) => [symbol.name, symbol]));
    },
  };
}

/**
 * The names of the package's interfaces and type aliases that `start` names, directly or through
 * one another (members, parameters, results, `extends`): what code handling a value of that type
 * may have to write down. Type parameters and the standard library are not counted.
 */
function typesNamedBy(checker: ts.TypeChecker, start: ts.Symbol): Set<string> {
  const seen = new Set<ts.Symbol>();
  const named = new Set<string>();
  const visitSymbol = (found: ts.Symbol | undefined): void => {
    if (!found) return;
    const symbol = found.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(found) : found;
    if (seen.has(symbol)) return;
    seen.add(symbol);
    const declarations = symbol.declarations ?? [];
    if (!declarations.some((d) => d.getSourceFile().fileName.startsWith(join(repoRoot, 'dist')))) return;
    if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) named.add(symbol.name);
    for (const declaration of declarations) visitNode(declaration);
  };
  const visitNode = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node)) visitSymbol(checker.getSymbolAtLocation(node.typeName));
    else if (ts.isExpressionWithTypeArguments(node))
      visitSymbol(checker.getSymbolAtLocation(node.expression));
    else if (ts.isImportTypeNode(node) && node.qualifier)
      visitSymbol(checker.getSymbolAtLocation(node.qualifier));
    ts.forEachChild(node, visitNode);
  };
  visitSymbol(start);
  return named;
}

describe('the public surface', () => {
  it('the package root: Baton, workflows, plan loading, errors and the model-call harness; no store', async () => {
    expect(await exportsOf('.')).toEqual([
      'Baton',
      'BatonError',
      'DEFAULT_PRICES',
      'FAILURE_CLASSES',
      'ModelCallError',
      'RecoveryBudget',
      'RunNotSucceededError',
      'StepFailure',
      'ToolError',
      'Workflow',
      'callModelWithRecovery',
      'classifyModelError',
      'createAnthropicProvider',
      'createOpenAiProvider',
      'defaultCompaction',
      'defineWorkflow',
      'isBatonError',
      'loadPlanFile',
      'parsePlanText',
      'resolveCapabilities',
      'runAgent',
      'systemClock',
      'validatePlanObject',
    ]);
  });

  it('baton-steps/store: the two stores, opened by `open`; the storage contract is its types', async () => {
    expect(await exportsOf('./store')).toEqual(['PostgresStore', 'SqliteStore']);
    const types = typesProgram(['./store']).exportsOf('./store');
    expect([...types.keys()].sort()).toEqual([
      'AppendGuard',
      'AttemptKey',
      'AttemptRecord',
      'BlockedStep',
      'BlockedStepFilter',
      'BulkOutcome',
      'BulkRetryTarget',
      'CancelOptions',
      'ClaimStore',
      'ClaimedStep',
      'Completion',
      'CycleRequest',
      'CycleResult',
      'EffectKey',
      'EffectRecord',
      'EffectStore',
      'EndedAttempts',
      'EndedUsage',
      'EventStore',
      'FinishedRunsBatch',
      'FlowLimit',
      'FlowLimitStatus',
      'FlowLimitStore',
      'FlowRate',
      'HookDelivery',
      'HookDeliveryKey',
      'HookStore',
      'KeptStep',
      'LiveLease',
      'MetricsQuery',
      'MetricsSnapshot',
      'MetricsStore',
      'NewRun',
      'NewSchedule',
      'NewTrigger',
      'OpenPostgresOptions',
      'OpenSqliteOptions',
      'OverlapPolicy',
      'OverviewStore',
      'PlanSecretEnv',
      'PostgresStore',
      'RandomSource',
      'ReclaimedAttempt',
      'RerunRequest',
      'RerunSelection',
      'RerunSummary',
      'RetentionStore',
      'RunCommands',
      'RunDetail',
      'RunFilter',
      'RunListQuery',
      'RunPage',
      'RunPageQuery',
      'RunRef',
      'RunSelectQuery',
      'RunStep',
      'RunStore',
      'RunSummary',
      'RunWithSteps',
      'ScheduleDetail',
      'ScheduleRules',
      'ScheduleSlot',
      'ScheduleStore',
      'ScheduleSummary',
      'ScheduleTiming',
      'SlotOutcome',
      'SlotRecord',
      'SqliteStore',
      'StepSelection',
      'StepState',
      'Store',
      'TriggerDelivery',
      'TriggerDetail',
      'TriggerSource',
      'TriggerStore',
      'TriggerSummary',
      'WaitingStep',
    ]);
  });

  it('every type the Store contract names is exported by baton-steps/store or the root', () => {
    const { checker, exportsOf: typesOf } = typesProgram(['.', './store']);
    const store = typesOf('./store');
    const root = typesOf('.');
    const contract = store.get('Store');
    if (!contract) throw new Error('baton-steps/store exports no Store');
    const named = [...typesNamedBy(checker, contract)];
    // The walk reaches plans, events and outcomes (a claimed step carries its plan step).
    expect(named).toEqual(expect.arrayContaining(['CycleRequest', 'ClaimedStep', 'PlanStep', 'StoredEvent']));
    expect(named.filter((name) => !store.has(name) && !root.has(name)).sort()).toEqual([]);
  });

  it('a plan, an event and an attempt outcome can be named in full from the root', () => {
    const { checker, exportsOf: typesOf } = typesProgram(['.']);
    const root = typesOf('.');
    for (const start of ['Plan', 'StoredEvent', 'StepOutcome', 'StepResult', 'RunStatus']) {
      const symbol = root.get(start);
      if (!symbol) throw new Error(`the root exports no ${start}`);
      expect([...typesNamedBy(checker, symbol)].filter((name) => !root.has(name)).sort(), start).toEqual([]);
    }
  });

  it('baton-steps/testing: the mock provider and a fast clock, not in the root', async () => {
    const testing = await exportsOf('./testing');
    expect(testing).toEqual(['MemoryEffectLedger', 'scaledClock', 'startMockLlmServer', 'systemClock']);
    const root = await exportsOf('.');
    for (const name of ['startMockLlmServer', 'scaledClock', 'MemoryEffectLedger'])
      expect(root).not.toContain(name);
    // Types are where the JavaScript is.
    for (const entry of Object.values(manifest.exports)) {
      expect(readFileSync(join(repoRoot, entry.types), 'utf8').length).toBeGreaterThan(0);
    }
  });
});
