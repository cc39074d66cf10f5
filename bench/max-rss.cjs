// Preloaded with `node -r bench/max-rss.cjs …` by the hostile-plans benchmark: prints this
// process's peak resident set size and CPU time (user + system) as it exits, so a child's figures
// are its own, not the parent's. CPU time is what a loaded machine disturbs least.
// With BENCH_RSS_PARTS=1 (Linux), also what the resident memory is at exit (BENCH_RSS_PARTS <json>,
// MB): the node executable's own pages, other mapped files (shared libraries, the SQLite addon),
// malloc's heap, anonymous memory (V8's heap and the rest), and V8's committed new and old space.
// They are read after the peak, so reading them cannot raise it.
process.on('exit', () => {
  const { userCPUTime, systemCPUTime, maxRSS } = process.resourceUsage();
  const fs = require('node:fs');
  fs.writeSync(2, `\nBENCH_MAX_RSS_KB ${maxRSS}\nBENCH_CPU_US ${userCPUTime + systemCPUTime}\n`);
  if (process.env.BENCH_RSS_PARTS === '1' && process.platform === 'linux') {
    fs.writeSync(2, `BENCH_RSS_PARTS ${JSON.stringify(rssParts(fs))}\n`);
  }
});

function rssParts(fs) {
  const executable = fs.realpathSync(process.execPath);
  const kb = { nodeBinary: 0, otherFiles: 0, malloc: 0, anonymous: 0 };
  let part = 'anonymous';
  for (const line of fs.readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      const name = mapping[1];
      part =
        name === executable
          ? 'nodeBinary'
          : name === '[heap]'
            ? 'malloc'
            : name.startsWith('/')
              ? 'otherFiles'
              : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kb[part] += Number(rss[1]);
  }
  const mb = (n) => Math.round(n / 102.4) / 10;
  const spaces = require('node:v8').getHeapSpaceStatistics();
  const space = (name) => spaces.find((s) => s.space_name === name)?.space_size ?? 0;
  return {
    ...Object.fromEntries(Object.entries(kb).map(([k, v]) => [k, mb(v)])),
    v8NewSpace: mb(space('new_space') / 1024),
    v8OldSpace: mb(space('old_space') / 1024),
  };
}
