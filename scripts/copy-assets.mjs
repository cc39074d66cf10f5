// Copies non-TypeScript files the built code reads at run time (SQL migrations, the console's
// script and styles) into dist/. The package ships them from there only (package.json `files`):
// the modules that read them find them beside themselves, bundled or not.
import { cpSync } from 'node:fs';

for (const dialect of ['sqlite', 'postgres']) {
  cpSync(`src/store/${dialect}/migrations`, `dist/store/${dialect}/migrations`, { recursive: true });
}
cpSync('src/console/assets', 'dist/console/assets', { recursive: true });
