/**
 * Environment variables that make a program load or run code they name: a plan may not set them
 * for a command (`env NODE_OPTIONS=--require=x.js claude`, `agent.env.set`), whatever the program.
 * Exact names here; prefixes in {@link CODE_LOADING_PREFIXES}.
 */
export const CODE_LOADING_VARIABLES = [
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'PERL5OPT',
  'PERL5LIB',
  'PERLLIB',
  'PERL5DB',
  'RUBYOPT',
  'RUBYLIB',
  'GEM_HOME',
  'GEM_PATH',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'TCLLIBPATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'PROMPT_COMMAND',
  'ZDOTDIR',
  'IFS',
  'LESSOPEN',
  'LESSCLOSE',
  'GCONV_PATH',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'BROWSER',
] as const;

/** Prefixes of variable families that load code (`LD_PRELOAD`, `PYTHONSTARTUP`, `GIT_CONFIG_*`, `LUA_INIT`, …). */
export const CODE_LOADING_PREFIXES = [
  'LD_',
  'DYLD_',
  'PYTHON',
  'GIT_',
  'LUA_INIT',
  'LUA_PATH',
  'LUA_CPATH',
  'BUN_',
  'DENO_',
  'NPM_CONFIG_',
] as const;

/** Whether setting `name` could make a program load or run code (see {@link CODE_LOADING_VARIABLES}). */
export function isCodeLoadingVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    (CODE_LOADING_VARIABLES as readonly string[]).includes(upper) ||
    CODE_LOADING_PREFIXES.some((prefix) => upper.startsWith(prefix))
  );
}
