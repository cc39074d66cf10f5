import { agentStepSuite } from './helpers/agent-step-suite.js';

// The real codex CLI (node_modules/.bin/codex) driven by the baton binary against the mock model server.
agentStepSuite('codex');
