import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { agentCommandWarnings } from '../../executors/agent-profiles/command-warnings.js';
import { type AgentCliInfo, inspectAgentClis } from '../../executors/agent-setup.js';
import { probeSandbox, type SandboxProbe } from '../../executors/sandbox.js';
import { trustedPrograms } from '../../executors/trusted-programs.js';
import { resolveHome } from '../../runtime/home.js';
import { loadPlanFile } from '../../workflow/load-plan-file.js';
import { EXIT } from '../exit-codes.js';
import { printJson } from '../format.js';
import type { GlobalOptions } from '../global-options.js';
import { hasBatonServer, MCP_HOSTS, type McpHost, mcpConfigOf } from './mcp-hosts.js';

interface AgentsOptions extends GlobalOptions {
  plan?: string;
  workspace?: string;
}

/**
 * `baton agents`: the agent CLIs on PATH, their versions and profiles, what is misconfigured and how
 * to fix it; with `--plan`, what the plan's agent commands lack for Baton to read their output.
 */
export async function agentsCommand(options: AgentsOptions): Promise<number> {
  const loaded = options.plan === undefined ? undefined : await loadPlanFile(options.plan);
  const workspace = resolve(
    options.workspace ??
      (loaded ? resolve(dirname(loaded.absPath), loaded.plan.workspace ?? '.') : process.cwd()),
  );
  const trust = trustedPrograms(resolveHome(options), process.env);
  const agents = await inspectAgentClis({ env: process.env, workspace, trust });
  const warnings = loaded ? agentCommandWarnings(loaded.plan, workspace) : [];
  // Tried for real: bwrap starts a sandbox with the namespaces and mounts confined steps use.
  const sandbox = probeSandbox(process.env);
  const mcp = mcpServerRegistrations();
  if (options.json) {
    printJson({
      workspace,
      agents,
      sandbox,
      mcp,
      ...(loaded ? { plan: { path: options.plan, warnings } } : {}),
    });
    return EXIT.ok;
  }
  const out: string[] = [];
  for (const agent of agents) out.push(...describe(agent));
  out.push('', ...describeSandbox(sandbox));
  out.push('', 'MCP server (baton mcp) registered with:');
  for (const entry of mcp) {
    const where = entry.registeredIn.length > 0 ? `✓ ${entry.registeredIn.join(', ')}` : `✗ not registered`;
    const fix = entry.registeredIn.length > 0 ? '' : ` (baton skill install --target ${entry.host})`;
    out.push(`  ${entry.host}: ${where}${fix}`);
  }
  if (loaded) {
    out.push('', `plan ${options.plan}:`);
    if (warnings.length === 0) out.push('  every agent command prints what Baton reads');
    for (const warning of warnings) out.push(`  ✗ ${warning.where} (${warning.profile}): ${warning.message}`);
    const confined = loaded.plan.steps.filter((step) => step.sandbox === 'workspace');
    if (!sandbox.ok && confined.length > 0) {
      const ids = confined.map((step) => step.id).join(', ');
      out.push(
        `  ✗ steps ${ids} ask for sandbox: workspace, which cannot run here: baton run refuses the plan`,
      );
    }
  }
  const found = agents.filter((agent) => agent.path !== null);
  out.push(
    '',
    `${found.length} of ${agents.length} known agent CLIs found; any other program receives prompts only once trusted (baton trust add <program>) and runs with the generic profile.`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
  return EXIT.ok;
}

/** Whether each MCP host has the baton server in its project (this folder) or user config. */
function mcpServerRegistrations(): { host: McpHost; registeredIn: string[] }[] {
  const where = { cwd: process.cwd(), userHome: homedir(), env: process.env };
  return MCP_HOSTS.map((host) => {
    const configs = [false, true].map((global) => mcpConfigOf(host, { ...where, global }));
    const registeredIn = [...new Set(configs.filter(hasBatonServer).map((config) => config.path))];
    return { host, registeredIn };
  });
}

function describeSandbox(probe: SandboxProbe): string[] {
  if (probe.ok) {
    return [`confinement (sandbox: workspace): ✓ works (${probe.version ?? 'bwrap'} at ${probe.bwrap})`];
  }
  return [
    'confinement (sandbox: workspace): ✗ unavailable: plans that ask for it are refused',
    `  ✗ ${probe.problem}`,
    `    fix: ${probe.fix}`,
  ];
}

function describe(agent: AgentCliInfo): string[] {
  if (agent.path === null) return [`${agent.program}: not found on PATH`];
  const lines = [
    `${agent.program}: ${agent.version ?? 'version unknown'} at ${agent.path} (profile ${agent.profile})`,
    `  output: ${agent.outputFlags}; Baton caps its retries with ${agent.retryCap}`,
  ];
  if (agent.problems.length === 0) lines.push('  ✓ ready');
  for (const problem of agent.problems) lines.push(`  ✗ ${problem.problem}`, `    fix: ${problem.fix}`);
  return lines;
}
