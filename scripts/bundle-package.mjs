// Builds what `import … from 'baton-steps'` loads, dist/package/index.js, and `baton-steps/store`,
// dist/package/store.js: the ES modules tsc wrote to dist/ (from dist/index.js and dist/store.js
// down), bundled with zod, which the plan schema needs at once. Both entries are one build, so the
// code they share is one copy (a chunk both import): a store opened from `baton-steps/store` throws
// the very BatonError class `isBatonError` of the root knows. Node 20 pays about 1 ms per ES
// module it loads: the package's 130 modules and zod's 95 came to about 250 ms and 25 MB of an
// `import`; a couple of files cost a fraction (see bench/README.md, `startup`). Everything loaded
// lazily stays outside: the provider adapters become chunks loaded by their first call, and the
// SDKs, ajv, yaml, the CEL interpreter of `when` and croner (store/core-libraries.ts), pg and
// better-sqlite3 are required from node_modules when first used. The CLI
// keeps running the unbundled modules.
import { rmSync } from 'node:fs';
import { relative } from 'node:path';
import { build } from 'rolldown';

const outDir = 'dist/package';

/**
 * Every module keeps the `import.meta.url` it had in dist/ (a URL relative to the bundle's own):
 * the migrations folders, the SQLite addon and the `createRequire` of lazy packages are found from
 * there, as without the bundle.
 */
const keepModuleUrls = {
  name: 'keep-module-urls',
  transform(code, id) {
    if (!code.includes('import.meta.')) return null;
    const fromBundle = relative(outDir, id).split('\\').join('/');
    const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
    const dirname = `decodeURIComponent(new URL('.', ${url}).pathname).replace(/\\/$/, '')`;
    return code.replaceAll('import.meta.url', url).replaceAll('import.meta.dirname', dirname);
  },
};

// Chunks are named by hash: without this, every build would leave the last one's behind (and npm
// pack would ship them).
rmSync(outDir, { recursive: true, force: true });

await build({
  input: { index: 'dist/index.js', store: 'dist/store.js' },
  platform: 'node',
  // Node's own modules and every package but zod are loaded from node_modules.
  external: [/^node:/, /^(?!zod(\/|$))[^./]/],
  plugins: [keepModuleUrls],
  logLevel: 'warn',
  output: { dir: outDir, format: 'esm', chunkFileNames: '[name]-[hash].js' },
});
