import { agentProgramName } from './flow.js';
import type { PlanStep } from './plan/types.js';

/**
 * The `model` label of an attempt's usage in `/metrics` (runtime/metrics.ts), and its bounds: a
 * model's name comes from plan text, so one plan could otherwise add a series per name for the life
 * of the exporter, each as long as the name.
 */

/** The most characters (code points) a model label has; a longer one is cut, ending in `…`. */
export const MAX_MODEL_LABEL_CHARS = 128;

/** The most models one exporter gives a series of their own (per family); the others share OTHER_MODEL_LABEL. */
export const MAX_MODEL_LABELS = 50;

/** The label of the attempts of every model past the first MAX_MODEL_LABELS. */
export const OTHER_MODEL_LABEL = 'other';

/**
 * The label of the step an attempt ran (the plan's step, or its fallback once that took over): a
 * model step's `<provider>/<model>`; an agent step's CLI (flow.ts `agentProgramName`: `claude`,
 * `codex`); `fn` for a function. At most MAX_MODEL_LABEL_CHARS characters.
 */
export function modelLabel(step: PlanStep): string {
  if (step.kind === 'model' && step.model) return cutLabel(`${step.model.provider}/${step.model.model}`);
  if (step.kind === 'agent') return agentProgramName(step);
  return step.kind;
}

/** `text` if it has at most `maxChars` code points, else its first `maxChars - 1` and `…`. */
export function cutLabel(text: string, maxChars = MAX_MODEL_LABEL_CHARS): string {
  // UTF-16 units never fewer than code points: most labels return here.
  if (text.length <= maxChars) return text;
  let kept = '';
  let count = 0;
  for (const char of text) {
    if (count === maxChars - 1) return `${kept}…`;
    kept += char;
    count++;
  }
  return text;
}

/**
 * Which series a model label is counted under, for the life of one exporter: the first `limit`
 * labels seen keep their own, every later one goes under OTHER_MODEL_LABEL, so the series of a
 * family are at most `limit + 1` and a label never moves between scrapes (a counter stays one).
 */
export class ModelSeries {
  private readonly kept = new Set<string>();

  constructor(private readonly limit = MAX_MODEL_LABELS) {}

  seriesOf(label: string): string {
    if (this.kept.has(label)) return label;
    if (this.kept.size >= this.limit) return OTHER_MODEL_LABEL;
    this.kept.add(label);
    return label;
  }
}
