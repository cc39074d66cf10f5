/**
 * Baton's own secrets that must never reach an agent or a hook command: the database URL (it may
 * carry a password). Everything else of the environment is passed on as the user set it.
 */
const PRIVATE_VARIABLES: readonly string[] = ['BATON_DATABASE_URL'];

export function childEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of PRIVATE_VARIABLES) delete out[name];
  return out;
}
