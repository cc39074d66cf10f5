import type { ScriptEntry, ScriptWhen } from './script-entry.js';
import type { MockRequest } from './types.js';

/** Whether every field set in `when` matches `request` (a missing `when` matches everything). */
function whenMatches(when: ScriptWhen | undefined, request: MockRequest): boolean {
  if (!when) return true;
  if (when.wire !== undefined && when.wire !== request.wire) return false;
  if (when.model !== undefined && !request.model.includes(when.model)) return false;
  if (when.stream !== undefined && when.stream !== request.stream) return false;
  if (when.promptIncludes !== undefined && !request.userText.includes(when.promptIncludes)) return false;
  if (when.hasToolResult !== undefined && when.hasToolResult !== request.hasToolResult) return false;
  if (when.hasTools !== undefined && when.hasTools !== request.toolCount > 0) return false;
  return true;
}

/** The entry that answers a request, with its index in the order entries were added. */
interface ScriptMatch {
  entry: ScriptEntry;
  index: number;
}

interface ScriptQueue {
  add(entries: readonly ScriptEntry[]): void;
  /** The first entry with answers left whose `when` matches; counts one answer off it. */
  take(request: MockRequest): ScriptMatch | undefined;
}

interface Slot {
  entry: ScriptEntry;
  index: number;
  /** Answers left; Infinity for 'forever'. */
  left: number;
}

export function createScriptQueue(entries: readonly ScriptEntry[] = []): ScriptQueue {
  let slots: Slot[] = [];
  let added = 0;
  const queue: ScriptQueue = {
    add(more) {
      for (const entry of more) {
        const left = entry.repeat === 'forever' ? Number.POSITIVE_INFINITY : (entry.repeat ?? 1);
        slots.push({ entry, index: added, left });
        added += 1;
      }
    },
    take(request) {
      const slot = slots.find((s) => whenMatches(s.entry.when, request));
      if (!slot) return undefined;
      slot.left -= 1;
      if (slot.left <= 0) slots = slots.filter((s) => s !== slot);
      return { entry: slot.entry, index: slot.index };
    },
  };
  queue.add(entries);
  return queue;
}
