import { hostname } from 'node:os';

/**
 * A lease owner id unique to this process and this engine: host, pid and a random suffix (one
 * engine's leases are told from another's in the same process, e.g. two `Baton` workers).
 */
export function ownerId(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
