import { createRequire } from 'node:module';
import { provideLinearRegex } from '../core/expression-meter.js';
import { type CronLibrary, provideCron } from '../core/schedule/slot-clock.js';
import { type CelLibrary, provideWhenLanguage } from '../core/when-language.js';

/**
 * Hands the core the libraries it decides with but may not load itself (the core is synchronous
 * and does no I/O), each required from node_modules by its first use, so a process that never
 * needs one never pays for it:
 * - the CEL interpreter of a step's `when` and a fan-out's `forEach.items` (core/when-language.ts),
 *   needed by the first plan that has one (about 7 ms when the core imported it), and RE2JS, the
 *   linear-time regular expressions of its `matches()` (core/expression-meter.ts), needed by the
 *   first expression that matches;
 * - croner, the cron expressions of schedules (core/schedule/slot-clock.ts), needed by the first
 *   schedule added, listed or ticked (about 6 ms of every `import` of the package and every CLI
 *   command when the core imported it; its CommonJS build, required, about 3.5 ms).
 * Imported, for this effect, by what runs the core's decisions (store/cycle/, store/schedules/),
 * what validates plans (workflow/define-workflow.ts, workflow/parse-plan-text.ts, through
 * runtime/core-libraries.ts) and what checks
 * schedules (runtime/schedule-options.ts, runtime/schedule-view.ts).
 */
const require = createRequire(import.meta.url);
provideWhenLanguage(() => require('@marcbachmann/cel-js') as CelLibrary);
provideLinearRegex((pattern) => {
  const compiled = (require('re2js') as typeof import('re2js')).RE2JS.compile(pattern);
  return { test: (text) => compiled.test(text), programSize: compiled.programSize() };
});
provideCron(() => (require('croner') as typeof import('croner')).Cron satisfies CronLibrary);
