import type { PlanIssue } from './issues.js';
import type { PlanFileStep } from './schema.js';
import type { PlanStep } from './types.js';

/** Left out of every workspace checkpoint: the user's repository and installed packages. */
export const CHECKPOINT_ALWAYS_EXCLUDED = ['.git/', 'node_modules/'] as const;

type CheckpointField = PlanFileStep['checkpoint'];

/**
 * A step's `checkpoint:` (else `defaults.checkpoint`), normalised: `{ exclude }` when its workspace
 * is checkpointed, nothing otherwise. Only agent steps (or steps whose fallback is an agent) are
 * checkpointed; a non-agent step that asks for it is an issue, and defaults do not reach it.
 */
export function normalizeCheckpoint(
  own: CheckpointField,
  defaults: CheckpointField,
  runsAgent: boolean,
  path: string,
  issues: PlanIssue[],
): Pick<PlanStep, 'checkpoint'> {
  if (!runsAgent) {
    if (own !== undefined && own !== 'none') {
      issues.push({
        path: `${path}.checkpoint`,
        problem: 'only agent steps change files Baton can checkpoint: remove "checkpoint"',
      });
    }
    return {};
  }
  const field = own ?? defaults;
  if (field === undefined || field === 'none') return {};
  const extra = field === 'workspace' ? [] : field.exclude;
  return { checkpoint: { exclude: [...new Set([...CHECKPOINT_ALWAYS_EXCLUDED, ...extra])] } };
}
