/**
 * Where a reader of the event log of every run stands. Sequence numbers are given when a
 * transaction writes, not when it commits: in PostgreSQL two transactions can commit out of
 * order, so an event may appear below the newest one seen. The cursor stays at the first gap for
 * `gapWaitMs`, reading from there again (and skipping what it already passed on); a gap still
 * open after that is a number no commit will fill (a rolled-back transaction) and is passed.
 * Pure: time is given.
 */
export class EventCursor {
  private readonly seen = new Set<number>();
  /** Open gaps: seq → when it was first noticed. */
  private readonly gaps = new Map<number, number>();

  constructor(
    /** Everything at or below it was passed on. */
    private passed: number,
    private readonly gapWaitMs = 2000,
  ) {}

  /** Where the next read starts (exclusive). */
  get readAfter(): number {
    return this.passed;
  }

  /** Takes one read's seqs (ascending); returns the ones not passed on before, in order. */
  take(seqs: readonly number[], now: number): number[] {
    const fresh: number[] = [];
    let expected = this.passed + 1;
    for (const seq of seqs) {
      if (seq <= this.passed || this.seen.has(seq)) continue;
      for (let missing = expected; missing < seq; missing++)
        if (!this.seen.has(missing) && !this.gaps.has(missing)) this.gaps.set(missing, now);
      this.gaps.delete(seq);
      this.seen.add(seq);
      fresh.push(seq);
      expected = seq + 1;
    }
    for (const [seq, since] of this.gaps) if (now - since >= this.gapWaitMs) this.gaps.delete(seq);
    // Move up to just below the first gap still open (or to the newest seen).
    const firstGap = this.gaps.size === 0 ? Number.POSITIVE_INFINITY : Math.min(...this.gaps.keys());
    const newest = Math.max(this.passed, ...this.seen);
    this.passed = Math.min(newest, firstGap - 1);
    for (const seq of this.seen) if (seq <= this.passed) this.seen.delete(seq);
    return fresh;
  }
}
