import { describe, expect, it } from 'vitest';
import { maskPassword } from '../src/store/postgres/pg-url.js';

describe('maskPassword', () => {
  it('masks every password in a text, and nothing of a URL without one', () => {
    expect(maskPassword('failed postgres://a:pw1@h1/db and postgres://b:pw2@h2/db')).toBe(
      'failed postgres://a:***@h1/db and postgres://b:***@h2/db',
    );
    expect(maskPassword('postgres://h:5432/db?sslmode=require')).toBe('postgres://h:5432/db?sslmode=require');
    expect(maskPassword('postgres://u@h/db?password=s3cret&sslpassword=other')).toBe(
      'postgres://u@h/db?password=***&sslpassword=***',
    );
  });
});
