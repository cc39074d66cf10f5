import type { PgClient, PgPool } from './open-pool.js';

/**
 * Runs `fn` in one READ COMMITTED transaction on a pooled connection: committed when it returns,
 * rolled back when it throws. Row locks (FOR NO KEY UPDATE) order the writers, not the isolation level.
 */
export async function inTransaction<T>(pool: PgPool, fn: (client: PgClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      // The connection itself failed: the pool drops it instead of handing it out again.
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw error;
  } finally {
    client.release(broken);
  }
}
