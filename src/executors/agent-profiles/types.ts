import type { DeclarableClass } from '../../core/declared-failure.js';
import type { FailureClass, StepUsage } from '../../core/failure.js';
import type { AgentProfileName, AgentSpec } from '../../core/plan/types.js';

/**
 * An agent profile is what Baton knows about one agent CLI: the flags that make its output
 * machine-readable, how to read that output (answer, usage, error), what its exit codes mean, how
 * to pass it the prompt safely and how to cap its own retries. Profiles read text and return
 * data: no I/O happens here.
 */
type ProfileName = AgentProfileName;

/** An error the model provider answered, as the CLI reported it. */
export interface ProviderError {
  /** The HTTP status, when the CLI reports one (claude `api_error_status`, gemini `error.code`). */
  status?: number;
  /** The provider's or the CLI's error type (`rate_limit_error`, `RESOURCE_EXHAUSTED`, …). */
  type?: string;
  /** The provider's own message: what a human reads in `status` and the troubleshoot prompt. */
  message: string;
  /** A wait the CLI or the provider asked for. */
  retryAfterMs?: number;
  /**
   * The class the record itself declares (the generic profile: its HTTP status, through
   * core/declared-failure.ts `classOfDeclaredStatus`); it decides before any other rule.
   */
  declaredClass?: DeclarableClass;
}

/** Tokens an agent run used, summed over every model the CLI called. */
export interface AgentUsage extends StepUsage {
  /** Of `inputTokens`, those read from the provider's prompt cache. */
  cacheReadTokens: number;
  /** Of `inputTokens`, those written to the provider's prompt cache. */
  cacheWriteTokens: number;
  /** Whether `costUsd` is the CLI's own figure (claude, opencode) rather than 0 for "not reported". */
  costReported: boolean;
}

/** What a profile read from the output of one run. Every field is optional: output may be cut or absent. */
export interface AgentReport {
  /** The final answer: the step's summary. */
  answer?: string;
  usage?: AgentUsage;
  /** The CLI's own record says the run failed (claude `is_error`, codex `turn.failed`, gemini `error`). */
  error?: ProviderError;
  /** A problem of the command or the machine that no retry fixes (untrusted folder, no auth, a bad flag). */
  setup?: SetupProblem;
}

export interface SetupProblem {
  failureClass: Extract<FailureClass, 'invalid' | 'fatal'>;
  message: string;
}

/** One documented exit code. */
export interface ExitMeaning {
  meaning: string;
  /** The class this exit decides by itself; undefined: the output decides. */
  failureClass?: FailureClass;
}

