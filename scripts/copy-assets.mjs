// Copies non-TypeScript files the built code reads at run time (SQL migrations) into dist/.
import { cpSync } from 'node:fs';

cpSync('src/store/sqlite/migrations', 'dist/store/sqlite/migrations', { recursive: true });
