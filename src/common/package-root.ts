// Where the installed package lives (package.json, the pinned helm under node_modules). Its own
// module, with nothing but node:fs and node:path, because `--version` needs it at startup.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the first directory above this file (dist/src or src) with a package.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
