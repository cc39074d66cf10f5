import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { planJsonSchema, planJsonSchemaText } from '../src/core/plan/schema.js';

const committed = readFileSync(new URL('../schema/plan.schema.json', import.meta.url), 'utf8');

describe('schema/plan.schema.json', () => {
  it('equals what the zod source generates (run `npm run build && npm run schema` after changing it)', () => {
    expect(committed).toBe(planJsonSchemaText());
  });

  it('is a draft-07 schema that editors can use, with help texts', () => {
    const schema = planJsonSchema() as {
      $schema: string;
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { description?: string }>;
    };
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.required).toEqual(['name', 'steps']);
    expect(schema.additionalProperties).toBe(false);
    for (const [key, property] of Object.entries(schema.properties)) {
      expect(property.description, `properties.${key}.description`).toBeTruthy();
    }
    expect(committed).toContain('"dependsOn"');
    expect(committed).toContain('"oneOf"');
  });
});
