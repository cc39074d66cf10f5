import { describe, expect, it } from 'vitest';
import { EventCursor } from '../src/console/event-cursor.js';

describe('console event cursor (the live pages read the event log of every run)', () => {
  it('passes each event once, in order, and reads again from a gap a later commit may fill', () => {
    const cursor = new EventCursor(10, 2000);
    expect(cursor.take([11, 12, 14], 0)).toEqual([11, 12, 14]);
    // 13 was given to a transaction that commits later (PostgreSQL): read from 12 again.
    expect(cursor.readAfter).toBe(12);
    expect(cursor.take([14, 15], 500)).toEqual([15]);
    expect(cursor.readAfter).toBe(12);
    expect(cursor.take([13, 14, 15], 900)).toEqual([13]);
    expect(cursor.readAfter).toBe(15);
  });

  it('moves past a gap no commit fills (a rolled-back transaction) once it has waited long enough', () => {
    const cursor = new EventCursor(0, 2000);
    expect(cursor.take([1, 3], 0)).toEqual([1, 3]);
    expect(cursor.readAfter).toBe(1);
    expect(cursor.take([3], 1999)).toEqual([]);
    expect(cursor.readAfter).toBe(1);
    expect(cursor.take([3, 4], 2000)).toEqual([4]);
    expect(cursor.readAfter).toBe(4);
  });
});
