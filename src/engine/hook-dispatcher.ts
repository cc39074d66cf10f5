import { spawn } from 'node:child_process';
import { childEnvironment } from '../core/child-env.js';
import { hookBody } from '../core/hook-format.js';
import { ntfyTarget } from '../core/hook-formats/ntfy.js';
import { hookRetryDelayMs, hookUrlProblem } from '../core/hooks.js';
import type { HookSpec } from '../core/plan/types.js';
import { redactSecrets } from '../core/redact.js';
import { type PlanSecretEnv, runSecrets } from '../core/run-secrets.js';
import { type CommandVerdict, checkAgentCommand } from '../executors/command-policy.js';
import { trustedPrograms } from '../executors/trusted-programs.js';
import { type HookDelivery, NO_STEPS, type Store } from '../store/store.js';
import { hookMessage } from './hook-message.js';

interface HookDispatcherOptions {
  owner: string;
  now?: () => number;
  /** How long a claimed call is reserved for this process. Default 60,000 ms. */
  leaseMs?: number;
  /** Environment of hook commands. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** A hook that failed for good, and why. */
  onFailure?: (delivery: HookDelivery, error: string) => void;
  /**
   * What is masked for a run whose plan names these secret variables: in the payload and in the
   * recorded reason of a failed call (a command's stderr may echo one). Default: nothing more than
   * the hook's own URL.
   */
  secretsFor?: (plan: PlanSecretEnv) => readonly string[];
  /** The Baton home, whose trusted programs a hook command may be (see trusted-programs.ts). */
  home?: string;
}

/**
 * Makes the hook calls the store owes (one per matching event, written with the event): a command
 * (argv, no shell, the payload as JSON on stdin) or a JSON POST, each with a timeout, retried with
 * backoff up to the hook's `retries`, then recorded as failed.
 */
export class HookDispatcher {
  private running: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly options: HookDispatcherOptions,
  ) {}

  /** Starts delivering what is due, unless a round is already under way. */
  kick(): void {
    if (this.running) return;
    this.running = this.deliverAllDue()
      .catch(() => undefined)
      .finally(() => {
        this.running = null;
      });
  }

  /** Delivers everything due now and waits for it (later retries are left for the next round). */
  async drain(): Promise<void> {
    await this.running;
    await this.deliverAllDue();
  }

  private async deliverAllDue(): Promise<void> {
    while ((await this.deliverRound()) > 0) {
      // Deliveries made due by the ones just done (none today) or claimed by nobody yet.
    }
  }

  private async deliverRound(): Promise<number> {
    const now = this.options.now ?? Date.now;
    const deliveries = await this.store.claimHookDeliveries(
      this.options.owner,
      now(),
      this.options.leaseMs ?? 60_000,
      16,
    );
    await Promise.all(deliveries.map((delivery) => this.deliver(delivery, now)));
    return deliveries.length;
  }

  private async deliver(delivery: HookDelivery, now: () => number): Promise<void> {
    const env = this.options.env ?? process.env;
    const plan = planSecretsOf(delivery);
    const secrets = this.options.secretsFor?.(plan) ?? runSecrets({ env, plan });
    // Events are masked when recorded; this also covers what was recorded by a process without the secret.
    const message = await hookMessage(this.store, delivery, { env, home: this.options.home, secrets });
    const { spec } = delivery;
    const format = spec.format ?? 'json';
    const render = (ntfyTopic?: string) =>
      JSON.stringify(hookBody(format, message.payload, message.notification, ntfyTopic));
    // A command runs in the run's workspace, the folder its relative paths were checked against
    // when the plan was stored, whatever folder this process was started in.
    const cwd = spec.command ? await this.workspaceOf(delivery) : undefined;
    const verdict = spec.command ? this.check(spec.command, cwd) : null;
    const failure =
      verdict?.ok === false
        ? `hook command ${JSON.stringify(spec.command)} refused: ${verdict.reason}`
        : spec.command
          ? await callCommand(
              spec.command,
              verdict?.ok ? verdict.executable : null,
              render(),
              spec.timeoutMs,
              childEnvironment({ env, plan }),
              cwd,
            )
          : await postToHook(spec, env, render);
    if (failure === null) {
      await this.store.finishHookDelivery(delivery, { ok: true }, now());
      return;
    }
    const error = redactSecrets(failure, secrets);
    const attempts = delivery.attempts + 1;
    const retryAt = attempts <= spec.retries ? now() + hookRetryDelayMs(attempts) : null;
    await this.store.finishHookDelivery(delivery, { ok: false, error, retryAt }, now());
    if (retryAt === null) this.options.onFailure?.(delivery, error);
  }

  /**
   * Checked at each call as at validation, against the same folder (the run's workspace): the
   * program behind a path may have changed since.
   */
  private check(command: readonly string[], cwd: string | undefined): CommandVerdict {
    return checkAgentCommand(command, {
      ...(cwd === undefined ? {} : { cwd }),
      trust: trustedPrograms(this.options.home ?? null, this.options.env ?? process.env),
    });
  }

  /** The run's workspace (undefined: the run is gone, and this process's folder stands in). */
  private async workspaceOf(delivery: HookDelivery): Promise<string | undefined> {
    return (await this.store.getRunSteps(delivery.runId, NO_STEPS))?.workspace;
  }
}

