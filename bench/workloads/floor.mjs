// Floor: one ~100-byte INSERT per committed transaction, WAL + synchronous=FULL, on a fresh database.
// The best any durable one-commit-per-transition design can do on this disk.
// Also the floor of the 1x200 sequential workload's commits: 200 transactions on a fresh database,
// each writing one row into each of 6 tables, as many pages as a sequential step's commit writes in
// Baton (the run, its step, the running-lease index, the attempt, the event, the events-by-run
// index), with no engine around them. A fresh database matters: while the WAL file grows, every
// commit appends to it, which costs more than overwriting a WAL that was already that long.
import Database from 'better-sqlite3';
import { emit, median, now, PAYLOAD, tempHome } from '../lib.mjs';

const TRANSACTIONS = Number(process.env.BENCH_FLOOR_TXNS ?? 2000);
const STEP_TABLES = 6;
const STEP_COMMITS = Number(process.env.BENCH_SEQ_STEPS ?? 200);

function openFresh(path) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

/** ms per transaction of STEP_COMMITS transactions writing a row into each of STEP_TABLES tables. */
function stepCommitsMs(path) {
  const db = openFresh(path);
  try {
    const inserts = [];
    for (let t = 0; t < STEP_TABLES; t++) {
      db.exec(`CREATE TABLE t${t} (id INTEGER PRIMARY KEY, run TEXT, step TEXT, payload TEXT)`);
      inserts.push(db.prepare(`INSERT INTO t${t} (run, step, payload) VALUES (?, ?, ?)`));
    }
    const commit = db.transaction((i) => {
      for (const insert of inserts) insert.run('r1', `s${i}`, PAYLOAD);
    });
    const start = now();
    for (let i = 0; i < STEP_COMMITS; i++) commit.immediate(i);
    const ms = (now() - start) / STEP_COMMITS;
    const rows = db
      .prepare(`SELECT count(*) FROM t${STEP_TABLES - 1}`)
      .pluck()
      .get();
    if (rows !== STEP_COMMITS) throw new Error(`floor: expected ${STEP_COMMITS} rows, found ${rows}`);
    return ms;
  } finally {
    db.close();
  }
}

const home = tempHome('floor');
try {
  const db = openFresh(home.dbPath);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, run TEXT, step TEXT, payload TEXT)');
  const insert = db.prepare('INSERT INTO t (run, step, payload) VALUES (?, ?, ?)');
  const commitOne = db.transaction((i) => insert.run(`r${i % 200}`, `s${i % 10}`, PAYLOAD));
  const start = now();
  for (let i = 0; i < TRANSACTIONS; i++) commitOne.immediate(i);
  const seconds = (now() - start) / 1000;
  const rows = db.prepare('SELECT count(*) FROM t').pluck().get();
  db.close();
  if (rows !== TRANSACTIONS) throw new Error(`floor: expected ${TRANSACTIONS} rows, found ${rows}`);
  const stepMs = [1, 2, 3].map((n) => stepCommitsMs(`${home.dbPath}.steps${n}`));
  emit({
    transactions: TRANSACTIONS,
    seconds,
    txPerSec: TRANSACTIONS / seconds,
    msPerTx: (seconds * 1000) / TRANSACTIONS,
    msPerStepCommit: median(stepMs),
  });
} finally {
  home.dispose();
}
