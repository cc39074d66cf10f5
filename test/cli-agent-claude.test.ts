import { agentStepSuite } from './helpers/agent-step-suite.js';

// The real claude CLI (node_modules/.bin/claude) driven by the baton binary against the mock model server.
agentStepSuite('claude');
