import { basename } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that take longest, with their seconds on a loaded 2-core machine (measured
 * 2026-12-04, `vitest run --reporter=json`; the openclaw and gemini files plus the longer step
 * timeouts they wait out since, test/helpers/agent-cli-bounds.ts): the real agent CLIs (openclaw
 * alone is several minutes, most of it the CLI starting), PostgreSQL clusters, SIGKILL tests.
 * Vitest orders files it has no timings for (a fresh clone, CI) by size, largest first, and the
 * real-CLI suites are one-line files (test/helpers/agent-step-suite.ts holds them), so they ran
 * last and one worker spent its last 200 s alone. Started first, the two workers finish together.
 * Approximate figures are enough: only the order matters.
 */
const SECONDS: Record<string, number> = {
  'cli-agent-openclaw.test.ts': 510,
  'cli-agent-openclaw-host.test.ts': 230,
  'cli-agent-gemini.test.ts': 146,
  'openclaw-heartbeat.test.ts': 86,
  'pg-workers.test.ts': 66,
  'mcp-real-host.test.ts': 60,
  'cli-skill-mcp-hosts.test.ts': 55,
  'pg-migrate.test.ts': 52,
  'cli-agent-claude.test.ts': 45,
  'cli-agent-codex.test.ts': 41,
  'cli-trust.test.ts': 28,
  'cli-bad-input.test.ts': 28,
  'cli-agents.test.ts': 28,
  'docs-examples.test.ts': 27,
  'legacy-crash.test.ts': 25,
  'schedules-crash.test.ts': 25,
  'flow-workers.test.ts': 23,
};

/** Longest files first (by SECONDS), then Vitest's own order (cached timings, else size). */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const seconds = (spec: TestSpecification) => SECONDS[basename(spec.moduleId)] ?? 0;
    return ordered
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => seconds(b.spec) - seconds(a.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
