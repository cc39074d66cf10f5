import { readFileSync } from 'node:fs';

/**
 * How many transactions the database's write-ahead log holds: its commit frames (a frame header's
 * second word, the database size after a commit, is zero for the other frames), counting only the
 * frames of the log's current generation (their salts match the header's).
 */
export function walCommits(dbPath: string): number {
  const wal = readFileSync(`${dbPath}-wal`);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  const salt1 = wal.readUInt32BE(16);
  const salt2 = wal.readUInt32BE(20);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits += 1;
  }
  return commits;
}
