// The libraries the core decides with (CEL, RE2JS, croner), handed to it for a front door that
// validates plans without the runtime's other modules (workflow/define-workflow.ts,
// workflow/parse-plan-text.ts): a door imports this, never store/ itself (see store/core-libraries.ts).
import '../store/core-libraries.js';
