import type { RandomSource } from './backoff.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A ULID: 10 characters of millisecond time then 16 of randomness, Crockford base32.
 * Sorts by creation time as a plain string, which is what `baton status` lists by.
 */
export function ulid(now: number, random: RandomSource): string {
  let time = '';
  let t = Math.max(0, Math.floor(now));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rest = '';
  for (let i = 0; i < 16; i++) rest += CROCKFORD[Math.floor(random() * 32) % 32];
  return time + rest;
}
