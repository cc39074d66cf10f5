#!/usr/bin/env node
// Writes schema/plan.schema.json from the zod source of the plan format (run `npm run build` first).
// With --check, writes nothing and exits 1 when the committed file is out of date.
import { readFile, writeFile } from 'node:fs/promises';

let schemaModule;
try {
  schemaModule = await import('../dist/core/plan/schema.js');
} catch (error) {
  console.error(`cannot load dist/core/plan/schema.js (run \`npm run build\` first): ${error.message}`);
  process.exit(2);
}

const target = new URL('../schema/plan.schema.json', import.meta.url);
const text = schemaModule.planJsonSchemaText();

if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== text) {
    console.error('schema/plan.schema.json is out of date: run `npm run schema`');
    process.exit(1);
  }
  console.log('schema/plan.schema.json is up to date');
} else {
  await writeFile(target, text);
  console.log('wrote schema/plan.schema.json');
}
