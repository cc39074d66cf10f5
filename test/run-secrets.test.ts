import { describe, expect, it } from 'vitest';
import { childEnvironment } from '../src/core/child-env.js';
import { validatePlanObject } from '../src/core/plan/parse.js';
import { redactSecrets, redactValue } from '../src/core/redact.js';
import { operatorSecretEnv, planSecretEnv, runSecrets, urlSecretParts } from '../src/core/run-secrets.js';
import { AGENT_PROFILES } from '../src/executors/agent-profiles/choose-profile.js';

describe('the secrets of a run', () => {
  it('takes the parts of a URL secret that are tokens, not words, hosts or dates', () => {
    expect(
      urlSecretParts('https://hooks.slack.com/services/T0123ABCD/B0456EFGH/xoxoXOXOxoxoXOXOabcd?x=1').sort(),
    ).toEqual(['B0456EFGH', 'T0123ABCD', 'xoxoXOXOxoxoXOXOabcd']);
    expect(urlSecretParts('https://h.example/reports/2024-01-01/x?token=abc123def456&page=2')).toEqual([
      'abc123def456',
    ]);
    // The password of user:password@, also unencoded and unparsable, written and decoded.
    expect(urlSecretParts('postgres://baton:pa%2Fss99@db/baton')).toEqual(['pa%2Fss99', 'pa/ss99']);
    expect(urlSecretParts('postgres://baton:pa/ss#99@db/baton')).toContain('pa/ss#99');
    expect(urlSecretParts('not a url 0123456789abcdef')).toEqual([]);
  });

  it('BATON_SECRET_ENV lists names separated by commas or colons', () => {
    expect(operatorSecretEnv({ BATON_SECRET_ENV: ' A_ONE, B_TWO:C_THREE,,' })).toEqual([
      'A_ONE',
      'B_TWO',
      'C_THREE',
    ]);
    expect(operatorSecretEnv({})).toEqual([]);
  });

  it("masks the plan's hook URLs and model keys, the store's and the operator's variables, by value", () => {
    const plan = validatePlanObject(
      {
        name: 'p',
        defaults: { agent: { command: ['claude', '-p'] } },
        hooks: [{ on: ['blocked'], urlEnv: 'ALERT_HOOK' }],
        steps: [
          { id: 'a', instruction: 'x', fallback: { model: { provider: 'openai', model: 'm', prompt: 'p' } } },
          { id: 'b', model: { provider: 'anthropic', model: 'm', apiKeyEnv: 'LLM_ACCESS', prompt: 'p' } },
        ],
      },
      'test',
    );
    expect(planSecretEnv(plan)).toEqual({
      hookUrlEnv: ['ALERT_HOOK'],
      apiKeyEnv: ['OPENAI_API_KEY', 'LLM_ACCESS'],
    });
    const env = {
      ALERT_HOOK: 'https://hooks.example.com/T0123/abcdef123456',
      LLM_ACCESS: 'llm-0123456',
      BATON_DATABASE_URL: 'postgres://u:dbpass99@h/db',
      PGPASSWORD: 'pgpass77x',
      DEPLOY_PHRASE: 'open sesame',
      BATON_SECRET_ENV: 'DEPLOY_PHRASE',
      CACHE_URL: 'redis://:cachepw123@cache:6379',
      GREETING: 'hello world',
    };
    const secrets = runSecrets({ env, plan: planSecretEnv(plan), values: ['--store-value-1'] });
    const text = Object.values(env).join(' ');
    const masked = redactSecrets(`${text} abcdef123456 dbpass99 cachepw123 --store-value-1`, secrets);
    for (const value of ['abcdef123456', 'llm-0123456', 'dbpass99', 'pgpass77x', 'open sesame', 'cachepw123'])
      expect(masked).not.toContain(value);
    expect(masked).not.toContain('--store-value-1');
    // Ordinary values, and the list of names itself, stay.
    expect(masked).toContain('hello world');
    expect(masked).toContain('DEPLOY_PHRASE');
  });

  it('masks every string of an event or a payload', () => {
    expect(
      redactValue({ a: ['x secret-value-1 y', 3], b: { c: 'secret-value-1' }, d: null }, ['secret-value-1']),
    ).toEqual({ a: ['x [redacted] y', 3], b: { c: '[redacted]' }, d: null });
  });

  it('masks every shape of key it knows, whatever the case of the words around it', () => {
    const keys = [
      'sk-ant-abcdefgh12345678',
      'AKIAABCDEFGHIJKLMNOP',
      `AIza${'b'.repeat(24)}`,
      `ghp_${'c'.repeat(24)}`,
      `gho_${'d'.repeat(24)}`,
      'xoxb-1234567890-abc',
    ];
    for (const key of keys)
      expect(redactSecrets(`failed with ${key} here`)).toBe('failed with [redacted] here');
    expect(redactSecrets('BEARER abcdefgh.ijkl')).toBe('[redacted]');
    expect(redactSecrets('AUTHORIZATION: abcdef123')).toBe('AUTHORIZATION: [redacted]');
    expect(redactSecrets('x-Api-Key=abcdef123 Access_Token: "qwerty987" SECRET=hunter22')).toBe(
      'x-Api-Key=[redacted] Access_Token: "[redacted]" SECRET=[redacted]',
    );
    expect(redactSecrets('step hub-3 succeeded: 98 workers merged')).toBe(
      'step hub-3 succeeded: 98 workers merged',
    );
  });

  it('masks secrets that JSON escapes, and keys next to escaped characters, deep in a value', () => {
    const quoted = 'pa"ss\\wo\nrd';
    const value = { steps: [{ id: 'a', env: { set: { X: `x ${quoted} y` } } }, { note: 'line\n' }] };
    expect(redactValue(value, [quoted])).toEqual({
      steps: [{ id: 'a', env: { set: { X: 'x [redacted] y' } } }, { note: 'line\n' }],
    });
    expect(redactValue({ note: 'line\nsk-abcdefgh1234' }, [])).toEqual({ note: 'line\n[redacted]' });
    const keyNamed = { apiKeyEnv: 'MY_KEY', prompt: 'hello' };
    expect(redactValue(keyNamed, [])).toEqual(keyNamed);
  });

  it('copies only what it masks: the rest of the value is shared, and the value is left as it was', () => {
    const clean = { id: 'fetch', dependsOn: ['a', 'b'], retry: { maxAttempts: 3 } };
    const dirty = { summary: 'token secret-value-1', tags: ['x', 'secret-value-1'] };
    const value = { steps: [clean, dirty], plain: { status: 'succeeded' } };
    const before = structuredClone(value);
    const masked = redactValue(value, ['secret-value-1']);
    expect(masked).toEqual({
      steps: [clean, { summary: 'token [redacted]', tags: ['x', '[redacted]'] }],
      plain: { status: 'succeeded' },
    });
    expect(value).toEqual(before);
    expect(masked.steps[0]).toBe(clean);
    expect(masked.plain).toBe(value.plain);
    expect(masked.steps[1]).not.toBe(dirty);
    const nothing = { a: ['x', { b: 'y' }] };
    expect(redactValue(nothing, ['secret-value-1'])).toBe(nothing);
  });
});

