import { cpSync, existsSync, mkdirSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { BatonError, runNotFound } from '../core/errors.js';
import { declaredPlan, forkKeptSteps, forkPoint } from '../core/fork.js';
import type { AgentSpec, Plan } from '../core/plan/types.js';
import { FINAL_RUN_STATUSES } from '../core/run-state.js';
import { ulid } from '../core/ulid.js';
import { prepareRun } from '../engine/start-run.js';
import type { TrustedPrograms } from '../executors/trusted-programs.js';
import { restoreWorkspace } from '../executors/workspace-checkpoints.js';
import type { RunSummary, Store } from '../store/store.js';
import { checkpointOfStep, checkpointPlace } from './workspace-restore.js';

/** What `baton fork`, `Baton.fork` and the console's fork button ask for. */
export interface ForkRunOptions {
  /** The run to fork. */
  runId: string;
  /** The step the new run runs again from: it and every step that depends on it. */
  from: string;
  /** An edited plan (normalised); default: the old run's plan. */
  plan?: Plan;
  /** The file `plan` came from: named in messages. */
  planPath?: string;
  /** Inputs that change; the others are the old run's. */
  inputs?: Record<string, string>;
  /** The new run's id; default `<old id>-fork-<ulid>` when it fits, else a ulid. */
  newRunId?: string;
  /**
   * The folder the new run works in, used as it is. Default: a copy of the old run's workspace in
   * `<home>/workspaces/<new id>`, so two runs never write one folder at once.
   */
  workspace?: string;
  allowWorkspace?: string;
  /** The Baton home: where a default workspace is made. */
  batonHome: string;
  trust?: TrustedPrograms | (() => TrustedPrograms);
  defaultAgent?: AgentSpec;
  now?: number;
  /**
   * Copy the old workspace as it ended. Default: when the step was checkpointed, the copy is put
   * back as the files were before it (a given `workspace` is always used as it is).
   */
  keepFiles?: boolean;
  /** Who asks, recorded on the new run's `run.files_restored` event. */
  by?: string;
}

/** A stored fork: the new run, what it kept, and where it works. */
export interface ForkedRun {
  summary: RunSummary;
  /** The step it runs again from (an item's group, for a fork from an item). */
  from: string;
  kept: string[];
  workspace: string;
  /** The old run's workspace when the new one is a copy of it. */
  copiedFrom: string | null;
  /** The copy was put back as the files were before this step (its checkpoint); null: as they ended. */
  filesRestoredBefore: string | null;
}

/**
 * Stores a fork of a run (core/fork.ts decides what it keeps). Everything is checked before
 * anything is stored or copied; a default workspace made for it is removed again if storing fails.
 */
export async function forkRun(store: Store, options: ForkRunOptions): Promise<ForkedRun> {
  const now = options.now ?? Date.now();
  const old = await store.getRun(options.runId);
  if (!old) throw runNotFound(options.runId);
  const from = forkPoint(old.plan, options.from);
  const base = options.plan ?? declaredPlan(old.plan);
  const newRunId = options.newRunId ?? defaultForkId(old.id, now);
  const given = options.workspace !== undefined;
  if (
    given &&
    sameFolder(resolve(options.workspace!), old.workspace) &&
    !FINAL_RUN_STATUSES.has(old.status)
  ) {
    throw new BatonError(
      'INVALID_ARGUMENT',
      `--workspace ${options.workspace}: run ${old.id} works there and is ${old.status}; two runs would write one folder at once: give another folder, or leave --workspace out for a copy of it`,
    );
  }
  if (await store.getRun(newRunId))
    throw new BatonError('INVALID_ARGUMENT', `a run with id "${newRunId}" already exists: give another --id`);
  const workspace = given ? options.workspace! : join(options.batonHome, 'workspaces', newRunId);
  const created = !existsSync(workspace);
  try {
    const prepared = prepareRun({
      plan: { ...base, forkedFrom: { runId: old.id, stepId: from } },
      ...(options.planPath ? { planPath: options.planPath } : {}),
      workspace,
      ...(options.allowWorkspace ? { allowWorkspace: options.allowWorkspace } : {}),
      batonHome: options.batonHome,
      inputs: { ...declaredInputs(base, old.inputs), ...options.inputs },
      ...(options.defaultAgent ? { defaultAgent: options.defaultAgent } : {}),
      ...(options.trust ? { trust: options.trust } : {}),
      runId: newRunId,
      now,
    });
    const kept = forkKeptSteps(old, prepared.plan, options.from, options.planPath ?? `plan ${base.name}`);
    const copiedFrom = given ? null : copyWorkspace(old.workspace, prepared.workspace, options.batonHome);
    // The copy goes back to the files as they were before `from`, while no run works in it yet.
    const checkpoint =
      copiedFrom === null || options.keepFiles === true ? null : await checkpointOfStep(store, old, from);
    if (checkpoint) {
      const place = checkpointPlace(
        options.batonHome,
        newRunId,
        prepared.workspace,
        old.plan,
        checkpoint.stepId,
      );
      await restoreWorkspace(place, checkpoint.tree);
    }
    const summary = await store.createRun({ ...prepared, keptSteps: kept });
    if (checkpoint) {
      const restored = { stepId: checkpoint.stepId, tree: checkpoint.tree };
      const event = { type: 'run.files_restored' as const, ...restored, cause: 'fork' as const };
      await store.appendEvents(newRunId, [{ ...event, by: options.by ?? 'baton fork' }], now);
    }
    return {
      summary,
      from,
      kept: kept.map((k) => k.stepId),
      workspace: prepared.workspace,
      copiedFrom,
      filesRestoredBefore: checkpoint ? from : null,
    };
  } catch (error) {
    if (!given && created) rmSync(workspace, { recursive: true, force: true });
    throw error;
  }
}

/** `<old>-fork-<ulid>`, or a ulid alone when that would be longer than a run id may be. */
function defaultForkId(oldId: string, now: number): string {
  const id = `${oldId}-fork-${ulid(now, Math.random).slice(-8).toLowerCase()}`;
  return id.length <= 64 ? id : ulid(now, Math.random);
}

/** The old run's inputs the plan still declares (an edited plan may have dropped some). */
function declaredInputs(plan: Plan, inputs: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(inputs).filter(([name]) => Object.hasOwn(plan.inputs, name)));
}

/**
 * The old workspace copied into the new one (symlinks as links), without the Baton home when it
 * lies inside (a project folder holding `.baton`). Null when nothing was copied: the old folder is
 * gone, or it is the home itself.
 */
function copyWorkspace(source: string, target: string, batonHome: string): string | null {
  if (!existsSync(source)) return null;
  const home = realOr(resolve(batonHome));
  const from = realOr(source);
  // A run that worked in the home itself (a workflow's default) leaves nothing of its own to copy.
  if (from === home) return null;
  // Only a home inside the old workspace is left out (a fork of a fork works inside the home).
  copyEntries(from, target, isInside(home, from) ? home : null);
  return source;
}

/**
 * Copies the entries of `source` into `target`, leaving out `skip` (fs.cp refuses a target inside
 * its source, so the folders on the way to `skip` are walked by hand).
 */
function copyEntries(source: string, target: string, skip: string | null): void {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    const path = join(source, entry.name);
    if (path === skip) continue;
    if (skip !== null && entry.isDirectory() && isInside(skip, path))
      copyEntries(path, join(target, entry.name), skip);
    else cpSync(path, join(target, entry.name), { recursive: true, verbatimSymlinks: true });
  }
}

function sameFolder(a: string, b: string): boolean {
  return a === b || realOr(a) === realOr(b);
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
