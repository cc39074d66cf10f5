/**
 * docs/model-steps.md documents every field of a mock-llm script entry, read from the code that
 * validates them: each fault with its own fields and their values (a new fault or field fails here
 * until it is documented), each `when` field, and the refusal the page quotes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAULT_FIELDS, FAULT_NAMES } from '../src/testing/mock-llm/faults.js';
import { validateScriptEntry, WHEN_FIELDS } from '../src/testing/mock-llm/script-entry.js';
import { repoRoot } from './helpers/cli.js';

const page = readFileSync(join(repoRoot, 'docs', 'model-steps.md'), 'utf8');

/** The cells of the table row whose first cell is `first` (in backticks). */
function row(first: string): string[] | undefined {
  const line = page.split('\n').find((text) => text.startsWith(`| \`${first}\` |`));
  return line?.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, ''));
}

describe('the mock-llm script format in docs/model-steps.md', () => {
  it("has a row for each of an entry's fields, and names every field of `when`", () => {
    const paragraph = page.slice(page.indexOf('`when` takes'));
    for (const field of WHEN_FIELDS) expect(paragraph.slice(0, 300), field).toContain(`\`${field}\``);
    for (const field of ['fault', 'reply', 'when', 'repeat']) expect(row(field), field).toBeDefined();
    for (const field of [
      'text',
      'toolCalls',
      'name',
      'arguments',
      'namespace',
      'usage',
      'cachedTokens',
      'reasoningTokens',
    ])
      expect(row('reply')?.[1], `reply.${field}`).toContain(`"${field}"`);
  });

  it('has a row for each fault, naming each of its fields and the values a field takes', () => {
    for (const fault of FAULT_NAMES) {
      const cells = row(fault);
      expect(cells, fault).toBeDefined();
      const fields = cells![2]!;
      for (const field of FAULT_FIELDS[fault] ?? []) {
        expect(fields, `${fault}.${field.name}`).toContain(`\`${field.name}\``);
        if ('oneOf' in field)
          for (const value of field.oneOf)
            expect(fields, `${fault}.${field.name} ${value}`).toContain(String(value));
      }
      if ((FAULT_FIELDS[fault] ?? []).length === 0) expect(fields, fault).toBe('none');
    }
  });

  it('quotes the refusal of a bad value as the code words it', () => {
    expect(() =>
      validateScriptEntry({ fault: 'server_error', status: 504 }, 'scenario.json: script[2]'),
    ).toThrow('scenario.json: script[2].status: expected one of 500, 502, 503, 529, got 504');
    expect(page).toContain('`scenario.json: script[2].status: expected one of 500, 502, 503, 529, got 504`');
  });
});
