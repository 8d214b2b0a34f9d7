/**
 * berth's version, read from its package.json: two levels up from the compiled `dist/bin/cli/`,
 * one from the sources' `bin/cli/`.
 * @module
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The `version` field of berth's own package.json. */
export function berthVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++, dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'berth-runtime' && pkg.version) return pkg.version;
    } catch {
      // not here: one level up
    }
  }
  return 'unknown';
}
