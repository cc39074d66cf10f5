import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';

/**
 * The SQLite store of `path`, opened at once: `Baton.open` does, so `baton.store` is there without
 * `await` and a home that cannot hold a store is refused by the call itself. (The CLI loads the
 * dialect lazily through open-store.ts instead.)
 */
export function openSqliteStoreNow(path: string): Store {
  return SqliteStore.open(path);
}
