import type { MockLlmServer } from './types.js';

/**
 * How to point the real agent CLIs at the mock (claude 2.1, codex 0.171, gemini 0.61), as data:
 * the startup message of `baton mock-llm` and the CLI tests use the same values.
 *
 * Side requests (seen against the mock; none of them declares a tool, every agent turn does, so
 * `when: { hasTools: true }` keeps them off a script):
 * - claude: `HEAD /api/hello`, a connectivity check (answered 404, not recorded), which
 *   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 turns off; in `-p` mode no title, quota or Haiku
 *   request was seen, Bash and Write calls included. Its turns go to `/v1/messages?beta=true`.
 * - codex: none; every request is a streamed `POST /v1/responses` turn.
 * - gemini: before each user turn, its model router calls `:generateContent` on a flash-lite model
 *   with `responseMimeType: application/json` and a `complexity_score` schema; the default reply
 *   answers such requests with the smallest JSON the schema accepts (score 1), which routes the
 *   turn to a flash model. Turns stream (`:streamGenerateContent?alt=sse`); the router is not
 *   asked again after a function response.
 */

/**
 * Environment for `claude -p` (also set HOME to a scratch directory). Non-essential traffic
 * (auto-update, telemetry, error reports) is switched off so claude talks to the mock only.
 */
export function claudeEnv(server: Pick<MockLlmServer, 'anthropicBaseUrl'>): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: server.anthropicBaseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  };
}

/** The variable codex reads the provider's key from (named by `env_key` in the config). */
export const CODEX_KEY_ENV = 'LOCAL_API_KEY';

/**
 * `$CODEX_HOME/config.toml` for a provider on the mock's Responses wire, with the update check and
 * analytics off. `retries` sets both `request_max_retries` and `stream_max_retries` (default 0:
 * every fault reaches codex at once); undefined leaves codex's own defaults (4 and 5).
 *
 * `mcp_optional_startup_grace_ms = 0`: codex 0.171 builds its first turn's tools after waiting at
 * most 1 s in all (the default 1000) for the MCP servers it starts, and a server still starting
 * then (`baton mcp` answers in about 0.4 s on an idle machine, several seconds on a busy one) is
 * left out of the turn without a word, so a scripted call of its tools fails ("unsupported call").
 * With 0, codex waits for each server up to its `startup_timeout_sec` (default 10 s).
 */
export function codexConfigToml(
  server: Pick<MockLlmServer, 'openaiBaseUrl'>,
  options: { retries?: number | undefined } = { retries: 0 },
): string {
  const lines = [
    'model = "mock-model"',
    'model_provider = "local"',
    'check_for_update_on_startup = false',
    'mcp_optional_startup_grace_ms = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[model_providers.local]',
    'name = "local"',
    `base_url = "${server.openaiBaseUrl}"`,
    `env_key = "${CODEX_KEY_ENV}"`,
    'wire_api = "responses"',
  ];
  if (options.retries !== undefined) {
    lines.push(`request_max_retries = ${options.retries}`, `stream_max_retries = ${options.retries}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Environment for `gemini -p` (HOME must hold `.gemini/settings.json` = GEMINI_SETTINGS). */
export function geminiEnv(server: Pick<MockLlmServer, 'geminiBaseUrl'>): Record<string, string> {
  return {
    GOOGLE_GEMINI_BASE_URL: server.geminiBaseUrl,
    GEMINI_API_KEY: 'x',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
}

/**
 * `~/.gemini/settings.json`: API-key auth (so gemini does not ask to log in), no auto-update and no
 * usage statistics. `general.maxAttempts` (1 to 10, default 10) bounds its retries.
 */
export const GEMINI_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
} as const;

/** The variable openclaw's provider config reads its key from (`apiKey: "${OPENCLAW_KEY_ENV}"`). */
const OPENCLAW_KEY_ENV = 'MOCK_API_KEY';

/**
 * `~/.openclaw/openclaw.json` (JSON5; plain JSON here) for openclaw 2026.9: one provider on the
 * mock's Chat Completions wire, no update check or catalog refresh.
 */
export function openclawConfig(server: Pick<MockLlmServer, 'openaiBaseUrl'>): Record<string, unknown> {
  const model = {
    id: 'mock-model',
    name: 'Mock',
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 128000,
    maxTokens: 4096,
  };
  return {
    update: { checkOnStart: false },
    models: {
      mode: 'replace',
      catalogRefresh: { enabled: false },
      providers: {
        mock: {
          baseUrl: server.openaiBaseUrl,
          apiKey: `\${${OPENCLAW_KEY_ENV}}`,
          api: 'openai-completions',
          models: [model],
        },
      },
    },
    agents: { defaults: { model: { primary: 'mock/mock-model' } } },
  };
}

/** Environment for `openclaw agent exec` (also HOME with `.openclaw/openclaw.json`): offline, one process. */
export function openclawEnv(): Record<string, string> {
  return {
    [OPENCLAW_KEY_ENV]: 'x',
    OPENCLAW_NO_RESPAWN: '1',
    OPENCLAW_NO_AUTO_UPDATE: '1',
    OPENCLAW_OFFLINE: '1',
    DO_NOT_TRACK: '1',
  };
}

function envLine(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
}

/** The startup message: base URLs of every wire, then what each agent CLI needs. */
export function agentCliSetupText(server: MockLlmServer): string {
  const toml = codexConfigToml(server)
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '' : `      ${line}`))
    .join('\n');
  return [
    `mock model server listening on ${server.url}`,
    `  OpenAI Chat Completions: baseUrl ${server.openaiBaseUrl}  (POST /chat/completions; provider: openai)`,
    `  OpenAI Responses:        baseUrl ${server.openaiBaseUrl}  (POST /responses)`,
    `  Anthropic Messages:      baseUrl ${server.anthropicBaseUrl}  (POST /v1/messages; provider: anthropic)`,
    `  Gemini:                  baseUrl ${server.geminiBaseUrl}  (POST /v1beta/models/<model>:generateContent)`,
    'Agent CLIs (run them with HOME pointed at a scratch directory):',
    `  claude:  ${envLine(claudeEnv(server))} claude -p --output-format json --permission-mode acceptEdits "…"`,
    `  codex:   CODEX_HOME=<dir> ${CODEX_KEY_ENV}=x codex exec --json --skip-git-repo-check --sandbox workspace-write "…" </dev/null`,
    '    <dir> outside /tmp (else, under a bubblewrap older than 0.9, its shell tool cannot run: docs/agent-clis.md, codex)',
    '    with <dir>/config.toml:',
    toml,
    `  gemini:  ${envLine(geminiEnv(server))} gemini -p "…" -o json --approval-mode auto_edit`,
    `    with ~/.gemini/settings.json: ${JSON.stringify({ security: GEMINI_SETTINGS.security })}`,
    `  openclaw (Node >= 24.16): ${envLine(openclawEnv())} openclaw agent exec --json "…"`,
    `    with ~/.openclaw/openclaw.json: ${JSON.stringify(openclawConfig(server))}`,
    '  Script agent turns with "when": {"hasTools": true} so side requests do not use them up.',
    '',
  ].join('\n');
}
