import { agentStepSuite } from './helpers/agent-step-suite.js';

// The real gemini CLI (node_modules/.bin/gemini) driven by the baton binary against the mock model server.
agentStepSuite('gemini');
