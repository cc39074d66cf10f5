/** Run labels as typed (`-l key=value`) and as given (API, MCP): what is kept, what is refused. */
import { describe, expect, it } from 'vitest';
import { checkLabels, labelsText, MAX_LABELS, parseLabels } from '../src/core/labels.js';

describe('labels', () => {
  it('parses key=value (the value may hold "=" and be empty); a key given twice keeps its last value', () => {
    expect(parseLabels(['team=growth', 'q=a=b', 'empty=', 'team=core'], '--label')).toEqual({
      team: 'core',
      q: 'a=b',
      empty: '',
    });
    expect(labelsText({ team: 'growth', env: 'prod' })).toBe('team=growth,env=prod');
  });

  it('refuses what is not key=value, a bad key, a long or control-character value, too many', () => {
    expect(() => parseLabels(['team'], '--label')).toThrow('--label: expected key=value');
    expect(() => parseLabels(['=x'], '--label')).toThrow('expected key=value');
    expect(() => parseLabels(['a b=1'], '--label')).toThrow('label key "a b"');
    expect(() => parseLabels([`k=${'v'.repeat(201)}`], '--label')).toThrow('longer than 200');
    expect(() => parseLabels(['k=a\nb'], '--label')).toThrow('control character (U+000A)');
    const many = Object.fromEntries(Array.from({ length: MAX_LABELS + 1 }, (_, i) => [`k${i}`, 'v']));
    expect(() => checkLabels(many, 'labels')).toThrow(`at most ${MAX_LABELS}`);
    expect(() => checkLabels({ k: 1 } as never, 'labels')).toThrow('expected a string value');
    expect(() => checkLabels(['a'] as never, 'labels')).toThrow('expected an object of labels');
  });
});
