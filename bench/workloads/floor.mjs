// Floor: one ~100-byte INSERT per committed transaction, WAL + synchronous=FULL, on a fresh database.
// The best any durable one-commit-per-transition design can do on this disk.
import Database from 'better-sqlite3';
import { emit, now, PAYLOAD, tempHome } from '../lib.mjs';

const TRANSACTIONS = Number(process.env.BENCH_FLOOR_TXNS ?? 2000);
const home = tempHome('floor');
try {
  const db = new Database(home.dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, run TEXT, step TEXT, payload TEXT)');
  const insert = db.prepare('INSERT INTO t (run, step, payload) VALUES (?, ?, ?)');
  const commitOne = db.transaction((i) => insert.run(`r${i % 200}`, `s${i % 10}`, PAYLOAD));
  const start = now();
  for (let i = 0; i < TRANSACTIONS; i++) commitOne.immediate(i);
  const seconds = (now() - start) / 1000;
  const rows = db.prepare('SELECT count(*) FROM t').pluck().get();
  db.close();
  if (rows !== TRANSACTIONS) throw new Error(`floor: expected ${TRANSACTIONS} rows, found ${rows}`);
  emit({
    transactions: TRANSACTIONS,
    seconds,
    txPerSec: TRANSACTIONS / seconds,
    msPerTx: (seconds * 1000) / TRANSACTIONS,
  });
} finally {
  home.dispose();
}
