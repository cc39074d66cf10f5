/**
 * How long the real agent CLIs may take on a loaded 2-core machine (CI runs two test files at once,
 * beside other work: load averages of 12-20 were seen), and the bounds of the tests that run them.
 *
 * A CLI's start is CPU work, so it stretches with the load. Time from spawn to its first model
 * request, measured (idle / beside two CPU burners / beside other suites at a load of 15-20):
 * claude and codex 1.2 s / - / -; gemini 4 s / 6.5 s / 16 s; openclaw 21 s / 33 s / more than 60 s
 * (about 20 s of CPU every run: its plugins, and a fresh SQLite state it makes and maintains).
 */
import type { AgentCli } from './mock-cli.js';

/**
 * The step timeout of a test that expects the timeout to stop the CLI at work (a hang in its shell
 * tool, a stalled model): the CLI must have started and reached that work within it, or the test
 * sees nothing to stop. About 5-8 times the idle start, and at least 20 s. Such a test waits it out.
 */
export const CLI_START_MS: Record<AgentCli, number> = {
  claude: 20_000,
  codex: 20_000,
  gemini: 45_000,
  openclaw: 120_000,
};

/** The step timeout of a test that is not about timeouts: a start and a few turns. */
export function attemptBoundMs(cli: AgentCli): number {
  return Math.max(120_000, 2 * CLI_START_MS[cli]);
}

/** The deadline of a `baton run` whose attempts come `inSequence` one after the other. */
export function runBoundMs(cli: AgentCli, inSequence = 1): number {
  return inSequence * attemptBoundMs(cli) + 30_000;
}

/** A test's own timeout: its `baton run` (see runBoundMs), and what it reads before and after. */
export function testBoundMs(cli: AgentCli, inSequence = 1): number {
  return runBoundMs(cli, inSequence) + 60_000;
}
