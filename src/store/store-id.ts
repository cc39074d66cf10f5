import { createHash } from 'node:crypto';

/**
 * A short id naming one store among the others on a machine: a hash of its file's real path, or of
 * its server, database and schema (never a password). Two projects may both have a run called
 * "nightly"; their agents' processes still carry different markers.
 */
export function storeId(location: string): string {
  return createHash('sha256').update(location).digest('hex').slice(0, 16);
}
