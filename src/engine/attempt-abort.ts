/**
 * What aborts one attempt's signal: the engine (stop, a lost lease) and its deadline, until its
 * executor returned. One controller for both, not a second one the engine's is forwarded to (or
 * AbortSignal.any): an AbortSignal is an EventTarget, about 2 KB and a listener per attempt, and
 * on Node 20 composed signals are held through WeakRefs past a busy worker's scavenges.
 */
export class AttemptAbort {
  private readonly controller = new AbortController();
  private ended = false;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Aborts the attempt's signal, unless its executor is done: a step that returned is not undone. */
  abort(reason?: unknown): void {
    if (!this.ended) this.controller.abort(reason);
  }

  /** The executor returned, threw or was abandoned: nothing aborts its signal any more. */
  end(): void {
    this.ended = true;
  }
}
