// Every test process trusts the fixture agents, as an operator would with BATON_TRUSTED_AGENTS.
import { TRUSTED_FIXTURES } from './helpers/trusted-fixtures.js';

process.env.BATON_TRUSTED_AGENTS = TRUSTED_FIXTURES;
