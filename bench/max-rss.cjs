// Preloaded with `node -r bench/max-rss.cjs …` by the hostile-plans benchmark: prints this
// process's peak resident set size and CPU time (user + system) as it exits, so a child's figures
// are its own, not the parent's. CPU time is what a loaded machine disturbs least.
process.on('exit', () => {
  const { userCPUTime, systemCPUTime, maxRSS } = process.resourceUsage();
  require('node:fs').writeSync(
    2,
    `\nBENCH_MAX_RSS_KB ${maxRSS}\nBENCH_CPU_US ${userCPUTime + systemCPUTime}\n`,
  );
});
