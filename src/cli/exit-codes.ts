/** Exit codes of every `baton` command. */
export const EXIT = {
  /** Done, or nothing to do. */
  ok: 0,
  /** Work failed, is blocked or was cancelled. */
  workFailed: 1,
  /** Bad input or configuration: nothing was changed. */
  badInput: 2,
} as const;