/** What one process printed, for a profile to read. */
export interface AgentOutput {
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/** Environment and argv changes that cap the CLI's own retries (see `capRetries` in the plan). */
export interface RetryCap {
  env: Record<string, string>;
  /** Arguments inserted right after the program's subcommand (codex `exec`) or the program. */
  args: string[];
  /**
   * Settings to merge over the user's own settings file, for a CLI whose retry knob lives only there
   * (gemini's `general.maxAttempts`): Baton points `envVar` (the CLI's home override) at a folder of
   * its own whose `configDir` links to every entry of the user's, except `settingsFile`, merged.
   */
  overlay?: {
    envVar: string;
    configDir: string;
    settingsFile: string;
    settings: Record<string, unknown>;
    /** Files the CLI reads from its home itself (gemini: `.env`), linked into the overlay's root. */
    homeFiles?: readonly string[];
    /**
     * Folders of its config folder where the CLI keeps what must outlive the attempt (gemini's
     * `tmp`, its saved sessions): created in the user's config folder when missing, so that the
     * overlay links to them rather than the CLI making them in the overlay, removed with it.
     */
    keptFolders?: readonly string[];
  };
  /** Shown by `baton agents` and docs/agent-clis.md: what Baton sets. */
  description: string;
  /**
   * What the user must set themselves, for a CLI whose retry knob Baton cannot reach (openclaw's
   * lives in the workspace, where Baton does not write) and that is not set yet: a plan warning.
   */
  reminder?: string;
}

/** What a profile may look at to find the CLI's configuration (read-only; I/O stays in the executor). */
interface RetryCapContext {
  /** The environment the CLI will get. */
  env: Readonly<Record<string, string | undefined>>;
  /** A text file's content, undefined when it cannot be read. */
  readTextFile(path: string): string | undefined;
  /** The folder the CLI will run in, when known (plan warnings): where a workspace setting lives. */
  workspace?: string;
}

/** Files a CLI keeps outside its temp folder: in `folder`, every name that contains `nameIncludes`. */
export interface StrayFiles {
  folder: string;
  nameIncludes: string;
}

/**
 * A place the CLI writes to run (its config, state or cache), bound writable when it runs confined
 * (sandbox: workspace). A folder that does not exist yet is created first, as the CLI would; a file
 * that does not exist is created only when it has `initialContent`, else left out (nothing to bind).
 */
export interface WritablePath {
  path: string;
  kind: 'dir' | 'file';
  /** A file the CLI rewrites in place: created with this content when missing, so it can be bound. */
  initialContent?: string;
}

export interface AgentProfile {
  name: ProfileName;
  /** Program base names that select this profile (`claude`, `codex`). */
  programs: readonly string[];
  /**
   * Where the genuine CLI lives, so that a program merely named like it is not taken for it: the npm
   * packages whose files it runs (`@openai/codex`), and folders under the user's home where its own
   * installer puts it (`.local/share/claude/versions`). Anything else needs `baton trust add`.
   */
  installs: { packages: readonly string[]; homeFolders?: readonly string[] };
  /**
   * The API-key variables the CLI reads itself: a plan's model-step keys (`apiKeyEnv`) in this
   * list still reach it; the others are withheld (see core/child-env.ts).
   */
  readsEnv: readonly string[];
  /** The flags to add for machine-readable output, as a user writes them. */
  outputFlags: string;
  /** Problems of a command that Baton can still run: a missing output flag, a prompt a flag would swallow. */
  commandWarnings(command: readonly string[]): string[];
  /** Argv and stdin for one attempt, with the prompt placed where the CLI's parser keeps it one argument. */
  invocation(agent: AgentSpec, prompt: string, programIndex?: number): { argv: string[]; stdinText?: string };
  /** How Baton caps the CLI's own retries to `retries`; undefined: the CLI has no such knob. */
  retryCap?(command: readonly string[], retries: number, context: RetryCapContext): RetryCap;
  /** Reads what the CLI printed. */
  read(output: AgentOutput): AgentReport;
  /** The CLI's documented exit codes. */
  exitCodes: Readonly<Record<number, ExitMeaning>>;
  /**
   * Where the CLI must write besides the workspace and /tmp, for the environment it gets (HOME,
   * its own variables): its config and cache folders. The one list the sandbox binds writable.
   */
  confinedWritable?(env: Readonly<Record<string, string | undefined>>): WritablePath[];
  /**
   * The CLI gets a temp folder of its own for each attempt (TMPDIR, TMP and TEMP point into it),
   * removed when the attempt ends however it ends, with what the CLI left in it. `strays`: what the
   * CLI keeps outside that folder under names derived from what it made inside (openclaw's lock
   * files), from the real path of the folder, the entries seen in it and the user id.
   */
  attemptTemp?: {
    strays?(tempDir: string, entries: readonly string[], uid: number | undefined): StrayFiles[];
  };
  /**
   * How the CLI keeps a conversation across attempts (`agent.resume`), for a CLI whose session Baton
   * can name in advance; undefined: every attempt starts fresh.
   */
  session?: AgentSessionSupport;
  /**
   * `agent.approve`: the options that make the CLI ask Baton's permission prompt tool (an MCP
   * server in `configPath`, see mcp/tool-approval-server.ts) before a tool runs; absent: the CLI
   * offers no such hook, and a plan asking for it is refused.
   */
  toolApprovals?: { args: (configPath: string) => string[]; ownFlags: readonly string[] };
}

/** What Baton adds to a CLI's command to start or continue a session of its own (agent-session.ts). */
export interface AgentSessionSupport {
  /** Flags (or subcommands) already in the user's command that choose the session: Baton adds none. */
  ownFlags: readonly string[];
  /** Whether this form of the command keeps a session at all (openclaw's `agent exec` does not); absent: every form. */
  keepsSessions?(command: readonly string[]): boolean;
  /** The options that start a new session named `id` (a UUID); absent: the CLI names its sessions. */
  start?(id: string): string[];
  /**
   * A named session is continued under its own name instead of forked (openclaw): a retry goes on in
   * the session the attempt before used, as recorded beside that attempt's log.
   */
  inPlace?: true;
  /** A CLI that names its sessions: the id it printed, found in an attempt's log. */
  found?(log: string): string | undefined;
  /** The options (before the CLI's `--`) that continue session `previous`, as a session named `id`. */
  resume(previous: string, id: string): string[];
  /** Whether the CLI refused to resume because it found no session `previous` (its stderr). */
  missing(output: AgentOutput): boolean;
}

/** The provider keys a CLI that talks to many providers (opencode, aider, openclaw) may read. */
export const MULTI_PROVIDER_KEYS: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'OPENROUTER_API_KEY',
  'MISTRAL_API_KEY',
  'DEEPSEEK_API_KEY',
  'GROQ_API_KEY',
];