/** The plan's secret variables; at least the hook's own URL variable when a store gives none. */
function planSecretsOf(delivery: HookDelivery): PlanSecretEnv {
  return (
    delivery.secretEnv ?? { hookUrlEnv: delivery.spec.urlEnv ? [delivery.spec.urlEnv] : [], apiKeyEnv: [] }
  );
}

/** Runs `argv` in `cwd` with `input` on stdin; null on exit 0, else what went wrong. */
function callCommand(
  argv: readonly string[],
  executable: string | null,
  input: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  cwd: string | undefined,
): Promise<string | null> {
  return new Promise((resolve) => {
    // The file the policy checked, never a new search by name (argv[0] keeps its meaning).
    const child = spawn(executable ?? argv[0]!, argv.slice(1), {
      argv0: argv[0]!,
      stdio: ['pipe', 'ignore', 'pipe'],
      env,
      ...(cwd === undefined ? {} : { cwd }),
    });
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(`hook command ${argv[0]} could not start: ${error.message}`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(null);
      else
        resolve(
          `hook command ${argv[0]} ${signal ? `was killed (${signal})` : `exited ${code}`}: ${stderr.trim().slice(0, 300)}`,
        );
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

/**
 * POSTs to the plan's URL, or to the one the variable `urlEnv` names holds now: an ntfy hook to its
 * server's root with the topic in the body (ntfy's JSON publishing).
 */
async function postToHook(
  spec: HookSpec,
  env: NodeJS.ProcessEnv,
  render: (ntfyTopic?: string) => string,
): Promise<string | null> {
  let url = spec.url ?? '';
  if (spec.urlEnv !== undefined) {
    url = env[spec.urlEnv] ?? '';
    if (!url) return `hook URL variable ${spec.urlEnv} is not set in this process's environment`;
    const problem = hookUrlProblem(url);
    if (problem !== null) return `hook URL variable ${spec.urlEnv} ${problem}`;
  }
  if (spec.format !== 'ntfy') return postJson(url, render(), spec.timeoutMs, spec.format);
  const target = ntfyTarget(url);
  if ('problem' in target)
    return `hook URL${spec.urlEnv ? ` variable ${spec.urlEnv}` : ''} ${target.problem}`;
  return postJson(target.postUrl, render(target.topic), spec.timeoutMs, spec.format);
}

async function postJson(
  url: string,
  body: string,
  timeoutMs: number,
  format: HookSpec['format'],
): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text().catch(() => '');
    if (!response.ok) return `hook ${new URL(url).host} answered HTTP ${response.status}`;
    return format === 'feishu' ? feishuRefusal(text, url) : null;
  } catch (error) {
    return `hook ${safeHost(url)} failed: ${fetchFailure(error, url)}`;
  }
}

/** Feishu answers HTTP 200 with a non-zero `code` when it refuses a message (a bad card, a wrong signature). */
function feishuRefusal(text: string, url: string): string | null {
  try {
    const answer = JSON.parse(text) as { code?: unknown; msg?: unknown };
    if (typeof answer.code !== 'number' || answer.code === 0) return null;
    return `hook ${new URL(url).host} refused the message: code ${answer.code}${typeof answer.msg === 'string' ? ` (${answer.msg.slice(0, 200)})` : ''}`;
  } catch {
    return null;
  }
}

/**
 * Why a POST failed, without the URL (its path or query may hold the receiver's token): fetch names
 * the URL in some messages (a URL it refuses), and the socket error sits in `cause`.
 */
function fetchFailure(error: unknown, url: string): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const why = typeof cause?.code === 'string' ? cause.code : cause?.message;
  const detail = typeof why === 'string' ? `${error.message} (${why})` : error.message;
  let href = url;
  try {
    href = new URL(url).href;
  } catch {}
  const host = safeHost(url);
  return detail.replaceAll(url, host).replaceAll(href, host);
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'url';
  }
}
