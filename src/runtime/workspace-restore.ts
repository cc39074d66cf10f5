import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { planStep } from '../core/draft.js';
import { BatonError } from '../core/errors.js';
import type { StoredEvent } from '../core/events.js';
import { CHECKPOINT_ALWAYS_EXCLUDED } from '../core/plan/normalize-checkpoint.js';
import type { Plan } from '../core/plan/types.js';
import { type CheckpointRef, checkpointBefore, restoreRefusal } from '../core/workspace-checkpoint.js';
import { isLiveProcess } from '../executors/attempt-processes.js';
import {
  type CheckpointPlace,
  checkpointFiles,
  checkpointKey,
  restoreWorkspace,
  snapshotWorkspace,
} from '../executors/workspace-checkpoints.js';
import type { RunDetail, Store } from '../store/store.js';

/**
 * Putting a run's workspace back as it was before a step (`rerun --from`, `rollback`), safe against
 * a crash at any instant. The order: record the tree the workspace holds now (`previous`), write a
 * journal naming both trees, make the folder hold the target, then record what the command did in
 * the store (the rerun, the `run.files_restored` event), then drop the journal. A journal found
 * later (by the next rerun, rollback, fork or `diff --files`) means the command died on the
 * way: if the store holds its record, the restore is finished (roll forward), else the folder goes
 * back to `previous` (roll back). Either way the workspace holds one tree, never a mix.
 */

interface RestoreJournal {
  home: string;
  runId: string;
  stepId: string;
  workspace: string;
  exclude: string[];
  hidden: string[];
  target: string;
  previous: string;
  /** The run's last event when the journal was written: the command's record comes after it. */
  afterSeq: number;
  cause: 'rerun' | 'rollback';
}

function journalFolder(home: string): string {
  return checkpointFiles(home).journals;
}

function journalPath(home: string, runId: string): string {
  return join(journalFolder(home), `${checkpointKey(runId)}.json`);
}

/**
 * Where a checkpoint of `stepId` (of `plan`) is put back: `workspace`, under `runId`'s index, with
 * the step's patterns left out and the home hidden. A rollback or rerun restores the run's own
 * folder; a fork, its copy under the new run's id.
 */
export function checkpointPlace(
  home: string,
  runId: string,
  workspace: string,
  plan: Plan,
  stepId: string,
): CheckpointPlace & { exclude: string[]; hidden: string[] } {
  const exclude = planStep(plan, stepId).checkpoint?.exclude ?? [...CHECKPOINT_ALWAYS_EXCLUDED];
  return { home, runId, workspace, exclude, hidden: [home] };
}

/** The checkpoint that stands for "before `stepId`" in `run`, or null (none was recorded). */
export async function checkpointOfStep(
  store: Store,
  run: RunDetail,
  stepId: string,
): Promise<CheckpointRef | null> {
  planStep(run.plan, stepId);
  return checkpointBefore(run.plan, await store.getEvents(run.id), stepId);
}

/** What a restore did: the tree put back and the one the workspace held before. */
export interface FilesRestored {
  stepId: string;
  tree: string;
  previous: string;
}

/**
 * Puts `run`'s workspace back to `checkpoint` and then records it with `record` (the store's part
 * of the command), journalled as above. Refused while the run may start a step.
 */
export async function restoreRunFiles(
  store: Store,
  home: string,
  run: RunDetail,
  checkpoint: CheckpointRef,
  cause: RestoreJournal['cause'],
  keepFilesFlag: string | null,
  record: (restored: FilesRestored) => Promise<void>,
): Promise<FilesRestored> {
  await finishInterruptedRestores(store, home);
  const running = run.steps.filter((step) => step.status === 'running').map((step) => step.stepId);
  const refusal = restoreRefusal(run.id, run.status, running, keepFilesFlag);
  if (refusal !== null) throw new BatonError('INVALID_ARGUMENT', refusal);
  const place = checkpointPlace(home, run.id, run.workspace, run.plan, checkpoint.stepId);
  const previous = await snapshotWorkspace(place);
  const events = await store.getEvents(run.id);
  const journal: RestoreJournal = {
    ...place,
    stepId: checkpoint.stepId,
    target: checkpoint.tree,
    previous,
    afterSeq: events.at(-1)?.seq ?? 0,
    cause,
  };
  writeJournal(home, journal);
  const restored = { stepId: checkpoint.stepId, tree: checkpoint.tree, previous };
  try {
    await restoreWorkspace(place, checkpoint.tree);
    await record(restored);
  } catch (error) {
    // The restore or the store refused: the folder goes back to what it held, as if never asked.
    await restoreWorkspace(place, previous);
    rmSync(journalPath(home, run.id), { force: true });
    throw error;
  }
  rmSync(journalPath(home, run.id), { force: true });
  return restored;
}

function writeJournal(home: string, journal: RestoreJournal): void {
  mkdirSync(journalFolder(home), { recursive: true, mode: 0o700 });
  const path = journalPath(home, journal.runId);
  const staged = `${path}.${process.pid}`;
  writeFileSync(staged, `${JSON.stringify(journal)}\n`, { mode: 0o600 });
  renameSync(staged, path);
}

/** Whether the store holds the record of the journal's command (made after the journal). */
function commandRecorded(journal: RestoreJournal, events: readonly StoredEvent[]): boolean {
  return events.some(
    (event) =>
      event.seq > journal.afterSeq &&
      ((event.type === 'run.files_restored' && event.tree === journal.target) ||
        (journal.cause === 'rerun' && event.type === 'run.rerun_requested')),
  );
}

/**
 * Finishes the restores a crash interrupted (see the top of this file); returns the runs whose
 * workspace it put right. Cheap when there is nothing to do: one look at a folder.
 */
export async function finishInterruptedRestores(store: Store, home: string): Promise<string[]> {
  removeStrayIndexCopies(checkpointFiles(home).tmp);
  const folder = journalFolder(home);
  if (!existsSync(folder)) return [];
  const journals = readdirSync(folder).filter((name) => name.endsWith('.json'));
  const fixed: string[] = [];
  for (const name of journals) {
    const path = join(folder, name);
    let journal: RestoreJournal;
    try {
      journal = JSON.parse(readFileSync(path, 'utf8')) as RestoreJournal;
    } catch {
      continue; // Written by rename: a journal that does not parse is not one of ours.
    }
    const events = await store.getEvents(journal.runId);
    const forward = commandRecorded(journal, events);
    await restoreWorkspace(journal, forward ? journal.target : journal.previous);
    if (forward && !events.some((e) => e.seq > journal.afterSeq && e.type === 'run.files_restored')) {
      await store.appendEvents(
        journal.runId,
        [
          {
            type: 'run.files_restored',
            stepId: journal.stepId,
            tree: journal.target,
            previous: journal.previous,
            cause: journal.cause,
            by: 'baton (finishing an interrupted restore)',
          },
        ],
        Date.now(),
      );
    }
    rmSync(path, { force: true });
    fixed.push(journal.runId);
  }
  return fixed;
}

/**
 * The private index copies (`tmp/<run>.<pid>.<random>`, executors/workspace-checkpoints.ts) of
 * processes killed while they checkpointed: removed once their process is gone.
 */
function removeStrayIndexCopies(folder: string): void {
  if (!existsSync(folder)) return;
  for (const name of readdirSync(folder)) {
    const pid = /^[0-9a-f]+\.(\d+)\.[a-z0-9]+(?:\.lock)?$/.exec(name)?.[1];
    if (pid !== undefined && !isLiveProcess(Number(pid))) rmSync(join(folder, name), { force: true });
  }
}
