/**
 * `baton propose` shows its summary to a person (and an agent relays it): a secret that a plan's
 * instruction or input holds is masked there, in the text and in --json, when BATON_SECRET_ENV
 * names its variable, as every other output masks it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { batonJson, removeTempDirs, runBaton, writePlan } from './helpers/cli.js';
import { fixturePlan, planDir } from './helpers/plans.js';

afterEach(removeTempDirs);

const SECRET = 'hunter2-deploy-phrase-0f3a9c';

describe('baton propose masks secrets', () => {
  it('never prints a BATON_SECRET_ENV value a plan instruction or an input holds', async () => {
    const { dir, home } = planDir('baton-propose-secrets-');
    const plan = writePlan(
      dir,
      fixturePlan([{ id: 'deploy', instruction: `deploy with the phrase ${SECRET} now` }], {
        inputs: { phrase: { default: 'none' } },
      }),
    );
    const env = { DEPLOY_PHRASE: SECRET, BATON_SECRET_ENV: 'DEPLOY_PHRASE' };
    const text = await runBaton(['propose', plan, '--input', `phrase=${SECRET}`], { home, env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Proposed plan "cli-test"');
    expect(text.stdout).toContain('deploy with the phrase');
    expect(text.stdout + text.stderr).not.toContain(SECRET);
    const json = await batonJson<{ summary: string }>(['propose', plan, '--input', `phrase=${SECRET}`], {
      home,
      env,
    });
    expect(json.summary).toContain('deploy with the phrase');
    expect(JSON.stringify(json)).not.toContain(SECRET);
  });
});
