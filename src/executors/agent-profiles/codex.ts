import { codexFolders } from './config-folders.js';
import { asRecord, asString, count, type JsonRecord, jsonLines, lastLines } from './json-output.js';
import { hasFlag, promptAfterDoubleDash } from './prompt-placement.js';
import type { AgentProfile, AgentReport, ProviderError, SetupProblem } from './types.js';
import { emptyUsage, usageOrUndefined } from './usage-sum.js';

/**
 * Codex (`codex exec --json`): JSON lines. The answer is the text of the last `item.completed`
 * whose item is an `agent_message`; usage is in every `turn.completed` (summed); a failure is
 * `turn.failed.error.message` (or a top-level `error` event). An `item.completed` of type `error` is
 * a warning codex goes on after (e.g. "Model metadata for `X` not found"), never a failure.
 */
export const codexProfile: AgentProfile = {
  name: 'codex',
  programs: ['codex'],
  installs: { packages: ['@openai/codex'] },
  readsEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  outputFlags: 'exec --json',
  commandWarnings(command) {
    const warnings: string[] = [];
    if (!command.includes('exec') && !command.includes('e')) {
      warnings.push('codex without the exec subcommand starts its interactive UI: use codex exec');
    }
    if (!hasFlag(command, '--json', '--experimental-json')) {
      warnings.push(
        'codex exec without --json prints text for people: Baton cannot read its answer, usage or errors; add --json',
      );
    }
    return warnings;
  },
  invocation: promptAfterDoubleDash,
  retryCap(command, retries, context) {
    const home = codexHome(context.env);
    const provider =
      configOverride(command, 'model_provider') ??
      configuredProvider(home === undefined ? undefined : context.readTextFile(`${home}/config.toml`));
    // codex multiplies the two: each of (1 + stream_max_retries) stream attempts makes
    // (1 + request_max_retries) requests on a 5xx (30 requests on a persistent 500 by default).
    // No request-level retry and `retries` reconnects make `retries` retries in all.
    const settings =
      provider === undefined || BUILT_IN_PROVIDERS.has(provider)
        ? []
        : [
            `model_providers.${provider}.request_max_retries=0`,
            `model_providers.${provider}.stream_max_retries=${retries}`,
          ];
    return {
      env: {},
      args: settings.flatMap((setting) => ['-c', setting]),
      description:
        settings.length > 0
          ? settings.map((setting) => `-c ${setting}`).join(' ')
          : 'nothing: codex lets no one change the retries of its built-in providers',
    };
  },
  read({ stdout, stderr }) {
    const report: AgentReport = {};
    const setup = codexSetupProblem(stderr);
    if (setup) report.setup = setup;
    const events = jsonLines(stdout);
    if (events.length === 0) {
      if (stdout.trim() !== '') report.answer = stdout.trim();
      return report;
    }
    const usage = emptyUsage();
    let lastError: string | undefined;
    let failed: string | undefined;
    for (const event of events) {
      if (event.type === 'turn.completed') {
        // A turn that completed outlived the errors before it ("Reconnecting... 1/1 (…)" notices).
        lastError = undefined;
        const u = asRecord(event.usage);
        usage.inputTokens += count(u?.input_tokens);
        usage.outputTokens += count(u?.output_tokens);
        usage.cacheReadTokens += count(u?.cached_input_tokens);
      } else if (event.type === 'item.completed') {
        const text = agentMessage(event);
        if (text !== undefined) report.answer = text;
      } else if (event.type === 'turn.failed') {
        failed = asString(asRecord(event.error)?.message) ?? 'codex reported turn.failed';
      } else if (event.type === 'error') {
        // codex reports each of its own retries as an error event; only the last one before the
        // end counts, and only if no turn completed after it.
        lastError = asString(event.message)?.replace(/^Reconnecting\.\.\. \d+\/\d+ \((.*)\)$/s, '$1');
      }
    }
    const counted = usageOrUndefined(usage);
    if (counted) report.usage = counted;
    const message = failed ?? lastError;
    if (message !== undefined) report.error = codexError(message);
    return report;
  },
  confinedWritable: codexFolders,
  // codex names its threads itself (`thread.started`, the first line of `exec --json`), and
  // `exec [its options] resume <id> -- <prompt>` continues one: -s, -C and --add-dir stay before it.
  session: {
    ownFlags: ['resume', '--ephemeral'],
    found: (log) => /\{"type":"thread\.started","thread_id":"([0-9a-fA-F-]{36})"\}/.exec(log)?.[1],
    resume: (previous) => ['resume', previous],
    missing: ({ stderr }) => /no rollout found for (?:thread|conversation) id/.test(stderr),
  },
  exitCodes: {
    0: { meaning: 'finished' },
    1: { meaning: 'failed: a turn.failed or error event says why' },
    2: { meaning: 'bad command line', failureClass: 'invalid' },
  },
};

