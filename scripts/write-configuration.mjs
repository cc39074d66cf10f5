#!/usr/bin/env node
// Writes the settings table of docs/configuration.md (between its `settings` markers) from the one
// table in code, src/runtime/settings.ts (run `npm run build` first: this reads dist/).
// test/docs-configuration.test.ts fails while the page and the code disagree.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const pagePath = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
const { settingsTable } = await import(new URL('../dist/runtime/settings.js', import.meta.url).href);
const page = readFileSync(pagePath, 'utf8');
const marked = /(<!-- settings:start[^>]*-->\n)[\s\S]*?(\n<!-- settings:end -->)/;
if (!marked.test(page))
  throw new Error(`${pagePath}: no <!-- settings:start --> ... <!-- settings:end --> block`);
writeFileSync(
  pagePath,
  page.replace(marked, (_all, start, end) => `${start}${settingsTable()}${end}`),
);
console.log(`wrote the settings table of ${pagePath}`);
