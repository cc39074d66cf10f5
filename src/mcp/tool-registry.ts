import type { BatonTool } from './tool-kit.js';
import { bulkTools } from './tools-bulk.js';
import { fileChangesTool, rerunTool, rollbackTool } from './tools-files.js';
import { planTools, runTool } from './tools-plans.js';
import { runTools } from './tools-runs.js';
import { scheduleTools } from './tools-schedules.js';
import { stepTools } from './tools-steps.js';
import { triggerTools } from './tools-triggers.js';

/**
 * Every tool `baton mcp` serves, in the order a host lists them: the server registers these, and
 * `baton mcp --help` names them from here, so a new tool is listed in both or in neither.
 */
export const MCP_TOOLS: readonly BatonTool[] = [
  ...planTools,
  ...runTools,
  ...stepTools,
  ...scheduleTools,
  ...triggerTools,
  fileChangesTool,
];

/** Served only with `--allow-run`: starting work (or running it again) without the person's approval, rewriting files. */
export const ALLOW_RUN_TOOLS: readonly BatonTool[] = [runTool, rollbackTool, rerunTool, ...bulkTools];