/** codex refuses model_providers entries with these ids ("Built-in providers cannot be overridden"). */
const BUILT_IN_PROVIDERS: ReadonlySet<string> = new Set(['openai', 'oss', 'ollama', 'lmstudio']);

/** The value of `-c key=value` (or `--config key=value`) in a codex command; the last one wins. */
function configOverride(command: readonly string[], key: string): string | undefined {
  let found: string | undefined;
  command.forEach((arg, i) => {
    const pair =
      arg === '-c' || arg === '--config'
        ? command[i + 1]
        : arg.startsWith('--config=')
          ? arg.slice(9)
          : undefined;
    const eq = pair?.indexOf('=') ?? -1;
    if (pair !== undefined && eq > 0 && pair.slice(0, eq).trim() === key) {
      found = pair
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
    }
  });
  return found;
}

/** Where codex keeps its config.toml: `$CODEX_HOME`, else `~/.codex`. */
export function codexHome(env: Readonly<Record<string, string | undefined>>): string | undefined {
  return env.CODEX_HOME || (env.HOME ? `${env.HOME}/.codex` : undefined);
}

/** The top-level `model_provider = "…"` of a codex config.toml text (before its first table). */
export function configuredProvider(configToml: string | undefined): string | undefined {
  return tomlString(configToml, undefined, 'model_provider');
}

/** `env_key = "…"` of the `[model_providers.<id>]` table: the variable codex reads its key from. */
export function providerEnvKey(configToml: string | undefined, provider: string): string | undefined {
  return tomlString(configToml, `model_providers.${provider}`, 'env_key');
}

/**
 * A quoted string `key = "…"` of a TOML text, in `table` (undefined: before any table). Enough of
 * TOML for the two codex settings Baton reads; anything it cannot read is absent.
 */
function tomlString(text: string | undefined, table: string | undefined, key: string): string | undefined {
  if (text === undefined) return undefined;
  let current: string | undefined;
  const pattern = new RegExp(`^${key}\\s*=\\s*["']([^"']+)["']`);
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('[')) {
      current = trimmed.replace(/^\[\s*|\s*\]$/g, '');
      continue;
    }
    const match = current === table ? pattern.exec(trimmed) : null;
    if (match) return match[1];
  }
  return undefined;
}

function agentMessage(event: JsonRecord): string | undefined {
  const item = asRecord(event.item);
  if (item?.type !== 'agent_message') return undefined;
  return asString(item.text)?.trim();
}

/**
 * codex writes the status into its message: "unexpected status 401 Unauthorized: …", "exceeded retry
 * limit, last status: 429 Too Many Requests". A 500 reads "We're currently experiencing high demand".
 */
function codexError(message: string): ProviderError {
  const status = /\b(?:unexpected status|last status:) (\d{3})\b/.exec(message)?.[1];
  return status === undefined ? { message } : { message, status: Number(status) };
}

function codexSetupProblem(stderr: string): SetupProblem | undefined {
  const unexpected = /error: unexpected argument '([^']+)' found/.exec(stderr);
  if (unexpected)
    return { failureClass: 'invalid', message: `codex does not know the argument ${unexpected[1]}` };
  if (/Not inside a trusted directory and --skip-git-repo-check was not specified/.test(stderr)) {
    return {
      failureClass: 'invalid',
      message:
        'codex refuses to run outside a git repository: add --skip-git-repo-check, or make the workspace a git repository',
    };
  }
  const config = /Error loading config\.toml: ([^\n]+)/.exec(stderr);
  if (config)
    return { failureClass: 'invalid', message: `codex config: ${config[1]} ${lastLines(stderr, 200)}` };
  return undefined;
}