describe('the child environment', () => {
  const env = {
    PATH: '/usr/bin',
    HOME: '/home/u',
    LC_ALL: 'C',
    BATON_DATABASE_URL: 'postgres://u:p@h/db',
    PGPASSWORD: 'pw',
    ALERT_HOOK: 'https://h/x',
    DEPLOY_PHRASE: 'open sesame',
    BATON_SECRET_ENV: 'DEPLOY_PHRASE',
    ANTHROPIC_API_KEY: 'a-key',
    OPENAI_API_KEY: 'o-key',
    SOME_SETTING: 'kept',
  };
  const plan = { hookUrlEnv: ['ALERT_HOOK'], apiKeyEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'] };

  it("is the parent's minus Baton's own secrets and the model keys the CLI does not read", () => {
    const claude = childEnvironment({ env, plan, reads: AGENT_PROFILES.claude.readsEnv });
    expect(Object.keys(claude).sort()).toEqual(
      ['ANTHROPIC_API_KEY', 'BATON_SECRET_ENV', 'HOME', 'LC_ALL', 'PATH', 'SOME_SETTING'].sort(),
    );
    expect(childEnvironment({ env, plan, reads: AGENT_PROFILES.codex.readsEnv }).OPENAI_API_KEY).toBe(
      'o-key',
    );
    // A hook command reads no model key; without a plan nothing is a model key.
    expect(childEnvironment({ env, plan }).ANTHROPIC_API_KEY).toBeUndefined();
    expect(childEnvironment({ env }).ANTHROPIC_API_KEY).toBe('a-key');
    expect(childEnvironment({ env }).BATON_DATABASE_URL).toBeUndefined();
  });

  it('with pass: the baseline and the named variables only, never Baton’s own; set over it', () => {
    const child = childEnvironment({
      env,
      plan,
      spec: {
        pass: ['OPENAI_API_KEY', 'ALERT_HOOK', 'DEPLOY_PHRASE'],
        set: { GREETING: 'hi', PATH: '/opt/bin' },
      },
    });
    expect(child).toEqual({
      PATH: '/opt/bin',
      HOME: '/home/u',
      LC_ALL: 'C',
      OPENAI_API_KEY: 'o-key',
      GREETING: 'hi',
    });
  });

  it('every profile says which API-key variables its CLI reads', () => {
    for (const profile of Object.values(AGENT_PROFILES)) expect(Array.isArray(profile.readsEnv)).toBe(true);
    expect(AGENT_PROFILES.gemini.readsEnv).toContain('GEMINI_API_KEY');
    expect(AGENT_PROFILES.generic.readsEnv).toEqual([]);
  });
});

describe('agent.env in a plan', () => {
  const agentWith = (env: unknown) => ({
    name: 'p',
    steps: [{ id: 'report', instruction: 'x', agent: { command: ['claude', '-p'], env } }],
  });
  const problems = (plan: unknown) => {
    try {
      validatePlanObject(plan, 'plan.yaml');
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('refuses a code-loading or BATON_* variable in set, a store variable in pass, and bad names', () => {
    expect(problems(agentWith({ set: { NODE_OPTIONS: '--require x' } }))).toContain(
      'plan.yaml: steps.report.agent.env.set.NODE_OPTIONS: setting NODE_OPTIONS can make the agent load or run code',
    );
    expect(problems(agentWith({ set: { PYTHONSTARTUP: 'x.py' } }))).toContain('agent.env.set.PYTHONSTARTUP');
    expect(problems(agentWith({ set: { BATON_RUN_ID: 'x' } }))).toContain(
      "BATON_RUN_ID is Baton's own variable",
    );
    expect(problems(agentWith({ pass: ['BATON_DATABASE_URL'] }))).toContain(
      "steps.report.agent.env.pass[0]: BATON_DATABASE_URL holds Baton's store URL or password",
    );
    expect(problems(agentWith({ pass: ['not a name'] }))).toContain(
      'is not the name of an environment variable',
    );
    expect(problems(agentWith({ keep: [] }))).toContain('unknown key "keep"');
  });

  it('keeps pass and set in the normalized agent, also from defaults.agent', () => {
    const plan = validatePlanObject(
      {
        name: 'p',
        defaults: { agent: { command: ['claude', '-p'], env: { pass: ['GITHUB_TOKEN'], set: { CI: '1' } } } },
        steps: [{ id: 'a', instruction: 'x' }],
      },
      'test',
    );
    expect(plan.steps[0]?.agent?.env).toEqual({ pass: ['GITHUB_TOKEN'], set: { CI: '1' } });
  });
});
