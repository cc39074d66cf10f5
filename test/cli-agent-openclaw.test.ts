import { agentStepSuite } from './helpers/agent-step-suite.js';
import { describeWithOpenclaw } from './helpers/mock-cli.js';

// The real openclaw 2026.9 (test/hosts/openclaw, installed by the root package's prepare script),
// run with the Node 26 it needs, driven by the baton binary (on Node 20) against the mock.
describeWithOpenclaw('openclaw', () => agentStepSuite('openclaw'));
