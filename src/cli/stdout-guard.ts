/**
 * `baton status | head` closes the pipe early: that is not an error worth a stack trace. Touching
 * process.stdout creates its stream (about 6 ms on a pipe), so callers install this only when they
 * are about to use it (the idle check writes its one line with writeSync instead).
 */
export function guardStdout(): void {
  if (guarded) return;
  guarded = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

let guarded = false;
