import { describe, expect, it } from 'vitest';
import {
  classOfDeclaredStatus,
  classOfExitCode,
  declaredFailure,
  MAX_DECLARED_WAIT_MS,
} from '../src/core/declared-failure.js';

describe('declaredFailure: the {"baton":{…}} line of an agent', () => {
  it('takes the last declaration among other output, whatever comes after it', () => {
    const out = [
      '{"baton":{"class":"fatal","message":"old"}}',
      'some text',
      '{"type":"result","baton":"not this"}',
      '  {"baton":{"class":"invalid","message":" parameter market is unknown "}}  ',
      '{"result":"done"}',
      'trailing text',
    ].join('\n');
    // Any object with a "baton" key is a declaration, however shaped: the last one wins.
    expect(declaredFailure(out)).toEqual({ failureClass: 'invalid', message: 'parameter market is unknown' });
  });

  it('says what is wrong with a declaration it cannot read, as invalid', () => {
    expect(declaredFailure('{"baton":"transient"}')?.message).toMatch(/its "baton" field must be an object/);
    expect(declaredFailure('{"baton":{"class":"budget"}}')).toMatchObject({ failureClass: 'invalid' });
    expect(declaredFailure('{"baton":{"class":"fatal","message":3}}')?.message).toMatch(
      /"message" must be a string/,
    );
    expect(declaredFailure('{"baton":{"class":"transient","retryAfterMs":-1}}')?.message).toMatch(
      /retryAfterMs/,
    );
  });

  it('keeps retryAfterMs for transient only, at most a day; a declaration without message says its class', () => {
    expect(declaredFailure('{"baton":{"class":"transient","retryAfterMs":1e12}}')).toEqual({
      failureClass: 'transient',
      message: 'the agent declared transient',
      retryAfterMs: MAX_DECLARED_WAIT_MS,
    });
    expect(declaredFailure('{"baton":{"class":"fatal","retryAfterMs":500}}')).toEqual({
      failureClass: 'fatal',
      message: 'the agent declared fatal',
    });
  });

  it('finds nothing in output without a declaration, nor in broken JSON or other keys', () => {
    expect(declaredFailure('')).toBeUndefined();
    expect(declaredFailure('{"baton":{"class":"fatal"')).toBeUndefined();
    expect(declaredFailure('{"note":"the word \\"baton\\" alone"}')).toBeUndefined();
    expect(declaredFailure(`${'x\n'.repeat(100_000)}done`)).toBeUndefined();
  });
});

describe('classes from an HTTP status and from an exit-code map', () => {
  it('maps the statuses the issue names', () => {
    const table = Object.fromEntries(
      [400, 401, 403, 404, 408, 409, 422, 429, 500, 503, 529].map((s) => [
        s,
        classOfDeclaredStatus(s) ?? null,
      ]),
    );
    expect(table).toEqual({
      400: 'invalid',
      401: 'fatal',
      403: 'fatal',
      404: 'invalid',
      408: 'transient',
      409: null,
      422: 'invalid',
      429: 'transient',
      500: 'transient',
      503: 'transient',
      529: 'transient',
    });
  });

  it('reads only the codes listed, never an inherited key', () => {
    expect(classOfExitCode({ 64: 'invalid' }, 64)).toBe('invalid');
    expect(classOfExitCode({ 64: 'invalid' }, 1)).toBeUndefined();
    expect(classOfExitCode({ 64: 'invalid' }, null)).toBeUndefined();
    expect(classOfExitCode(undefined, 64)).toBeUndefined();
  });
});
