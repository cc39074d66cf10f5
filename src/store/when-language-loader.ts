import { createRequire } from 'node:module';
import { type CelLibrary, provideWhenLanguage } from '../core/when-language.js';

/**
 * Hands the core the CEL interpreter of a step's `when` and a fan-out's `forEach.items`
 * (core/when-language.ts), required from node_modules by the first plan that has one: a process
 * whose plans have none never loads it (it cost every `import` of the package and every CLI command
 * about 7 ms when the core imported it). The core decides synchronously and may load nothing, so
 * this is imported, for this effect, by what runs the core's decisions (store/cycle/) and what
 * validates plans (workflow/define-workflow.ts, workflow/parse-plan-text.ts).
 */
provideWhenLanguage(() => createRequire(import.meta.url)('@marcbachmann/cel-js') as CelLibrary);
