/**
 * A dialect's answer: at once (SQLite, synchronous inside its BEGIN IMMEDIATE transaction, which
 * cannot await) or later (PostgreSQL, a query on the transaction's connection). What both dialects
 * share is written once over it, with `andThen`.
 */
export type Maybe<T> = T | Promise<T>;

/** `next` applied to `value`: at once when it is there, once it resolves when it is a promise. */
export function andThen<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** A synchronous dialect's answer (a promise there is a bug: its transaction would end before it). */
export function settled<T>(value: Maybe<T>): T {
  if (value instanceof Promise) throw new Error('a synchronous store answered with a promise');
  return value;
}
