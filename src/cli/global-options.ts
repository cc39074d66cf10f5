import type { RuntimeOptions } from '../runtime/home.js';

/** The options every command takes: where Baton keeps its state (see runtime/home.ts), and --json. */
export interface GlobalOptions extends RuntimeOptions {
  json?: boolean;
}
