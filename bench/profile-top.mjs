// Summarizes a V8 .cpuprofile by self time per function.
// Usage: node bench/profile-top.mjs <file.cpuprofile | dir> [--top 15] [--dist] [--fold-native]
//   --dist          only Baton's code (dist/, i.e. src/)
//   --fold-native   charge native calls (better-sqlite3's run/get/all, including COMMIT's fsync)
//                   to the JS function that made them, so each src function's SQL counts as its own
// Profiles come from `node --cpu-prof` or from a workload run with BENCH_PROFILE=<dir>.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '15' },
    dist: { type: 'boolean', default: false },
    'fold-native': { type: 'boolean', default: false },
  },
});
const target = positionals[0];
if (!target) {
  process.stderr.write('usage: profile-top.mjs <file.cpuprofile | dir> [--top n] [--dist] [--fold-native]\n');
  process.exit(2);
}
const files = statSync(target).isDirectory()
  ? readdirSync(target)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => join(target, f))
  : [target];

const SPECIAL = new Set(['(garbage collector)', '(program)', '(idle)', '(root)']);
const byFunction = new Map();
let totalMs = 0;
for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const selfUs = new Map();
  for (const [i, id] of profile.samples.entries()) {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const label = (node) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    return `${functionName || '(anonymous)'}  ${where}${url ? `:${lineNumber + 1}` : ''}`;
  };
  for (const node of profile.nodes) {
    const ms = (selfUs.get(node.id) ?? 0) / 1000;
    if (ms === 0) continue;
    totalMs += ms;
    let owner = node;
    if (values['fold-native'] && !SPECIAL.has(node.callFrame.functionName)) {
      // Walk up past native frames and library code to the nearest function of Baton's own.
      let at = node;
      while (at && !at.callFrame.url.includes('/dist/')) at = nodes.get(parent.get(at.id));
      if (at) owner = at;
    }
    const name = label(owner);
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms);
  }
}
const rows = [...byFunction]
  .filter(([name]) => !values.dist || name.includes(' dist/'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top));
process.stdout.write(`${files.length} profile(s), ${totalMs.toFixed(0)} ms sampled\n`);
for (const [name, ms] of rows)
  process.stdout.write(
    `${ms.toFixed(1).padStart(9)} ms ${((100 * ms) / totalMs).toFixed(1).padStart(5)}%  ${name}\n`,
  );
