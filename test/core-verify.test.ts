/** The pure half of verification gates: rubric criteria, the grader's verdict, counting checks. */
import { describe, expect, it } from 'vitest';
import {
  type CheckRecord,
  failedCheckMessage,
  failedChecksBefore,
  graderPrompt,
  readVerdict,
  rubricCriteria,
  verificationOf,
} from '../src/core/verify.js';

describe('rubricCriteria', () => {
  it('takes one criterion per line, past headings, blank lines and list markers', () => {
    const text =
      '# Rubric\n\n- Cites two sources\n* Under 300 words\n1. Names the author\n- [ ] Has a title\n';
    expect(rubricCriteria(text)).toEqual([
      'Cites two sources',
      'Under 300 words',
      'Names the author',
      'Has a title',
    ]);
  });
});

describe('readVerdict', () => {
  const criteria = ['a', 'b', 'c'];

  it('reads the first JSON object with criteria, fenced or not, by id', () => {
    const answer =
      'Sure {not json}\n```json\n{"criteria":[{"id":2,"passed":false,"reason":"too long"},{"id":1,"passed":true,"reason":"ok"},{"id":3,"passed":true}]}\n```';
    expect(readVerdict(answer, criteria)).toEqual([
      { criterion: 'a', passed: true, reason: 'ok' },
      { criterion: 'b', passed: false, reason: 'too long' },
      { criterion: 'c', passed: true, reason: '' },
    ]);
  });

  it('fails a criterion the grader was silent on, and passes only a literal true', () => {
    const verdicts = readVerdict('{"criteria":[{"id":1,"passed":"yes"}]}', criteria)!;
    expect(verdicts.map((v) => v.passed)).toEqual([false, false, false]);
    expect(verdicts[2]!.reason).toBe('the grader gave no verdict on it');
  });

  it('is null for an answer without a verdict', () => {
    expect(readVerdict('I think it is fine.', criteria)).toBeNull();
    expect(readVerdict('{"score": 3}', criteria)).toBeNull();
  });
});

describe('failedChecksBefore', () => {
  const record = (round: number, passed: boolean, exhausted = false): CheckRecord => ({
    round,
    passed,
    exhausted,
    failures: passed ? [] : ['x'],
  });

  it('counts the failed checks of this round, newest first, past attempts that had none', () => {
    expect(failedChecksBefore([record(5, false), null, record(5, false)], 5)).toBe(2);
  });

  it('stops at another round, at a check that used the iterations up, and at a pass', () => {
    expect(failedChecksBefore([record(5, false), record(4, false)], 5)).toBe(1);
    expect(failedChecksBefore([record(5, false), record(5, false, true), record(5, false)], 5)).toBe(1);
    expect(failedChecksBefore([record(5, true), record(5, false)], 5)).toBe(0);
  });
});

describe('messages and reads', () => {
  it('says which check failed, and that the last one used them up', () => {
    expect(failedCheckMessage(1, 3, ['t failed'])).toBe('verification failed (check 1 of 3): t failed');
    expect(failedCheckMessage(3, 3, ['t failed'])).toContain('did not pass in 3 of 3 checks');
  });

  it("puts the task, the files and numbered criteria in the grader's prompt", () => {
    const prompt = graderPrompt({
      task: 'write it',
      answer: 'done',
      files: [{ path: 'r.md', size: 4, text: 'body', cut: false }],
      criteria: ['one', 'two'],
    });
    expect(prompt).toContain('write it');
    expect(prompt).toContain('--- r.md (4 bytes) ---\nbody');
    expect(prompt).toContain('1. one\n2. two');
  });

  it('reads the verification out of a stored result', () => {
    const verification = { passed: true, iterations: 2, failures: [] };
    expect(verificationOf(JSON.stringify({ summary: 's', outputs: [], verification }))).toEqual(verification);
    expect(verificationOf(JSON.stringify({ summary: 's', outputs: [] }))).toBeUndefined();
    expect(verificationOf(null)).toBeUndefined();
  });
});
