// Copies non-TypeScript files the built code reads at run time (SQL migrations) into dist/.
import { cpSync } from 'node:fs';

for (const dialect of ['sqlite', 'postgres']) {
  cpSync(`src/store/${dialect}/migrations`, `dist/store/${dialect}/migrations`, { recursive: true });
}
