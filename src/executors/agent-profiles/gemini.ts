import { geminiFolders } from './config-folders.js';
import {
  asRecord,
  asString,
  count,
  httpStatus,
  innerMessage,
  type JsonRecord,
  jsonLines,
  lastJsonObject,
} from './json-output.js';
import { flagValue, promptAsFlagValue } from './prompt-placement.js';
import type { AgentProfile, AgentReport, AgentUsage, ExitMeaning } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * Gemini CLI (`gemini -o json`): one pretty-printed object `{ response, stats.models[m].tokens,
 * error{type,message,code} }` (or `-o stream-json` lines ending in a `result` record). On an API
 * error its exit code is the HTTP status mod 256; its own failures have documented codes.
 */
export const geminiProfile: AgentProfile = {
  name: 'gemini',
  programs: ['gemini'],
  installs: { packages: ['@google/gemini-cli'] },
  readsEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  outputFlags: '-o json',
  commandWarnings(command) {
    const format = flagValue(command, '-o', '--output-format');
    if (format === 'json') return [];
    return [
      format === 'stream-json'
        ? 'gemini -o stream-json carries no answer or per-model tokens in the form Baton reads: use -o json'
        : 'gemini without -o json prints text for people: Baton cannot read its usage or API errors; add -o json',
    ];
  },
  // One --prompt=<text> element: yargs reads `-p -text` as two flags, and array flags such as
  // --include-directories swallow a positional prompt.
  invocation: (agent, prompt, programIndex) =>
    promptAsFlagValue(agent, prompt, ['-p', '--prompt'], programIndex),
  retryCap(_command, retries) {
    const maxAttempts = Math.min(10, retries + 1);
    return {
      env: {},
      args: [],
      // gemini reads maxAttempts from settings files only, and ignores a system settings file that
      // is not root-owned in root-owned folders: the user's settings, merged, in a home of its own.
      overlay: {
        envVar: 'GEMINI_CLI_HOME',
        configDir: '.gemini',
        settingsFile: 'settings.json',
        settings: { general: { maxAttempts } },
        homeFiles: ['.env'],
        // Its sessions (tmp/<project>/chats): a retry resumes the attempt before's.
        keptFolders: ['tmp'],
      },
      description: `general.maxAttempts=${maxAttempts} (your ~/.gemini/settings.json merged, through GEMINI_CLI_HOME)`,
    };
  },
  read({ stdout, stderr, exitCode }) {
    const report: AgentReport = {};
    // On a failure the JSON object goes to stderr, after the stack traces.
    const record =
      lastJsonObject(stdout) ??
      jsonLines(stdout).findLast((line) => line.type === 'result') ??
      (exitCode === 0 ? undefined : lastJsonObject(stderr));
    if (!record) {
      if (stdout.trim() !== '') report.answer = stdout.trim();
    } else {
      const answer = asString(record.response);
      if (answer !== undefined) report.answer = answer.trim();
      const usage = geminiUsage(record);
      if (usage) report.usage = usage;
      const error = asRecord(record.error);
      if (error) {
        const status = httpStatus(error.code) ?? statusFromExit(exitCode);
        const type = asString(error.type);
        report.error = {
          message: innerMessage(asString(error.message) ?? 'gemini reported an error'),
          ...(status === undefined ? {} : { status }),
          ...(type === undefined || type === 'Error' ? {} : { type }),
        };
      }
    }
    const setup = exitCode === null ? undefined : SETUP_EXITS[exitCode];
    if (setup) report.setup = setup;
    return report;
  },
  confinedWritable: geminiFolders,
  // gemini names its sessions itself (`session_id` in its -o json object, or stream-json's init
  // event); `--resume=<id>` continues one under the same id.
  session: {
    ownFlags: ['--resume', '-r', '--session-id', '--list-sessions'],
    found: (log) => /"session_id"\s*:\s*"([0-9a-fA-F-]{36})"/.exec(log)?.[1],
    resume: (previous) => [`--resume=${previous}`],
    missing: ({ stderr }) =>
      /Error resuming session: (?:Invalid session identifier|No previous sessions found)/.test(stderr),
  },
  // Its API error reports (gemini-client-error-*.json) and the folder of a shell command it was
  // stopped in (gemini-shell-*) go to os.tmpdir(), i.e. TMPDIR, and are never removed by gemini.
  attemptTemp: {},
  exitCodes: {
    0: { meaning: 'finished' },
    1: { meaning: 'general or API error' },
    41: { meaning: 'no authentication configured', failureClass: 'fatal' },
    42: { meaning: 'bad input (no prompt)', failureClass: 'invalid' },
    44: { meaning: 'sandbox error', failureClass: 'fatal' },
    52: { meaning: 'bad configuration', failureClass: 'invalid' },
    53: { meaning: 'turn limit reached', failureClass: 'agent_failed' },
    54: { meaning: 'a tool failed', failureClass: 'agent_failed' },
    55: { meaning: 'the folder is not trusted', failureClass: 'invalid' },
    130: { meaning: 'cancelled', failureClass: 'interrupted' },
    ...Object.fromEntries(
      [400, 401, 403, 404, 429, 500, 502, 503, 504, 529].map((status): [number, ExitMeaning] => [
        status % 256,
        { meaning: `the provider answered HTTP ${status}` },
      ]),
    ),
  },
};

/** Exit codes of problems no retry fixes, with what to do. */
const SETUP_EXITS: Readonly<Record<number, AgentReport['setup']>> = {
  41: {
    failureClass: 'fatal',
    message:
      'gemini has no authentication configured: set GEMINI_API_KEY and security.auth.selectedType "gemini-api-key" in ~/.gemini/settings.json',
  },
  42: { failureClass: 'invalid', message: 'gemini got no prompt: let Baton pass it (promptVia: arg)' },
  52: { failureClass: 'invalid', message: 'gemini refused its configuration (settings.json or flags)' },
  55: {
    failureClass: 'invalid',
    message:
      'gemini does not trust the workspace folder: set GEMINI_CLI_TRUST_WORKSPACE=true or pass --skip-trust',
  },
};

/** The HTTP status behind an API-error exit (status mod 256), for the statuses gemini passes on. */
function statusFromExit(exitCode: number | null): number | undefined {
  if (exitCode === null || exitCode < 2) return undefined;
  return [400, 401, 403, 404, 429, 500, 502, 503, 504, 529].find((status) => status % 256 === exitCode);
}

/** Summed over `stats.models` (the router's model and the main one each have an entry). */
function geminiUsage(record: JsonRecord): AgentUsage | undefined {
  const usage = emptyUsage();
  for (const model of Object.values(asRecord(asRecord(record.stats)?.models) ?? {})) {
    const tokens = asRecord(asRecord(model)?.tokens);
    usage.inputTokens += count(tokens?.prompt);
    usage.outputTokens += count(tokens?.candidates) + count(tokens?.thoughts);
    usage.cacheReadTokens += count(tokens?.cached);
  }
  return usageOrUndefined(usage);
}
